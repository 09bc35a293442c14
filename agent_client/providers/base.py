"""What the loop needs from a provider adapter: one streamed call in, one `ModelTurn` out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ..models import Message, ModelTurn, ToolSpec

TextSink = Callable[[str], None]

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 3
# No model writes this much in one reply (128k output tokens are ~500k characters): a stream that does is a
# broken or hostile server, cut off before it fills the memory, the terminal and the session.
MAX_REPLY_CHARS = 2_000_000
TOO_LONG = f"the reply passed {MAX_REPLY_CHARS:,} characters, more than any model writes in one reply"


class ChatModel(Protocol):
    provider: str
    model: str

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        allow_tools: bool = True,
        on_text: TextSink | None = None,
    ) -> ModelTurn:
        """One LLM call. Raises `AgentError` (classified) when it fails after the SDK's own retries.

        `allow_tools=False` asks for a plain answer (the last call after the iteration limit)."""
        ...

    async def aclose(self) -> None: ...
