import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mcp_docs.library import Library
from mcp_docs.settings import Settings
from tests.conftest import OUTSIDE_MARKER


def ids(library: Library) -> set[str]:
    return set(library.catalog.ids())


def found(library: Library, query: str) -> list[str]:
    return [r.id for r in library.search(query, mode="keyword", max_results=20).results]


def test_first_sync_indexes_markdown_and_reports_every_skip(library: Library) -> None:
    assert ids(library) == {
        "index.md",
        "guides/setup/install.md",
        "guides/setup/duplicate.md",
        "guides/writing.md",
        "notes/releases.md",
        "notes/meeting-2026-01.md",
        "fr/eleves.md",
        "latin1.md",
        "windows.md",
    }
    problems = {p.path: p.kind for p in library.catalog.problems()}
    assert problems == {
        "huge.md": "too_large",
        "binary.md": "binary",
        "leak.md": "outside_root",
        "dangling.md": "dangling_link",
        "outside-folder": "outside_root",
        "writing-link.md": "duplicate_link",
    }
    warnings = dict(library.catalog.documents_with_warnings())
    assert any("invalid UTF-8" in w for w in warnings["latin1.md"])
    assert any("front matter" in w for w in warnings["notes/releases.md"])


@pytest.mark.parametrize(
    "marker",
    ["obsidianhiddenmarker", "nodemodulesmarker", "ignoredraftmarker", "tmpmarker", "txtmarker", OUTSIDE_MARKER],
)
def test_excluded_content_is_never_searchable(library: Library, marker: str) -> None:
    assert found(library, marker) == []


def test_nothing_is_written_into_the_root(vault: Path, tmp_path: Path) -> None:
    before = sorted(p.relative_to(vault) for p in vault.rglob("*"))
    lib = Library(Settings.load(vault, tmp_path / "idx", embeddings="none"))
    lib.sync()
    lib.close()
    assert sorted(p.relative_to(vault) for p in vault.rglob("*")) == before


def test_index_inside_root_is_refused(vault: Path) -> None:
    with pytest.raises(ValueError, match="inside the documents root"):
        Settings.load(vault, vault / ".index", embeddings="none")


def test_add_change_delete_rename(library: Library, vault: Path) -> None:
    (vault / "notes" / "new.md").write_text("# New\n\nquasarflux appears here.\n")
    report = library.sync()
    assert (report.added, report.updated, report.deleted) == (1, 0, 0)
    assert found(library, "quasarflux") == ["notes/new.md"]

    (vault / "notes" / "new.md").write_text("# New\n\nnebulawhirl replaced it.\n")
    report = library.sync()
    assert (report.added, report.updated) == (0, 1)
    assert found(library, "quasarflux") == []
    assert found(library, "nebulawhirl") == ["notes/new.md"]

    (vault / "notes" / "new.md").rename(vault / "notes" / "renamed.md")
    report = library.sync()
    assert (report.added, report.deleted) == (1, 1)
    assert found(library, "nebulawhirl") == ["notes/renamed.md"]

    (vault / "notes" / "renamed.md").unlink()
    report = library.sync()
    assert report.deleted == 1
    assert found(library, "nebulawhirl") == []
    assert "notes/renamed.md" not in ids(library)


def test_unchanged_files_are_not_reparsed(library: Library, vault: Path) -> None:
    report = library.sync()
    assert (report.added, report.updated, report.deleted) == (0, 0, 0)
    assert report.unchanged == 9
    target = vault / "guides" / "writing.md"
    os.utime(target, (time.time() + 5, time.time() + 5))  # touched, same content
    report = library.sync()
    assert report.updated == 0 and report.unchanged == 9


def test_partial_sync_of_paths(library: Library, vault: Path) -> None:
    (vault / "notes" / "meeting-2026-01.md").write_text("# Meeting\n\nzephyrquill decision.\n")
    (vault / "guides" / "writing.md").unlink()
    report = library.sync(paths=["notes/meeting-2026-01.md", "guides/writing.md"])
    assert (report.updated, report.deleted) == (1, 1)
    assert found(library, "zephyrquill") == ["notes/meeting-2026-01.md"]
    # a whole folder removed
    import shutil

    shutil.rmtree(vault / "guides" / "setup")
    report = library.sync(paths=["guides/setup"])
    assert report.deleted == 2
    assert not any(i.startswith("guides/setup/") for i in ids(library))


def test_a_file_that_becomes_too_large_leaves_the_index(library: Library, vault: Path) -> None:
    (vault / "notes" / "meeting-2026-01.md").write_bytes(b"# M\n" + b"x" * (6 * 1024 * 1024))
    library.sync()
    assert "notes/meeting-2026-01.md" not in ids(library)
    assert {p.path: p.kind for p in library.catalog.problems()}["notes/meeting-2026-01.md"] == "too_large"


def test_schema_or_language_change_rebuilds(settings: Settings, vault: Path) -> None:
    lib = Library(settings)
    lib.sync()
    count = lib.catalog.count()
    lib.catalog.set_meta("schema_version", "0")
    lib.close()
    lib = Library(settings)
    assert lib.catalog.count() == 0  # rebuilt from scratch
    assert lib.sync().added == count
    lib.close()
    fr = Settings.load(vault, settings.index_dir, language="fr", embeddings="none")
    lib = Library(fr)
    assert lib.catalog.count() == 0
    lib.sync()
    assert lib.catalog.count() == count
    lib.close()


def test_large_sync_uses_worker_processes_and_matches(tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(450):  # above the parallel threshold in files (a configured count skips the one in bytes)
        (root / f"n{i:03}.md").write_text(f"# Note {i}\n\nword{i} shared text\n\n## Part\n\nmore {i}\n")
    lib = Library(Settings.load(root, tmp_path / "idx", embeddings="none", parse_workers=2))
    report = lib.sync()
    assert report.added == 450
    assert lib.store.fulltext.num_sections() == 900
    assert found(lib, "word417") == ["n417.md"]
    lib.close()


SMALL_TREE = textwrap.dedent(
    """
    import os, sys
    from mcp_docs.settings import Settings
    from mcp_docs.library import Library
    if __name__ == "__main__":
        lib = Library(Settings.load(sys.argv[1], sys.argv[2], embeddings="none"))
        print("added", lib.sync().added)
        t = os.times()
        print("children cpu", t.children_user + t.children_system)
    """
)


def _index_450_notes_in_a_script(tmp_path: Path, script_text: str) -> subprocess.CompletedProcess[str]:
    """Run `script_text` (given the root and index folders) as a user's own script over 450 small notes."""
    root = tmp_path / "notes"
    root.mkdir()
    for i in range(450):
        (root / f"n{i:03}.md").write_text(f"# Note {i}\n\nword{i}\n")
    script = tmp_path / "script.py"
    script.write_text(script_text)
    env = {k: v for k, v in os.environ.items() if k != "MCP_DOCS_PARSE_WORKERS"}
    return subprocess.run(
        [sys.executable, str(script), str(root), str(tmp_path / "idx")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_small_tree_is_parsed_without_worker_processes(tmp_path: Path) -> None:
    """Many files but few bytes: spawning workers (each re-imports the package) would cost more than it saves."""
    out = _index_450_notes_in_a_script(tmp_path, SMALL_TREE)  # above the parallel threshold in files, not bytes
    assert out.returncode == 0, out.stderr
    assert "added 450" in out.stdout
    assert "children cpu 0.0" in out.stdout  # no process was started, so none was reaped


def test_a_cold_build_commits_by_the_cold_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first index commits rarely (nothing was searchable, so a crash loses nothing); later syncs keep the short clock."""
    import mcp_docs.store.embedded.sync as sync

    monkeypatch.setattr(sync, "BATCH_SECONDS", 0.0)  # a later sync commits after every document
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(30):
        (root / f"d{i:02}.md").write_text(f"# Doc {i}\n\ncoldword{i}\n")
    lib = Library(Settings.load(root, tmp_path / "idx", embeddings="none"))
    commits: list[int] = []
    lib.store.synchronizer.listeners.append(lambda changed, deleted: commits.append(len(changed)))
    assert lib.sync().added == 30
    assert commits == [30]  # one commit for the whole cold build
    assert found(lib, "coldword7") == ["d07.md"]
    commits.clear()
    for i in range(3):
        (root / f"d{i:02}.md").write_text(f"# Doc {i}\n\nwarmword{i}\n")
    assert lib.sync().updated == 3
    assert commits == [1, 1, 1]
    lib.close()


KILLER = textwrap.dedent(
    """
    import sys
    from mcp_docs.settings import Settings
    from mcp_docs.library import Library
    import mcp_docs.store.embedded.sync as sync
    sync.BATCH_DOCUMENTS = 50
    sync.PARALLEL_THRESHOLD = 10**9
    lib = Library(Settings.load(sys.argv[1], sys.argv[2], embeddings="none"))
    calls = 0
    def progress(done, total):
        global calls
        calls += 1
        if calls == 3:  # after two committed batches
            print("READY", flush=True)
            import time; time.sleep(60)
    lib.sync(progress=progress)
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_kill_9_mid_sync_keeps_last_commit_and_next_sync_completes(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(300):
        (root / f"d{i:03}.md").write_text(f"# Doc {i}\n\nkillword{i} common\n")
    index_dir = tmp_path / "idx"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLER, str(root), str(index_dir)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "READY"
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    lib = Library(Settings.load(root, index_dir, embeddings="none"))
    partial = lib.catalog.count()
    assert 0 < partial < 300  # the committed batches survived, the rest did not happen
    assert len(found(lib, "common")) == 20  # searchable as it was
    report = lib.sync()
    assert report.added == 300 - partial
    assert lib.catalog.count() == 300
    assert lib.store.fulltext.num_sections() == 300  # nothing duplicated by redoing work
    lib.close()


UNGUARDED_SCRIPT = textwrap.dedent(
    """
    import sys
    from mcp_docs.settings import Settings
    from mcp_docs.library import Library
    print("TOP-LEVEL RAN", flush=True)
    lib = Library(Settings.load(sys.argv[1], sys.argv[2], embeddings="none"))
    print("added", lib.sync().added, flush=True)
    """
)


def test_a_script_without_main_guard_is_not_re_run_by_parse_workers(tmp_path: Path) -> None:
    out = _index_450_notes_in_a_script(tmp_path, UNGUARDED_SCRIPT)  # above the parallel threshold
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("TOP-LEVEL RAN") == 1
    assert "added 450" in out.stdout
    assert "Traceback" not in out.stderr


def test_a_file_too_slow_to_parse_is_skipped_listed_and_refused_quickly(tmp_path: Path) -> None:
    from mcp_docs.errors import ToolInputError
    from mcp_docs.tools import DocsTools

    root = tmp_path / "vault"
    root.mkdir()
    (root / "small.md").write_text("# Small\n\nQuick to parse.\n", "utf-8")
    (root / "slow.md").write_text("slowmarker\n\n" + "# h\n" * 150_000, "utf-8")  # 600 KB, seconds of headings
    lib = Library(Settings.load(root, tmp_path / "index", embeddings="none", environ={}, parse_seconds=0.5))
    try:
        report = lib.sync()
        assert [(p.path, p.kind) for p in report.skipped] == [("slow.md", "too_slow")]
        assert "parsing needed more than 0.5 s of CPU time: skipped" in report.skipped[0].detail
        assert {p.path: p.kind for p in lib.catalog.problems()} == {"slow.md": "too_slow"}  # what status lists
        assert ids(lib) == {"small.md"} and found(lib, "slowmarker") == []
        tools = DocsTools(lib)
        for _ in range(2):
            try:
                tools.read_document("slow.md")
                raise AssertionError("a file that cannot be parsed in time was served")
            except ToolInputError as exc:
                assert "'slow.md' is not served: parsing needed more than 0.5 s of CPU time" in str(exc)
        assert tools.parse_cache.parses == 1  # the second read fails at once
        assert tools.read_document("small.md").content.startswith("# Small")
    finally:
        lib.close()


def test_a_note_of_front_matter_alone_is_found_by_its_title_and_tags(tmp_path: Path) -> None:
    from mcp_docs.errors import ToolInputError
    from mcp_docs.tools import DocsTools

    root = tmp_path / "vault"
    root.mkdir()
    (root / "stub.md").write_text("---\ntitle: Quarterly zeppelin review\ntags: [aviation, budget]\n---\n")
    (root / "empty.md").write_text("")
    with Library(Settings.load(root, tmp_path / "idx", embeddings="none", environ={})) as library:
        library.sync()
        tools = DocsTools(library)
        for query, tags in (("zeppelin review", None), ("aviation", None), ("review", ["budget"])):
            hits = tools.search_documents(query, mode="keyword", tags=tags).results
            assert [r.id for r in hits] == ["stub.md"], query
        assert "Quarterly zeppelin review" in tools.read_section("stub.md", "(top)").content
        with pytest.raises(ToolInputError):  # nothing to find in an empty file: no invented section
            tools.read_section("empty.md", "(top)")


def test_a_file_name_that_is_not_utf8_is_listed_and_the_rest_indexed(library: Library, vault: Path) -> None:
    with open(os.fsencode(vault) + b"/caf\xe9 latin1 name.md", "wb") as fh:
        fh.write(b"# Latin-1 name\n\nlatinnameword\n")
    (vault / "fresh.md").write_text("# Fresh\n\nfreshword\n")
    library.sync()  # stopped the whole sync: "Value unsupported 'caf\udce9 latin1 name.md'"
    assert found(library, "freshword") == ["fresh.md"]
    problems = {p.path: (p.kind, p.detail) for p in library.catalog.problems()}
    assert problems["caf\ufffd latin1 name.md"][0] == "invalid_name"
    assert "rename" in problems["caf\ufffd latin1 name.md"][1]
    assert found(library, "latinnameword") == []


def test_a_folder_replaced_by_a_file_or_a_link_leaves_the_index(library: Library, vault: Path, tmp_path: Path) -> None:
    import shutil

    shutil.rmtree(vault / "guides" / "setup")
    (vault / "guides" / "setup").write_text("a plain file where the folder was\n")
    report = library.sync(paths=["guides/setup"])  # its documents stayed indexed and searchable
    assert report.deleted == 2
    assert not any(i.startswith("guides/setup/") for i in ids(library))
    shutil.rmtree(vault / "notes")
    (vault / "notes").symlink_to(vault / "guides", target_is_directory=True)
    library.sync(paths=["notes"])
    assert not any(i.startswith("notes/") for i in ids(library))  # a folder link is never followed


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_named_like_a_note_is_listed_with_a_reason(library: Library, vault: Path) -> None:
    os.mkfifo(vault / "pipe.md")
    library.sync()
    problem = {p.path: p for p in library.catalog.problems()}["pipe.md"]
    # the detail was the file's absolute path alone ('/tmp/…/vault/pipe.md')
    assert (problem.kind, problem.detail) == ("unreadable", "not a regular file (a FIFO, socket or device)")


def test_a_sync_while_the_root_is_gone_changes_nothing(library: Library, vault: Path, tmp_path: Path) -> None:
    from mcp_docs.errors import RootMissing

    before = ids(library)
    vault.rename(tmp_path / "moved-away")  # a restore, a `git clone` over it, a sync tool: it comes back later
    for paths in (None, ["index.md", "guides"]):
        with pytest.raises(RootMissing, match="no longer exists"):
            library.sync(paths=paths)  # emptied the whole index (every document was "gone")
    assert ids(library) == before
    (tmp_path / "moved-away").rename(vault)
    assert library.sync().deleted == 0


def test_a_root_replaced_while_it_is_scanned_changes_nothing(library: Library, vault: Path, tmp_path: Path) -> None:
    """`mv vault vault.old && mv vault.new vault` during a scan: the scan saw part of one tree and none of the other,
    and the part it missed was taken for deleted (seen as a flaky watcher test under load)."""
    from mcp_docs.errors import RootMissing
    from mcp_docs.scan import Scanner, ScanResult
    from mcp_docs.store.embedded.sync import scan_paths

    class ReplacedMidScan(Scanner):  # the real walk; the folder is swapped as it ends, as a restore would
        def scan(self, under: str = "") -> ScanResult:
            result = super().scan(under)
            vault.rename(tmp_path / "vault-old")
            (tmp_path / "vault-new").mkdir()
            (tmp_path / "vault-new").rename(vault)
            return result

    with pytest.raises(RootMissing, match="replaced while it was scanned"):
        scan_paths(library.jail, ReplacedMidScan(library.jail), None, {})


def test_a_second_change_within_one_mtime_tick_is_seen(library: Library, vault: Path) -> None:
    note = vault / "tick.md"
    note.write_text("# Tick\n\nfirstword\n")
    library.sync()
    st = note.stat()
    note.write_text("# Tick\n\nsecndword\n")  # the same size: a typo fixed
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))  # as on FAT (2 s ticks) or a share: the same mtime
    library.sync()  # size and mtime unchanged: taken for unchanged, the old text stayed indexed for good
    assert found(library, "secndword") == ["tick.md"] and found(library, "firstword") == []
    assert library.sync().changed_ids == []  # a file that kept its content is not indexed again


def test_a_note_replaced_by_a_folder_of_its_name_leaves_the_index(library: Library, vault: Path) -> None:
    (vault / "index.md").unlink()
    (vault / "index.md").mkdir()
    (vault / "index.md" / "inside.md").write_text("# Inside\n\ninsideword\n")
    library.sync(paths=["index.md"])  # the old note stayed indexed and found, though reads said "a folder"
    assert "index.md" not in ids(library) and "index.md/inside.md" in ids(library)
