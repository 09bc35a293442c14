"""Where docs-agent keeps its files: `$DOCS_AGENT_HOME`, else the platform's user data folder."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from .settings import Settings


def home() -> Path:
    path = Settings.load().home or Path(platformdirs.user_data_dir("docs-agent", appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def db_path() -> Path:
    """One SQLite file holds the call log and the chat sessions."""
    return home() / "docs-agent.sqlite3"
