"""The damage check on open runs once per change of a file, not on every open: real catalog and vector files of a
library in a tmp dir, damaged the ways tests/store/embedded/test_recovery.py does."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mcp_docs.library import Library
from mcp_docs.settings import Settings
from mcp_docs.store.embedded import integrity
from tests.store.embedded.test_recovery import corrupt


@pytest.fixture
def root(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(5):
        (docs / f"d{i}.md").write_text(f"# Doc {i}\n\nuniq{i}word text\n")
    return docs


@pytest.fixture(autouse=True)
def no_racy_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # Files written a moment ago get no stamp (a write in the same clock tick would go unseen);
    # these files are only rewritten by the steps of each test, in order.
    monkeypatch.setattr(integrity, "RACY_SECONDS", -1.0)


def checked_files(caplog: pytest.LogCaptureFixture, root: Path, index: Path, embeddings: str = "none") -> list[str]:
    """Open, sync and search once (as `mcp-docs search` does) and say which files were checked."""
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger=integrity.__name__):
        with Library(Settings.load(root, index, embeddings=embeddings, environ={})) as lib:
            lib.sync()
            assert [r.id for r in lib.search("uniq3word", 5, "keyword").results] == ["d3.md"]
    return sorted(r.args[0] for r in caplog.records if r.name == integrity.__name__)  # type: ignore[index]


def test_an_unchanged_index_is_not_checked_again(root: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    index = tmp_path / "index"
    with Library(Settings.load(root, index, embeddings="local", environ={})) as lib:
        lib.sync()
    assert checked_files(caplog, root, index, "local") == ["catalog.sqlite", "vectors.sqlite"]
    assert checked_files(caplog, root, index, "local") == []


def test_a_change_of_the_file_is_checked_again(root: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    index = tmp_path / "index"
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        lib.sync()
    checked_files(caplog, root, index)
    (root / "d0.md").write_text("# Doc 0\n\nedited\n")
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        assert lib.sync().updated == 1
    assert checked_files(caplog, root, index) == ["catalog.sqlite"]


@pytest.mark.parametrize("how", ["random pages", "random bytes"])
def test_damage_after_a_clean_check_is_still_found_on_open(
    root: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, how: str
) -> None:
    index = tmp_path / "index"
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        lib.sync()
    checked_files(caplog, root, index)
    corrupt(index / "catalog.sqlite", how)  # same size for "random bytes": the times and inode tell
    with caplog.at_level(logging.WARNING), Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        lib.sync()
        assert [r.id for r in lib.search("uniq3word", 5, "keyword").results] == ["d3.md"]
    assert any("damaged" in r.getMessage() for r in caplog.records)


def test_a_link_in_place_of_the_stamp_is_replaced_not_followed(root: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        lib.sync()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (index / "catalog.sqlite.checked").unlink(missing_ok=True)
    (index / "catalog.sqlite.checked").symlink_to(victim)
    Library(Settings.load(root, index, embeddings="none", environ={})).close()
    assert victim.read_text() == "keep me" and not (index / "catalog.sqlite.checked").is_symlink()
