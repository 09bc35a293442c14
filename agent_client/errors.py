"""Errors classified for the user: what happened, in a sentence, and whether retrying may help.

The SDKs already retry what is worth retrying (connection errors, timeouts, 408/409/429/5xx, honouring
Retry-After); by the time an exception reaches us their retries are spent, so we only classify it.
Every message passes through the scrubber (`redaction.redact`) so an API key never reaches a log, a terminal or a session file.
"""

from __future__ import annotations

import contextlib
import email.utils
import time
from collections.abc import Mapping
from enum import Enum

from .redaction import redact


class ErrorKind(str, Enum):
    RATE_LIMIT = "rate_limit"
    SERVER_ERROR = "server_error"
    AUTHENTICATION = "authentication"
    TIMEOUT = "timeout"
    NETWORK = "network"
    CONTENT_FILTER = "content_filter"
    CONTEXT_LENGTH = "context_length"
    BAD_REQUEST = "bad_request"
    NOT_FOUND = "not_found"
    BAD_RESPONSE = "bad_response"
    CONFIGURATION = "configuration"
    MCP = "mcp"
    UNKNOWN = "unknown"


_RETRYABLE = {ErrorKind.RATE_LIMIT, ErrorKind.SERVER_ERROR, ErrorKind.TIMEOUT, ErrorKind.NETWORK}
# --fallback moves on only when this provider, not the request, is the problem: another provider would
# repeat a context-length or content-filter error, and a bad request, key or model name is the user's to fix
FALLBACK_KINDS = {*_RETRYABLE, ErrorKind.BAD_RESPONSE}

_ADVICE = {
    ErrorKind.RATE_LIMIT: "Rate limited by the provider; wait a moment and retry, or use a smaller model or a higher quota.",
    ErrorKind.SERVER_ERROR: "The provider had a server error; retrying later may help.",
    ErrorKind.AUTHENTICATION: "Authentication failed: check that the API key environment variable holds a valid key for this provider.",
    ErrorKind.TIMEOUT: "The request timed out; retrying may help, or raise --timeout.",
    ErrorKind.NETWORK: "The connection to the provider failed or broke off; check the network and the base URL, then retry.",
    ErrorKind.CONTENT_FILTER: "The provider's content filter blocked the request or the answer; rephrase the question.",
    ErrorKind.CONTEXT_LENGTH: "The conversation is longer than the model's context window; ask a narrower question or reset the session.",
    ErrorKind.BAD_REQUEST: "The provider rejected the request; check the model name and options.",
    ErrorKind.NOT_FOUND: "Not found: check the model name and the base URL.",
    ErrorKind.BAD_RESPONSE: "The provider answered HTTP 200 with something that is not its streamed JSON format; "
    "check the base URL (a proxy or a web page answers there?).",
    ErrorKind.CONFIGURATION: "Check the command-line options.",
    ErrorKind.MCP: "The MCP server failed; check that it starts and answers.",
    ErrorKind.UNKNOWN: "Unexpected error.",
}


class AgentError(Exception):
    """A classified error: `kind`, a readable `message`, and whether retrying may help."""

    def __init__(self, kind: ErrorKind, message: str, *, retryable: bool | None = None, status: int | None = None):
        self.kind = kind
        self.message = redact(message)
        self.retryable = kind in _RETRYABLE if retryable is None else retryable
        self.status = status
        super().__init__(self.message)

    def __str__(self) -> str:
        return f"{self.kind.value}: {self.message}"


_CONTEXT_HINTS = (
    "context length",
    "context_length",
    "maximum context",
    "context window",
    "too many tokens",
    "prompt is too long",
    "reduce the length",
    "input is too long",
    "max_tokens",
)
_FILTER_HINTS = ("content_filter", "content filter", "content management policy", "safety", "content_policy")


def _status_kind(status: int, body_text: str) -> ErrorKind:
    low = body_text.lower()
    if status in (401, 403):
        return ErrorKind.AUTHENTICATION
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if status in (408, 504):
        return ErrorKind.TIMEOUT
    if status >= 500 or status == 529:
        return ErrorKind.SERVER_ERROR
    if status == 404:
        return ErrorKind.NOT_FOUND
    if status == 413 or any(h in low for h in _CONTEXT_HINTS if h != "max_tokens"):
        return ErrorKind.CONTEXT_LENGTH
    if any(h in low for h in _FILTER_HINTS):
        return ErrorKind.CONTENT_FILTER
    return ErrorKind.BAD_REQUEST


def _body_message(body: object) -> str | None:
    """The provider's own sentence from an error body ({"error": {"message": ...}}), if there is one."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(inner, str):
            return inner
    return None


# The status an error type stands for (Anthropic's and OpenAI's names), for errors sent inside a 200 stream.
_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,
    "api_error": 500,
    "server_error": 500,
    "overloaded_error": 529,
}


def _body_status(body: object) -> int | None:
    """The HTTP status an error body names (`code` 502, as OpenRouter sends; `type` overloaded_error…)."""
    inner = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(inner, dict):
        return None
    code = inner.get("code")
    if isinstance(code, (int, str)) and str(code).isdigit() and 400 <= int(code) < 600:
        return int(code)
    kind = inner.get("type")
    return _TYPE_STATUS.get(kind) if isinstance(kind, str) else None


# The longest server-directed wait docs-agent honours (the openai SDK's own cap; the anthropic SDK has none
# short of 50 days, see providers/anthropic_messages.py). Longer: give up at once and say so.
MAX_RETRY_AFTER_S = 120.0


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """The wait a response asks for, in seconds (`retry-after-ms`, `retry-after` as seconds or a date)."""
    if not headers:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / divisor
        except ValueError:
            with contextlib.suppress(TypeError, ValueError, OverflowError):
                when = email.utils.parsedate_to_datetime(value)
                return when.timestamp() - time.time()
    return None


def _too_long_a_wait(exc: BaseException) -> str:
    wait = retry_after_s(getattr(getattr(exc, "response", None), "headers", None))
    if wait is None or not wait > MAX_RETRY_AFTER_S:
        return ""
    shown = f"{wait:,.0f} s" if wait < 1e12 else "forever"
    return f" The provider asked to wait {shown}, longer than docs-agent waits ({MAX_RETRY_AFTER_S:g} s)."


def classify(exc: BaseException, *, provider: str = "", base_url: str | None = None) -> AgentError:
    """Turn an SDK or transport exception into an AgentError (duck-typed: works for openai and anthropic)."""
    if isinstance(exc, AgentError):
        return exc
    who = f"{provider}: " if provider else ""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    raw = _body_message(body) or str(getattr(exc, "message", None) or exc) or type(exc).__name__
    detail = " ".join(raw.split())[:300].rstrip(".")
    if body is not None and (not isinstance(status, int) or status < 400):
        # an error event inside a stream that began with 200 (Anthropic's overloads, OpenRouter's upstream
        # failures): the body says what it was; one we cannot place is the provider's failure
        named = _body_status(body) or 500
        kind = _status_kind(named, raw)
        return AgentError(
            kind,
            f"{who}error inside the response stream: {detail}. {_ADVICE[kind]}",
            retryable=kind in _RETRYABLE,
            status=named,
        )
    if isinstance(status, int):
        kind = _status_kind(status, raw)
        retryable = kind in _RETRYABLE or status in (408, 409)
        return AgentError(
            kind,
            f"{who}HTTP {status}: {detail}. {_ADVICE[kind]}{_too_long_a_wait(exc)}",
            retryable=retryable,
            status=status,
        )
    name = type(exc).__name__
    try:
        import httpx2

        transport_errors: tuple[type[BaseException], ...] = (httpx2.TransportError,)
    except ImportError:  # pragma: no cover
        transport_errors = ()
    if "Timeout" in name or isinstance(exc, TimeoutError):
        return AgentError(ErrorKind.TIMEOUT, f"{who}{_ADVICE[ErrorKind.TIMEOUT]}")
    if "Connection" in name or isinstance(exc, (ConnectionError, OSError, *transport_errors)):
        where = f" ({base_url})" if base_url else ""
        return AgentError(ErrorKind.NETWORK, f"{who}{detail}{where}. {_ADVICE[ErrorKind.NETWORK]}")
    return AgentError(ErrorKind.UNKNOWN, f"{who}{name}: {detail}")


def bad_response(provider: str, what: str) -> AgentError:
    return AgentError(ErrorKind.BAD_RESPONSE, f"{provider}: {what}. {_ADVICE[ErrorKind.BAD_RESPONSE]}", retryable=False)


def content_filtered(provider: str) -> AgentError:
    return AgentError(ErrorKind.CONTENT_FILTER, f"{provider}: {_ADVICE[ErrorKind.CONTENT_FILTER]}", retryable=False)


def stream_cut(provider: str) -> AgentError:
    """A stream that closed cleanly before the model said it was done (no finish / stop reason): a proxy or a
    server that gave up. Retrying may help, and another provider would not repeat it."""
    return AgentError(
        ErrorKind.NETWORK,
        f"{provider}: the response stream ended before the model finished, so the answer may be cut. "
        f"{_ADVICE[ErrorKind.NETWORK]}",
    )
