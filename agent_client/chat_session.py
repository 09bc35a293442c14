"""One `docs-agent chat` conversation: its history on disk, the slash commands that act on it, and running an
answer that Ctrl-C cancels without ending the chat."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TextIO

import anyio

from .loop import Agent
from .memory import describe, exchanges, forget, remember
from .models import Message, RunResult
from .sessions import SessionStore, close_unfinished, question_of, resumable, unfinished
from .settings import Settings
from .text import terminal_safe

CHAT_HELP = (
    "commands: /reset  /usage  /sessions  /delete NAME  /memory  /forget [N]  /resume  /exit  "
    "(Ctrl-C cancels a running answer; /resume finishes it)"
)


class ChatSession:
    """One named conversation: its history on disk and the slash commands that act on it."""

    def __init__(self, name: str, settings: Settings, out: TextIO) -> None:
        self.name = name
        self.store = SessionStore()
        self.history: list[Message] = self.store.load(name)  # a damaged row: one warning line, then skipped
        self.memory_tokens = settings.memory_tokens
        self.out = out

    def _say(self, text: str) -> None:
        print(terminal_safe(text), file=self.out)  # session names and stored text are data, never escapes

    def command(self, line: str) -> bool:
        """Run one slash command; False when it ends the chat."""
        cmd, _, rest = line.partition(" ")
        name = self.name
        if cmd in ("/exit", "/quit"):
            return False
        if cmd == "/reset":
            self.store.reset(name)
            self.history = []
            self._say(f"session {name!r} reset")
        elif cmd == "/memory":
            for text in describe(self.history, self.memory_tokens):
                self._say(terminal_safe(text))
        elif cmd == "/forget":
            self._forget(rest.strip())
        elif cmd == "/usage":
            usage, cost, calls = self.store.usage(name)
            self._say(
                f"session {name!r}: {calls} calls, {usage.prompt_tokens:,} prompt "
                f"({usage.cached_tokens:,} cached) / {usage.completion_tokens:,} completion tokens, ${cost:.4f}"
            )
        elif cmd == "/sessions":
            for s in self.store.list():
                mark = "*" if s.name == name else " "
                self._say(
                    f"{mark} {s.name}  {s.messages} messages  ${s.cost_usd:.4f}  "
                    f"{datetime.fromtimestamp(s.updated):%Y-%m-%d %H:%M}"
                )
        elif cmd == "/delete":
            victim = rest.strip()
            if not victim:
                self._say("usage: /delete NAME")
            else:
                found = self.store.delete(victim)
                if victim == name:
                    self.history = []
                self._say(f"deleted {victim!r}" if found else f"no session {victim!r}")
        else:
            self._say(CHAT_HELP)
        return True

    def _forget(self, which: str) -> None:
        name = self.name
        if not which:
            self.store.reset(name)
            self.history = []
            self._say(f"session {name!r}: everything forgotten")
        elif not which.isdigit() or (kept := forget(self.history, int(which))) is None:
            self._say(
                f"/forget N takes the number of an exchange that /memory lists (1-"
                f"{len(exchanges(self.history))}); /forget alone forgets everything."
            )
        else:
            self.store.replace(name, kept)
            self.history = kept
            self._say(f"session {name!r}: exchange {which} forgotten")

    def context(self, question: str) -> list[Message]:
        return remember(self.history, question, self.memory_tokens).messages()

    def save(self, messages: list[Message]) -> None:
        """Each settled part of a turn (question, tool round, answer), stored as it comes."""
        self.store.append(self.name, messages)
        self.history.extend(messages)

    def cut_turn(self) -> int | None:
        return unfinished(self.history)

    def close_cut_turn(self, why: str) -> None:
        closing = close_unfinished(self.history, why)
        if closing:
            self.save(closing)

    async def resume(self, agent: Agent) -> RunResult | None:
        cut = self.cut_turn()
        if cut is None:
            self._say("nothing to resume: the last answer is complete")
            return None
        context = remember(self.history[:cut], question_of(self.history, cut), self.memory_tokens).messages()
        self.history[cut:] = resumable(self.history[cut:])  # an error's closing line: the turn goes on after it
        return await _interruptible(lambda: agent.resume(self.history[cut:], context, progress=self.save))


async def _interruptible(run: Callable[[], Awaitable[RunResult]]) -> RunResult | None:
    """Run one question; Ctrl-C cancels the request in flight and returns None instead of quitting."""
    import asyncio

    result: RunResult | None = None
    loop = asyncio.get_running_loop()
    with anyio.CancelScope() as scope:
        with contextlib.suppress(NotImplementedError, RuntimeError):  # Windows or not the main thread
            loop.add_signal_handler(signal.SIGINT, scope.cancel)
        try:
            result = await run()
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)
    return result
