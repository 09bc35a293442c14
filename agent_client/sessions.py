"""Chat sessions in SQLite: one row per message, keyed by session name; sessions never see each other."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from pydantic import BaseModel, TypeAdapter

from .calllog import connect_db
from .models import Message, Usage
from .redaction import redact

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

    def load(self, name: str) -> list[Message]:
        conn = self._conn()
        try:
            rows = conn.execute("SELECT body FROM messages WHERE session = ? ORDER BY seq", (name,)).fetchall()
        finally:
            conn.close()
        return [_MESSAGE.validate_json(body) for (body,) in rows]

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
