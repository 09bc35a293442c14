"""The rerank stage: re-score the leading candidates of a search with a cross-encoder, and never break search.

A scorer (HTTP service or local model) turns (query, texts) into one relevance score per text. The stage around
it caches scores by (query, text hash), and keeps the scorer's health: after a failure the scorer is skipped,
for a cool-down that doubles with each failure in a row (15 s up to 5 min), so a dead or slow service costs one
timeout per cool-down instead of one per query; the first success resets it.

Each search gives the scorer one overall deadline (MCP_DOCS_RERANK_TIMEOUT, 2 s by default) for all its requests
together. The scorer runs in a daemon thread and the search waits for it no longer than that: a per-read timeout
alone let a service that trickles one byte every 1.5 s hold a search (and its server thread) for minutes, and a
search of 200 candidates in 7 requests of 1.8 s each took 13 s. Missing the deadline is a failure like any other
(the cool-down starts); the thread left behind is told the deadline too and stops at its next step, and, a
daemon, never holds up the process's exit.
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

log = logging.getLogger(__name__)

FIRST_COOLDOWN_SECONDS = 15.0
MAX_COOLDOWN_SECONDS = 300.0
CACHE_ENTRIES = 20_000  # ~100 bytes each: about 2 MB
ERROR_CHARS = 200
DEFAULT_DEADLINE_SECONDS = 2.0

T = TypeVar("T")


class RerankError(RuntimeError):
    """The reranker could not score: unreachable, slow, refused, or answered something unusable.
    The message is one phrase, safe to show (never a key, never a document text)."""


class Scorer(Protocol):
    kind: str  # "tei", "cohere" or "local"
    target: str  # where it runs, for status and notes: a URL without credentials, or a folder
    max_chars: int  # candidate text is cut to this before scoring (about the model's window)

    def prepare(self) -> None:
        """Load what the scorer needs (a local model): once, before the first deadline starts counting."""
        ...

    def score(self, query: str, texts: Sequence[str], until: float | None = None) -> list[float]:
        """One finite score per text, in order, higher is more relevant; RerankError otherwise. `until`: a
        time.monotonic() past which the answer is no longer wanted (stop, raise RerankError)."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Reranked:
    """What the stage did to one search: the new order, or None (candidates unchanged) with a `note` saying why."""

    order: list[tuple[int, float]] | None  # (index into the candidates, score), best first
    note: str | None = None

    @property
    def reranked(self) -> bool:
        return self.order is not None


class RerankStage:
    def __init__(
        self,
        scorer: Scorer,
        top: int,
        clock: Callable[[], float] = time.monotonic,
        deadline: float = DEFAULT_DEADLINE_SECONDS,
    ) -> None:
        self.scorer = scorer
        self.top = top
        self.deadline = deadline  # seconds for all of one search's scoring
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: OrderedDict[bytes, float] = OrderedDict()
        self._failures = 0  # in a row
        self._retry_at = 0.0
        self._last_error: str | None = None
        self._last_ms: float | None = None

    def rerank(self, query: str, candidates: Sequence[T], text_of: Callable[[T], str]) -> Reranked:
        """Re-score the first `top` candidates (best first in, best first out); the rest follow in their order,
        scored no higher than the lowest re-scored one (0, or below for a service that answers raw logits) so
        they stay behind. On any failure, no order, and a `note` that says why."""
        if not candidates:
            return Reranked(None)
        wait = self._cooling_down()
        if wait is not None:
            return Reranked(None, self._skip_note(wait))
        head = candidates[: self.top]
        texts = [_window(text_of(c), self.scorer.max_chars) for c in head]
        keys = [_cache_key(query, t) for t in texts]
        with self._lock:
            scores: list[float | None] = [self._cache.get(k) for k in keys]
            for key, score in zip(keys, scores, strict=True):
                if score is not None:
                    self._cache.move_to_end(key)  # least recently used goes first
        missing = [i for i, s in enumerate(scores) if s is None]
        if missing:
            started = time.perf_counter()
            try:
                fresh = self._score_within(query, [texts[i] for i in missing])
                if len(fresh) != len(missing) or not all(_finite(s) for s in fresh):
                    raise RerankError(f"gave {len(fresh)} usable scores for {len(missing)} texts")
            except RerankError as exc:
                return Reranked(None, self._failed(str(exc)))
            except Exception as exc:  # a scorer bug must not break search either
                log.exception("reranker failed unexpectedly")
                return Reranked(None, self._failed(f"failed unexpectedly ({type(exc).__name__})"))
            self._succeeded((time.perf_counter() - started) * 1000)
            with self._lock:
                for i, s in zip(missing, fresh, strict=True):
                    scores[i] = s
                    self._remember(keys[i], s)
        order = sorted(((i, float(s or 0.0)) for i, s in enumerate(scores)), key=lambda p: -p[1])  # stable on ties
        floor = min(0.0, order[-1][1])
        order += [(i, floor) for i in range(len(head), len(candidates))]
        return Reranked(order)

    def _score_within(self, query: str, texts: Sequence[str]) -> list[float]:
        """The scorer's answer if it comes within the deadline, else RerankError; see the module's docstring."""
        try:
            self.scorer.prepare()  # loading a local model is not scoring: it happens once, outside the deadline
        except RerankError:
            raise
        except Exception as exc:
            raise RerankError(f"could not start ({type(exc).__name__})") from exc
        until = time.monotonic() + self.deadline
        done = threading.Event()
        box: list[list[float] | BaseException] = []

        def run() -> None:
            try:
                box.append(self.scorer.score(query, texts, until))
            except BaseException as exc:  # handed to the search, which decides what it means
                box.append(exc)
            finally:
                done.set()

        threading.Thread(target=run, name="mcp-docs-rerank", daemon=True).start()
        if not done.wait(self.deadline) or not box:
            raise RerankError(f"did not answer within {self.deadline:g} s")
        outcome = box[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    # -- health --------------------------------------------------------------------------------
    def _cooling_down(self) -> float | None:
        """Seconds left before the next try after a failure; None when the scorer may be called."""
        with self._lock:
            left = self._retry_at - self._clock()
            return left if self._failures and left > 0 else None

    def _failed(self, error: str) -> str:
        error = error[:ERROR_CHARS]
        with self._lock:
            self._failures += 1
            cooldown = min(FIRST_COOLDOWN_SECONDS * 2 ** (self._failures - 1), MAX_COOLDOWN_SECONDS)
            self._retry_at = self._clock() + cooldown
            self._last_error = error
        log.warning("reranker %s %s: searches skip it for %.0f s", self.scorer.target, error, cooldown)
        return (
            f"Reranking skipped: the {self.scorer.kind} reranker {error}, so results are in retrieval order "
            f"(retried in {cooldown:.0f} s)."
        )

    def _skip_note(self, wait: float) -> str:
        return (
            f"Reranking skipped: the {self.scorer.kind} reranker failed recently ({self._last_error}), so results "
            f"are in retrieval order (retried in {math.ceil(wait)} s)."
        )

    def _succeeded(self, ms: float) -> None:
        with self._lock:
            if self._failures:
                log.info("reranker %s answers again", self.scorer.target)
            self._failures = 0
            self._last_error = None
            self._last_ms = ms

    def _remember(self, key: bytes, score: float) -> None:
        self._cache[key] = score
        self._cache.move_to_end(key)
        while len(self._cache) > CACHE_ENTRIES:
            self._cache.popitem(last=False)

    def status(self) -> dict[str, Any]:
        """For `mcp-docs status`: what the reranker is and whether it answers (never its key)."""
        with self._lock:
            wait = self._retry_at - self._clock()
            if self._failures:
                health = "down" if wait > 0 else "retrying"
            else:
                health = "ok" if self._last_ms is not None else "not used yet"
            return {
                "kind": self.scorer.kind,
                "target": self.scorer.target,
                "top": self.top,
                "health": health,
                "error": self._last_error,
                "retry_in_seconds": math.ceil(wait) if self._failures and wait > 0 else None,
                "last_call_ms": round(self._last_ms, 1) if self._last_ms is not None else None,
            }

    def probe(self) -> dict[str, Any]:
        """Score one tiny pair now (bypassing the cool-down and the cache) and report the health."""
        started = time.perf_counter()
        try:
            scores = self._score_within("health check", ["health check"])
            if len(scores) != 1:
                raise RerankError(f"gave {len(scores)} scores for 1 text")
        except RerankError as exc:
            self._failed(str(exc))
        except Exception as exc:
            log.exception("reranker failed unexpectedly")
            self._failed(f"failed unexpectedly ({type(exc).__name__})")
        else:
            self._succeeded((time.perf_counter() - started) * 1000)
        return self.status()

    def close(self) -> None:
        self.scorer.close()


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except (TypeError, OverflowError):  # a scorer's int too large for a float
        return False


def _window(text: str, max_chars: int) -> str:
    """The text cut to about the model's window, at a word boundary when one is near."""
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    space = cut.rfind(" ", max_chars - 100)
    return cut[:space] if space > 0 else cut


def _cache_key(query: str, text: str) -> bytes:
    """A digest, so the cache's size does not grow with the length of queries or sections."""
    return hashlib.blake2b(f"{query}\0{text}".encode("utf-8", "surrogatepass"), digest_size=16).digest()
