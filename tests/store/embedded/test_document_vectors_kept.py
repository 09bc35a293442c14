"""The document-level vectors search keeps between searches (vector_search.DocumentVectors, issue 29 "at reading
speed"): they follow what is embedded (in this process, and in another connection such as a reading HTTP worker's),
and the kept search returns exactly what scoring every document in SQL returns. Real apsw + sqlite-vec files in
tmp dirs and the real MiniLM model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mcp_docs.index.hits import VectorHit
from mcp_docs.library import Library
from mcp_docs.settings import Settings
from mcp_docs.store.embedded.vector_search import document_hit
from mcp_docs.store.embedded.vector_store import DocFilter, VectorStore
from tests.store.embedded.test_vector_store import minilm_loaded, open_lib, vault  # noqa: F401 (fixtures)

KITTY = "how long does my kitty snooze"  # no word in common with pets/cats.md, which answers it


def embed_units(store: VectorStore, doc_ids: set[str], sections: bool = False) -> int:
    """Embed the document-level units (or, with `sections`, the section chunks) of these documents only, through
    the store's own embedder and writes: the state part-way through a large vault."""
    assert store.embedder is not None
    rows = [
        (cid, text)
        for cid, text in store.pending_batch(10_000, sorted(doc_ids))
        if (cid > 0) == sections and store.doc_of(cid) in doc_ids
    ]
    if sections:  # pending_batch gives sections only once every document unit has its vector
        conn = store._conn()
        marks = ",".join("?" * len(doc_ids))
        rows = [
            (int(r[0]), str(r[1]))
            for r in conn.execute(
                f"select id, text from chunks where embedded = 0 and doc_id in ({marks})", sorted(doc_ids)
            )
        ]
    vectors = store.embedder.embed_passages([text for _, text in rows])
    store.store_vectors([(cid, vector) for (cid, _), vector in zip(rows, vectors, strict=True)])
    return len(rows)


def document_ids(store: VectorStore, query: str, limit: int = 5) -> list[str]:
    return [h.doc_id for h in store._document_hits(store.embed_query(query), limit, None, ())]


def test_document_vectors_added_or_sections_done_are_seen_by_the_next_search(
    minilm_loaded: None, vault: Path, tmp_path: Path
) -> None:
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.embedding is not None and lib.vectors is not None
        store = lib.vectors
        lib.embedding.chunk_dirty()
        assert embed_units(store, {"ops/backups.md", "ops/telescope.md"}) == 2
        assert set(document_ids(store, KITTY)) == {"ops/backups.md", "ops/telescope.md"}  # kept from here on
        assert document_ids(store, KITTY) == document_ids(store, KITTY)

        assert embed_units(store, {"pets/cats.md"}) == 1
        assert document_ids(store, KITTY)[0] == "pets/cats.md"  # the new document vector is used at once
        assert lib.search(KITTY, mode="semantic").results[0].id == "pets/cats.md"

        before = store._last_document_vectors
        embed_units(store, {"pets/cats.md"}, sections=True)  # its sections now stand for it
        assert "pets/cats.md" not in document_ids(store, KITTY)
        # a batch of sections changes which documents wait, not the document vectors: those are not read again
        assert before is not None and store._last_document_vectors is not None
        assert store._last_document_vectors.unit is before.unit
        found = lib.search(KITTY, mode="semantic").results[0]
        assert found.id == "pets/cats.md" and found.sections[0].heading == "Sleeping"  # a section, not the lead


def test_a_reading_worker_sees_what_the_writer_embedded_after_its_first_search(
    minilm_loaded: None, vault: Path, tmp_path: Path
) -> None:
    # Another connection (a reading HTTP worker, here in the same process) learns of the writer's commits from
    # SQLite's data_version: nothing of this process's own writes tells it.
    with open_lib(vault, tmp_path / "idx") as writer:
        writer.sync()
        assert writer.embedding is not None and writer.vectors is not None
        writer.embedding.chunk_dirty()
        embed_units(writer.vectors, {"ops/backups.md"})
        settings = Settings.load(vault, tmp_path / "idx", embeddings="local", environ={})
        with Library(settings, read_only=True) as reader:
            assert reader.vectors is not None
            assert document_ids(reader.vectors, KITTY) == ["ops/backups.md"]
            embed_units(writer.vectors, {"pets/cats.md", "ops/telescope.md"})
            assert document_ids(reader.vectors, KITTY)[0] == "pets/cats.md"


# -- parity: the kept search against scoring every document in SQL ---------------------------------------------

TOPICS = [
    "Cats sleep most of the day and like warm windowsills.",
    "Nightly PostgreSQL dumps are copied to object storage.",
    "Clean the telescope mirror and collimate it before observing.",
    "Sourdough bread needs a starter fed twice a day.",
    "Rotate the API keys every ninety days and revoke old ones.",
    "Tomatoes want full sun, deep watering and a stake.",
    "The bicycle chain needs oil after a rainy ride.",
    "Invoices are due thirty days after the delivery date.",
    "Keyboard shortcuts speed up editing in the note app.",
    "Hiking boots should be broken in before a long trail.",
]


def write_many(root: Path) -> Path:
    """30 notes in two folders, tagged, each with a description (its own document unit) and two sections long
    enough to be chunks of their own: enough documents for the cut to matter."""
    for i in range(30):
        folder = root / ("home" if i % 2 else "work")
        folder.mkdir(parents=True, exist_ok=True)
        lead, other = TOPICS[i % len(TOPICS)], TOPICS[(i * 3 + 1) % len(TOPICS)]
        first = " ".join(f"{other} Step {k} of note {i}." for k in range(6))
        second = " ".join(f"{lead} Detail {k} of note {i}." for k in range(6))
        (folder / f"note{i:02d}.md").write_text(
            f"---\ntags: [t{i % 3}]\ndescription: {lead} Variant {i}.\n---\n# Note {i}\n\n"
            f"## First\n\n{first}\n\n## Second\n\n{second}\n"
        )
    return root


def straightforward(
    store: VectorStore, query: np.ndarray, limit: int, folder: str | None, tags: Sequence[str], docs: DocFilter
) -> list[VectorHit]:
    """Every embedded document unit scored in SQL, filters in the query (the search before it was kept)."""
    where, args = store._filter_sql(folder, tags, docs)
    rows: list[tuple[Any, ...]] = (
        store._conn()
        .execute(
            "select u.doc_id, u.section_idx, u.text, u.prefix_len, d.title, d.tags, s.heading, s.heading_path, "
            "s.line_start, s.line_end, vec_distance_cosine(v.embedding, ?) as dist "
            "from doc_chunks u join doc_vec v on v.chunk_id = u.id join docs d on d.doc_id = u.doc_id "
            "join sections s on s.doc_id = u.doc_id and s.idx = u.section_idx "
            "where u.embedded = 1 and exists (select 1 from chunks p where p.doc_id = u.doc_id and p.embedded = 0)"
            + (f" and {where.replace('c.doc_id', 'u.doc_id')}" if where else "")
            + " order by dist limit ?",
            (np.ascontiguousarray(query, dtype=np.float32), *args, limit),
        )
        .fetchall()
    )
    return [document_hit(r) for r in rows]


@pytest.fixture
def many(minilm_loaded: None, tmp_path: Path) -> Library:
    lib = open_lib(write_many(tmp_path / "vault"), tmp_path / "idx")
    lib.sync()
    assert lib.embedding is not None and lib.vectors is not None
    lib.embedding.chunk_dirty()
    lib.embedding.embed_documents()
    # a few documents done: their document vectors stand aside, the others' stand in
    embed_units(lib.vectors, {"home/note01.md", "work/note04.md", "work/note10.md"}, sections=True)
    return lib


# (folder, tags, documents kept or left out) on write_many's notes: each filter search applies, and two at once
FILTERS: list[tuple[str | None, tuple[str, ...], DocFilter]] = [
    (None, (), None),
    ("home", (), None),
    (None, ("t1",), None),
    ("work", ("t0",), None),
    (None, (), (True, ["home/note03.md", "work/note06.md", "work/note08.md", "work/note04.md"])),
    (None, (), (False, ["home/note03.md", "work/note06.md", "home/note05.md"])),
]


@pytest.mark.parametrize("limit", [1, 3, 10, 60])
@pytest.mark.parametrize(("folder", "tags", "docs"), FILTERS)
def test_the_kept_search_returns_exactly_what_scoring_every_document_does(
    many: Library, limit: int, folder: str | None, tags: tuple[str, ...], docs: DocFilter
) -> None:
    store = many.vectors
    assert store is not None
    for text in ["warm place for a cat to nap", "database backup", "bread", "sharp garden tools", "Note 7"]:
        query = store.embed_query(text)
        expected = straightforward(store, query, limit, folder, tags, docs)
        assert expected  # every case has documents to find
        assert store._document_hits(query, limit, folder, tags, docs) == expected
    many.close()
