"""Every LLM call, logged to SQLite (like simonw's `llm`): time, session, provider, model, tokens, latency,
status, cost. Never prompts' secrets, never API keys: only counts and a classified error kind."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from pydantic import BaseModel

from .errors import AgentError, ErrorKind
from .home import db_path
from .redaction import scrub

SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time REAL NOT NULL,
    session TEXT,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    latency_ms INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    error_kind TEXT,
    cost_usd REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS calls_session ON calls(session);
"""


class CallRecord(BaseModel):
    time: float
    session: str | None = None
    provider: str
    model: str
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: int = 0
    status: str = "ok"  # "ok" or "error"
    error_kind: str | None = None
    cost_usd: float = 0.0


def connect_db(path: Path | None = None) -> sqlite3.Connection:
    """The sessions and call-log database. One that cannot be opened is one sentence naming the file; it is
    never overwritten (it may hold the user's sessions)."""
    path = path or db_path()
    try:
        conn = sqlite3.connect(path, timeout=10)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(SCHEMA)
            conn.execute("SELECT count(*) FROM calls").fetchone()  # reads a page: garbage after a valid header
        except BaseException:
            conn.close()
            raise
    except sqlite3.DatabaseError as exc:
        raise AgentError(
            ErrorKind.CONFIGURATION,
            f"docs-agent's data file {path} cannot be used ({exc}). Move it away (sessions and the call log then "
            "start afresh) or set DOCS_AGENT_HOME to another folder.",
            retryable=False,
        ) from None
    return conn


class CallLog:
    def __init__(self, path: Path | None = None):
        self._path = path

    def record(self, rec: CallRecord) -> None:
        rec = scrub(rec)
        with connect_db(self._path) as conn:
            conn.execute(
                "INSERT INTO calls (time, session, provider, model, prompt_tokens, cached_tokens, completion_tokens,"
                " latency_ms, status, error_kind, cost_usd) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    rec.time,
                    rec.session,
                    rec.provider,
                    rec.model,
                    rec.prompt_tokens,
                    rec.cached_tokens,
                    rec.completion_tokens,
                    rec.latency_ms,
                    rec.status,
                    rec.error_kind,
                    rec.cost_usd,
                ),
            )
        conn.close()

    def recent(self, limit: int = 20, session: str | None = None) -> list[CallRecord]:
        conn = connect_db(self._path)
        try:
            sql = (
                "SELECT time, session, provider, model, prompt_tokens, cached_tokens, completion_tokens, latency_ms,"
                " status, error_kind, cost_usd FROM calls"
            )
            args: tuple = ()
            if session is not None:
                sql += " WHERE session = ?"
                args = (session,)
            rows = conn.execute(sql + " ORDER BY id DESC LIMIT ?", (*args, limit)).fetchall()
        finally:
            conn.close()
        fields = list(CallRecord.model_fields)
        return [CallRecord(**dict(zip(fields, row, strict=False))) for row in reversed(rows)]


def now() -> float:
    return time.time()
