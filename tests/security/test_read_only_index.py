"""An index folder on a read-only file system: `mcp-docs search`, `read` and `status` answer from it as it is,
and `index` says in one sentence why it cannot write (it called the catalog "damaged" and tried to rebuild it).

A real read-only mount: each command runs in its own mount namespace (`unshare`) where the index folder is
bind-mounted read-only, so SQLite and Tantivy meet EROFS as on a read-only disk or snapshot. Skipped where the
system does not allow it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from mcp_docs.library import Library
from mcp_docs.settings import Settings
from tests.server_fixtures import child_env, make_vault
from tests.test_embedders import FAKE_KEY, EmbeddingsServer


@cache
def read_only_mounts() -> bool:
    """`unshare -rm` can bind-mount a folder read-only here (a user namespace, or root)."""
    if sys.platform != "linux" or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp && ! touch /tmp/x"],
        capture_output=True,
        timeout=30,
    )
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not read_only_mounts(), reason="needs unshare and read-only bind mounts")


@pytest.fixture(scope="module")
def embeddings() -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, embeddings: EmbeddingsServer) -> tuple[Path, Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("ro")
    root, index = make_vault(base), base / "index"
    env = child_env(
        MCP_DOCS_EMBEDDINGS="openai",
        MCP_DOCS_EMBEDDINGS_BASE_URL=embeddings.base_url,
        MCP_DOCS_EMBEDDINGS_MODEL="bow",
        MCP_DOCS_EMBEDDINGS_API_KEY_ENV="EMB_KEY",
        EMB_KEY=FAKE_KEY,
    )
    settings = Settings.load(root, index, environ=env)
    with Library(settings) as library:
        library.sync()
        assert library.embedding is not None
        library.embedding.build()
    return root, index, env


def on_read_only_mount(index: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`mcp-docs ARGS` with `index` mounted read-only for it alone."""
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", str(index), sys.executable, "-m", "mcp_docs", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))}


def test_search_read_and_status_answer_from_a_read_only_index(built: tuple[Path, Path, dict[str, str]]) -> None:
    root, index, env = built
    before = snapshot(index)
    where = ["--root", str(root), "--index-dir", str(index)]
    for mode in ("keyword", "hybrid", "semantic"):
        done = on_read_only_mount(index, env, "search", "restic snapshots", "--mode", mode, "--json", *where)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["mode_used"] == mode and result["results"], result  # vectors read too: no fallback
        if mode != "semantic":  # (the test embedder's bag of words ranks its own way)
            assert result["results"][0]["id"] == "notes/backups.md", result
        assert "is read-only: answering from the index as it is" in " ".join(done.stderr.split())
        assert "damaged" not in done.stderr and "Traceback" not in done.stderr
    done = on_read_only_mount(index, env, "read", "guides/install.md", "--section", "Linux", *where)
    assert done.returncode == 0 and "systemctl" in done.stdout, done.stderr
    done = on_read_only_mount(index, env, "status", "--json", *where)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["documents"] == 16
    assert snapshot(index) == before


def test_indexing_a_read_only_index_is_one_sentence(built: tuple[Path, Path, dict[str, str]]) -> None:
    root, index, env = built
    done = on_read_only_mount(index, env, "index", "--root", str(root), "--index-dir", str(index))
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: the index folder {index} cannot be written (a read-only file system")
    assert "damaged" not in done.stderr and "rebuilding" not in done.stderr and "Traceback" not in done.stderr
