"""Requirement 10 (bounded): kill -9 at random points of indexing and embedding, a few trials.
The full campaign is `python -m tests.security.crash_trials --trials 30`."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_docs.library import Library
from mcp_docs.settings import Settings
from mcp_docs.tools import DocsTools

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


def _alive_in_group(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == pgid and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="lists processes through /proc (Linux)")
def test_r10_parse_workers_die_with_a_killed_indexer(tmp_path: Path) -> None:
    """`kill -9` of the indexing process (not its group) during a cold index must not leave its parse
    workers behind: they used to wait forever on a task queue whose other end was gone."""
    import os
    import random
    import subprocess
    import sys

    from .crash_trials import CHILD_INDEX, REPO, Vault, _killpg

    vault = Vault(tmp_path / "docs", tmp_path / "index", random.Random(3))
    vault.root.mkdir(parents=True)
    vault.create(3000)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_DOCS_")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["MCP_DOCS_PARSE_WORKERS"] = "2"
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD_INDEX, str(vault.root), str(vault.index), "2000"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == b"OPEN"
        deadline = time.monotonic() + 60
        while len(_alive_in_group(proc.pid)) < 3 and time.monotonic() < deadline:  # the indexer and two workers
            time.sleep(0.05)
        assert len(_alive_in_group(proc.pid)) >= 3, "the parse workers never started"
        time.sleep(0.5)  # workers busy parsing
        assert proc.poll() is None, "indexing finished before the kill: make the vault bigger"
        proc.kill()
        proc.wait(10)
        deadline = time.monotonic() + 5
        while _alive_in_group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive_in_group(proc.pid), "processes of the killed indexer are still running"
    finally:
        _killpg(proc)
        proc.stdout.close()


BETWEEN_COMMITS = """
import os
import sys
import mcp_docs.index.fulltext as fulltext
import mcp_docs.index.sync as sync
from mcp_docs.library import Library
from mcp_docs.settings import Settings

commit = fulltext.FullTextIndex.commit
def commit_then_die(self):  # the process dies after the full-text commit, before the catalog's
    commit(self)
    os._exit(9)
fulltext.FullTextIndex.commit = commit_then_die
sync.BATCH_SECONDS = 1e9  # one batch, the deletion in it, however slow the machine (a 2 s batch was cut before it)
Library(Settings.load(sys.argv[1], sys.argv[2], embeddings="none", environ={})).sync()
"""


def test_r10_a_kill_between_the_two_commits_is_recovered_when_the_index_is_opened(tmp_path: Path) -> None:
    """Deterministic form of a window the trials found (seed 1795418377): the full-text index has committed a
    batch (a deletion, an edit) and the catalog has not. Opening the index completes the deletion (issue 26: the
    deleted file stayed catalogued, listed and offered, until the next sync); nothing of the new state is lost or
    doubled, and the next sync brings the edit's catalog row in line."""
    root, settings = _two_commits_vault(tmp_path)
    child = subprocess.run([sys.executable, "-c", BETWEEN_COMMITS, str(root), str(tmp_path / "idx")], timeout=120)
    assert child.returncode == 9
    with Library(settings) as lib:
        assert "d3.md" not in lib.catalog.ids()  # recovered on open: was still catalogued until the next sync
        assert "d3.md" not in [d.id for d in DocsTools(lib).list_documents().documents]
        assert lib.search("word3", 5, "keyword").results == []
        assert [r.id for r in lib.search("edited4", 5, "keyword").results] == ["d4.md"]
        assert lib.fulltext.num_sections() == lib.catalog.section_total()
        report = lib.sync()
        assert report.deleted == 0 and report.updated == 1  # d4's catalog row: the one thing left to redo
        assert lib.fulltext.num_sections() == lib.catalog.section_total()
        assert len(lib.search("common", 20, "keyword").results) == 9


def test_r10_a_kill_before_the_full_text_commit_keeps_both_sides_until_the_next_sync(tmp_path: Path) -> None:
    """The other side of the same step: killed after the catalog noted the deletions but before Tantivy
    committed them. Both still hold the document, so opening changes nothing and the next sync deletes it."""
    root, settings = _two_commits_vault(tmp_path)
    child = subprocess.run([sys.executable, "-c", BEFORE_COMMIT, str(root), str(tmp_path / "idx")], timeout=120)
    assert child.returncode == 9
    with Library(settings) as lib:
        assert "d3.md" in lib.catalog.ids()
        assert [r.id for r in lib.search("word3", 5, "keyword").results] == ["d3.md"]  # Tantivy did not commit
        report = lib.sync()
        assert report.deleted == 1 and "d3.md" not in lib.catalog.ids()
        assert lib.search("word3", 5, "keyword").results == []
        assert lib.fulltext.num_sections() == lib.catalog.section_total()


def _two_commits_vault(tmp_path: Path) -> tuple[Path, Settings]:
    """Ten documents indexed; then one deleted and one edited on disk, for a sync to be killed in."""
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(10):
        (root / f"d{i}.md").write_text(f"# D{i}\n\nword{i} common\n")
    settings = Settings.load(root, tmp_path / "idx", embeddings="none", environ={})
    with Library(settings) as lib:
        lib.sync()
    (root / "d3.md").unlink()
    (root / "d4.md").write_text("# D4\n\nedited4 common\n")
    return root, settings


BEFORE_COMMIT = BETWEEN_COMMITS.replace("    commit(self)\n", "")
