"""A bounded number of Streamable HTTP sessions, the least recently used idle one making room for a new one.

Clients that never send DELETE leave their sessions open; each holds a transport, its streams and a
server task (~37 KB), so thousands of abandoned ones cost hundreds of MB. The SDK expires a session
after `session_idle_timeout` and refuses new ones with 503 once `max_sessions` are open. That would
lock a user out for the whole idle period after a burst of abandoned sessions, so this middleware
keeps the count below the cap by ending the least recently used idle session first.

It watches requests from the outside (the session id each response assigns, which sessions have a
request in flight, when each was last used) and ends a session the way a client does, with a DELETE
through the app: no SDK internals are touched, and the evicted session's id answers 404
"Session not found", which tells its client to initialize again.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import anyio
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)

_SESSION_HEADER = MCP_SESSION_ID_HEADER.lower().encode("latin-1")
_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode("latin-1")


@dataclass
class _Session:
    last_used: float = field(default_factory=time.monotonic)
    in_flight: int = 0  # requests being served, open GET streams included: such a session is not idle


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


class SessionLimiter:
    """ASGI middleware in front of the MCP app: at most `max_sessions` sessions, idle ones end after `idle_seconds`.

    Give the SDK's session manager the same `session_idle_timeout` and `max_sessions`: it expires
    sessions on its own clock, and its cap stays the backstop when every session is busy.
    """

    def __init__(self, app: ASGIApp, *, max_sessions: int, idle_seconds: float, path: str = "/mcp") -> None:
        self.app = app
        self.max_sessions = max_sessions
        self.idle_seconds = idle_seconds
        self.path = path
        self._sessions: OrderedDict[str, _Session] = OrderedDict()  # least recently used first
        self._opening = 0  # session-opening requests in flight: each may add a session

    @property
    def count(self) -> int:
        """Sessions open now (idle ones past their time are not counted, whether or not ended yet)."""
        now = time.monotonic()
        return sum(1 for s in self._sessions.values() if s.in_flight or now - s.last_used < self.idle_seconds)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        session_id = _header(scope, _SESSION_HEADER)
        if session_id is None:
            if scope.get("method") == "POST" and self._opens_session(scope):
                await self._open(scope, receive, send)
            else:
                await self.app(scope, receive, send)
            return
        session = self._sessions.get(session_id)
        if session is None:  # unknown, expired or evicted: the SDK answers 404
            await self.app(scope, receive, send)
            return
        self._sessions.move_to_end(session_id)
        session.in_flight += 1
        status: list[int] = []
        try:
            await self.app(scope, receive, _watching(send, status, {}))
        finally:
            session.in_flight -= 1
            session.last_used = time.monotonic()
            ended = bool(status) and (status[0] == 404 or (scope.get("method") == "DELETE" and status[0] < 300))
            if ended and self._sessions.get(session_id) is session:
                del self._sessions[session_id]

    @staticmethod
    def _opens_session(scope: Scope) -> bool:
        # The SDK's routing: only the handshake era (an initialize without a session) opens a session;
        # requests of the sessionless 2026 protocol carry a newer MCP-Protocol-Version.
        version = _header(scope, _VERSION_HEADER)
        return version is None or version in HANDSHAKE_PROTOCOL_VERSIONS

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        victims = self._make_room()
        self._opening += 1  # counted before any await, so concurrent openings cannot overshoot together
        status: list[int] = []
        assigned: dict[str, str] = {}
        try:
            with anyio.CancelScope(shield=True):  # a forgotten session must really end
                for victim in victims:
                    await self._end(victim, scope)
            await self.app(scope, receive, _watching(send, status, assigned))
        finally:
            self._opening -= 1
            session_id = assigned.get("id")
            if status and status[0] < 400 and session_id:
                self._sessions[session_id] = _Session()

    def _make_room(self) -> list[str]:
        """Forget expired sessions and, at the cap, the least recently used idle ones; returns the ids to end."""
        now = time.monotonic()
        victims = [
            sid for sid, s in self._sessions.items() if not s.in_flight and now - s.last_used >= self.idle_seconds
        ]
        for sid in victims:
            del self._sessions[sid]
        excess = len(self._sessions) + self._opening + 1 - self.max_sessions
        for sid, session in list(self._sessions.items()):
            if excess <= 0:
                break
            if not session.in_flight:
                del self._sessions[sid]
                victims.append(sid)
                excess -= 1
                log.info(
                    "ended the least recently used idle HTTP session to stay within %d sessions", self.max_sessions
                )
        return victims

    async def _end(self, session_id: str, opening: Scope) -> None:
        """DELETE the session through the app, as its client would have (404 if the SDK already expired it)."""
        scope: Scope = {
            **{
                k: v
                for k, v in opening.items()
                if k in ("type", "asgi", "http_version", "scheme", "server", "root_path", "app", "state")
            },
            "method": "DELETE",
            "path": self.path,
            "raw_path": self.path.encode("ascii"),
            "query_string": b"",
            "client": None,
            "headers": [(_SESSION_HEADER, session_id.encode("latin-1"))],
        }
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: Message) -> None:
            return None

        await self.app(scope, receive, discard)


def _watching(send: Send, status: list[int], assigned: dict[str, str]) -> Send:
    """`send`, noting the response status and the session id it assigns."""

    async def watched(message: Message) -> None:
        if message["type"] == "http.response.start":
            status.append(int(message["status"]))
            for key, value in message.get("headers", []):
                if bytes(key).lower() == _SESSION_HEADER:
                    assigned["id"] = bytes(value).decode("latin-1")
        await send(message)

    return watched


__all__ = ["SessionLimiter"]
