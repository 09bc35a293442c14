"""The index is a cache: a damaged or half-deleted index is detected when it is opened and rebuilt, with a
warning on stderr, never a traceback and never silently empty search (issue 10)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_docs.library import Library
from mcp_docs.settings import Settings
from tests.cli_runner import CliResult, run_cli

PAGE = 4096


def corrupt(path: Path, how: str, seed: int = 7) -> None:
    """Damage an SQLite file the ways disks and people do."""
    rng = random.Random(seed)
    data = bytearray(path.read_bytes())
    if how == "truncated":
        data = data[: max(PAGE + 100, len(data) // 3)]
    elif how == "random pages":
        pages = len(data) // PAGE
        for page in rng.sample(range(1, pages), max(1, pages // 3)):
            data[page * PAGE : (page + 1) * PAGE] = rng.randbytes(PAGE)
    elif how == "garbled schema":  # SQLite's error message then quotes a table name that is not UTF-8
        data[data.index(b"tablemeta") + 5] = 0x9E
    else:  # random bytes
        data = bytearray(rng.randbytes(len(data)))
    path.write_bytes(bytes(data))


def _docs(tmp_path: Path, n: int = 60) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(n):
        body = "\n\n".join(f"## Part {k}\n\nfiller text {i} {k} " + "lorem ipsum " * 40 for k in range(4))
        (root / f"d{i}.md").write_text(
            f"---\ntags: [zeta, alpha{i % 3}]\n---\n# Doc {i}\n\nuniq{i}word commonword\n\n{body}\n"
        )
    return root


def _settings(root: Path, index: Path, embeddings: str = "none") -> Settings:
    return Settings.load(root, index, embeddings=embeddings, environ={})


def _cli(*args: str) -> CliResult:
    return run_cli(*args, env={k: v for k, v in os.environ.items() if not k.startswith("MCP_DOCS_")})


def _cli_search(root: Path, index: Path, query: str) -> CliResult:
    """`mcp-docs search --json` in keyword mode, as a user runs it on this root and index."""
    return _cli(
        "search",
        query,
        "--root",
        str(root),
        "--index-dir",
        str(index),
        "--embeddings",
        "none",
        "--json",
        "--mode",
        "keyword",
    )


def test_lost_fulltext_meta_json_is_detected_and_the_index_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Tantivy recreates an empty index without meta.json while the catalog still lists every document."""
    root = _docs(tmp_path)
    index = tmp_path / "index"
    with Library(_settings(root, index)) as lib:
        lib.sync()
    (index / "fulltext" / "meta.json").unlink()
    with caplog.at_level(logging.WARNING), Library(_settings(root, index)) as lib:
        report = lib.sync()  # what `mcp-docs index` (and a starting server) does
        assert report.added == 60
        assert [r.id for r in lib.search("uniq7word", 5, "keyword").results] == ["d7.md"]
        assert lib.store.fulltext.num_sections() == lib.catalog.section_total()
    assert any("rebuilding the index" in r.getMessage() for r in caplog.records)


def test_lost_fulltext_meta_json_is_repaired_by_the_index_command(tmp_path: Path) -> None:
    root = _docs(tmp_path, 10)
    index = tmp_path / "index"
    assert _cli("index", "--root", str(root), "--index-dir", str(index), "--embeddings", "none").returncode == 0
    (index / "fulltext" / "meta.json").unlink()
    out = _cli("index", "--root", str(root), "--index-dir", str(index), "--embeddings", "none")
    assert out.returncode == 0 and "rebuilding the index" in out.stderr, out.stderr
    out = _cli_search(root, index, "uniq3word")
    assert [r["id"] for r in json.loads(out.stdout)["results"]] == ["d3.md"]


def test_cut_fulltext_segment_files_are_rebuilt_not_a_crash(tmp_path: Path) -> None:
    """Tantivy panics (a BaseException from Rust) on some cut segment files instead of raising an error."""
    root = _docs(tmp_path, 12)
    built = tmp_path / "built"
    with Library(_settings(root, built)) as lib:
        lib.sync()
    segment_files = sorted(p.name for p in (built / "fulltext").iterdir() if len(p.name.split(".")[0]) == 32)
    assert segment_files
    for name in segment_files:
        size = (built / "fulltext" / name).stat().st_size
        for cut in sorted({0, 6, size // 3, size - 8}):  # 6 bytes of a .fast file made Tantivy 0.25 panic
            index = tmp_path / f"cut-{name}-{cut}"
            shutil.copytree(built, index)
            with open(index / "fulltext" / name, "r+b") as f:
                f.truncate(max(0, cut))
            with Library(_settings(root, index)) as lib:
                lib.sync()
                assert [r.id for r in lib.search("uniq7word", 3, "keyword").results] == ["d7.md"], (name, cut)


@pytest.mark.parametrize("how", ["truncated", "random pages", "random bytes", "garbled schema"])
def test_a_damaged_catalog_is_rebuilt_by_search(tmp_path: Path, how: str) -> None:
    root = _docs(tmp_path)
    index = tmp_path / "index"
    with Library(_settings(root, index)) as lib:
        lib.sync()
    corrupt(index / "catalog.sqlite", how)
    out = _cli_search(root, index, "uniq5word")
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr and "catalog" in out.stderr and "damaged" in out.stderr
    data = json.loads(out.stdout)
    assert [r["id"] for r in data["results"]] == ["d5.md"] and data["index"]["documents"] == 60
    with Library(_settings(root, index)) as lib:
        assert lib.sync().unchanged == 60
        assert lib.store.fulltext.num_sections() == lib.catalog.section_total()


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small vault and its index with every vector built, by the real model (the reopened store must match it)."""
    base = tmp_path_factory.mktemp("embedded")
    root, index = _docs(base, 8), base / "index"
    with Library(_settings(root, index, "local")) as lib:
        lib.sync()
        assert lib.vectors is not None and lib.embedding.build() > 0
    return root, index


# Truncation and random bytes are covered for the catalog: the same SQLite layer reports them.
@pytest.mark.parametrize("how", ["random pages", "garbled schema"])
def test_a_damaged_vector_store_is_rebuilt_on_open(
    embedded: tuple[Path, Path], tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    root, built = embedded
    index = tmp_path / "index"
    shutil.copytree(built, index)
    corrupt(index / "vectors.sqlite", how)
    with caplog.at_level(logging.WARNING), Library(_settings(root, index, "local")) as lib:
        assert lib.vectors is not None and lib.vectors.status()["chunks"] == 0
        lib.sync()
        assert lib.index_info().pending_embeddings > 0
        lib.embedding.build()
        assert lib.search("uniq3word", 3, "semantic").results
    assert any("rebuilding it" in r.getMessage() for r in caplog.records)


@contextlib.contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """`path` cannot be opened for writing, even by root (the immutable flag): as an index file made by another
    user (`sudo mcp-docs index` once) is to this one."""
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode:
        pytest.skip("needs chattr and a file system with the immutable flag")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_an_index_this_user_cannot_write_is_read_and_the_refusal_is_one_sentence(tmp_path: Path) -> None:
    root = _docs(tmp_path, 5)
    index = tmp_path / "index"
    with Library(_settings(root, index)) as lib:
        lib.sync()
    (root / "new.md").write_text("# New\n\nnewword\n")
    args = ("--root", str(root), "--index-dir", str(index), "--embeddings", "none")
    with unwritable(index / "catalog.sqlite"):
        indexed = _cli(
            "index", *args
        )  # was a traceback: "sqlite3.OperationalError: attempt to write a readonly database"
        searched = _cli_search(root, index, "uniq3word")
    assert indexed.returncode == 2 and "Traceback" not in indexed.stderr
    assert "cannot write the index" in indexed.stderr and "readonly" in indexed.stderr
    assert searched.returncode == 0 and "Traceback" not in searched.stderr, searched.stderr
    assert "cannot write the index" in searched.stderr  # answers from the index as it is, and says so
    assert [r["id"] for r in json.loads(searched.stdout)["results"]] == ["d3.md"]
    with Library(_settings(root, index)) as lib:
        assert lib.catalog.count() == 5  # kept, not "damaged: rebuilt"
        assert lib.sync().added == 1
