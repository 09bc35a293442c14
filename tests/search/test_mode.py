"""The mode step, the one fallback every vector-backed search shares: vectors off, not built yet, or an embedder
that fails on the query → keyword results, with a note saying why. Real libraries (Tantivy + sqlite-vec files in
a tmp dir), vectors from an OpenAI-compatible endpoint on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_docs.library import Library
from mcp_docs.search.mode import ModeChoice, choose_mode, embedder_failed
from tests.test_embedders import FAKE_KEY, EmbeddingsServer, endpoint_settings


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmbeddingsServer]:
    monkeypatch.setenv("EMB_KEY", FAKE_KEY)
    with EmbeddingsServer() as srv:
        yield srv


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "tides.md").write_text("# Tides\n\nThe moon pulls the sea: high tide twice a day.\n")
    (root / "bread.md").write_text("# Bread\n\nKnead the dough, let it rise, bake it hot.\n")
    return root


def test_keyword_runs_as_asked_whatever_the_vectors() -> None:
    assert choose_mode("keyword", None) == ModeChoice("keyword")


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_without_vectors_a_vector_mode_answers_by_keyword_and_says_so(library: Library, mode: str) -> None:
    assert library.vectors is None
    assert choose_mode(mode, None) == ModeChoice(  # type: ignore[arg-type]
        "keyword", f"{mode} search is unavailable (embeddings are off): keyword results shown."
    )


def test_vectors_not_built_yet_give_keyword_with_the_reason_then_the_mode_asked_once_built(
    vault: Path, tmp_path: Path, server: EmbeddingsServer
) -> None:
    with Library(endpoint_settings(vault, tmp_path / "idx", server)) as lib:
        lib.sync()
        assert choose_mode("hybrid", lib.vectors) == ModeChoice(
            "keyword", "hybrid search is unavailable (vectors are not built yet): keyword results shown."
        )
        assert lib.embedding is not None
        lib.embedding.build()
        assert choose_mode("hybrid", lib.vectors) == ModeChoice("hybrid")
        assert choose_mode("semantic", lib.vectors) == ModeChoice("semantic")


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_an_embedder_that_fails_on_the_query_gives_keyword_results_and_names_the_failure(
    vault: Path, tmp_path: Path, server: EmbeddingsServer, mode: str
) -> None:
    with Library(endpoint_settings(vault, tmp_path / "idx", server)) as lib:
        lib.sync()
        assert lib.embedding is not None
        lib.embedding.build()
        server.fail_with = 400  # the endpoint refuses the query's embedding (not retried)
        result = lib.search("when is high tide", mode=mode)  # type: ignore[arg-type]
        assert result.mode_used == "keyword"
        assert [r.id for r in result.results] == ["tides.md"]
        assert result.note is not None
        assert result.note.startswith(f"{mode} search failed (") and result.note.endswith("): keyword results shown.")
        assert result.note == embedder_failed(mode, _failure(lib)).note  # type: ignore[arg-type]


def _failure(lib: Library) -> Exception:
    """The error the embedder raises for the same query (the pipeline's note quotes it)."""
    assert lib.vectors is not None
    try:
        lib.vectors.embed_query("when is high tide")
    except Exception as exc:
        return exc
    raise AssertionError("the query was embedded although the endpoint refuses")
