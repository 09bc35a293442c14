"""Document-level vectors first (issue 29): every document's own vector (title, description, lead) is embedded
before any section's, semantic and hybrid search use it for the documents whose sections still wait, the note and
`status` say which level is ready, and identical texts are embedded once. Real apsw + sqlite-vec files, the real
MiniLM model, and the loopback OpenAI-compatible endpoint where the passages sent must be counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_docs.commands import vector_summary
from mcp_docs.library import Library
from tests.index.test_vector_store import minilm_loaded, open_lib, vault  # noqa: F401 (fixtures)
from tests.search.test_hybrid import server  # noqa: F401 (fixture)
from tests.test_embedders import EmbeddingsServer, endpoint_settings


def only_documents(lib: Library) -> None:
    """The state ten minutes into a large vault: every document has its own vector, no section has one yet."""
    assert lib.embedding is not None and lib.vectors is not None
    lib.embedding.chunk_dirty()
    assert lib.embedding.embed_documents() == 3  # cats, backups, telescope (empty.md has no text)
    assert lib.vectors.embedded_chunks() == 0 and lib.vectors.pending_sections() > 0


def test_with_only_document_vectors_semantic_search_already_answers_by_meaning(
    minilm_loaded: None, vault: Path, tmp_path: Path
) -> None:
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        only_documents(lib)
        result = lib.search("how long does my kitty snooze", mode="semantic")  # no word in common with the note
        assert result.mode_used == "semantic"  # not 'vectors are not built yet': keyword results
        assert result.results[0].id == "pets/cats.md"
        assert result.results[0].sections[0].heading == "Feeding"  # its first section: where the document starts
        assert result.note == (
            "Document vectors ready for all 3 documents; sections 0 %: a document whose sections are not embedded "
            "yet is found by its document's vector."
        )
        assert lib.vectors is not None
        assert vector_summary(lib.vectors.status()).startswith("document vectors 3 of 3; sections: 0 of ")

        lib.embedding.build()  # the sections now: their own vectors rank, the document's stands aside
        done = lib.search("how long does my kitty snooze", mode="semantic")
        assert done.note is None and done.results[0].id == "pets/cats.md"
        assert done.results[0].sections[0].heading == "Sleeping"


def test_with_only_document_vectors_hybrid_finds_a_page_keyword_search_misses(
    minilm_loaded: None, vault: Path, tmp_path: Path
) -> None:
    with open_lib(vault, tmp_path / "idx") as lib:
        lib.sync()
        only_documents(lib)
        query = "kitty dozing afternoon"  # no word of it is in any note
        assert lib.search(query, mode="keyword").results == []
        hybrid = lib.search(query, mode="hybrid")
        assert hybrid.mode_used == "hybrid" and [r.id for r in hybrid.results][:1] == ["pets/cats.md"]
        assert "Document vectors ready for all 3 documents; sections 0 %" in (hybrid.note or "")
        # and a keyword answer keeps its section: the document's vector scores the section keyword search found
        dumps = lib.search("restore the postgres dump", mode="hybrid")
        assert dumps.results[0].id == "ops/backups.md" and dumps.results[0].sections[0].heading == "Restore drill"


def test_identical_texts_are_embedded_once(tmp_path: Path, server: EmbeddingsServer) -> None:
    # Translations share code blocks and boilerplate: the same section text in three notes is one passage sent.
    vault = tmp_path / "vault"
    vault.mkdir()
    shared = "## Install\n\nRun `pip install mcp-docs` then `mcp-docs serve --root ~/notes`.\n"
    for lang in ("en", "fr", "de"):
        (vault / f"{lang}.md").write_text(f"# Guide\n\n## Intro {lang}\n\nA short introduction in {lang}.\n\n{shared}")
    with Library(endpoint_settings(vault, tmp_path / "idx", server)) as lib:
        lib.sync()
        assert lib.embedding is not None and lib.vectors is not None
        lib.embedding.build()
        sent = [t for r in server.requests if r["path"].endswith("/embeddings") for t in r["input"]]
        install = [t for t in sent if "pip install mcp-docs" in t and t.startswith("Guide > Install")]
        assert len(install) == 1
        status = lib.vectors.status()
        assert status["embedded"] == status["chunks"] == 6 and status["pending"] == 0
        assert all(lib.search("pip install mcp-docs serve", mode="semantic").results)
        found = {r.id for r in lib.search("pip install mcp-docs serve", mode="semantic", max_results=5).results}
        assert found == {"en.md", "fr.md", "de.md"}


@pytest.mark.parametrize("edit", ["# Guide\n\nA new lead paragraph.\n", ""])
def test_a_document_edited_or_emptied_gets_a_new_unit_or_none(
    tmp_path: Path,
    server: EmbeddingsServer,
    edit: str,
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# Guide\n\nThe old lead paragraph.\n\n## More\n\nDetails.\n")
    with Library(endpoint_settings(vault, tmp_path / "idx", server)) as lib:
        lib.sync()
        assert lib.embedding is not None and lib.vectors is not None
        lib.embedding.build()
        assert lib.vectors.document_vectors() == (1, 1)
        (vault / "a.md").write_text(edit)
        lib.sync()
        lib.embedding.build()
        conn = lib.vectors._conn()
        units = conn.execute("select text, embedded from doc_chunks").fetchall()
        if edit:
            assert units == [("Guide\nA new lead paragraph.", 1)]
            assert conn.execute("select count(*) from doc_vec").fetchone()[0] == 1  # the old vector is gone
        else:
            assert units == [] and conn.execute("select count(*) from doc_vec").fetchone()[0] == 0
