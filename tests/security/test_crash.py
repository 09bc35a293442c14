"""Requirement 10 (bounded): kill -9 at random points of indexing and embedding, a few trials.
The full campaign is `python -m tests.security.crash_trials --trials 30`."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from .crash_trials import run_trials


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL and process groups")
def test_r10_kill_9_during_indexing_and_embedding(tmp_path: Path) -> None:
    seed = int(time.time())
    lines: list[str] = []
    failures = run_trials(3, seed, tmp_path, docs=150, embed=True, log=lines.append)
    assert not failures, f"seed {seed}: {failures}\n" + "\n".join(lines)
    assert sum("ok (" in line for line in lines) >= 3, "\n".join(lines)


def test_r10_files_of_a_commit_killed_before_meta_json_do_not_block_the_next_sync(tmp_path: Path) -> None:
    """Deterministic form of a crash the trials found: Tantivy had written `<segment>.<opstamp>.del` but not yet
    meta.json (nor the catalog) when the writer was killed; the next commit reused the name and failed."""
    import shutil

    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    root = tmp_path / "docs"
    root.mkdir()
    for i in range(30):
        (root / f"d{i}.md").write_text(f"# D{i}\n\nword{i} common\n")
    settings = Settings.load(root, tmp_path / "idx", embeddings="none", environ={})
    with Library(settings) as lib:
        lib.sync()
    meta = tmp_path / "idx" / "fulltext" / "meta.json"
    saved_meta = meta.read_bytes()
    shutil.copy(tmp_path / "idx" / "catalog.sqlite", tmp_path / "catalog.bak")
    for i in range(8):
        (root / f"d{i}.md").write_text(f"# D{i}\n\nchanged{i} common\n")
    with Library(settings) as lib:
        lib.sync()
    # the crash: the new segment and delete files stay, meta.json and the catalog are the committed ones
    meta.write_bytes(saved_meta)
    for f in (tmp_path / "idx").glob("catalog.sqlite*"):
        f.unlink()
    shutil.copy(tmp_path / "catalog.bak", tmp_path / "idx" / "catalog.sqlite")
    with Library(settings) as lib:
        report = lib.sync()  # must complete at the first attempt
        assert report.updated == 8
        assert lib.fulltext.num_sections() == lib.catalog.section_total()
        assert [r.id for r in lib.search("changed3", 5, "keyword").results] == ["d3.md"]
