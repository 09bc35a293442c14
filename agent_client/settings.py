"""Every environment variable docs-agent reads, in one typed place. Command-line flags override these.

A bad value is one sentence naming the variable (an `AgentError` of kind configuration), never a traceback.
Variables whose names are data (a provider's key variable, `--api-key-env VAR`, `--server-token-env VAR`)
are read through `Settings.value`; only redaction.py also scans `os.environ`, for secret-named values."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .errors import AgentError, ErrorKind

DEFAULT_MAX_RETRIES = 3
DEFAULT_MAX_TOOL_CALLS_PER_TURN = 16
DEFAULT_MAX_TOOL_ARGUMENT_BYTES = 8 * 1024
DEFAULT_MEMORY_TOKENS = 3000


def _int(env: Mapping[str, str], name: str, default: int, minimum: int) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise AgentError(
            ErrorKind.CONFIGURATION,
            f"The environment variable {name} must be a whole number of at least {minimum} "
            f"(it is {raw.strip()[:40]!r}); fix or unset it.",
            retryable=False,
        )
    return value


def _names(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    return tuple(part.strip().lower() for part in (env.get(name) or "").split(",") if part.strip())


@dataclass(frozen=True)
class Settings:
    home: Path | None = None  # DOCS_AGENT_HOME
    provider: str | None = None  # DOCS_AGENT_PROVIDER
    model: str | None = None  # DOCS_AGENT_MODEL
    max_retries: int = DEFAULT_MAX_RETRIES  # DOCS_AGENT_MAX_RETRIES
    max_tool_calls_per_turn: int = DEFAULT_MAX_TOOL_CALLS_PER_TURN  # DOCS_AGENT_MAX_TOOL_CALLS
    max_tool_argument_bytes: int = DEFAULT_MAX_TOOL_ARGUMENT_BYTES  # DOCS_AGENT_MAX_TOOL_ARGUMENT_BYTES
    fallback: tuple[str, ...] = ()  # DOCS_AGENT_FALLBACK, comma-separated provider names
    memory_tokens: int = DEFAULT_MEMORY_TOKENS  # DOCS_AGENT_MEMORY_TOKENS: chat history sent per question
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        home = env.get("DOCS_AGENT_HOME")
        return cls(
            home=Path(home).expanduser() if home else None,
            provider=env.get("DOCS_AGENT_PROVIDER") or None,
            model=env.get("DOCS_AGENT_MODEL") or None,
            max_retries=_int(env, "DOCS_AGENT_MAX_RETRIES", DEFAULT_MAX_RETRIES, 0),
            max_tool_calls_per_turn=_int(env, "DOCS_AGENT_MAX_TOOL_CALLS", DEFAULT_MAX_TOOL_CALLS_PER_TURN, 1),
            max_tool_argument_bytes=_int(
                env, "DOCS_AGENT_MAX_TOOL_ARGUMENT_BYTES", DEFAULT_MAX_TOOL_ARGUMENT_BYTES, 64
            ),
            fallback=_names(env, "DOCS_AGENT_FALLBACK"),
            memory_tokens=_int(env, "DOCS_AGENT_MEMORY_TOKENS", DEFAULT_MEMORY_TOKENS, 200),
            environ=env,
        )

    def value(self, name: str | None) -> str | None:
        """A variable whose name is itself configuration (a key or token variable); empty counts as unset."""
        return (self.environ.get(name) or None) if name else None

    def mcp_docs_env(self) -> dict[str, str]:
        """The `MCP_DOCS_*` variables, for the documents server docs-agent starts."""
        return {k: v for k, v in self.environ.items() if k.startswith("MCP_DOCS_")}
