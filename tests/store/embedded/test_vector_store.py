"""Vector store and semantic/hybrid search: real apsw + sqlite-vec files in tmp dirs, the real MiniLM model
(one load per process), an OpenAI-compatible endpoint on 127.0.0.1 for the model-change case."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import apsw
import pytest

from mcp_docs.embedders import MiniLMEmbedder
from mcp_docs.index import embedding_worker as worker_mod
from mcp_docs.library import Library
from mcp_docs.settings import Settings
from mcp_docs.store.embedded import vector_search as search_mod
from tests.test_embedders import FAKE_KEY, EmbeddingsServer, endpoint_settings

CATS = """---
tags: [pets]
---
# Cats

## Feeding

Adult cats eat twice a day. Wet food keeps a feline hydrated; dry kibble is fine in small amounts.

## Sleeping

A cat naps for up to sixteen hours a day, preferably somewhere warm such as a sunny windowsill.
"""

BACKUPS = """# Backups

## Nightly database dumps

The PostgreSQL database is dumped every night at 02:00 with pg_dump and copied to object storage.

## Restore drill

Once a quarter, restore the latest dump into a scratch server and check the row counts.
"""

LONG_PARAGRAPHS = [
    f"Paragraph {i} talks about telescope maintenance, mirror cleaning and collimation step {i}. " * 4 for i in range(8)
]
TELESCOPE = "# Telescope care\n\n## Routine\n\n" + "\n\n".join(LONG_PARAGRAPHS) + "\n"


def write_vault(root: Path) -> Path:
    (root / "pets").mkdir(parents=True)
    (root / "ops").mkdir()
    (root / "pets" / "cats.md").write_text(CATS)
    (root / "ops" / "backups.md").write_text(BACKUPS)
    (root / "ops" / "telescope.md").write_text(TELESCOPE)
    (root / "empty.md").write_text("# Only a title\n")
    return root


@pytest.fixture(scope="session")
def minilm_loaded() -> None:
    MiniLMEmbedder().load()  # one load per process: every Library below shares this session


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_vault(tmp_path / "vault")


def open_lib(vault: Path, index: Path, **kw: object) -> Library:
    return Library(Settings.load(vault, index, embeddings=kw.pop("embeddings", "local"), environ={}, **kw))


def doc_chunks(lib: Library, doc_id: str) -> int:
    assert lib.vectors is not None
    return lib.vectors._conn().execute("select count(*) from chunks where doc_id = ?", (doc_id,)).fetchone()[0]


# -- chunking -------------------------------------------------------------------------------------

# -- store, with the real model ---------------------------------------------------------------------


def test_sqlite_vec_goes_through_apsw() -> None:
    # The stdlib module here may or may not load extensions; the store never relies on it.
    assert hasattr(apsw.Connection, "enable_load_extension")
    assert sqlite3  # imported only to document the point


def test_opening_with_local_embeddings_does_not_load_the_model(vault: Path, tmp_path: Path) -> None:
    started = time.perf_counter()
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.vectors is not None and lib.vectors.embedder is not None
        assert isinstance(lib.vectors.embedder, MiniLMEmbedder) and lib.vectors.embedder._session is None
        result = lib.search("cat food", mode="hybrid")
        assert result.mode_used == "keyword" and "not built yet" in (result.note or "")
        assert result.index.pending_embeddings >= 3  # three documents with text wait for their chunks
    assert time.perf_counter() - started < 5


def test_build_then_semantic_and_hybrid_search(minilm_loaded: None, vault: Path, tmp_path: Path) -> None:
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.vectors is not None
        embedded = lib.embedding.build()
        status = lib.vectors.status()
        assert status["chunks"] == status["embedded"] > 5
        # every document with text has its own vector too; identical texts are embedded once
        assert status["document_vectors"] == status["documents_to_embed"] == lib.catalog.count() - 1  # not empty.md
        assert status["chunks"] < embedded <= status["chunks"] + status["documents_to_embed"]
        assert status["dimension"] == 384 and status["pending"] == 0 and status["ready"]
        # a paraphrase with no shared keyword
        sem = lib.search("how long does my kitty snooze", mode="semantic")
        assert sem.mode_used == "semantic" and sem.note is None
        assert sem.results[0].id == "pets/cats.md" and sem.results[0].sections[0].heading == "Sleeping"
        assert sem.index.pending_embeddings == 0
        hyb = lib.search("restore the postgres dump", mode="hybrid")
        assert hyb.mode_used == "hybrid" and hyb.results[0].id == "ops/backups.md"
        assert hyb.results[0].sections[0].heading == "Restore drill"
        assert lib.search("restore", mode="keyword").mode_used == "keyword"
        # the document without text has no chunk, and never shows as pending
        assert doc_chunks(lib, "empty.md") == 0


def test_filters_apply_on_the_vector_side(minilm_loaded: None, vault: Path, tmp_path: Path) -> None:
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.vectors is not None
        lib.embedding.build()
        ops = lib.search("kitty sleeping in the sun", mode="semantic", folder="ops")
        assert ops.results and all(r.id.startswith("ops/") for r in ops.results)
        pets = lib.search("database backup", mode="semantic", tags=["pets"])
        assert [r.id for r in pets.results] == ["pets/cats.md"]
        hyb = lib.search("what should my kitty eat", mode="hybrid", tags=["pets"])
        assert [r.id for r in hyb.results] == ["pets/cats.md"]
        # far-off vector hits (below the model's similarity cutoff) are not fused in
        assert lib.search("database backup", mode="hybrid", tags=["pets"]).results == []
        assert lib.search("anything", mode="semantic", tags=["no-such-tag"]).results == []
        # the over-fetch path (filter allows many chunks) gives the same answer as the exact one
        old = search_mod.EXACT_FILTER_MAX
        try:
            search_mod.EXACT_FILTER_MAX = 0
            again = lib.search("kitty sleeping in the sun", mode="semantic", folder="ops")
        finally:
            search_mod.EXACT_FILTER_MAX = old
        assert [r.id for r in again.results] == [r.id for r in ops.results]


def test_editing_one_paragraph_reembeds_only_changed_chunks(minilm_loaded: None, vault: Path, tmp_path: Path) -> None:
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.vectors is not None
        lib.embedding.build()
        before = doc_chunks(lib, "ops/telescope.md")
        assert before >= 4
        text = (vault / "ops" / "telescope.md").read_text()
        (vault / "ops" / "telescope.md").write_text(text.replace(LONG_PARAGRAPHS[7], "A brand new final paragraph."))
        lib.sync()
        assert lib.index_info().pending_embeddings >= 1
        embedded = lib.embedding.build()
        assert 1 <= embedded < before  # only the chunks whose text changed
        assert lib.vectors.pending() == 0
        hit = lib.search("brand new final paragraph", mode="semantic").results[0]
        assert hit.id == "ops/telescope.md"


def test_deleting_a_file_deletes_its_vectors(minilm_loaded: None, vault: Path, tmp_path: Path) -> None:
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.vectors is not None
        lib.embedding.build()
        assert doc_chunks(lib, "pets/cats.md") > 0
        (vault / "pets" / "cats.md").unlink()
        lib.sync()
        assert doc_chunks(lib, "pets/cats.md") == 0
        conn = lib.vectors._conn()
        assert (
            conn.execute("select count(*) from vec").fetchone()[0]
            == conn.execute("select count(*) from chunks").fetchone()[0]
        )
        assert all(r.id != "pets/cats.md" for r in lib.search("cat naps", mode="semantic").results)


def test_an_interrupted_run_resumes(
    minilm_loaded: None, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_mod, "EMBED_BATCH", 2)
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.vectors is not None

        def interrupt(done: int, total: int) -> None:
            if done >= 2:
                raise KeyboardInterrupt

        lib.embedding.chunk_dirty()
        lib.embedding.embed_documents()  # the first phase: every document's own vector
        with pytest.raises(KeyboardInterrupt):
            lib.embedding.build(progress=interrupt)
        total = lib.vectors.status()["chunks"]
        assert lib.vectors.embedded_chunks() == 2
    with open_lib(vault, tmp_path / "idx") as lib:  # a new process, say
        assert lib.vectors is not None
        assert lib.index_info().pending_embeddings == total - 2
        assert lib.embedding.build() == total - 2
        assert lib.vectors.pending() == 0


def test_a_crash_between_catalog_and_vectors_is_caught_up(minilm_loaded: None, vault: Path, tmp_path: Path) -> None:
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.vectors is not None
        lib.embedding.build()
    # the catalog moves on without the vector store listening (as if the process died in between)
    (vault / "ops" / "backups.md").write_text(
        BACKUPS + "\n## Offsite copies\n\nA weekly copy goes to a safe deposit box.\n"
    )
    (vault / "pets" / "cats.md").unlink()
    with open_lib(vault, tmp_path / "idx", embeddings="none") as plain:
        plain.sync()
    with open_lib(vault, tmp_path / "idx") as lib:
        assert lib.vectors is not None
        # backups.md is dirty (one document, counted as the mean chunks per document), cats.md forgotten
        assert lib.vectors.pending_chunks() == 0
        assert lib.vectors.pending() == round(lib.vectors._chunks_per_document() + 1)  # and its own unit
        assert doc_chunks(lib, "pets/cats.md") == 0
        lib.embedding.build()
        assert lib.search("safe deposit box", mode="semantic").results[0].id == "ops/backups.md"


def test_background_worker_fills_in_while_keyword_answers(minilm_loaded: None, vault: Path, tmp_path: Path) -> None:
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        assert lib.vectors is not None
        lib.start_embedding()
        first = lib.search("cat", mode="hybrid")  # answers at once, whatever the worker's progress
        assert first.mode_used in ("keyword", "hybrid")
        assert lib.embedding.wait_idle(60)
        assert lib.search("kitty naps", mode="hybrid").mode_used == "hybrid"
        (vault / "ops" / "new.md").write_text("# Solar panels\n\nClean the photovoltaic panels every spring.\n")
        lib.sync()
        assert lib.embedding.wait_idle(60)
        assert lib.search("photovoltaic cleaning", mode="semantic").results[0].id == "ops/new.md"


def test_changing_the_model_reembeds_and_never_mixes(
    minilm_loaded: None, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = tmp_path / "idx"
    with open_lib(vault, index) as lib:
        lib.sync()
        assert lib.vectors is not None
        n = lib.embedding.build()
        assert lib.vectors.status()["dimension"] == 384
    with EmbeddingsServer() as server:
        monkeypatch.setenv("EMB_KEY", FAKE_KEY)
        with Library(endpoint_settings(vault, index, server)) as lib:
            assert lib.vectors is not None
            assert lib.vectors.status()["chunks"] == 0  # the old model's vectors are gone
            assert lib.embedding.build() == n
            status = lib.vectors.status()
            assert status["dimension"] == 64 and status["model"].endswith(":bow")
            res = lib.search("nightly database dumps", mode="hybrid")
            assert res.mode_used == "hybrid" and res.results[0].id == "ops/backups.md"
    with open_lib(vault, index) as lib:  # back to the default model: rebuilt again, 384 dims
        assert lib.vectors is not None
        assert lib.embedding.build() == n and lib.vectors.status()["dimension"] == 384


def test_unavailable_embedder_falls_back_to_keyword(vault: Path, tmp_path: Path) -> None:
    settings = Settings.load(
        vault, tmp_path / "idx", embeddings="openai", environ={}, embeddings_api_key_env="MCP_DOCS_TEST_NO_SUCH_KEY"
    )
    with Library(settings) as lib:
        lib.sync()
        assert lib.vectors is not None and lib.vectors.embedder is None
        res = lib.search("database", mode="semantic")
        assert res.mode_used == "keyword" and "API key" in (res.note or "")
        assert res.results[0].id == "ops/backups.md"
        assert lib.vectors.status()["error"]


def test_a_damaged_vector_file_is_rebuilt(vault: Path, tmp_path: Path) -> None:
    index = tmp_path / "idx"
    open_lib(vault, index, embeddings="none").close()  # an index folder of ours
    (index / "vectors.sqlite").write_bytes(b"this is not a database" * 100)
    with open_lib(vault, index) as lib:
        lib.sync()
        assert lib.vectors is not None and lib.vectors.status()["chunks"] == 0
        assert lib.index_info().pending_embeddings >= 3
