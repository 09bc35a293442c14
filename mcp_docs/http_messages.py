"""JSON-RPC messages the SDK's Streamable HTTP transport rejects, answered with one sentence.

The SDK answers a body it cannot validate with -32602 and pydantic's whole report ("Validation error: 4
validation errors for union[JSONRPCRequest, ...]", input values and documentation links included): a
JSON-RPC batch (`[{...}, {...}]`, which MCP dropped in 2025-06-18) got a screenful. Here such a POST is answered
as stdio answers the same line (`stdio_transport.error_reply`): -32600 with the request's id when it can be
read, and for a batch, "batches are not supported". Bodies that validate pass through untouched.
"""

from __future__ import annotations

import pydantic_core
from mcp.types import INVALID_REQUEST, ErrorData, JSONRPCError, jsonrpc_message_adapter
from pydantic import ValidationError
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .stdio_transport import error_reply


class JsonRpcShape:
    """ASGI middleware: a POST to the MCP endpoint whose body is JSON but not one JSON-RPC message gets a 400 with
    a one-sentence JSON-RPC error; anything else reaches the SDK as sent (the body replayed)."""

    def __init__(self, app: ASGIApp, path: str = "/mcp") -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or scope.get("path", "").rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:  # the SDK reads the whole body too (request.body()); its size bound is the connection's
            message = await receive()
            if message["type"] != "http.request":  # the client went away: let the app see it
                await self.app(scope, _replay(b"".join(chunks), message, receive), send)
                return
            chunks.append(message.get("body", b""))
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        reply = _rejection(body)
        if reply is not None:
            response = Response(
                reply.model_dump_json(by_alias=True, exclude_unset=True),
                status_code=400,
                media_type="application/json",
            )
            await response(scope, receive, send)
            return
        await self.app(scope, _replay(body, None, receive), send)


def _rejection(body: bytes) -> JSONRPCError | None:
    """The error for a body that is JSON but not one valid JSON-RPC message; None to let the SDK handle it."""
    try:
        raw = pydantic_core.from_json(body)
    except ValueError:
        return None  # not JSON: the SDK's "Parse error" (-32700) says so in one line
    if _plainly_a_request(raw):
        return None  # the usual case, left to the SDK's own validation (no second pydantic pass)
    try:
        jsonrpc_message_adapter.validate_python(raw, by_name=False)
    except ValidationError as exc:
        reply = error_reply(exc)
        if reply is None:  # a malformed notification or response: HTTP still owes an answer
            detail = "not a JSON-RPC 2.0 request (check jsonrpc, id, method and params)"
            reply = JSONRPCError(
                jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message=f"Invalid request: {detail}.")
            )
        return reply
    return None


def _plainly_a_request(raw: object) -> bool:
    """A request or notification whose every field has the right type: what nearly every POST is."""
    if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0" or not isinstance(raw.get("method"), str):
        return False
    if not set(raw) <= {"jsonrpc", "id", "method", "params"}:
        return False
    request_id = raw.get("id", "")
    return (
        isinstance(request_id, str | int)
        and not isinstance(request_id, bool)
        and isinstance(raw.get("params", {}), dict)
    )


def _replay(body: bytes, last: Message | None, receive: Receive) -> Receive:
    """A receive() that gives the body already read as one message, then `last` (if any), then the client's."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]
    if last is not None:
        pending = [last]

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


__all__ = ["JsonRpcShape"]
