"""Chat sessions in SQLite: one row per message, keyed by session name; sessions never see each other.

A turn is stored as it runs (the question, then each tool round, then the answer), so a turn cut by a crash,
a kill or Ctrl-C keeps its tool results and can be resumed (`unfinished`, `close_unfinished`). A damaged row
is skipped with one warning naming it: the session still opens, and nothing is deleted from the file."""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, TypeAdapter, ValidationError

from .calllog import connect_db
from .models import AssistantMessage, Message, ToolResultMessage, Usage, UserMessage
from .redaction import redact
from .text import short, terminal_safe

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    name TEXT PRIMARY KEY,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    session TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session, seq)
);
"""

_MESSAGE = TypeAdapter(Message)


class SessionInfo(BaseModel):
    name: str
    created: float
    updated: float
    messages: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class SessionStore:
    def __init__(self, path: Path | None = None):
        self._path = path

    def _conn(self) -> sqlite3.Connection:
        conn = connect_db(self._path)
        conn.execute("PRAGMA foreign_keys=ON")
        conn.executescript(SCHEMA)
        return conn

    def load(self, name: str, warn: Callable[[str], None] | None = None) -> list[Message]:
        """The session's messages. A row that is no message (bad JSON, wrong shape) or breaks the history (a tool
        result with no call before it, tool calls whose results never came, mid-session) is left out, with one
        `warn` line naming it (default: stderr); providers would refuse a history that replays it."""
        conn = self._conn()
        try:
            rows = conn.execute("SELECT seq, body FROM messages WHERE session = ? ORDER BY seq", (name,)).fetchall()
        finally:
            conn.close()
        say = warn or _stderr

        def skip(seq: int, why: str) -> None:
            say(terminal_safe(f"warning: session {short(name, 60)!r}: message {seq} skipped ({why})"))

        parsed: list[tuple[int, Message]] = []
        for seq, body in rows:
            try:
                parsed.append((seq, _MESSAGE.validate_json(body)))
            except ValidationError as exc:
                bad_json = any(e["type"] == "json_invalid" for e in exc.errors())
                skip(seq, "not valid JSON" if bad_json else "not a message of the expected shape")
        return _consistent(parsed, skip)

    def append(self, name: str, messages: list[Message]) -> None:
        stamp = time.time()
        conn = self._conn()
        try:
            with conn:
                conn.execute(
                    "INSERT INTO sessions (name, created, updated) VALUES (?, ?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET updated = excluded.updated",
                    (name, stamp, stamp),
                )
                (start,) = conn.execute(
                    "SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE session = ?", (name,)
                ).fetchone()
                conn.executemany(
                    "INSERT INTO messages (session, seq, body) VALUES (?, ?, ?)",
                    [(name, start + i, redact(_MESSAGE.dump_json(m).decode())) for i, m in enumerate(messages)],
                )
        finally:
            conn.close()

    def replace(self, name: str, messages: list[Message]) -> None:
        """The session's messages become `messages` (for /forget N), in one transaction."""
        conn = self._conn()
        try:
            with conn:
                conn.execute("DELETE FROM messages WHERE session = ?", (name,))
                conn.executemany(
                    "INSERT INTO messages (session, seq, body) VALUES (?, ?, ?)",
                    [(name, i, redact(_MESSAGE.dump_json(m).decode())) for i, m in enumerate(messages)],
                )
        finally:
            conn.close()

    def reset(self, name: str) -> None:
        conn = self._conn()
        try:
            with conn:
                conn.execute("DELETE FROM messages WHERE session = ?", (name,))
        finally:
            conn.close()

    def delete(self, name: str) -> bool:
        conn = self._conn()
        try:
            with conn:
                conn.execute("DELETE FROM messages WHERE session = ?", (name,))
                cur = conn.execute("DELETE FROM sessions WHERE name = ?", (name,))
                conn.execute("DELETE FROM calls WHERE session = ?", (name,))
            return cur.rowcount > 0
        finally:
            conn.close()

    def list(self) -> list[SessionInfo]:
        conn = self._conn()
        try:
            rows = conn.execute(
                "SELECT s.name, s.created, s.updated, (SELECT COUNT(*) FROM messages m WHERE m.session = s.name),"
                " COALESCE((SELECT SUM(prompt_tokens) FROM calls c WHERE c.session = s.name), 0),"
                " COALESCE((SELECT SUM(completion_tokens) FROM calls c WHERE c.session = s.name), 0),"
                " COALESCE((SELECT SUM(cost_usd) FROM calls c WHERE c.session = s.name), 0)"
                " FROM sessions s ORDER BY s.updated DESC"
            ).fetchall()
        finally:
            conn.close()
        return [
            SessionInfo(
                name=r[0],
                created=r[1],
                updated=r[2],
                messages=r[3],
                prompt_tokens=r[4],
                completion_tokens=r[5],
                cost_usd=r[6],
            )
            for r in rows
        ]

    def usage(self, name: str) -> tuple[Usage, float, int]:
        """Tokens, cost and number of LLM calls of a session (from the call log)."""
        conn = self._conn()
        try:
            row = conn.execute(
                "SELECT COALESCE(SUM(prompt_tokens),0), COALESCE(SUM(cached_tokens),0), COALESCE(SUM(completion_tokens),0),"
                " COALESCE(SUM(cost_usd),0), COUNT(*) FROM calls WHERE session = ?",
                (name,),
            ).fetchone()
        finally:
            conn.close()
        return Usage(prompt_tokens=row[0], cached_tokens=row[1], completion_tokens=row[2]), float(row[3]), int(row[4])


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def _consistent(rows: Sequence[tuple[int, Message]], skip: Callable[[int, str], None]) -> list[Message]:
    """The messages in an order every provider accepts: each tool result answers a call of the assistant
    message before it; tool calls left without results before a later message lose those calls. Pending calls
    at the very end are kept: that is an unfinished turn, which can be resumed."""
    out: list[Message] = []
    pending: dict[str, str] = {}  # call id -> name, of the last assistant message with tool calls
    owner = -1  # index in `out` of that message
    owner_seq = -1
    rerun: dict[str, int] = {}  # call id -> index in `out` of its unanswered result (the server was gone)

    def drop_pending() -> None:
        nonlocal pending
        if not pending:
            return
        msg = out[owner]
        assert isinstance(msg, AssistantMessage)
        kept = [c for c in msg.tool_calls if c.id not in pending]
        skip(owner_seq, f"{len(pending)} tool call{'s' if len(pending) != 1 else ''} without a result")
        out[owner] = msg.model_copy(update={"tool_calls": kept})
        pending = {}

    for seq, m in rows:
        if isinstance(m, ToolResultMessage):
            if m.tool_call_id in rerun and m.tool_call_id not in pending:  # a resume ran it again: its answer
                out[rerun.pop(m.tool_call_id)] = m
                continue
            if m.tool_call_id not in pending:
                skip(seq, "a tool result with no tool call before it")
                continue
            del pending[m.tool_call_id]
            if m.unanswered:
                rerun[m.tool_call_id] = len(out)
            out.append(m)
            continue
        drop_pending()
        out.append(m)
        if isinstance(m, UserMessage) or (isinstance(m, AssistantMessage) and m.tool_calls):
            rerun = {}
        if isinstance(m, AssistantMessage) and m.tool_calls:
            pending = {c.id: c.name for c in m.tool_calls}
            owner, owner_seq = len(out) - 1, seq
    # an assistant message stripped of all its calls and without text says nothing
    kept = [m for m in out if not (isinstance(m, AssistantMessage) and not m.tool_calls and not m.content.strip())]
    return _without_resumed_failures(kept)


def _without_resumed_failures(messages: list[Message]) -> list[Message]:
    """The closing line of a turn that stopped on an error is left out once the turn went on after it (it was
    resumed): two assistant messages in a row would tell the model the turn failed. Kept when it is last (the
    turn can be resumed) or before the next question (it closes the turn that was not)."""
    return [
        m
        for i, m in enumerate(messages)
        if not (_failed(m) and i + 1 < len(messages) and not isinstance(messages[i + 1], UserMessage))
    ]


def _failed(m: Message) -> bool:
    return isinstance(m, AssistantMessage) and m.failed


def resumable(tail: Sequence[Message]) -> list[Message]:
    """A cut turn's stored messages as a resume sends them on: without the closing line of an error, and without
    the results of its last round that never came (the server was gone), so those calls run again."""
    last_round = max((i for i, m in enumerate(tail) if isinstance(m, AssistantMessage) and m.tool_calls), default=-1)
    return [
        m
        for i, m in enumerate(tail)
        if not _failed(m) and not (i > last_round >= 0 and isinstance(m, ToolResultMessage) and m.unanswered)
    ]


def unfinished(history: Sequence[Message]) -> int | None:
    """The index of the question whose turn was cut (a crash, a kill, Ctrl-C) or stopped on an error (the provider
    failed after its retries, a rate limit, the deadline): the history does not end with an answer. None when the
    last turn is complete."""
    last_user = max((i for i, m in enumerate(history) if isinstance(m, UserMessage)), default=None)
    if last_user is None:
        return None
    last = history[-1]
    if isinstance(last, AssistantMessage) and not last.tool_calls and not last.failed:
        return None
    return last_user


def close_unfinished(history: Sequence[Message], why: str) -> list[Message]:
    """The messages that end a cut turn without resuming it: an error result for each call that never ran, and
    an assistant line, so the history stays valid for every provider."""
    start = unfinished(history)
    if start is None or _failed(history[-1]):  # a turn that stopped on an error is closed already
        return []
    tail = history[start:]
    answered = {m.tool_call_id for m in tail if isinstance(m, ToolResultMessage)}
    last = tail[-1]
    out: list[Message] = []
    if isinstance(last, AssistantMessage):
        out += [
            ToolResultMessage(tool_call_id=c.id, name=c.name, content=f"(not run: {why})", is_error=True)
            for c in last.tool_calls
            if c.id not in answered
        ]
    elif isinstance(last, ToolResultMessage):
        owner = next(m for m in reversed(tail) if isinstance(m, AssistantMessage))
        out += [
            ToolResultMessage(tool_call_id=c.id, name=c.name, content=f"(not run: {why})", is_error=True)
            for c in owner.tool_calls
            if c.id not in answered
        ]
    out.append(AssistantMessage(content=f"(no answer: {why})"))
    return out


def question_of(history: Sequence[Message], start: int) -> str:
    m = history[start]
    return m.content if isinstance(m, UserMessage) else ""
