"""HTTP rerankers against a real loopback server, in both wire formats, answering well and badly; the stage around
them falls back to the retrieval order with one sentence, backs off, and caches."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pytest

from mcp_docs.rerank.base import FIRST_COOLDOWN_SECONDS, RerankError, RerankStage
from mcp_docs.rerank.http import HttpScorer

from .fake_server import FAKE_KEY, RerankServer

QUERY = "restore the backup drill"
TEXTS = ["install an agent", "monthly restore drill of the backup", "backup disks", "drill a hole"]
BEST_FIRST = [1, 2, 3, 0]  # by shared words: 4, 1, 1 (ties keep order), 0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["tei", "cohere"])
def server(request: pytest.FixtureRequest) -> Iterator[RerankServer]:
    with RerankServer(request.param, key=FAKE_KEY) as srv:
        yield srv


def scorer_for(server: RerankServer, timeout: float = 2.0, url: str | None = None) -> HttpScorer:
    return HttpScorer(url or server.url, server.api, model="rerank-test", api_key=FAKE_KEY, timeout=timeout)


def stage_for(server: RerankServer, clock: Clock | None = None, **kw: float) -> RerankStage:
    return RerankStage(scorer_for(server, **kw), top=30, clock=clock or Clock())


def test_both_wire_formats_score_in_the_order_sent_and_send_what_the_providers_document(server: RerankServer) -> None:
    scorer = scorer_for(server)
    scores = scorer.score(QUERY, TEXTS)  # the server answers best first: the client maps back by index
    assert scores == pytest.approx([0.0, 1.0, 0.25, 0.25])
    sent = server.requests[-1]
    assert sent["auth"] == f"Bearer {FAKE_KEY}" and sent["query"] == QUERY
    if server.api == "tei":  # Text Embeddings Inference: POST /rerank {query, texts, truncate}
        assert sent["path"] == "/rerank" and sent["texts"] == TEXTS and sent["truncate"] is True
    else:  # Cohere / Jina / vLLM: POST /v1/rerank {model, query, documents, top_n}
        assert sent["path"] == "/v1/rerank" and sent["documents"] == TEXTS
        assert sent["model"] == "rerank-test" and sent["top_n"] == len(TEXTS)
    scorer.close()


def test_the_stage_reorders_the_candidates_and_keeps_the_rest_behind(server: RerankServer) -> None:
    stage = stage_for(server)
    stage.top = 3  # the fourth candidate is not re-scored: it follows, in its place
    outcome = stage.rerank(QUERY, TEXTS, str)
    assert outcome.reranked and outcome.note is None
    assert outcome.order is not None
    assert [i for i, _ in outcome.order] == [1, 2, 0, 3]
    assert outcome.order[-1] == (3, 0.0)
    assert len(server.requests[-1].get("texts") or server.requests[-1]["documents"]) == 3
    stage.close()


def test_more_texts_than_a_request_may_carry_go_in_several_requests(server: RerankServer) -> None:
    texts = [f"note {i} about the {'backup' if i % 10 == 0 else 'garden'}" for i in range(70)]
    scores = scorer_for(server).score(QUERY, texts)
    # sent together (tests/rerank/test_deadline.py), so they arrive in any order
    assert sorted(len(r.get("texts") or r["documents"]) for r in server.requests) == [6, 32, 32]
    assert scores == pytest.approx([0.5 if i % 10 == 0 else 0.25 for i in range(70)])


def test_candidates_past_the_top_never_pass_a_rescored_one_even_with_raw_negative_scores(
    server: RerankServer,
) -> None:
    field = "score" if server.api == "tei" else "relevance_score"
    items = f'{{"index": 0, "{field}": -7.5}}, {{"index": 1, "{field}": -2.0}}'
    server.raw_body = f"[{items}]".encode() if server.api == "tei" else f'{{"results": [{items}]}}'.encode()
    stage = stage_for(server)
    stage.top = 2
    outcome = stage.rerank(QUERY, TEXTS, str)
    assert outcome.order == [(1, -2.0), (0, -7.5), (2, -7.5), (3, -7.5)]
    stage.close()


def test_scores_are_cached_by_query_and_text(server: RerankServer) -> None:
    stage = stage_for(server)
    first = stage.rerank(QUERY, TEXTS, str)
    assert len(server.requests) == 1
    assert stage.rerank(QUERY, TEXTS, str) == first and len(server.requests) == 1  # no second call
    changed = [*TEXTS[:3], "restore a backup"]
    again = stage.rerank(QUERY, changed, str)
    sent = server.requests[-1].get("texts") or server.requests[-1]["documents"]
    assert len(server.requests) == 2 and sent == ["restore a backup"]  # only the new text is scored
    assert again.order is not None and [i for i, _ in again.order][:2] == [1, 3]
    stage.rerank("another question", TEXTS, str)
    assert len(server.requests) == 3  # the query is part of the key
    stage.close()


FAULTS = {
    "500": ({"status": 500}, "answered HTTP 500"),
    "401": ({"status": 401}, "answered HTTP 401 (check the key"),
    "too many texts": ({"max_texts": 2}, "answered HTTP 422 (the request was refused: check the service's input"),
    "not JSON": ({"raw_body": b"<html>Bad gateway</html>"}, "answered a body that is not JSON"),
    "wrong shape": ({"raw_body": b'{"error": null}'}, "answered JSON that is not"),
    "a score missing": ({"drop": 1}, "returned 3 scores for 4 texts"),
    "repeated index": ({"raw_body": b"REPEATED"}, "missing, repeated or out-of-range index"),
    "NaN score": ({"raw_body": b"NAN"}, 'without a numeric "'),
    "string score": ({"raw_body": b"STRING"}, 'without a numeric "'),
    # Python's json reads these, then they broke the checks ("failed unexpectedly" and a traceback in the log)
    "deep JSON": ({"raw_body": b"[" * 100_000 + b"]" * 100_000}, "answered JSON nested too deeply"),
    "huge integer score": ({"raw_body": b"HUGE"}, 'without a numeric "'),
    "over-long integer": ({"raw_body": b"1" * 5000}, "holds a number too long to read"),
}


def _bad_body(server: RerankServer, kind: bytes) -> bytes:
    """Answers in the server's own format that are wrong inside: a repeated index, NaN or text as a score."""
    if kind not in (b"REPEATED", b"NAN", b"STRING", b"HUGE"):
        return kind
    field = "score" if server.api == "tei" else "relevance_score"
    value = {"REPEATED": "0.5", "NAN": "NaN", "STRING": '"high"', "HUGE": "1" + "0" * 400}[kind.decode()]
    indexes = [0, 0, 1, 2] if kind == b"REPEATED" else [0, 1, 2, 3]
    items = ", ".join(f'{{"index": {i}, "{field}": {value}}}' for i in indexes)
    return f"[{items}]".encode() if server.api == "tei" else f'{{"results": [{items}]}}'.encode()


@pytest.mark.parametrize("fault", FAULTS)
def test_a_faulty_answer_leaves_the_order_alone_with_one_sentence_and_no_secret(
    server: RerankServer, fault: str, caplog: pytest.LogCaptureFixture
) -> None:
    settings, expected = FAULTS[fault]
    for name, value in settings.items():
        setattr(server, name, _bad_body(server, value) if isinstance(value, bytes) else value)
    with pytest.raises(RerankError) as raised:
        scorer_for(server).score(QUERY, TEXTS)
    assert expected in str(raised.value)
    stage = stage_for(server)
    with caplog.at_level(logging.DEBUG):
        outcome = stage.rerank(QUERY, TEXTS, str)
    assert outcome.order is None and not outcome.reranked
    note = outcome.note or ""
    assert note.startswith(f"Reranking skipped: the {server.api} reranker ") and expected in note
    assert note.endswith("so results are in retrieval order (retried in 15 s).") and note.count(". ") == 0
    assert FAKE_KEY not in note and FAKE_KEY not in caplog.text and "Traceback" not in note
    assert "failed unexpectedly" not in caplog.text  # an answer, however odd, is the service's fault, not a bug
    assert stage.status()["health"] == "down" and FAKE_KEY not in str(stage.status())
    stage.close()


def test_a_slow_reranker_is_cut_off_at_the_timeout(server: RerankServer) -> None:
    server.delay = 3.0
    stage = stage_for(server, timeout=0.2)
    started = time.monotonic()
    outcome = stage.rerank(QUERY, TEXTS, str)
    elapsed = time.monotonic() - started
    assert not outcome.reranked and "did not answer within 0.2 s" in (outcome.note or "")
    assert elapsed < 2.5  # bounded by the timeout (0.2 s), far below the server's 3 s; generous for a busy machine
    stage.close()


def test_after_a_failure_the_reranker_rests_then_is_tried_again_with_a_growing_pause(server: RerankServer) -> None:
    clock = Clock()
    stage = stage_for(server, clock)
    server.status = 503
    assert "retried in 15 s" in (stage.rerank(QUERY, TEXTS, str).note or "")
    calls = len(server.requests)
    for _ in range(20):  # no retry storm: searches during the pause do not call it
        skipped = stage.rerank(QUERY, TEXTS, str)
        assert not skipped.reranked and "failed recently (answered HTTP 503)" in (skipped.note or "")
    assert len(server.requests) == calls
    clock.now += FIRST_COOLDOWN_SECONDS + 0.1
    assert "retried in 30 s" in (stage.rerank(QUERY, TEXTS, str).note or "")  # tried, failed again: twice as long
    assert len(server.requests) == calls + 1
    clock.now += 10
    assert stage.status()["retry_in_seconds"] == 20
    clock.now += 25
    server.status = 200  # back up: the next search after the pause is reranked, and the pause is forgotten
    assert stage.rerank(QUERY, TEXTS, str).reranked
    status = stage.status()
    assert status["health"] == "ok" and status["error"] is None and status["retry_in_seconds"] is None
    server.status = 500
    stage.rerank("fresh query", TEXTS, str)
    assert stage.status()["retry_in_seconds"] == 15
    stage.close()


def test_credentials_in_the_url_are_never_shown(server: RerankServer) -> None:
    port = server.url.rsplit(":", 1)[1]
    url = f"http://user:hunter2secret@127.0.0.1:{port}"
    stage = RerankStage(HttpScorer(url, server.api, timeout=1.0), top=30, clock=Clock())
    assert "hunter2secret" not in stage.status()["target"]
    server.status = 500
    note = stage.rerank(QUERY, TEXTS, str).note or ""
    assert "hunter2secret" not in note and "hunter2secret" not in str(stage.status())
    stage.close()


def test_an_unreachable_reranker_is_named_without_its_error_text() -> None:
    with RerankServer("tei") as srv:
        url = srv.url  # the port is free again once the server is gone
    stage = RerankStage(HttpScorer(url, "tei", timeout=1.0), top=30, clock=Clock())
    note = stage.rerank(QUERY, TEXTS, str).note or ""
    assert "reranker is unreachable (ConnectError)" in note
    probed = stage.probe()
    assert probed["health"] == "down" and probed["error"] == "is unreachable (ConnectError)"
    stage.close()
