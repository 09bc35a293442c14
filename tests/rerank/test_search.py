"""The rerank stage inside real searches: a real library (Tantivy + sqlite-vec files in a tmp dir), a loopback
reranker, the CLI, and a real MCP client over stdio."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from mcp_docs.cli import main
from mcp_docs.library import Library
from mcp_docs.settings import Settings
from tests.server_fixtures import child_env, serve_args
from tests.test_embedders import FAKE_KEY as EMBEDDINGS_KEY
from tests.test_embedders import EmbeddingsServer

from .fake_server import FAKE_KEY, RerankServer

QUERY = "how do we restore a backup"
# Keyword search puts tapes.md first (five "backup"s, short), then drills.md (both words of the question, though
# its section scores below garden.md's: document_signals); the reranker (shared words) prefers drills.md.
KEYWORD_ORDER = ["tapes.md", "drills.md", "garden.md"]
RERANKED_ORDER = ["drills.md", "tapes.md", "garden.md"]


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rerank") / "vault"
    root.mkdir()
    (root / "tapes.md").write_text(
        "# Tapes\n\nBackup tapes: backup weekly, backup daily, backup often; restore from tape.\n"
    )
    filler = "We keep a spare machine in the basement for this and other chores. " * 6
    (root / "drills.md").write_text(
        f"# Drills\n\n## Monthly drill\n\n{filler}Each month we restore the last backup onto it and time the drill.\n"
    )
    (root / "garden.md").write_text("# Garden\n\nWater the tomatoes; restore the soil with compost.\n")
    (root / "other.md").write_text("# Other\n\nNothing relevant here at all.\n")
    return root


@pytest.fixture(scope="module")
def embeddings() -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer() as srv:
        yield srv


@pytest.fixture
def reranker() -> Iterator[RerankServer]:
    with RerankServer("tei", key=FAKE_KEY) as srv:
        yield srv


def load(vault: Path, index: Path, embeddings: EmbeddingsServer, rerank_url: str | None = None) -> Settings:
    env = {"EMB_KEY": EMBEDDINGS_KEY, "RERANK_KEY": FAKE_KEY, "MCP_DOCS_RERANK_API_KEY_ENV": "RERANK_KEY"}
    return Settings.load(
        vault,
        index,
        embeddings="openai",
        rerank_url=rerank_url,
        environ=env,
        embeddings_base_url=embeddings.base_url,
        embeddings_model="bow",
        embeddings_api_key_env="EMB_KEY",
    )


def ids(library: Library, mode: str = "keyword") -> list[str]:
    return [r.id for r in library.search(QUERY, mode=mode).results]  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "semantic"])
def test_every_mode_is_reranked_after_retrieval(
    vault: Path, tmp_path: Path, embeddings: EmbeddingsServer, reranker: RerankServer, mode: str
) -> None:
    with Library(load(vault, tmp_path / "idx", embeddings)) as plain:
        plain.sync()
        assert plain.embedding is not None
        plain.embedding.build()
        assert ids(plain)[:3] == KEYWORD_ORDER  # without the stage
        assert plain.search(QUERY, mode=mode).reranked is False  # type: ignore[arg-type]
    with Library(load(vault, tmp_path / "idx", embeddings, reranker.url)) as lib:
        result = lib.search(QUERY, mode=mode)  # type: ignore[arg-type]
        assert result.mode_used == mode and result.reranked and result.note is None
        assert [r.id for r in result.results][:3] == RERANKED_ORDER
        assert result.results[0].score == pytest.approx(4 / 6, abs=1e-3)  # the reranker's score leads
        sent = reranker.requests[-1]
        assert sent["auth"] == f"Bearer {FAKE_KEY}"
        assert "Drills > Monthly drill\nWe keep a spare machine" in "".join(sent["texts"])  # heading path, then text


def test_a_failing_reranker_returns_the_retrieval_order_at_once_and_rests(
    vault: Path, tmp_path: Path, embeddings: EmbeddingsServer, reranker: RerankServer
) -> None:
    with Library(load(vault, tmp_path / "idx", embeddings)) as plain:
        plain.sync()
        baseline = plain.search(QUERY, mode="keyword")
    reranker.status = 500
    with Library(load(vault, tmp_path / "idx", embeddings, reranker.url)) as lib:
        result = lib.search(QUERY, mode="keyword")
        assert result.reranked is False and result.results == baseline.results  # ids, scores, sections: unchanged
        assert result.note == (
            "Reranking skipped: the tei reranker answered HTTP 500, so results are in retrieval order (retried in 15 s)."
        )
        calls = len(reranker.requests)
        again = lib.search(QUERY, mode="keyword")
        assert len(reranker.requests) == calls and "failed recently" in (again.note or "")
        assert lib.reranker is not None and lib.reranker.status()["health"] == "down"


def test_cli_search_and_status_show_the_reranker_and_its_health(
    vault: Path,
    tmp_path: Path,
    reranker: RerankServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RERANK_KEY", FAKE_KEY)
    monkeypatch.setenv("MCP_DOCS_RERANK_API_KEY_ENV", "RERANK_KEY")
    common = ["--root", str(vault), "--index-dir", str(tmp_path / "idx"), "--rerank-url", reranker.url]
    assert main(["search", QUERY, "--mode", "keyword", "--json", *common, "--embeddings", "none"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["reranked"] is True and [r["id"] for r in found["results"]][:3] == RERANKED_ORDER

    assert main(["status", "--json", *common]) == 0
    out = capsys.readouterr().out
    status = json.loads(out)["reranker"]
    assert status["kind"] == "tei" and status["target"] == f"{reranker.url}/rerank"
    assert status["health"] == "ok" and status["error"] is None and FAKE_KEY not in out

    reranker.status = 503
    assert main(["status", *common]) == 0
    out = " ".join(capsys.readouterr().out.split())  # rich wraps long lines
    assert f"reranker tei {reranker.url}/rerank, top 30 sections: down: it answered HTTP 503 — searches" in out
    assert FAKE_KEY not in out
    assert main(["status", "--root", str(vault), "--index-dir", str(tmp_path / "idx")]) == 0
    assert "reranker off (set MCP_DOCS_RERANK_URL or MCP_DOCS_RERANK_MODEL_DIR)" in " ".join(
        capsys.readouterr().out.split()
    )


def test_a_bad_rerank_url_is_one_sentence_from_the_cli(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["search", QUERY, "--root", str(vault), "--index-dir", str(tmp_path / "idx"), "--rerank-url", "gpu:8080"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert (
        err == "error: --rerank-url must be an http:// or https:// URL such as http://127.0.0.1:8080, not 'gpu:8080'.\n"
    )


@pytest.mark.anyio
async def test_an_mcp_client_sees_reranked_results_and_the_fallback(vault: Path, tmp_path: Path) -> None:
    with RerankServer("cohere", key=FAKE_KEY) as server:
        env = child_env(
            MCP_DOCS_RERANK_URL=server.url,
            MCP_DOCS_RERANK_API="cohere",
            MCP_DOCS_RERANK_MODEL="rerank-test",
            MCP_DOCS_RERANK_API_KEY_ENV="RERANK_KEY",
            RERANK_KEY=FAKE_KEY,
        )
        params = StdioServerParameters(
            command=sys.executable, args=serve_args(vault, tmp_path / "idx", "--no-watch"), env=env, cwd=str(tmp_path)
        )
        async with Client(params) as client:
            r = await client.call_tool("search_documents", {"query": QUERY, "mode": "keyword"})
            assert r.structured_content is not None
            assert r.structured_content["reranked"] is True
            assert [d["id"] for d in r.structured_content["results"]][:3] == RERANKED_ORDER
            assert server.requests[-1]["model"] == "rerank-test"
            server.raw_body = b'{"results": "not a list"}'
            r = await client.call_tool("search_documents", {"query": "restore the soil", "mode": "keyword"})
            assert r.structured_content is not None and not r.is_error
            assert r.structured_content["reranked"] is False
            assert r.structured_content["results"][0]["id"] == "garden.md"
            assert "so results are in retrieval order" in r.structured_content["note"]
            assert "so results are in retrieval order" in r.content[0].text  # type: ignore[union-attr]
