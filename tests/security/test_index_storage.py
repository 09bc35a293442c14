"""Fuzzing of the index folder (issue 10): whatever a mistyped `--index-dir` points at, no file mcp-docs did not
create is changed or deleted; whatever happens to the files of an index, it opens, rebuilds what it lost and
answers again."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_docs.errors import IndexFolderRefused
from mcp_docs.library import Library
from mcp_docs.settings import Settings
from mcp_docs.store.embedded.ownership import MARKER_NAME

FUZZ = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Our own names (what an index of the previous release holds) and names a user's folder may hold.
OURS = [
    "catalog.sqlite",
    "catalog.sqlite-wal",
    "vectors.sqlite",
    "fulltext",
    "fulltext/generation",
    "fulltext/meta.json",
    "fulltext/schema-version",
    "fulltext/0123456789abcdef0123456789abcdef.idx",
]
THEIRS = [
    "note.md",
    "fulltext/note1.md",
    "fulltext/sub/x.idx",
    "Documents/a.txt",
    ".obsidian/app.json",
    "catalog.sqlite.bak",
    "fulltext/GENERATION",
    MARKER_NAME + ".old",
]
SQLITE_HEADER = b"SQLite format 3\x00"


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("storage") / "docs"
    root.mkdir()
    for i in range(40):
        (root / f"d{i}.md").write_text(
            f"---\ntags: [t{i % 4}]\n---\n# Doc {i}\n\nuniq{i}word shared\n\n## More\n\ntext {i}\n"
        )
    return root


def _open(root: Path, index: Path) -> Library:
    return Library(Settings.load(root, index, embeddings="none", environ={}))


@FUZZ
@given(
    entries=st.lists(
        st.tuples(st.sampled_from(OURS + THEIRS), st.sampled_from(["sqlite", "text", "empty"])),
        min_size=1,
        max_size=6,
        unique_by=lambda e: e[0],
    )
)
def test_a_folder_with_anything_not_ours_in_it_is_never_touched(
    docs: Path, tmp_path_factory: pytest.TempPathFactory, entries: list[tuple[str, str]]
) -> None:
    folder = tmp_path_factory.mktemp("chosen")
    for name, kind in entries:
        path = folder / name
        if path.exists():  # "fulltext" as a file and as a folder: keep the first
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:  # a file stands where a folder would go
            continue
        path.write_bytes({"sqlite": SQLITE_HEADER + b"\x00" * 100, "text": b"my words\n", "empty": b""}[kind])
    before = _tree(folder)
    strangers = [n for n in before if n not in OURS]
    try:
        lib = _open(docs, folder)
    except IndexFolderRefused:
        assert _tree(folder) == before, "a refused folder was changed"
        return
    with lib:
        lib.sync()
    assert not strangers, f"a folder holding {strangers} was taken as an index"
    assert (folder / MARKER_NAME).is_file()


@pytest.fixture(scope="module")
def built(docs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    index = tmp_path_factory.mktemp("built") / "index"
    with _open(docs, index) as lib:
        lib.sync()
    return index


DAMAGE = st.sampled_from(["delete", "truncate", "garbage"])


def spoil(path: Path, damage: str, rng: random.Random) -> None:
    """Delete, cut or scribble over a file (a folder is deleted whatever `damage` says)."""
    if damage == "delete" or path.is_dir():
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    elif damage == "truncate":
        data = path.read_bytes()
        path.write_bytes(data[: rng.randrange(0, max(1, len(data)))])
    else:
        data = bytearray(path.read_bytes())
        for _ in range(max(1, len(data) // 50)):
            data[rng.randrange(len(data))] = rng.randrange(256) if data else 0
        path.write_bytes(bytes(data))


@FUZZ
@given(
    target=st.sampled_from(
        [
            "catalog.sqlite",
            "fulltext/meta.json",
            "fulltext/generation",
            "fulltext/schema-version",
            "fulltext/.managed.json",
            MARKER_NAME,
            "fulltext",
            "a segment file",
        ]
    ),
    damage=DAMAGE,
    seed=st.integers(0, 2**32),
)
def test_a_damaged_index_reopens_and_answers(
    docs: Path, built: Path, tmp_path_factory: pytest.TempPathFactory, target: str, damage: str, seed: int
) -> None:
    index = tmp_path_factory.mktemp("damaged") / "index"
    shutil.copytree(built, index)
    rng = random.Random(seed)
    segments = sorted(p for p in (index / "fulltext").iterdir() if len(p.name.split(".")[0]) == 32)
    path = rng.choice(segments) if target == "a segment file" else index / target
    spoil(path, damage, rng)
    with _open(docs, index) as lib:
        lib.sync()
        hits: list[Any] = lib.search("uniq7word", 3, "keyword").results
        assert [h.id for h in hits] == ["d7.md"]
        assert lib.catalog.count() == 40
        assert lib.store.fulltext.num_sections() == lib.catalog.section_total()


def test_a_damaged_fast_field_column_is_found_on_opening(
    docs: Path, built: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Garbage in a segment's `.fast` file opened fine, then every search panicked in Tantivy ("range end index 19
    out of range for slice of length 14", reading `doc_key`): the opening probe now reads that column too, and a
    damaged one is rebuilt. The damage is the one the fuzzing above found (its seed 204686, on the .fast file)."""
    index = tmp_path_factory.mktemp("fast") / "index"
    shutil.copytree(built, index)
    rng = random.Random(204686)
    segments = sorted(p for p in (index / "fulltext").iterdir() if len(p.name.split(".")[0]) == 32)
    path = rng.choice(segments)
    assert path.suffix == ".fast"
    spoil(path, "garbage", rng)
    with _open(docs, index) as lib:
        lib.sync()
        assert [h.id for h in lib.search("uniq7word", 3, "keyword").results] == ["d7.md"]
        assert lib.store.fulltext.num_sections() == lib.catalog.section_total()
