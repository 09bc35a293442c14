"""The section chunk vectors search keeps in memory once a collection is embedded (vector_matrices.ChunkVectors):
numpy picks the candidates, SQLite gives their distances, so `knn` answers what scoring every chunk in SQL does,
with every filter; the matrix follows the file (an edit, re-embedded, is found at once) and is not used while the
worker still embeds. Found on the Obsidian help vault: a hybrid search there asks once per language (32 times)
and sqlite-vec read the whole vector table each time (247 ms a search; 59 ms with the matrix). Real apsw +
sqlite-vec files in tmp dirs and the real MiniLM model."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from mcp_docs.library import Library
from mcp_docs.store.embedded.vector_store import DocFilter, VectorStore
from tests.store.embedded.test_document_vectors_kept import FILTERS, write_many
from tests.store.embedded.test_vector_store import minilm_loaded, open_lib  # noqa: F401 (fixtures)


def every_chunk_in_sql(
    store: VectorStore, query: np.ndarray, k: int, folder: str | None, tags: Sequence[str], docs: DocFilter
) -> list[tuple[int, float]]:
    """The k nearest chunks by SQLite's distance over every embedded chunk the filters allow, ties by id."""
    where, args = store._filter_sql(folder, tags, docs)
    allowed = [
        int(r[0])
        for r in store._conn().execute(
            "select c.id from chunks c join docs d on d.doc_id = c.doc_id where c.embedded = 1"
            + (f" and {where}" if where else ""),
            args,
        )
    ]
    rows = store._conn().execute(
        "select v.chunk_id, vec_distance_cosine(v.embedding, ?) as d from json_each(?) j "
        "join vec v on v.chunk_id = j.value order by d, v.chunk_id limit ?",
        (np.ascontiguousarray(query, dtype=np.float32), json.dumps(allowed), k),
    )
    return [(int(r[0]), float(r[1])) for r in rows]


@pytest.fixture
def embedded(minilm_loaded: None, tmp_path: Path) -> Library:
    lib = open_lib(write_many(tmp_path / "vault"), tmp_path / "idx")
    lib.sync()
    assert lib.embedding is not None and lib.vectors is not None
    lib.embedding.build()
    assert lib.vectors.pending_sections() == 0
    return lib


@pytest.mark.parametrize("k", [1, 5, 30, 90])
@pytest.mark.parametrize(("folder", "tags", "docs"), [*FILTERS, ("home", (), (False, ["home/note03.md"]))])
def test_knn_in_memory_returns_what_scoring_every_chunk_does(
    embedded: Library, k: int, folder: str | None, tags: tuple[str, ...], docs: DocFilter
) -> None:
    store = embedded.vectors
    assert store is not None
    assert store._chunk_vectors() is not None  # all embedded: the matrix is what knn reads
    for text in ["warm place for a cat to nap", "database backup", "bread", "sharp garden tools", "Note 7"]:
        query = store.embed_query(text)
        expected = every_chunk_in_sql(store, query, k, folder, tags, docs)
        assert expected
        assert store.knn(query, k, folder, tags, docs) == expected
    embedded.close()


def test_the_matrix_follows_edits_and_stands_aside_while_the_worker_embeds(embedded: Library, tmp_path: Path) -> None:
    store = embedded.vectors
    assert store is not None and embedded.embedding is not None
    query = "zebra stripes confuse biting flies"
    assert store._chunk_vectors() is not None
    before = store.knn(store.embed_query(query), 3)

    note = tmp_path / "vault" / "home" / "note01.md"
    note.write_text("# Zebras\n\n## Stripes\n\nZebra stripes confuse the biting flies that land on horses.\n")
    embedded.sync()
    embedded.embedding.chunk_dirty()
    assert store.pending_sections() > 0 and store._chunk_vectors() is None  # sqlite-vec's own search meanwhile

    embedded.embedding.build()
    after = store.knn(store.embed_query(query), 3)
    assert after != before
    found = embedded.search(query, mode="semantic").results[0]
    assert found.id == "home/note01.md" and found.sections[0].heading == "Stripes"
    embedded.close()


def test_after_an_edit_only_new_vectors_are_read_and_a_reused_chunk_id_is_not_taken_for_the_old_one(
    embedded: Library, tmp_path: Path
) -> None:
    """SQLite gives a new row the highest id + 1: once the last chunks are deleted, a new chunk gets one of their
    ids. The matrix keeps a row only for the same id *and* text."""
    store = embedded.vectors
    assert store is not None and embedded.embedding is not None
    store.knn(store.embed_query("bread"), 5)  # the matrix, read whole
    first = store._last_chunk_vectors
    assert first is not None
    newest = store._conn().execute("select doc_id, max(id) from chunks").fetchone()
    (tmp_path / "vault" / str(newest[0])).unlink()
    embedded.sync()
    embedded.embedding.build()
    (tmp_path / "vault" / "home" / "zebra.md").write_text(
        "# Zebras\n\n## Stripes\n\nZebra stripes confuse the biting flies that land on horses.\n"
    )
    embedded.sync()
    embedded.embedding.build()
    reused = store._conn().execute("select count(*) from chunks where id <= ?", (int(newest[1]),)).fetchone()[0]
    assert reused > len(first.chunk_ids) - 10  # the ids were given again (the premise of this test)
    for text in ["zebra stripes and flies", "bread", "database backup"]:
        query = store.embed_query(text)
        assert store.knn(query, 30) == every_chunk_in_sql(store, query, 30, None, (), None)
    kept = store._last_chunk_vectors
    assert kept is not None and kept is not first
    # the rows of chunks that stayed are the same vectors, carried over rather than read again
    same = [row for row, cid in enumerate(first.chunk_ids) if cid in set(kept.chunk_ids.tolist())][:5]
    assert same and all(
        np.array_equal(first.unit[row], kept.unit[int(np.flatnonzero(kept.chunk_ids == first.chunk_ids[row])[0])])
        for row in same
    )
    assert embedded.search("zebra stripes and flies", mode="semantic").results[0].id == "home/zebra.md"
    embedded.close()
