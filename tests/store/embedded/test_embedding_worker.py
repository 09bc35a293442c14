"""The embedding worker: resumption after an interruption (counted in the store), the order (what searches returned,
then newest first), inputs the model rejects, a model that cannot load, and what progress and `status` say meanwhile.
Real SQLite files, the real MiniLM model or a loopback embeddings endpoint; a small stand-in embedder only where the
real one cannot be made to fail on one input."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from mcp_docs.commands import progress_detail, vector_summary
from mcp_docs.embedders import EmbedderError, MiniLMEmbedder
from mcp_docs.index import embedding_worker as worker_mod
from mcp_docs.index.embedding_worker import EmbeddingWorker, SearchedFirst
from mcp_docs.library import Library
from mcp_docs.store.embedded.vector_store import FAILED, VectorStore
from tests.search.test_hybrid import server  # noqa: F401 (fixtures)
from tests.store.embedded.test_vector_store import doc_chunks, minilm_loaded, open_lib, vault  # noqa: F401 (fixtures)
from tests.test_embedders import EmbeddingsServer, endpoint_settings


def stored_vectors(store: VectorStore) -> dict[int, bytes]:
    return dict(store._conn().execute("select chunk_id, embedding from vec").fetchall())


def chunk_docs(store: VectorStore, ids: Sequence[int]) -> set[str]:
    conn = store._conn()
    return {conn.execute("select doc_id from chunks where id = ?", (i,)).fetchone()[0] for i in ids}


class Interrupt(Exception):
    pass


def interrupt_after(n: int):  # type: ignore[no-untyped-def]
    def progress(done: int, total: int) -> None:
        if done >= n:
            raise Interrupt

    return progress


def test_an_interrupted_run_resumes_without_reembedding(
    minilm_loaded: None,
    vault: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker_mod, "EMBED_BATCH", 3)
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.vectors is not None
        lib.embedding.chunk_dirty()
        lib.embedding.embed_documents()  # the first phase: every document's own vector
        with pytest.raises(Interrupt):
            lib.embedding.build(progress=interrupt_after(3))
        first = stored_vectors(lib.vectors)
        total = lib.vectors.status()["chunks"]
        assert len(first) == 3 and lib.vectors.embedded_chunks() == 3
    with open_lib(vault, tmp_path / "idx") as lib:  # the next run, as a new process would
        assert lib.vectors is not None
        state = lib.vectors.status()
        assert state["embedded"] == 3 and state["pending"] == total - 3
        assert 0 < state["coverage_percent"] < 100
        assert lib.embedding.build() == total - 3  # only what was missing
        after = stored_vectors(lib.vectors)
        assert len(after) == total and all(after[cid] == vec for cid, vec in first.items())  # kept, not redone
        assert lib.vectors.status()["coverage_percent"] == 100.0


def test_the_worker_stops_between_batches_and_keeps_what_it_committed(
    minilm_loaded: None,
    vault: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker_mod, "EMBED_BATCH", 2)
    stop = threading.Event()
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.vectors is not None
        lib.embedding.chunk_dirty()
        lib.embedding.embed_documents()
        total = lib.vectors.pending_chunks()

        def stop_after_first(done: int, total: int) -> None:
            if done:
                stop.set()

        assert lib.embedding.embed_pending(stop, progress=stop_after_first) == 2
        assert lib.vectors.embedded_chunks() == 2 and lib.vectors.pending_chunks() == total - 2


def test_recently_modified_documents_are_embedded_first(
    minilm_loaded: None,
    vault: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker_mod, "EMBED_BATCH", 1)
    newest = "ops/telescope.md"  # last in name order, first in modification time
    for age, path in enumerate(sorted(vault.rglob("*.md"))):
        age = 0 if path == vault / newest else age + 1
        os.utime(path, ns=(1_700_000_000_000_000_000 - age * 10**12,) * 2)
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.vectors is not None
        lib.embedding.chunk_dirty()
        conn = lib.vectors._conn()
        newest_chunks = conn.execute("select count(*) from chunks where doc_id = ?", (newest,)).fetchone()[0]
        lib.embedding.embed_documents()  # every document's own vector first, then the sections, newest first
        with pytest.raises(Interrupt):
            lib.embedding.embed_pending(progress=interrupt_after(newest_chunks))
        assert chunk_docs(lib.vectors, list(stored_vectors(lib.vectors))) == {newest}
        # An edit while the rest waits: the edited document comes next, before the older ones.
        (vault / "pets" / "cats.md").write_text("# Cats\n\nCats chase laser pointers at dusk.\n")
        lib.sync()
        before = set(stored_vectors(lib.vectors))
        # its new unit comes next; its one section says the same words, so it has its vector with it
        assert lib.embedding.embed_documents() == 1
        assert chunk_docs(lib.vectors, list(set(stored_vectors(lib.vectors)) - before)) == {"pets/cats.md"}


def searched_vault(root: Path) -> Path:
    """Two folders of three documents; the one a search will find is the oldest, so newest-first does it last."""
    for folder in ("guides", "notes"):
        (root / folder).mkdir(parents=True)
        for i in range(3):
            # a description: the document's own unit is then not the same text as its one section
            (root / folder / f"{i}.md").write_text(
                f"---\ndescription: note {i} of {folder}\n---\n# {folder} {i}\n\nPlain text number {i} about {folder}.\n"
            )
    (root / "guides" / "helm.md").write_text("# Helm\n\n## Chart\n\nInstall the collector with the Helm chart.\n")
    for age, path in enumerate(sorted(root.rglob("*.md"), key=lambda p: (p.name != "helm.md", str(p)))):
        os.utime(path, ns=(1_700_000_000_000_000_000 + age * 10**12,) * 2)
    return root


def embedded_in_order(lib: Library, chunks: int) -> list[tuple[str, str]]:
    """(document, "document" or "section") of the next `chunks` units the worker embeds, in that order (one per
    batch; a section chunk whose text was already embedded gets its vector with it and is not listed)."""
    assert lib.vectors is not None and lib.embedding is not None
    conn = lib.vectors._conn()
    order: list[tuple[str, str]] = []
    seen: set[tuple[str, int]] = set()

    def record(done: int, total: int) -> None:
        listed = len(order)
        for table, level in (("doc_chunks", "document"), ("chunks", "section")):
            rows = conn.execute(f"select id, doc_id from {table} where embedded = 1 order by id").fetchall()
            new = [(cid, doc_id) for cid, doc_id in rows if (level, cid) not in seen]
            if len(order) == listed:  # a section of the same text as the document unit just embedded comes with it
                order.extend((doc_id, level) for _, doc_id in new)
            seen.update((level, cid) for cid, _ in new)
        if done >= chunks:
            raise Interrupt

    with pytest.raises(Interrupt):
        lib.embedding.embed_pending(progress=record)
    return order


@pytest.fixture
def chunked(tmp_path: Path, server: EmbeddingsServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Library]:
    """searched_vault indexed and chunked through the loopback endpoint, nothing embedded, one chunk per batch."""
    monkeypatch.setattr(worker_mod, "EMBED_BATCH", 1)
    vault = searched_vault(tmp_path / "vault")
    with Library(endpoint_settings(vault, tmp_path / "idx", server)) as lib:
        lib.sync()
        assert lib.embedding is not None
        lib.embedding.chunk_dirty()
        yield lib


def test_documents_recent_searches_returned_are_embedded_first_then_their_folder(chunked: Library) -> None:
    helm = doc_chunks(chunked, "guides/helm.md")
    folder = sum(doc_chunks(chunked, f"guides/{i}.md") for i in range(3))
    # Nothing embedded yet: the search answers by keyword, and what it returned goes to the front.
    result = chunked.search("helm chart", max_results=1)
    assert result.mode_used == "keyword" and [r.id for r in result.results] == ["guides/helm.md"]
    documents = chunked.catalog.count()
    order = embedded_in_order(chunked, documents + helm + folder)
    # every document's own vector first, the one the search returned first of all
    assert order[0] == ("guides/helm.md", "document")
    assert all(level == "document" for _, level in order[:documents])
    assert len({doc for doc, _ in order[:documents]}) == documents
    # then the sections: those of the search's document, then of its neighbours, before notes/
    sections = order[documents:]
    assert sections[:helm] == [("guides/helm.md", "section")] * helm
    assert all(d.startswith("guides/") for d, _ in sections[helm:])


def test_without_searches_the_newest_documents_come_first(chunked: Library) -> None:
    assert embedded_in_order(chunked, 1) == [("notes/2.md", "document")]  # the most recently modified


def test_the_searched_documents_are_remembered_most_recent_first_and_bounded() -> None:
    searched = SearchedFirst(docs=3, folders=2)
    searched.note(["a/1.md", "b/1.md"])
    searched.note(["c/1.md", "a/1.md"])
    assert searched.order() == (["c/1.md", "a/1.md", "b/1.md"], ["c", "a"])
    searched.note(["d.md"])
    assert searched.order() == (["d.md", "c/1.md", "a/1.md"], ["", "c"])


class PickyEmbedder:
    """Hash vectors; rejects any batch holding the word 'poison' (as a tokenizer may reject one odd input)."""

    kind = "test"
    model_id = "picky-8"
    dim = 8
    max_chars = 1000
    batch_size = 8
    min_similarity = 0.0

    def load(self) -> None:
        pass

    def close(self) -> None:
        pass

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if any("poison" in t for t in texts):
            raise ValueError("input rejected")
        rows = [np.frombuffer(t.encode().ljust(8, b"_")[:8], dtype=np.uint8).astype(np.float32) + 1 for t in texts]
        v = np.stack(rows)
        return np.ascontiguousarray(v / np.linalg.norm(v, axis=1, keepdims=True), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_passages([text])[0]


def worker_with(lib: Library, embedder: object) -> EmbeddingWorker:
    """A second store on the library's file with another embedder, and a worker to fill it."""
    assert lib.vectors is not None
    store = VectorStore(lib.vectors.path, lib.catalog, embedder)  # type: ignore[arg-type]
    return EmbeddingWorker(store, lib.jail, lib.settings)


def test_a_chunk_the_model_rejects_is_skipped_the_rest_is_embedded(vault: Path, tmp_path: Path) -> None:
    (vault / "ops" / "odd.md").write_text("# Odd\n\nThis paragraph carries poison for the model.\n")
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        worker = worker_with(lib, PickyEmbedder())
        store = worker.store
        worker.build()
        state = store.status()
        assert state["failed"] == 1 and state["pending"] == 0 and state["embedded"] == state["chunks"] - 1
        odd = store._conn().execute("select embedded from chunks where doc_id = 'ops/odd.md'").fetchall()
        assert odd == [(FAILED,)]
        assert worker.build() == 0  # not retried on every run
        assert "1 rejected by the model (skipped)" in vector_summary(state)
        assert lib.search("restore drill", mode="keyword").results
        store.close()


def test_a_model_that_fails_to_load_leaves_keyword_search_and_a_reason_in_status(vault: Path, tmp_path: Path) -> None:
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        worker = worker_with(lib, MiniLMEmbedder(model_path=tmp_path / "missing.onnx"))
        with pytest.raises(EmbedderError, match="missing"):
            worker.build()
        worker.store.close()
        assert lib.search("restore drill").results[0].id == "ops/backups.md"  # keyword still answers
    with open_lib(vault, tmp_path / "idx") as lib:  # `mcp-docs status` is another process
        assert lib.vectors is not None
        state = lib.vectors.status()
        assert "embedding model file missing" in state["error"] and state["embedded"] == 0


def test_status_gives_coverage_and_time_left_from_the_last_rate(
    minilm_loaded: None,
    vault: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker_mod, "EMBED_BATCH", 2)
    monkeypatch.setattr(worker_mod, "RATE_SAVE_SECONDS", 0.0)
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.vectors is not None
        fresh = lib.vectors.status()
        assert fresh["coverage_percent"] == 0.0 and fresh["eta_seconds"] is None and fresh["pending"] > 0
        assert "pending (time left known once embedding has run)" in vector_summary(fresh)
        lib.embedding.chunk_dirty()
        lib.embedding.embed_documents()
        with pytest.raises(Interrupt):
            lib.embedding.build(progress=interrupt_after(4))
    with open_lib(vault, tmp_path / "idx") as lib:
        assert lib.vectors is not None
        state = lib.vectors.status()
        assert state["rate_chunks_per_s"] and state["eta_seconds"] and state["eta_seconds"] > 0
        text = vector_summary(state)
        assert f"4 of {state['chunks']} chunks embedded ({state['coverage_percent']}%)" in text
        assert " left at " in text and "?" not in text


def test_progress_text_never_shows_an_unknown_total_or_eta() -> None:
    assert progress_detail(0, None, "files", 0.0) == ""  # the stage name alone ('scanning files') says it
    assert progress_detail(0, 8273, "chunks", 0.0) == "0/8,273 chunks"
    assert progress_detail(0, 8273, "chunks", 0.0, prior_rate=20.0) == "0/8,273 chunks · 20.0 chunks/s · ETA 6:54"
    assert progress_detail(100, 8273, "chunks", 5.0) == "100/8,273 chunks · 20.0 chunks/s · ETA 6:49"
    assert progress_detail(8273, 8273, "chunks", 400.0) == "8,273/8,273 chunks"
    assert progress_detail(10, 100_000, "chunks", 1.0).endswith("ETA 2:46:39")
    # a stage that reports for the first time with much done: no rate from a few microseconds
    assert progress_detail(4_000, 8_000, "documents", 0.0001) == "4,000/8,000 documents"
    assert progress_detail(4_000, 8_000, "documents", 0.0001, prior_rate=20.0).endswith("20.0 documents/s · ETA 3:20")
