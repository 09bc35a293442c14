"""Property-based fuzzing (hypothesis) of the classes the issue-26 review found, each through the real code path:

- any reply a reranker may send (any JSON, nested deep, huge numbers, or bytes): RerankError with one phrase or a
  valid score list, never another exception (it was "failed unexpectedly" and a traceback in the log);
- any text printed to a terminal: nothing a terminal acts on survives the shared sanitiser;
- any JSON body POSTed to the HTTP server that is not one JSON-RPC message: a 400 with one sentence, never
  pydantic's report; the server answers a ping afterwards.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_docs.rerank.base import RerankError
from mcp_docs.rerank.http import HttpScorer
from mcp_docs.terminal import json_safe, terminal_safe
from tests.rerank.fake_server import RerankServer
from tests.server_fixtures import initialize_request, make_vault

from .common import http_server

FUZZ = settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

NUMBERS = st.one_of(
    st.integers(min_value=-(10**600), max_value=10**600),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([10**400, -(10**400), 0, 1, 0.5]),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=20))
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.sampled_from(["index", "score", "relevance_score", "results", "x"]), inner, max_size=4),
    ),
    max_leaves=30,
)


def _reply_bodies() -> st.SearchStrategy[bytes]:
    """Replies shaped like both wire formats with hostile values, anything JSON, deep nesting, or raw bytes."""
    item = st.fixed_dictionaries({"index": st.one_of(st.integers(-3, 6), SCALARS), "score": NUMBERS})
    cohere = st.fixed_dictionaries(
        {
            "results": st.lists(
                st.fixed_dictionaries({"index": st.integers(-1, 5), "relevance_score": NUMBERS}), max_size=6
            )
        }
    )
    return st.one_of(
        st.lists(item, max_size=6).map(lambda v: json.dumps(v).encode()),
        cohere.map(lambda v: json.dumps(v).encode()),
        JSON_VALUES.map(lambda v: json.dumps(v).encode()),
        st.integers(1, 200_000).map(lambda depth: b"[" * depth + b"]" * depth),
        st.integers(4000, 6000).map(lambda digits: b'[{"index": 0, "score": ' + b"9" * digits + b"}]"),
        st.binary(max_size=200),
    )


@pytest.fixture(scope="module", params=["tei", "cohere"])
def reranker(request: pytest.FixtureRequest) -> Iterator[RerankServer]:
    with RerankServer(request.param) as srv:
        yield srv


@FUZZ
@given(body=_reply_bodies())
def test_any_reranker_reply_is_scores_or_one_phrase(reranker: RerankServer, body: bytes) -> None:
    reranker.raw_body = body
    scorer = HttpScorer(reranker.url, reranker.api, timeout=5.0)
    try:
        scores = scorer.score("query", ["a", "b", "c"])
    except RerankError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 200, str(exc)
    else:  # only a well-formed answer reaches here: three finite floats
        assert len(scores) == 3 and all(isinstance(s, float) and s == s and abs(s) != float("inf") for s in scores)
    finally:
        scorer.close()


ACTING = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


@settings(max_examples=300, deadline=None, database=None)
@given(
    text=st.lists(
        st.one_of(
            st.characters(),
            st.sampled_from(["\x1b", "\x1b[", "\x1b]8;;", "\x07", "\x1b\\", "\x9b", "\u202e", "\u2066", "\r\n"]),
        ),
        max_size=40,
    ).map("".join)
)
def test_nothing_a_terminal_acts_on_survives_the_sanitiser(text: str) -> None:
    shown = terminal_safe(text)
    assert not ACTING.search(shown), repr(shown)
    assert json.loads(json_safe({"t": text}))["t"] == text  # JSON keeps the exact text, escaped
    assert not ACTING.search(json_safe({"t": text}))


NOT_ONE_MESSAGE = st.one_of(
    st.lists(JSON_VALUES, max_size=4),  # batches, empty or not
    st.dictionaries(st.sampled_from(["jsonrpc", "id", "method", "params", "result"]), JSON_VALUES, max_size=4).filter(
        lambda d: not (d.get("jsonrpc") == "2.0" and isinstance(d.get("method"), str))
    ),
    SCALARS,
)


@pytest.fixture(scope="module")
def http_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    base = tmp_path_factory.mktemp("fuzz-http")
    with http_server(make_vault(base), base / "idx", "--stateless") as (port, _proc):
        yield port


HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@FUZZ
@given(body=NOT_ONE_MESSAGE)
def test_any_body_that_is_not_one_message_gets_one_sentence(http_port: int, body: Any) -> None:
    reply = httpx2.post(f"http://127.0.0.1:{http_port}/mcp", content=json.dumps(body), headers=HEADERS, timeout=30)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["code"] == -32600 and "\n" not in error["message"], error
    assert "validation error" not in error["message"].lower() and "pydantic" not in error["message"], error


def test_the_fuzzed_server_still_answers(http_port: int, tmp_path: Path) -> None:
    reply = httpx2.post(f"http://127.0.0.1:{http_port}/mcp", content=initialize_request(1), headers=HEADERS, timeout=30)
    assert reply.status_code == 200 and "serverInfo" in reply.text
