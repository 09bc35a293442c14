"""OpenAI-compatible chat completions (OpenAI, DeepSeek, Mistral, Groq, Gemini, Qwen, Kimi, OpenRouter,
Ollama, LM Studio, vLLM…) through the official `openai` SDK, streamed, with its own retry machinery."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..errors import AgentError, bad_response, classify, content_filtered, stream_cut
from ..models import AssistantMessage, Message, ModelTurn, ToolCall, ToolResultMessage, ToolSpec, Usage, UserMessage
from .base import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_S, MAX_REPLY_CHARS, TOO_LONG, TextSink
from .registry import ResolvedProvider

WRONG_SHAPE = "an event of the response stream is not in the chat-completions format"


def to_openai_messages(system: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for m in messages:
        if isinstance(m, UserMessage):
            out.append({"role": "user", "content": m.content})
        elif isinstance(m, AssistantMessage):
            msg: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                msg["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json}}
                    for c in m.tool_calls
                ]
            elif not m.content:
                msg["content"] = ""
            out.append(msg)
        elif isinstance(m, ToolResultMessage):
            content = f"ERROR: {m.content}" if m.is_error else m.content
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": content})
    return out


def to_openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.wire_name, "description": t.description, "parameters": t.input_schema},
        }
        for t in tools
    ]


class OpenAICompatModel:
    def __init__(
        self,
        provider: ResolvedProvider,
        *,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_output_tokens: int | None = None,
    ):
        import openai

        self.provider = provider.name
        self.model = provider.model
        self._base_url = provider.base_url
        self._spec = provider.spec
        self._stream_usage = provider.spec.stream_usage
        self._max_output_tokens = max_output_tokens
        self._client = openai.AsyncOpenAI(
            api_key=provider.api_key or "not-needed",
            base_url=provider.base_url,
            max_retries=max_retries,
            timeout=timeout_s,
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
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(system, messages),
            "stream": True,
        }
        if tools and allow_tools:
            kwargs["tools"] = to_openai_tools(tools)
        if self._max_output_tokens:
            kwargs["max_completion_tokens"] = self._max_output_tokens
        try:
            try:
                stream = await self._client.chat.completions.create(**self._with_usage(kwargs))
            except Exception as exc:
                # some older OpenAI-compatible servers reject stream_options: ask once more without it
                if (
                    self._stream_usage
                    and getattr(exc, "status_code", None) in (400, 422)
                    and "stream_options" in str(exc)
                ):
                    self._stream_usage = False
                    stream = await self._client.chat.completions.create(**kwargs)
                else:
                    raise
            return await self._read_stream(stream, on_text)
        except AgentError:
            raise
        except Exception as exc:  # SDK errors after its retries, broken streams
            raise classify(exc, provider=self.provider, base_url=self._base_url) from None

    def _with_usage(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        return {**kwargs, "stream_options": {"include_usage": True}} if self._stream_usage else kwargs

    async def _read_stream(self, stream: Any, on_text: TextSink | None) -> ModelTurn:
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        usage = Usage()
        finish: str | None = None
        chunks = choices = size = 0
        async with stream:
            try:
                async for chunk in stream:
                    chunks += 1
                    if getattr(chunk, "usage", None):
                        u = chunk.usage
                        details = getattr(u, "prompt_tokens_details", None)
                        usage = Usage(
                            prompt_tokens=u.prompt_tokens or 0,
                            completion_tokens=u.completion_tokens or 0,
                            cached_tokens=(getattr(details, "cached_tokens", None) or 0) if details else 0,
                        )
                    for choice in chunk.choices or []:
                        choices += 1
                        delta = choice.delta
                        if delta is not None and delta.content:
                            if not isinstance(delta.content, str):
                                raise TypeError("content")
                            size += len(delta.content)
                            if size > MAX_REPLY_CHARS:
                                raise bad_response(self.provider, TOO_LONG)
                            text.append(delta.content)
                            if on_text:
                                on_text(delta.content)
                        for tc in (delta.tool_calls or []) if delta is not None else []:
                            if tc.index is not None and not isinstance(tc.index, int):
                                raise TypeError("tool call index")
                            slot = calls.setdefault(
                                tc.index if tc.index is not None else len(calls),
                                {"id": None, "name": "", "arguments": ""},
                            )
                            if tc.id:
                                slot["id"] = tc.id
                            if tc.function is not None:
                                if tc.function.name:
                                    slot["name"] += tc.function.name
                                if isinstance(tc.function.arguments, dict):  # some servers send the object
                                    tc.function.arguments = json.dumps(tc.function.arguments)
                                if tc.function.arguments:
                                    size += len(tc.function.arguments)
                                    if size > MAX_REPLY_CHARS:
                                        raise bad_response(self.provider, TOO_LONG)
                                    slot["arguments"] += tc.function.arguments
                        if choice.finish_reason:
                            finish = choice.finish_reason
            except ValueError:  # an event whose data is not JSON
                raise bad_response(self.provider, "an event of the response stream is not JSON") from None
            except (TypeError, AttributeError, KeyError):  # JSON, not shaped like a chunk (the SDK does not check)
                raise bad_response(self.provider, WRONG_SHAPE) from None
        if not chunks:  # a 200 whose body is no event stream at all (HTML, plain JSON, text)
            raise bad_response(self.provider, "the response held no stream events")
        if not choices:  # events, but not one choice: nothing was answered
            raise bad_response(self.provider, "the model sent an empty reply (no choices)")
        if finish is None:  # every OpenAI-compatible server ends a complete stream with a finish_reason
            raise stream_cut(self.provider)
        if finish == "content_filter":
            raise content_filtered(self.provider)
        tool_calls = [
            ToolCall(id=slot["id"] or f"call_{i}", name=slot["name"], arguments_json=slot["arguments"] or "{}")
            for i, slot in sorted(calls.items())
        ]
        return ModelTurn(text="".join(text), tool_calls=tool_calls, usage=usage, finish_reason=finish)
