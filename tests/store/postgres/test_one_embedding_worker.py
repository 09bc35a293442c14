"""One embedding worker (index/embedding_worker.py) for both stores: the embedded store's sqlite-vec files and a real
PostgreSQL with pgvector (conftest.py) are filled by the same `EmbeddingWorker` through `store.api.VectorWriter`.
Every document's own vector comes first, semantic and hybrid search use it while the sections wait, and the search
note and `status` say which level is ready, on either store. On PostgreSQL: a writer killed mid-embedding (SIGKILL)
loses nothing and the next run embeds only the rest; another model's vectors are emptied and embedded again; a
schema-5 index is upgraded in place, its section vectors kept. The real MiniLM model, and the loopback
OpenAI-compatible endpoint where the passages sent must be counted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcp_docs.commands import vector_summary
from mcp_docs.embedders import make_embedder
from mcp_docs.index.embedding_worker import EmbeddingWorker
from mcp_docs.library import Library
from mcp_docs.settings import Settings
from tests.server_fixtures import child_env
from tests.store.embedded.test_vector_store import minilm_loaded, write_vault  # noqa: F401 (fixture)
from tests.test_embedders import FAKE_KEY, EmbeddingsServer

from ..memory_store import MemoryStore
from .conftest import new_database

psycopg = pytest.importorskip("psycopg", reason="pip install -e '.[test]' to run the PostgreSQL store tests")

KITTY = "how long does my kitty snooze"  # no word in common with the cats note


def _settings(store: str, vault: Path, tmp: Path, admin_url: str, **kw: object) -> Settings:
    if store == "postgres":
        return Settings.load(vault, tmp / "idx", store="postgres", database_url=new_database(admin_url), **kw)  # type: ignore[arg-type]
    return Settings.load(vault, tmp / "idx", **kw)  # type: ignore[arg-type]


def _endpoint(server: EmbeddingsServer, model: str = "bow") -> dict[str, object]:
    return {
        "embeddings": "openai",
        "environ": {"EMB_KEY": FAKE_KEY},
        "embeddings_base_url": server.base_url,
        "embeddings_model": model,
        "embeddings_api_key_env": "EMB_KEY",
    }


def _sent(server: EmbeddingsServer) -> list[str]:
    return [t for r in server.requests if r["path"].endswith("/embeddings") for t in r["input"]]


def _library(store: str, vault: Path, tmp: Path, admin_url: str) -> Library:
    settings = _settings(store, vault, tmp, admin_url, embeddings="local", environ={})
    if store != "memory":
        return Library(settings)
    # the tests' in-memory store (tests/store/memory_store.py), its documents in a dict: the same worker fills it
    texts = {p.relative_to(vault).as_posix(): p.read_text() for p in sorted(vault.rglob("*.md"))}
    return Library(settings, MemoryStore(settings, texts, make_embedder(settings)))


@pytest.mark.parametrize("store", ["embedded", "postgres", "memory"])
def test_one_worker_embeds_either_store_document_vectors_first(
    store: str, minilm_loaded: None, pg_server: tuple[str, Path], tmp_path: Path
) -> None:
    vault = write_vault(tmp_path / "vault")
    with _library(store, vault, tmp_path, pg_server[0]) as lib:
        lib.sync()
        worker, vectors = lib.embedding, lib.vectors
        assert isinstance(worker, EmbeddingWorker) and vectors is not None  # the same worker on both stores
        worker.chunk_dirty()
        assert worker.embed_documents() == 3  # cats, backups, telescope (empty.md has no text)
        status = vectors.status()
        assert (status["document_vectors"], status["documents_to_embed"], status["embedded"]) == (3, 3, 0)
        assert status["pending"] > 0 and "MiniLM" in status["model"]
        assert vector_summary(status).startswith("document vectors 3 of 3; sections: 0 of ")

        semantic = lib.search(KITTY, mode="semantic")
        assert semantic.mode_used == "semantic" and semantic.results[0].id == "pets/cats.md"
        assert semantic.results[0].sections[0].heading == "Feeding"  # its first section: where the document starts
        assert semantic.note == (
            "Document vectors ready for all 3 documents; sections 0 %: a document whose sections are not embedded "
            "yet is found by its document's vector."
        )
        hybrid = lib.search("kitty dozing afternoon", mode="hybrid")  # no word of it is in any note
        assert [r.id for r in hybrid.results][:1] == ["pets/cats.md"]
        assert "Document vectors ready for all 3 documents; sections 0 %" in (hybrid.note or "")

        worker.build()  # the sections now: their own vectors rank, the document's stands aside
        done = lib.search(KITTY, mode="semantic")
        assert done.note is None and done.results[0].id == "pets/cats.md"
        assert done.results[0].sections[0].heading == "Sleeping"
        status = vectors.status()
        assert status["pending"] == 0 and status["embedded"] == status["chunks"] > 3
        assert status["coverage_percent"] == 100.0 and status["failed"] == 0
        assert lib.index_info().pending_embeddings == 0


# A writer embedding one unit per batch that SIGKILLs itself after `KILL_AFTER` committed batches.
KILLED_WRITER = """
import os, signal, sys
from mcp_docs.index import embedding_worker
from mcp_docs.library import Library
from mcp_docs.settings import Settings

embedding_worker.EMBED_BATCH = 1
settings = Settings.load(sys.argv[1], sys.argv[2] + "/idx", store="postgres", database_url=sys.argv[3],
    embeddings="openai", environ={"EMB_KEY": sys.argv[5]}, embeddings_base_url=sys.argv[4], embeddings_model="bow",
    embeddings_api_key_env="EMB_KEY")
with Library(settings) as lib:
    lib.sync()
    def progress(done, total):
        if done >= int(sys.argv[6]):
            os.kill(os.getpid(), signal.SIGKILL)
    lib.embed(progress)
"""
KILL_AFTER = 5  # passed as "5" to the child


def test_a_writer_killed_mid_embedding_on_postgres_loses_nothing_and_resumes(
    pg_server: tuple[str, Path], tmp_path: Path
) -> None:
    vault = write_vault(tmp_path / "vault")
    url = new_database(pg_server[0])
    with EmbeddingsServer() as server:
        child = subprocess.run(
            [sys.executable, "-c", KILLED_WRITER, str(vault), str(tmp_path), url, server.base_url, FAKE_KEY, "5"],
            env=child_env(),
            capture_output=True,
            timeout=120,
        )
        assert child.returncode == -9, child.stderr.decode()[-2000:]
        first = len(_sent(server))
        settings = Settings.load(vault, tmp_path / "idx", store="postgres", database_url=url, **_endpoint(server))  # type: ignore[arg-type]
        with Library(settings) as lib:
            assert lib.vectors is not None and lib.embedding is not None
            status = lib.vectors.status()
            # the killed run's batches are committed: its three document vectors first, then sections
            assert status["document_vectors"] == 3 and status["embedded"] == KILL_AFTER - 3
            left = status["pending"]
            assert left > 0
            lib.sync()  # nothing changed: the sync keeps every vector
            assert lib.embedding.build() == left  # only the rest is embedded
            after = lib.vectors.status()
            assert after["pending"] == 0 and after["embedded"] == after["chunks"] == KILL_AFTER - 3 + left
            assert len(_sent(server)) - first == left  # no text sent twice
            assert lib.search("restore the postgres dump", mode="hybrid").results[0].id == "ops/backups.md"


def test_another_model_empties_the_vectors_and_embeds_again_on_postgres(
    pg_server: tuple[str, Path], tmp_path: Path
) -> None:
    vault = write_vault(tmp_path / "vault")
    url = new_database(pg_server[0])
    with EmbeddingsServer() as server:
        first = Settings.load(vault, tmp_path / "idx", store="postgres", database_url=url, **_endpoint(server))  # type: ignore[arg-type]
        with Library(first) as lib:
            lib.sync()
            assert lib.embed() > 0
            assert lib.vectors is not None and lib.vectors.status()["model"].endswith(":bow")
        sent = len(_sent(server))
        other = Settings.load(vault, tmp_path / "idx", store="postgres", database_url=url, **_endpoint(server, "bow2"))  # type: ignore[arg-type]
        with Library(other) as lib:
            assert lib.vectors is not None
            status = lib.vectors.status()
            assert status["model"].endswith(":bow2")
            assert status["embedded"] == 0 and status["document_vectors"] == 0  # never two models' vectors mixed
            assert status["pending"] == status["chunks"] > 0
            lib.sync()
            lib.embed()
            assert lib.vectors.status()["embedded"] == status["chunks"]
            assert len(_sent(server)) - sent >= status["chunks"]  # embedded again, with the new model
            assert lib.search("restore the dump", mode="hybrid").results[0].id == "ops/backups.md"


def _make_schema_5(url: str) -> None:
    """The index as an older mcp-docs (schema 5) left it: no document units, no failed column, no model recorded."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("drop table mcp_docs_doc_chunks")
        conn.execute("alter table mcp_docs_chunks drop column failed")
        conn.execute("delete from mcp_docs_meta where key in ('model_id', 'chosen_for')")
        conn.execute("update mcp_docs_meta set value = '5' where key = 'schema_version'")


def test_a_schema_5_index_is_upgraded_in_place_keeping_its_section_vectors(
    pg_server: tuple[str, Path], tmp_path: Path
) -> None:
    vault = write_vault(tmp_path / "vault")
    url = new_database(pg_server[0])
    with EmbeddingsServer() as server:
        settings = Settings.load(vault, tmp_path / "idx", store="postgres", database_url=url, **_endpoint(server))  # type: ignore[arg-type]
        with Library(settings) as lib:
            lib.sync()
            lib.embed()
            assert lib.vectors is not None
            chunks = lib.vectors.status()["embedded"]
        _make_schema_5(url)
        reader = Settings.load(
            store="postgres", database_url=url, reader=True, index_dir=tmp_path / "r", **_endpoint(server)
        )  # type: ignore[arg-type]
        with pytest.raises(Exception, match="schema version 5"):  # a reader never migrates
            Library(reader, read_only=True)
        sent = len(_sent(server))
        with Library(settings) as lib:  # the writer upgrades it
            assert lib.vectors is not None
            assert lib.vectors.status()["embedded"] == chunks  # kept
            report = lib.sync()
            assert report.updated == 4  # every document read again, for its document unit
            status = lib.vectors.status()
            assert status["embedded"] == chunks and status["pending"] == 0  # the section vectors survived
            assert (status["document_vectors"], status["documents_to_embed"]) == (0, 3)
            assert "Document vectors" not in (lib.search("restore drill dump", mode="hybrid").note or "")
            assert lib.embed() == 3
            assert lib.vectors.status()["document_vectors"] == 3
            units = [t for t in _sent(server)[sent:] if t != "restore drill dump"]  # the query, embedded too
            assert len(units) == 3 and all(text.count("\n") >= 1 for text in units)  # the three units, no section
            assert lib.search(KITTY, mode="keyword").results == []  # still the same index: no word in common
            assert lib.search("restore drill dump", mode="hybrid").results[0].id == "ops/backups.md"


def test_an_edit_on_postgres_re_embeds_only_what_changed_and_a_deletion_takes_its_vectors(
    pg_server: tuple[str, Path], tmp_path: Path
) -> None:
    vault = write_vault(tmp_path / "vault")
    url = new_database(pg_server[0])
    with EmbeddingsServer() as server:
        settings = Settings.load(vault, tmp_path / "idx", store="postgres", database_url=url, **_endpoint(server))  # type: ignore[arg-type]
        with Library(settings) as lib:
            lib.sync()
            lib.embed()
            assert lib.vectors is not None
            before = lib.vectors.status()
            cats = vault / "pets" / "cats.md"
            cats.write_text(cats.read_text().replace("sixteen hours", "twenty hours"))
            (vault / "ops" / "backups.md").unlink()
            lib.sync()
            status = lib.vectors.status()
            # the edited section's chunk waits again, and the cats' own unit (its lead reaches that section); the
            # telescope's unit and every other chunk keep their vectors
            assert status["pending"] == 1 and (status["document_vectors"], status["documents_to_embed"]) == (1, 2)
            sent = len(_sent(server))
            assert lib.embed() == 2 and len(_sent(server)) - sent == 2
            assert all("twenty hours" in text for text in _sent(server)[sent:])
            after = lib.vectors.status()
            assert after["chunks"] == before["chunks"] - 2  # the backups note's two chunks went with it
            assert lib.search("restore the dump", mode="semantic").results[0].id != "ops/backups.md"


@pytest.mark.parametrize("store", ["embedded", "postgres"])
def test_what_searches_returned_is_embedded_first_on_either_store(
    store: str, pg_server: tuple[str, Path], tmp_path: Path
) -> None:
    vault = write_vault(tmp_path / "vault")
    with EmbeddingsServer() as server:
        settings = _settings(store, vault, tmp_path, pg_server[0], **_endpoint(server))
        with Library(settings) as lib:
            lib.sync()
            worker, vectors = lib.embedding, lib.vectors
            assert isinstance(worker, EmbeddingWorker) and vectors is not None
            worker.chunk_dirty()
            worker.searched_for(["ops/telescope.md"])  # a search returned it: its unit, then its sections, first
            queue = vectors.pending_batch(1, *worker.searched.order())  # type: ignore[attr-defined]
            assert queue[0][0] < 0 and queue[0][1].startswith("Telescope care")
            worker.embed_documents()
            queue = vectors.pending_batch(100, *worker.searched.order())  # type: ignore[attr-defined]
            titles = [text.split(" > ")[0].split("\n")[0] for _, text in queue]
            # its sections, then the other documents of its folder (ops/), then the rest
            first_other = titles.index("Backups")
            assert set(titles[:first_other]) == {"Telescope care"} and all(cid > 0 for cid, _ in queue)
            assert titles[first_other:] == ["Backups"] * (len(titles) - first_other - titles.count("Cats")) + [
                "Cats"
            ] * titles.count("Cats")
            assert worker.embed_pending() > 0 and vectors.pending() == 0
