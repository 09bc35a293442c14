"""Rerank settings: read and checked in settings.py, each mistake one sentence naming the variable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_docs.rerank import make_reranker
from mcp_docs.rerank.http import HttpScorer
from mcp_docs.rerank.local import LocalScorer
from mcp_docs.settings import Settings

from .tiny_cross_encoder import write_cross_encoder


def load(tmp_path: Path, flag: str | None = None, **env: str) -> Settings:
    (tmp_path / "root").mkdir(exist_ok=True)
    return Settings.load(tmp_path / "root", tmp_path / "idx", embeddings="none", rerank_url=flag, environ=env)


def test_off_by_default(tmp_path: Path) -> None:
    settings = load(tmp_path)
    assert settings.rerank_url is None and settings.rerank_model_dir is None
    assert make_reranker(settings) is None


def test_an_http_reranker_with_its_key_from_the_named_variable(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        MCP_DOCS_RERANK_URL="https://rerank.example.com/",
        MCP_DOCS_RERANK_API="Cohere",
        MCP_DOCS_RERANK_MODEL="rerank-v3.5",
        MCP_DOCS_RERANK_API_KEY_ENV="CO_API_KEY",
        CO_API_KEY="co-secret-key",
        MCP_DOCS_RERANK_TOP="50",
        MCP_DOCS_RERANK_TIMEOUT="0.5",
    )
    assert settings.rerank_url == "https://rerank.example.com" and settings.rerank_api == "cohere"
    assert (settings.rerank_model, settings.rerank_top, settings.rerank_timeout) == ("rerank-v3.5", 50, 0.5)
    assert settings.rerank_api_key == "co-secret-key" and "co-secret-key" not in repr(settings)
    stage = make_reranker(settings)
    assert stage is not None and isinstance(stage.scorer, HttpScorer)
    assert stage.top == 50 and stage.status()["target"] == "https://rerank.example.com/v1/rerank"
    stage.close()
    assert load(tmp_path, "http://127.0.0.1:9", MCP_DOCS_RERANK_URL="http://other:1").rerank_url == "http://127.0.0.1:9"


def test_a_local_model_folder(tmp_path: Path) -> None:
    folder = write_cross_encoder(tmp_path / "model", ["a b c"], layout="hf")
    stage = make_reranker(load(tmp_path, MCP_DOCS_RERANK_MODEL_DIR=str(folder)))
    assert stage is not None and isinstance(stage.scorer, LocalScorer)
    assert stage.status() == {
        "kind": "local",
        "target": str(folder),
        "top": 30,
        "health": "not used yet",
        "error": None,
        "retry_in_seconds": None,
        "last_call_ms": None,
    }
    assert stage.probe()["health"] == "ok"
    stage.close()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MCP_DOCS_RERANK_URL": "ftp://host"}, "MCP_DOCS_RERANK_URL must be an http:// or https:// URL"),
        ({"MCP_DOCS_RERANK_URL": "http://host with space"}, "MCP_DOCS_RERANK_URL must be an http:// or https:// URL"),
        ({"MCP_DOCS_RERANK_URL": "http://h", "MCP_DOCS_RERANK_API": "openai"}, "Unknown MCP_DOCS_RERANK_API 'openai'"),
        (
            {"MCP_DOCS_RERANK_URL": "http://h", "MCP_DOCS_RERANK_API_KEY_ENV": "NOPE"},
            "MCP_DOCS_RERANK_API_KEY_ENV names NOPE, which is not set",
        ),
        ({"MCP_DOCS_RERANK_URL": "http://h", "MCP_DOCS_RERANK_MODEL_DIR": "."}, "keep one reranker"),
        ({"MCP_DOCS_RERANK_MODEL_DIR": "/nonexistent/model"}, "is not a folder"),
        ({"MCP_DOCS_RERANK_TOP": "0"}, "MCP_DOCS_RERANK_TOP must be a positive number"),
        ({"MCP_DOCS_RERANK_TOP": "5000"}, "MCP_DOCS_RERANK_TOP must be at most 200"),
        ({"MCP_DOCS_RERANK_TIMEOUT": "soon"}, "MCP_DOCS_RERANK_TIMEOUT must be a positive number"),
    ],
)
def test_each_mistake_is_one_sentence(tmp_path: Path, env: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        load(tmp_path, **env)
    text = str(raised.value)
    assert text.endswith(".") and "\n" not in text


@pytest.mark.parametrize(
    "url", ["http://user:hunter2pw@gpu host:8080", "user:hunter2pw@gpu:8080", "ftp://u:hunter2pw@h"]
)
def test_a_bad_url_with_credentials_is_refused_without_repeating_them(tmp_path: Path, url: str) -> None:
    for given in ({"flag": url}, {"MCP_DOCS_RERANK_URL": url}):
        with pytest.raises(ValueError, match="must be an http:// or https:// URL") as raised:
            load(tmp_path, **given)
        assert "hunter2pw" not in str(raised.value) and "gpu" not in str(raised.value)


def test_a_url_with_credentials_and_a_key_is_refused_rather_than_one_dropped(tmp_path: Path) -> None:
    """httpx sends a URL's user:password as Basic auth, replacing the Authorization header: the bearer key was
    silently never sent."""
    env = {"MCP_DOCS_RERANK_API_KEY_ENV": "RK", "RK": "sk-bearer-key"}
    with pytest.raises(ValueError, match="keep one") as raised:
        load(tmp_path, MCP_DOCS_RERANK_URL="https://user:hunter2pw@rerank.example.com", **env)
    assert "hunter2pw" not in str(raised.value) and "sk-bearer-key" not in str(raised.value)
    with pytest.raises(ValueError, match="keep one"):  # the scorer refuses the pair too, whoever builds it
        HttpScorer("https://user:hunter2pw@rerank.example.com", "tei", api_key="sk-bearer-key")
    alone = load(tmp_path, MCP_DOCS_RERANK_URL="https://user:hunter2pw@rerank.example.com")  # Basic auth alone: fine
    assert alone.rerank_url == "https://user:hunter2pw@rerank.example.com"
