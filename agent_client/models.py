"""Typed models at the boundaries: conversation messages, tool specs and calls, usage, run results.

Messages are provider-neutral; each adapter in `providers/` converts them to its wire format.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator

StoppedReason = Literal["final", "max_iterations", "budget", "error"]


class ToolSpec(BaseModel):
    """A tool as the model sees it. `wire_name` is safe for every provider (`[A-Za-z0-9_-]{1,64}`)."""

    name: str
    wire_name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ToolCall(BaseModel):
    """A tool call requested by the model. `arguments_json` is exactly what the model produced."""

    id: str
    name: str  # the wire name the model used
    arguments_json: str = "{}"

    def parsed_arguments(self) -> tuple[dict[str, Any] | None, str | None]:
        """(arguments, None) or (None, readable error) — the model's JSON is untrusted."""
        import json

        text = self.arguments_json.strip() or "{}"
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return None, f"The arguments are not valid JSON ({exc.msg} at position {exc.pos}). Send a JSON object."
        if not isinstance(value, dict):
            return None, "The arguments must be a JSON object."
        return value, None


class TurnOptions(BaseModel):
    """How a question was asked (`--strategy`, `--expand`, `--reflect`): stored with it in the session, so a cut
    turn is resumed the way it ran; never sent to a provider."""

    strategy: Literal["react", "plan"] = "react"
    expand: bool = False
    reflect: bool = False

    def flags(self) -> str:
        """The options as the command line spells them: "--strategy plan --reflect", "--strategy react"."""
        return " ".join(
            [
                f"--strategy {self.strategy}",
                *(["--expand"] if self.expand else []),
                *(["--reflect"] if self.reflect else []),
            ]
        )


class UserMessage(BaseModel):
    role: Literal["user"] = "user"
    content: str
    options: TurnOptions | None = None  # on the question of a turn (None: stored by an older docs-agent, or a note)


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    # The closing line of a turn that stopped on an error ("(no answer: …)"): it keeps the history valid for the
    # next question, yet the turn stays resumable like a cut one (`sessions.unfinished`). Never sent to a provider.
    failed: bool = False


class Shown(BaseModel):
    """What one tool result showed of one document: its id, the heading paths (normalised, `a > b`), and
    whether that was its whole heading list. Kept with the result in the session, so a resumed turn checks
    its citations against results it does not fetch again; never sent to a provider."""

    id: str
    headings: list[str] = Field(default_factory=list)
    all_headings: bool = False


class ToolResultMessage(BaseModel):
    role: Literal["tool"] = "tool"
    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    shown: list[Shown] = Field(default_factory=list)
    # The server was gone (the connection closed): no answer, only docs-agent's error text. A resume runs the
    # call again (`sessions.resumable`). Never sent to a provider.
    unanswered: bool = False


Message = Annotated[UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")]


class Usage(BaseModel):
    """Token counts. `prompt_tokens` includes `cached_tokens` (the part read from the provider's prompt cache)."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0

    @field_validator("prompt_tokens", "cached_tokens", "completion_tokens", mode="before")
    @classmethod
    def _count(cls, value: object) -> int:
        """The provider's counts are untrusted: a negative one would buy budget (--max-tokens, --max-cost) and
        show a negative cost, and a missing or non-numeric one must not fail the answer. Either counts as 0."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            return 0
        return int(min(value, 1e15))

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class ModelTurn(BaseModel):
    """What one LLM call returned."""

    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None


class ToolCallRecord(BaseModel):
    name: str
    arguments: dict[str, Any] | str
    is_error: bool
    duration_ms: int


class UsageReport(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class Citation(BaseModel):
    """A source the answer cites; `verified` only when a search or read of this run showed that document (and
    that heading of it). `reason` says why not: "no such document", "never read", "no such heading in that
    document"."""

    id: str
    heading: str | None = None
    verified: bool = False
    reason: str | None = None


class ProviderAttempt(BaseModel):
    """One provider a question went to, in order; `error` is None for the one that answered."""

    provider: str
    model: str
    error: str | None = None
    # the error's class (server_error, timeout…) for the terminal's one-line fallback notice; the --json
    # shape of providers_tried stays {provider, model, error}
    error_kind: str | None = Field(default=None, exclude=True)


class StepReport(BaseModel):
    """One step of a `--strategy plan` run, as it ran."""

    id: int
    tool: str
    arguments: dict[str, Any]
    after: list[int]
    is_error: bool = False


class PlanReport(BaseModel):
    """The `plan` of `ask --json`: the steps that ran (of the re-plan, if there was one) and any problem."""

    steps: list[StepReport] = Field(default_factory=list)
    replanned: bool = False
    note: str | None = None


class ReflectionReport(BaseModel):
    """The `reflection` of `ask --json` with --reflect: the critique's scores (1-5) and whether it revised."""

    grounded: int
    complete: int
    cited: int
    problems: str = ""
    revised: bool = False


class RunResult(BaseModel):
    """The outcome of one question; `contract()` is the `ask --json` object."""

    answer: str = ""
    stopped_reason: StoppedReason = "final"
    iterations: int = 0
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    provider: str = ""
    model: str = ""
    error: str | None = None
    error_kind: str | None = None
    retryable: bool | None = None
    providers_tried: list[ProviderAttempt] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    plan: PlanReport | None = None  # with --strategy plan
    reflection: ReflectionReport | None = None  # with --reflect, when the critique parsed
    notes: list[str] = Field(default_factory=list)  # options that could not do their part, one sentence each
    new_messages: list[Message] = Field(default_factory=list)

    def contract(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "answer": self.answer,
            "stopped_reason": self.stopped_reason,
            "iterations": self.iterations,
            "tool_calls": [c.model_dump() for c in self.tool_calls],
            "usage": UsageReport(
                prompt_tokens=self.usage.prompt_tokens,
                completion_tokens=self.usage.completion_tokens,
                cost_usd=round(self.cost_usd, 6),
            ).model_dump(),
            "provider": self.provider,
            "model": self.model,
            "providers_tried": [a.model_dump() for a in self.providers_tried],
            "citations": [c.model_dump() for c in self.citations],
        }
        if self.plan is not None:
            out["plan"] = self.plan.model_dump()
        if self.reflection is not None:
            out["reflection"] = self.reflection.model_dump()
        if self.notes:
            out["notes"] = list(self.notes)
        if self.stopped_reason == "error":
            out["error"] = self.error or "unknown error"
        return out
