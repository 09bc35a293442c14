"""Two servers on one index report the same document count: a Library sees what another one (another
process, or another instance in this one) committed, not just its own syncs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mcp_docs.library import Library
from mcp_docs.settings import Settings

from .server_fixtures import child_env, write

SYNC_IN_CHILD = """
import sys
from mcp_docs.library import Library
from mcp_docs.settings import Settings
with Library(Settings.load(sys.argv[1], sys.argv[2], embeddings="none", environ={})) as lib:
    lib.sync()
"""


def _settings(tmp_path: Path) -> Settings:
    return Settings.load(tmp_path / "root", tmp_path / "index", embeddings="none", environ={})


def test_a_library_sees_documents_another_one_indexed(tmp_path: Path) -> None:
    write(tmp_path / "root", "a.md", "# A\n\nalpha\n")
    writer = Library(_settings(tmp_path))
    writer.sync()
    reader = Library(_settings(tmp_path))
    try:
        assert reader.index_info().documents == writer.index_info().documents == 1
        write(tmp_path / "root", "b.md", "# B\n\nbeta\n")
        write(tmp_path / "root", "c.md", "# C\n\ngamma\n")
        writer.sync()
        assert reader.index_info().documents == writer.index_info().documents == 3
        (tmp_path / "root" / "a.md").unlink()
        writer.sync()
        assert reader.index_info().documents == 2
    finally:
        reader.close()
        writer.close()


def test_a_server_process_sees_what_another_process_indexed(tmp_path: Path) -> None:
    write(tmp_path / "root", "a.md", "# A\n\nalpha\n")
    settings = _settings(tmp_path)
    with Library(settings) as lib:
        lib.sync()
    # A reading server (a worker of `serve --workers`): the writer lock is the other process's to take.
    with Library(settings, read_only=True) as lib:
        assert lib.index_info().documents == 1
        for i in range(4):
            write(tmp_path / "root", f"new/n{i}.md", f"# N{i}\n\nnote {i}\n")
        proc = subprocess.run(
            [sys.executable, "-c", SYNC_IN_CHILD, str(settings.root), str(settings.index_dir)],
            capture_output=True,
            text=True,
            timeout=120,
            env=child_env(),
        )
        assert proc.returncode == 0, proc.stderr
        assert lib.index_info().documents == 5
