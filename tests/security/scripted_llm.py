"""A scripted model server on 127.0.0.1 speaking the OpenAI chat-completions wire format (streamed over SSE):
each request gets the next planned reply; every request is recorded (path, headers, JSON body, time)."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    cut_after: int | None = None  # send only this many body bytes, then drop the connection (a broken stream)


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


def _chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: dict[str, Any] | None = None) -> str:
    body: dict[str, Any] = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
                            "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        body["usage"] = usage
    return f"data: {json.dumps(body)}\n\n"


USAGE = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}


def text(answer: str) -> Reply:
    events = [_chunk({"role": "assistant", "content": ""})]
    events += [_chunk({"content": answer[i:i + 40]}) for i in range(0, len(answer), 40)]
    events += [_chunk({}, "stop"), _chunk(None, usage=USAGE), "data: [DONE]\n\n"]
    return Reply(body="".join(events).encode())


def tool_calls(*calls: tuple[str, dict[str, Any]]) -> Reply:
    events = [_chunk({"role": "assistant", "content": None})]
    for i, (name, args) in enumerate(calls):
        events.append(_chunk({"tool_calls": [{"index": i, "id": f"call_{i}_{name}", "type": "function",
                                              "function": {"name": name, "arguments": json.dumps(args)}}]}))
    events += [_chunk({}, "tool_calls"), _chunk(None, usage=USAGE), "data: [DONE]\n\n"]
    return Reply(body="".join(events).encode())


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error", "code": None}}).encode()
    return Reply(status=status, body=body, headers=headers or {}, content_type="application/json")


class ScriptedLLM:
    def __init__(self, *replies: Reply) -> None:
        self.script: deque[Reply] = deque(replies)
        self.seen: list[Seen] = []
        llm = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                llm.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic()))
                reply = llm.script.popleft() if llm.script else error(500, "script exhausted", {"x-should-retry": "false"})
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                body_out = reply.body if reply.cut_after is None else reply.body[: reply.cut_after]
                if reply.cut_after is None:
                    self.send_header("content-length", str(len(body_out)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(body_out)
                    self.wfile.flush()
                    if reply.cut_after is not None:
                        self.close_connection = True
                        self.connection.shutdown(2)
                except OSError:
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "ScriptedLLM":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
