"""One overall deadline per search for the reranker: a service that trickles its answer, or answers each of
several requests slowly, costs a search at most MCP_DOCS_RERANK_TIMEOUT, counts as a failure (the cool-down
starts), and never holds a server thread or the server's exit. Real loopback rerankers; short deadlines."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest

from mcp_docs.rerank.base import RerankStage
from mcp_docs.rerank.http import HttpScorer
from tests.server_fixtures import child_env, free_port, serve_args

from .fake_server import RerankServer
from .test_http import QUERY, TEXTS, Clock

DEADLINE = 0.5


@pytest.fixture
def server() -> Iterator[RerankServer]:
    with RerankServer("tei") as srv:
        yield srv


def stage_for(server: RerankServer, deadline: float = DEADLINE, top: int = 30) -> RerankStage:
    # as make_reranker builds it: the HTTP timeout and the stage's deadline are the one setting
    return RerankStage(HttpScorer(server.url, "tei", timeout=deadline), top=top, clock=Clock(), deadline=deadline)


@pytest.mark.parametrize("trickle_from", ["body", "headers"])
def test_a_trickling_reranker_costs_one_deadline_and_starts_the_cool_down(
    server: RerankServer, trickle_from: str
) -> None:
    """One byte every 0.2 s never trips a per-read timeout of 0.5 s: the search waited for ever (over 100 s in
    the review) and held its server thread meanwhile."""
    server.trickle, server.trickle_from = 0.2, trickle_from
    stage = stage_for(server)
    started = time.monotonic()
    outcome = stage.rerank(QUERY, TEXTS, str)
    took = time.monotonic() - started
    assert outcome.order is None and took < DEADLINE + 1.0, took
    assert outcome.note is not None and "did not answer within 0.5 s" in outcome.note
    assert stage.status()["health"] == "down"  # counted as a failure: the next searches skip it
    again = time.monotonic()
    assert "failed recently" in (stage.rerank("other", TEXTS, str).note or "")
    assert time.monotonic() - again < 0.1 and len(server.requests) == 1
    stage.close()


def test_the_requests_of_one_search_go_out_together(server: RerankServer) -> None:
    """100 candidates are 4 requests of at most 32 texts: one after another at 0.4 s each they took 1.6 s, past
    a 1.2 s deadline; together they take one request's time."""
    server.delay = 0.4
    texts = [f"note {i} about the backup drill" for i in range(100)]
    stage = stage_for(server, deadline=1.2, top=100)
    started = time.monotonic()
    outcome = stage.rerank(QUERY, texts, str)
    took = time.monotonic() - started
    assert outcome.reranked, outcome.note
    assert sorted(len(r["texts"]) for r in server.requests) == [4, 32, 32, 32]
    assert took < 1.2, took
    stage.close()


def test_slow_requests_past_the_deadline_are_a_failure_not_a_late_success(server: RerankServer) -> None:
    """The review: with a top of 200, requests each within the timeout added up to 10 s and the search said
    `reranked: true`. Here a service that answers one request at a time, 0.3 s each: three requests are
    0.9 s, past the 0.5 s deadline, though no single read waits more than 0.3 s."""
    server.delay, server.one_at_a_time = 0.3, True
    texts = [f"note {i} about the backup drill" for i in range(70)]
    stage = stage_for(server, top=70)
    started = time.monotonic()
    outcome = stage.rerank(QUERY, texts, str)
    assert not outcome.reranked and time.monotonic() - started < DEADLINE + 0.3
    assert "did not answer within 0.5 s" in (outcome.note or "")
    assert stage.status()["health"] == "down"
    stage.close()


def test_the_http_server_answers_searches_and_stops_at_once_beside_a_trickling_reranker(
    tmp_path: Path, server: RerankServer
) -> None:
    """The review: 45 searches beside a trickling reranker took every tool thread (a read_document timed out),
    and SIGTERM did not stop the server. Now they all come back within a few deadlines, in retrieval order with
    the note, a read answers meanwhile, /health calls the reranker down, and SIGTERM stops the server although
    scoring threads still hang on the service."""
    server.trickle = 0.1
    root = tmp_path / "vault"
    root.mkdir()
    (root / "backup.md").write_text("# Backup\n\nRestore the backup drill every month.\n")
    port = free_port()
    env = child_env(MCP_DOCS_RERANK_URL=server.url, MCP_DOCS_RERANK_TIMEOUT=str(DEADLINE))
    args = serve_args(root, tmp_path / "idx", "--transport", "http", "--port", str(port), "--no-watch", "--stateless")
    proc = subprocess.Popen([sys.executable, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}

    def call(name: str, arguments: dict[str, object]) -> tuple[dict[str, object], float]:
        started = time.monotonic()
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        reply = httpx2.post(f"{url}/mcp", json=message, headers=headers, timeout=60)
        result = _payload(reply)["result"]
        assert isinstance(result, dict)
        return result, time.monotonic() - started

    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
            try:
                if httpx2.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx2.HTTPError:
                time.sleep(0.1)
        searches = [("search_documents", {"query": f"backup drill {i}", "mode": "keyword"}) for i in range(45)]
        with ThreadPoolExecutor(len(searches) + 1) as pool:
            pending = [pool.submit(call, name, arguments) for name, arguments in searches]
            time.sleep(0.2)  # the searches hold their threads now: a read must still get one
            read, read_took = pool.submit(call, "read_document", {"id": "backup.md"}).result()
            answers = [f.result() for f in pending]
        assert not read.get("isError") and "Restore the backup drill" in str(read["structuredContent"])
        assert read_took < 10, read_took
        for result, took in answers:
            found = result["structuredContent"]
            assert isinstance(found, dict) and found["reranked"] is False and found["results"][0]["id"] == "backup.md"
            assert "Reranking skipped" in str(found["note"]) and took < 10, (found["note"], took)
        assert httpx2.get(f"{url}/health", timeout=5).json()["reranker"] == "down"
        stopping = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
        assert time.monotonic() - stopping < 5
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _payload(reply: httpx2.Response) -> dict[str, object]:
    """The JSON-RPC message of a Streamable HTTP reply, plain JSON or one server-sent event."""
    if reply.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in reply.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])  # type: ignore[no-any-return]
    return reply.json()  # type: ignore[no-any-return]
