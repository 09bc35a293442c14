"""A real HTTP server on 127.0.0.1 that speaks just enough of the OpenAI chat-completions and Anthropic
Messages wire formats (streamed over SSE) for the real SDKs, scripted reply by reply per test.
The one fake LLM of the test suite (the agent tests and the security tests both use it)."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    content_type: str = "application/json"
    delay_s: float = 0.0
    cut_at: int | None = None  # send only this many body bytes, then drop the connection (a broken stream)


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float = 0.0  # time.monotonic() on arrival: retries' backoff is measured from these


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(out).encode()


def _pieces(text: str, n: int = 3) -> list[str]:
    if not text:
        return []
    size = max(1, len(text) // n + (len(text) % n > 0))
    return [text[i : i + size] for i in range(0, len(text), size)]


# ---------------------------------------------------------------- OpenAI chat completions


def _chunk(
    delta: dict[str, Any] | None, finish: str | None = None, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "fake-model",
        "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def _oa_usage(prompt: int, completion: int, cached: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def oa_text(
    text: str,
    *,
    prompt: int = 100,
    completion: int = 20,
    cached: int = 0,
    finish: str = "stop",
    chunks: list[str] | None = None,
    usage: bool = True,
) -> Reply:
    """`chunks`: stream the text in exactly these pieces (default: three). `usage=False`: a server that never
    reports token usage."""
    events: list[tuple[str | None, Any]] = [(None, _chunk({"role": "assistant", "content": ""}))]
    events += [(None, _chunk({"content": p})) for p in (chunks if chunks is not None else _pieces(text))]
    events.append((None, _chunk({}, finish)))
    if usage:
        events.append((None, _chunk(None, usage=_oa_usage(prompt, completion, cached))))
    events.append((None, "[DONE]"))
    return Reply(body=_sse(events), content_type="text/event-stream")


def oa_tools(
    calls: list[tuple[str, str, str]],
    *,
    text: str = "",
    prompt: int = 100,
    completion: int = 20,
    cached: int = 0,
    usage: bool = True,
) -> Reply:
    """`calls`: (id, name, raw JSON arguments) — the arguments are streamed in fragments, as real APIs do."""
    events: list[tuple[str | None, Any]] = [(None, _chunk({"role": "assistant", "content": text or None}))]
    for i, (cid, name, args) in enumerate(calls):
        events.append(
            (
                None,
                _chunk(
                    {
                        "tool_calls": [
                            {"index": i, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}
                        ]
                    }
                ),
            )
        )
        for frag in _pieces(args):
            events.append((None, _chunk({"tool_calls": [{"index": i, "function": {"arguments": frag}}]})))
    events.append((None, _chunk({}, "tool_calls")))
    if usage:
        events.append((None, _chunk(None, usage=_oa_usage(prompt, completion, cached))))
    events.append((None, "[DONE]"))
    return Reply(body=_sse(events), content_type="text/event-stream")


def error(
    status: int, message: str = "error", *, headers: dict[str, str] | None = None, kind: str = "invalid_request_error"
) -> Reply:
    body = {"error": {"message": message, "type": kind, "code": None}}
    if kind in ("rate_limit_error", "overloaded_error", "authentication_error", "invalid_request_error", "api_error"):
        body["type"] = "error"  # Anthropic's envelope also has a top-level type
        body["error"]["type"] = kind
    return Reply(status=status, headers=headers or {}, body=json.dumps(body).encode())


# ---------------------------------------------------------------- Anthropic Messages


def _an_start(prompt: int, cached: int) -> tuple[str, Any]:
    return (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_test",
                "type": "message",
                "role": "assistant",
                "model": "fake-claude",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": prompt - cached,
                    "output_tokens": 1,
                    "cache_read_input_tokens": cached,
                    "cache_creation_input_tokens": 0,
                },
            },
        },
    )


def _an_end(stop: str, completion: int) -> list[tuple[str, Any]]:
    return [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": completion},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def _an_text_block(index: int, text: str) -> list[tuple[str, Any]]:
    ev: list[tuple[str, Any]] = [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        )
    ]
    ev += [
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}},
        )
        for p in _pieces(text)
    ]
    ev.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return ev


def an_text(text: str, *, prompt: int = 100, completion: int = 20, cached: int = 0, stop: str = "end_turn") -> Reply:
    events = [
        _an_start(prompt, cached),
        ("ping", {"type": "ping"}),
        *_an_text_block(0, text),
        *_an_end(stop, completion),
    ]
    return Reply(body=_sse(events), content_type="text/event-stream")


def an_tools(
    calls: list[tuple[str, str, str]], *, text: str = "", prompt: int = 100, completion: int = 20, cached: int = 0
) -> Reply:
    events: list[tuple[str | None, Any]] = [_an_start(prompt, cached)]
    index = 0
    if text:
        events += _an_text_block(0, text)
        index = 1
    for cid, name, args in calls:
        events.append(
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "id": cid, "name": name, "input": {}},
                },
            )
        )
        for frag in _pieces(args):
            events.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": frag},
                    },
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    events += _an_end("tool_use", completion)
    return Reply(body=_sse(events), content_type="text/event-stream")


# ---------------------------------------------------------------- the server


class FakeLLM:
    """`push()` replies in order (or pass them to the constructor); every request is kept in `requests`
    (path, headers, JSON body, arrival time). Usable as a context manager, which starts and stops it.
    `responder`: once the script is empty, each reply is computed from the request body (a scripted model that
    reacts to the tool results it is sent, for the benchmarks)."""

    def __init__(self, *replies: Reply, responder: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        self.script: deque[Reply] = deque(replies)
        self.responder = responder
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                arrived = time.monotonic()
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode(errors="replace")}
                with fake._lock:
                    fake.requests.append(
                        Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body, arrived)
                    )
                    reply = (
                        fake.script.popleft()
                        if fake.script
                        else fake.responder(body)
                        if fake.responder is not None
                        else Reply(
                            status=500,
                            headers={"x-should-retry": "false"},
                            body=b'{"error": {"message": "fake LLM: script exhausted", "type": "api_error"}}',
                        )
                    )
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(reply.body)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    if reply.cut_at is not None:
                        self.wfile.write(reply.body[: reply.cut_at])
                        self.wfile.flush()
                        self.close_connection = True
                        self.connection.shutdown(2)
                    else:
                        self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_url(self) -> str:
        """The base URL the openai SDK expects (the Anthropic SDK takes `url` itself)."""
        return self.url + "/v1"

    def push(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def start(self) -> FakeLLM:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
