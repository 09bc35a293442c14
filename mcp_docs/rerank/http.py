"""Rerankers served over HTTP, in the two wire formats the field uses.

- `tei` (Hugging Face Text Embeddings Inference): `POST {url}/rerank` with `{"query", "texts", "truncate"}` →
  `[{"index", "score"}, …]`.
- `cohere` (Cohere, Jina, vLLM, Infinity): `POST {url}/v1/rerank` with `{"model", "query", "documents", "top_n"}`
  → `{"results": [{"index", "relevance_score"}, …]}`.

One connection pool per reranker; the requests of one search go out together (in parallel) and share the
search's deadline (base.py), which also bounds each read and the whole body however slowly it trickles in; a
bounded response size; answers are checked (one finite score per text, each index once, JSON of sane depth and
numbers) before they reorder anything.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx2

from .base import RerankError

# Texts sent are cut to this many characters (~512 tokens, the usual cross-encoder window); TEI truncates
# the rest itself ("truncate": true), the cohere-style services do by default.
HTTP_MAX_CHARS = 2000
MAX_RESPONSE_BYTES = 4 * 1024 * 1024
# Texts per request: Text Embeddings Inference refuses more than 32 by default (--max-client-batch-size),
# so a larger MCP_DOCS_RERANK_TOP is sent in several requests.
TEXTS_PER_REQUEST = 32


def display_url(url: str) -> str:
    """The URL without user:password@, query or fragment: what status and notes may show."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


class HttpScorer:
    max_chars = HTTP_MAX_CHARS

    def __init__(
        self, url: str, api: str, model: str | None = None, api_key: str | None = None, timeout: float = 2.0
    ) -> None:
        if api not in ("tei", "cohere"):
            raise ValueError(f"unknown rerank API '{api}': choose tei or cohere")
        self.kind = api
        self.model = model
        self.timeout = timeout
        base = url.rstrip("/")
        if api_key and (urlsplit(base).username is not None or urlsplit(base).password is not None):
            # httpx would send the URL's user:password as Basic auth in place of the bearer key, silently
            raise ValueError(
                f"the reranker URL {display_url(base)} holds user:password@ and a key is set: keep one of them"
            )
        self.endpoint = f"{base}/rerank" if api == "tei" else f"{base}/v1/rerank"
        self.target = display_url(self.endpoint)
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx2.Client(timeout=timeout, headers=headers, follow_redirects=False)

    def _body(self, query: str, texts: Sequence[str]) -> dict[str, Any]:
        if self.kind == "tei":
            return {"query": query, "texts": list(texts), "truncate": True}
        body: dict[str, Any] = {"query": query, "documents": list(texts), "top_n": len(texts)}
        if self.model:
            body["model"] = self.model
        return body

    def prepare(self) -> None:
        return None  # nothing to load

    def score(self, query: str, texts: Sequence[str], until: float | None = None) -> list[float]:
        """All the requests at once, each in its own thread: one after another, 7 requests of 1.8 s (a top of
        200) took 13 s."""
        own = time.monotonic() + self.timeout  # the service's own bound, if shorter than the search's
        until = own if until is None else min(until, own)
        chunks = [texts[start : start + TEXTS_PER_REQUEST] for start in range(0, len(texts), TEXTS_PER_REQUEST)]
        if len(chunks) <= 1:
            return self._request(query, chunks[0], until) if chunks else []
        answers: list[list[float] | BaseException | None] = [None] * len(chunks)

        def run(i: int) -> None:
            try:
                answers[i] = self._request(query, chunks[i], until)
            except BaseException as exc:
                answers[i] = exc

        threads = [
            threading.Thread(target=run, args=(i,), name="mcp-docs-rerank", daemon=True) for i in range(len(chunks))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(max(0.0, until - time.monotonic()))
        scores: list[float] = []
        for answer in answers:
            if answer is None:
                raise RerankError(f"did not answer within {self.timeout:g} s")
            if isinstance(answer, BaseException):
                raise answer
            scores += answer
        return scores

    def _request(self, query: str, texts: Sequence[str], until: float) -> list[float]:
        def left() -> float:
            remaining = until - time.monotonic()
            if remaining <= 0:
                raise RerankError(f"did not answer within {self.timeout:g} s")
            return remaining

        try:
            body = self._body(query, texts)
            with self._client.stream("POST", self.endpoint, json=body, timeout=left()) as response:
                if response.status_code != 200:
                    raise RerankError(f"answered HTTP {response.status_code}{_hint(response.status_code)}")
                raw = bytearray()
                for block in response.iter_bytes():  # a trickle is cut at the deadline, not at each read's timeout
                    raw += block
                    left()
                    if len(raw) > MAX_RESPONSE_BYTES:
                        raise RerankError(f"answered more than {MAX_RESPONSE_BYTES // 1024 // 1024} MB")
        except httpx2.TimeoutException as exc:
            raise RerankError(f"did not answer within {self.timeout:g} s") from exc
        except httpx2.HTTPError as exc:
            # the exception text may carry the URL with its credentials: only its class is shown
            raise RerankError(f"is unreachable ({type(exc).__name__})") from exc
        try:
            payload = json.loads(raw)
        except RecursionError as exc:  # a reply nested thousands deep: Python's parser recurses
            raise RerankError("answered JSON nested too deeply") from exc
        except ValueError as exc:  # not JSON, or an integer of more than 4300 digits
            raise RerankError("answered a body that is not JSON (or holds a number too long to read)") from exc
        return _scores(payload, len(texts), self.kind)

    def close(self) -> None:
        self._client.close()


def _hint(status: int) -> str:
    if status in (401, 403):
        return " (check the key in the variable named by MCP_DOCS_RERANK_API_KEY_ENV)"
    if status == 404:
        return " (check MCP_DOCS_RERANK_URL and MCP_DOCS_RERANK_API)"
    if status in (413, 422):
        return " (the request was refused: check the service's input limits or lower MCP_DOCS_RERANK_TOP)"
    return ""


def _scores(payload: object, n: int, kind: str) -> list[float]:
    """One score per text, in the order sent, from either wire format; RerankError if anything is off."""
    if kind == "tei":
        items, field = payload, "score"
    else:
        items = payload.get("results") if isinstance(payload, dict) else None
        field = "relevance_score"
    if not isinstance(items, list):
        expected = "a list" if kind == "tei" else 'an object with "results"'
        raise RerankError(f"answered JSON that is not {expected}")
    if len(items) != n:
        raise RerankError(f"returned {len(items)} scores for {n} texts")
    scores: list[float | None] = [None] * n
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        value = item.get(field) if isinstance(item, dict) else None
        if type(index) is not int or not 0 <= index < n or scores[index] is not None:
            raise RerankError("returned a missing, repeated or out-of-range index")
        if isinstance(value, bool) or not isinstance(value, int | float) or not _finite(value):
            raise RerankError(f'returned a result without a numeric "{field}"')
        scores[index] = float(value)
    return [s for s in scores if s is not None]


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a float (10**4000 is valid JSON)
        return False
