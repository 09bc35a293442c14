"""`mcp-docs status` after `mcp-docs index --embeddings none`, through the command line. Found reviewing the
Obsidian help vault: status (which takes no --embeddings) printed 'embeddings  local, pending 12560', as if 12,560
vectors were on their way, while nothing embeds them until `index` or `serve` runs with that setting."""

from __future__ import annotations

import os
from pathlib import Path

from .cli_runner import run_cli
from .server_fixtures import write


def test_status_says_no_vector_is_stored_and_what_would_embed_them(tmp_path: Path) -> None:
    root, index = tmp_path / "vault", tmp_path / "index"
    for i in range(3):
        write(root, f"note{i}.md", f"# Note {i}\n\nSome words about topic {i}.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_DOCS_")}  # the default: local
    where = ["--root", str(root), "--index-dir", str(index)]
    assert run_cli("index", *where, "--embeddings", "none", env=env).returncode == 0
    out = run_cli("status", *where, env=env)
    assert out.returncode == 0, out.stderr
    line = " ".join(out.stdout.split())  # rich wraps long lines on a narrow terminal
    assert "embeddings local (MCP_DOCS_EMBEDDINGS, or the default), no vector stored yet:" in line, line
    assert "`mcp-docs index` or `mcp-docs serve` with this setting embeds the 3 documents" in line
    assert "pending 6" not in line


def test_one_document_to_embed_is_one_document(tmp_path: Path) -> None:
    root, index = tmp_path / "vault", tmp_path / "index"
    write(root, "note.md", "# Note\n\nSome words.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_DOCS_")}
    where = ["--root", str(root), "--index-dir", str(index)]
    assert run_cli("index", *where, "--embeddings", "none", env=env).returncode == 0
    line = " ".join(run_cli("status", *where, env=env).stdout.split())
    assert "with this setting embeds the 1 document" in line and "1 documents" not in line, line


def test_an_index_whose_every_note_was_skipped_counts_no_vector_as_done(tmp_path: Path) -> None:
    """Under the table of skipped files, status repeats its gist: an empty index's '0 of 0 chunks embedded
    (100.0%)' read as finished there too, as it did on the vectors line before (the only note a dangling link)."""
    root, index = tmp_path / "vault", tmp_path / "index"
    root.mkdir()
    (root / "gone.md").symlink_to(tmp_path / "nowhere.md")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_DOCS_")}
    where = ["--root", str(root), "--index-dir", str(index)]
    assert run_cli("index", *where, "--embeddings", "none", env=env).returncode == 0
    out = run_cli("status", *where, env=env)
    line = " ".join(out.stdout.split())
    assert "summary 0 documents; 1 file skipped" in line, line
    assert "0 of 0" not in line and "(100.0%)" not in line, line
    assert "No document is indexed: the one file or folder found was skipped" in line and "all 1" not in line, line
