"""A real loopback HTTP reranker speaking either wire format, scoring by shared words, with switchable faults."""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAKE_KEY = "sk-rerank-test-0123456789abcdef"


def overlap(query: str, text: str) -> float:
    """Shared distinct words, as a fraction: a stand-in for a cross-encoder's relevance."""
    q = set(re.findall(r"\w+", query.lower()))
    t = set(re.findall(r"\w+", text.lower()))
    return len(q & t) / (len(q) or 1)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that timed out and hung up is the point of some tests, not an error to print


class RerankServer:
    def __init__(self, api: str = "tei", key: str | None = None) -> None:
        self.api = api
        self.key = key
        self.requests: list[dict[str, Any]] = []
        self.delay = 0.0  # seconds before answering
        self.status = 200
        self.raw_body: bytes | None = None  # sent instead of the real answer
        self.drop = 0  # results left out of the answer
        self.max_texts = 32  # Text Embeddings Inference's default --max-client-batch-size
        # > 0: answer one byte every `trickle` seconds, without end: after the headers ("body") or from the
        # status line on ("headers"). No read waits long enough for a per-read timeout.
        self.trickle = 0.0
        self.trickle_from = "body"
        self.stopped = threading.Event()
        self.serial = threading.Lock()  # taken around each request when `one_at_a_time` (a service with one worker)
        self.one_at_a_time = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real services: the client's pool is reused

            def log_message(self, *args: object) -> None:
                pass

            def _reply(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _trickle(self) -> None:
                head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000000\r\n\r\n"
                if server.trickle_from == "body":
                    self.wfile.write(head)
                    self.wfile.flush()
                    head = b""
                pending = head + b"[" + b" " * 100_000_000
                with contextlib.suppress(OSError):  # the client hung up: the point of the test
                    for i in range(len(pending)):
                        if server.stopped.wait(server.trickle):
                            return
                        self.wfile.write(pending[i : i + 1])
                        self.wfile.flush()
                self.close_connection = True

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                request = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append({"path": self.path, "auth": self.headers.get("authorization"), **request})
                if server.delay:
                    with server.serial if server.one_at_a_time else contextlib.nullcontext():
                        time.sleep(server.delay)
                if server.trickle:
                    return self._trickle()
                expected = "/rerank" if server.api == "tei" else "/v1/rerank"
                if self.path != expected:
                    return self._reply(404, b'{"error": "not found"}')
                if server.key and self.headers.get("authorization") != f"Bearer {server.key}":
                    return self._reply(401, b'{"message": "invalid api token"}')
                if server.status != 200:
                    return self._reply(server.status, b'{"error": "model overloaded"}')
                if len(request.get("texts") or request.get("documents") or []) > server.max_texts:
                    return self._reply(
                        422, b'{"error": "batch size > maximum allowed batch size", "error_type": "Validation"}'
                    )
                if server.raw_body is not None:
                    return self._reply(200, server.raw_body)
                self._reply(200, json.dumps(server.answer(request)).encode())

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def answer(self, request: dict[str, Any]) -> Any:
        texts = request["texts"] if self.api == "tei" else request["documents"]
        scored = sorted(
            ((i, overlap(request["query"], t)) for i, t in enumerate(texts)), key=lambda p: -p[1]
        )  # both services answer best first: clients must map back by index
        scored = scored[: len(scored) - self.drop]
        if self.api == "tei":
            return [{"index": i, "score": s} for i, s in scored]
        top = request.get("top_n") or len(scored)
        results = [{"index": i, "relevance_score": s} for i, s in scored[:top]]
        return {"id": "fake", "results": results, "meta": {"billed_units": {"search_units": 1}}}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> RerankServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
