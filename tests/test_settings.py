"""The documents root and the index folder never contain each other, in either direction, as written or
through links (the index is a cache mcp-docs may delete; the root is never written)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_docs.settings import Settings


def _load(root: Path, index: Path) -> Settings:
    return Settings.load(root, index, embeddings="none", environ={})


@pytest.fixture
def base(tmp_path: Path) -> Path:
    (tmp_path / "notes" / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    return tmp_path


def test_root_inside_the_index_folder_is_refused(base: Path) -> None:
    with pytest.raises(ValueError, match="root .* is inside the index folder"):
        _load(base / "notes" / "sub", base / "notes")
    with pytest.raises(ValueError, match="inside the index folder"):
        _load(base / "notes", base)


def test_same_folder_is_refused(base: Path) -> None:
    with pytest.raises(ValueError, match="inside"):
        _load(base / "notes", base / "notes")


def test_index_reached_through_a_link_into_the_root_is_refused(base: Path) -> None:
    (base / "elsewhere" / "link").symlink_to(base / "notes", target_is_directory=True)
    with pytest.raises(ValueError, match="index folder .* is inside the documents root"):
        _load(base / "notes", base / "elsewhere" / "link" / "index")


def test_root_reached_through_a_link_into_the_index_is_refused(base: Path) -> None:
    (base / "elsewhere" / "link").symlink_to(base / "notes", target_is_directory=True)
    with pytest.raises(ValueError, match="root .* is inside the index folder"):
        _load(base / "elsewhere" / "link" / "sub", base / "notes")


def test_index_that_is_a_link_to_a_parent_of_the_root_is_refused(base: Path) -> None:
    (base / "elsewhere" / "index").symlink_to(base, target_is_directory=True)
    with pytest.raises(ValueError, match="inside the index folder"):
        _load(base / "notes", base / "elsewhere" / "index")


def test_root_linked_inside_the_index_as_written_is_refused(base: Path) -> None:
    """The root given through a link that lives inside the index folder: resolved, they are apart, as written
    the index folder contains it (rebuilding the index could remove the link the user reaches the notes by)."""
    index = base / "elsewhere"
    (index / "notes-link").symlink_to(base / "notes", target_is_directory=True)
    with pytest.raises(ValueError, match="inside the index folder"):
        _load(index / "notes-link", index)


def test_separate_folders_are_fine(base: Path) -> None:
    settings = _load(base / "notes", base / "elsewhere" / "index")
    assert settings.index_dir == (base / "elsewhere" / "index").resolve()
