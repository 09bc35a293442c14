"""Anthropic Messages through the official `anthropic` SDK (optional extra; imported only when used).

Differences from the OpenAI format handled here: the system prompt is a top-level field, tool calls are
`tool_use` content blocks and results `tool_result` blocks in a user message (consecutive results merged
into one message), `max_tokens` is required, and a history holding tool blocks must still declare the tools
(so the last call after the iteration limit uses `tool_choice: none`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..errors import (
    MAX_RETRY_AFTER_S,
    AgentError,
    ErrorKind,
    bad_response,
    classify,
    content_filtered,
    retry_after_s,
    stream_cut,
)
from ..models import AssistantMessage, Message, ModelTurn, ToolCall, ToolResultMessage, ToolSpec, Usage, UserMessage
from .base import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_S, MAX_REPLY_CHARS, TOO_LONG, TextSink
from .registry import ANTHROPIC_EXTRA, ResolvedProvider


def to_anthropic_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def push(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:  # Anthropic wants alternating roles: merge
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for m in messages:
        if isinstance(m, UserMessage):
            push("user", [{"type": "text", "text": m.content or "…"}])
        elif isinstance(m, AssistantMessage):
            blocks: list[dict[str, Any]] = []
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            for c in m.tool_calls:
                args, _ = c.parsed_arguments()
                blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": args or {}})
            push("assistant", blocks or [{"type": "text", "text": "…"}])
        elif isinstance(m, ToolResultMessage):
            push(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": m.tool_call_id,
                        "content": m.content or "(empty)",
                        "is_error": m.is_error,
                    }
                ],
            )
    return out


def to_anthropic_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [{"name": t.wire_name, "description": t.description, "input_schema": t.input_schema} for t in tools]


class AnthropicModel:
    def __init__(
        self,
        provider: ResolvedProvider,
        *,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_output_tokens: int | None = None,
    ):
        try:
            import anthropic
        except ImportError:
            raise AgentError(
                ErrorKind.CONFIGURATION,
                f"The anthropic provider needs the optional extra: {ANTHROPIC_EXTRA}.",
                retryable=False,
            ) from None
        self.provider = provider.name
        self.model = provider.model
        self._base_url = provider.base_url
        self._max_tokens = max_output_tokens or provider.spec.max_output_tokens
        self._client = anthropic.AsyncAnthropic(
            api_key=provider.api_key or "not-needed",
            base_url=provider.base_url,
            max_retries=max_retries,
            timeout=timeout_s,
            http_client=anthropic.DefaultAsyncHttpxClient(event_hooks={"response": [_refuse_long_waits]}),
        )

    async def aclose(self) -> None:
        await self._client.close()

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        allow_tools: bool = True,
        on_text: TextSink | None = None,
    ) -> ModelTurn:
        wire_messages = to_anthropic_messages(messages)
        if wire_messages and wire_messages[-1]["content"]:
            # prompt caching: the next call of the loop re-reads everything up to here at the cached price
            last = wire_messages[-1]["content"][-1]
            wire_messages[-1]["content"][-1] = {**last, "cache_control": {"type": "ephemeral"}}
        kwargs: dict[str, Any] = {
            "model": self.model,
            "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            "messages": wire_messages,
            "max_tokens": self._max_tokens,
            "stream": True,
        }
        if tools:
            kwargs["tools"] = to_anthropic_tools(tools)
            if not allow_tools:
                kwargs["tool_choice"] = {"type": "none"}
        try:
            stream = await self._client.messages.create(**kwargs)
            return await self._read_stream(stream, on_text)
        except AgentError:
            raise
        except Exception as exc:
            raise classify(exc, provider=self.provider, base_url=self._base_url) from None

    async def _read_stream(self, stream: Any, on_text: TextSink | None) -> ModelTurn:
        text: list[str] = []
        blocks: dict[int, dict[str, Any]] = {}
        input_tokens = cache_read = cache_write = output_tokens = 0
        stop: str | None = None
        started = False
        size = 0
        async with stream:
            try:
                async for event in stream:
                    kind = event.type
                    if kind == "message_start":
                        started = True
                        u = event.message.usage
                        input_tokens = u.input_tokens or 0
                        cache_read = getattr(u, "cache_read_input_tokens", None) or 0
                        cache_write = getattr(u, "cache_creation_input_tokens", None) or 0
                        output_tokens = u.output_tokens or 0
                    elif kind == "content_block_start":
                        block = event.content_block
                        if block.type == "tool_use":
                            # the input comes in input_json_delta events; some compatible servers give it whole here
                            given = getattr(block, "input", None)
                            blocks[event.index] = {"id": block.id, "name": block.name, "json": "", "given": given}
                    elif kind == "content_block_delta":
                        delta = event.delta
                        size += len(getattr(delta, "text", None) or getattr(delta, "partial_json", None) or "")
                        if size > MAX_REPLY_CHARS:
                            raise bad_response(self.provider, TOO_LONG)
                        if delta.type == "text_delta":
                            text.append(delta.text)
                            if on_text:
                                on_text(delta.text)
                        elif delta.type == "input_json_delta" and event.index in blocks:
                            blocks[event.index]["json"] += delta.partial_json
                    elif kind == "message_delta":
                        stop = event.delta.stop_reason or stop
                        if event.usage is not None and event.usage.output_tokens is not None:
                            output_tokens = event.usage.output_tokens
                        if getattr(event.usage, "input_tokens", None):
                            input_tokens = event.usage.input_tokens
                    elif kind == "error":  # pragma: no cover - surfaced by the SDK as an exception in practice
                        raise AgentError(ErrorKind.SERVER_ERROR, f"{self.provider}: stream error")
            except ValueError:  # an event whose data is not JSON
                raise bad_response(self.provider, "an event of the response stream is not JSON") from None
            except (TypeError, AttributeError, KeyError):  # JSON, not shaped like an event (the SDK does not check)
                raise bad_response(
                    self.provider, "an event of the response stream is not in the Messages format"
                ) from None
        if not started:  # a 200 whose body is no event stream at all (HTML, plain JSON, text)
            raise bad_response(self.provider, "the response held no message_start event")
        if stop is None:  # a complete message always ends with a message_delta naming its stop_reason
            raise stream_cut(self.provider)
        if stop == "refusal":
            raise content_filtered(self.provider)
        if stop == "model_context_window_exceeded":
            raise AgentError(ErrorKind.CONTEXT_LENGTH, f"{self.provider}: the model's context window is full.")
        calls = [
            ToolCall(id=b["id"], name=b["name"], arguments_json=b["json"] or _given(b["given"]))
            for _, b in sorted(blocks.items())
        ]
        usage = Usage(
            prompt_tokens=input_tokens + cache_read + cache_write,
            cached_tokens=cache_read,
            completion_tokens=output_tokens,
        )
        return ModelTurn(text="".join(text), tool_calls=calls, usage=usage, finish_reason=stop)


def _given(value: object) -> str:
    """The input a tool_use block carried in its start event, as JSON ("{}" when none)."""
    return json.dumps(value) if isinstance(value, dict) and value else "{}"


async def _refuse_long_waits(response: Any) -> None:
    """The anthropic SDK sleeps whatever Retry-After says, up to 50 days: a wait over MAX_RETRY_AFTER_S is
    not retried (as the openai SDK does), so the error comes at once, and --fallback can take over."""
    wait = retry_after_s(response.headers)
    if wait is not None and wait > MAX_RETRY_AFTER_S:
        response.headers["x-should-retry"] = "false"
