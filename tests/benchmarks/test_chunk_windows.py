"""benchmarks/chunk_windows.py measures other chunk windows and chunk-to-section rules by replacing one step of the
shipped search (the store's chunk KNN grouped to sections). Its figures mean something only if, given the index's
own chunks and the shipped rule (the best chunk), that step answers as the store does: checked here on a real
index (apsw + sqlite-vec in a tmp dir, the real MiniLM model), in semantic and hybrid search."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmarks import chunk_windows as cw
from tests.store.embedded.test_vector_store import minilm_loaded, open_lib, vault  # noqa: F401 (fixtures)

QUERIES = ["how long does a cat sleep", "restore the database dump", "cleaning the telescope mirror", "kibble"]


def answers(lib, mode: str) -> list[list[tuple[str, float, list[str]]]]:
    out = []
    for q in QUERIES:
        res = lib.search(q, max_results=5, mode=mode)
        out.append([(r.id, round(r.score, 4), [s.heading_path for s in r.sections]) for r in res.results])
    return out


def test_the_index_chunks_scored_by_their_best_answer_as_the_store_does(
    minilm_loaded: None, vault: Path, tmp_path: Path
) -> None:
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.embed() > 0
        store = lib.vectors
        shipped = {mode: answers(lib, mode) for mode in ("semantic", "hybrid")}
        conn = store._conn()
        own = cw.index_chunks(conn)
        assert len(own.keys) == conn.execute("select count(*) from chunks").fetchone()[0] > 3
        cw.use_scores(store, cw.SectionScores(own, cw.document_vectors(conn), cw.scorer("max")))
        try:
            assert "_chunk_hits" in store.__dict__
            for mode in ("semantic", "hybrid"):
                assert answers(lib, mode) == shipped[mode], mode
            # another rule answers otherwise: the replaced step is the one the search reads
            cw.use_scores(store, cw.SectionScores(own, cw.document_vectors(conn), cw.scorer("maxdoc:0.9")))
            assert answers(lib, "semantic") != shipped["semantic"]
        finally:
            cw.use_scores(store, None)
        assert "_chunk_hits" not in store.__dict__
        assert answers(lib, "semantic") == shipped["semantic"]


def test_a_smaller_window_cuts_the_same_sections_finer(vault: Path) -> None:
    ids = ["ops/telescope.md", "ops/backups.md", "pets/cats.md"]
    keys_1000, _, texts_1000 = cw.cut(vault, ids, 1000, 150)
    keys_400, pieces_400, texts_400 = cw.cut(vault, ids, 400, 100)
    assert set(keys_400) == set(keys_1000)
    assert len(texts_400) > len(texts_1000)
    assert max(map(len, texts_400)) <= 400
    assert all(t.endswith(p) for t, p in zip(texts_400, pieces_400, strict=True))


def test_rules_from_chunk_cosines_to_a_section_score() -> None:
    cos = np.array([0.9, 0.5, 0.1, 0.7])  # section 0: three chunks, section 1: one
    starts = np.array([0, 3])
    doc = np.array([0.2, 0.4])
    assert cw.scorer("max")(cos, starts, doc) == pytest.approx([0.9, 0.7])
    assert cw.scorer("mean")(cos, starts, doc) == pytest.approx([0.5, 0.7])
    assert cw.scorer("top2")(cos, starts, doc) == pytest.approx([0.7, 0.7])
    assert cw.scorer("maxmean:0.5")(cos, starts, doc) == pytest.approx([0.7, 0.7])
    assert cw.scorer("maxdoc:0.25")(cos, starts, doc) == pytest.approx([0.725, 0.625])
    with pytest.raises(SystemExit, match="unknown scorer"):
        cw.scorer("median")
