"""docs-agent chat memory: tokens sent over a 20-question session, memory against full-history replay.

    python -m benchmarks.agent_memory [--questions 20] [--budget 3000]

The real docs-agent loop and the real mcp-docs server (stdio, keyword search over examples/, a fresh index in
a temp folder) answer the same 20 scripted questions twice through the loopback fake LLM
(tests/agent_client/fake_llm.py, OpenAI wire format): each question is one search and one answer citing
the top hit that search showed (its citations are verified).
Run 1 replays the whole stored history with every question (docs-agent before memory); run 2 sends what
`agent_client.memory.remember` selects within the budget (chat's behaviour now). Tokens are estimated from
the request bodies the fake server received (~4 characters per token), system prompt and tool declarations
included, so both runs are measured the same way. No network, no API key."""

from __future__ import annotations

import argparse
import functools
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import anyio

from agent_client.calllog import CallLog
from agent_client.loop import Agent, Limits
from agent_client.mcp_session import DocsFolder, connect
from agent_client.memory import remember
from agent_client.models import Message
from agent_client.providers import make_model, resolve
from agent_client.text import estimate_tokens
from tests.agent_client.fake_llm import FakeLLM, Reply, oa_text, oa_tools

from .citation_eval import parse_search
from .common import REPO, run_script, table, write_results

TOPICS = [
    "install the collector",
    "configuration file",
    "backups schedule",
    "exporters",
    "ports",
    "environment variables",
    "upgrade",
    "logs",
    "receivers",
    "processors",
    "restore a backup",
    "pipelines",
    "élèves",
    "TLS",
    "memory",
    "service",
    "extensions",
    "docker",
    "kubernetes",
    "troubleshooting",
]

History = Callable[[list[Message], str], list[Message]]


def cited_answer(topic: str, body: dict[str, Any]) -> Reply:
    """The scripted answer cites what the search it was sent showed (its top hit and section), as a model
    should; it used to cite guides/install.md whatever the search showed (verified 3 times in 20)."""
    hits = parse_search(body["messages"][-1]["content"])
    if not hits:
        return oa_text(f"About {topic}: the documents do not say. " * 2)
    doc, paths = hits[0]
    heading = paths[0].split(" > ")[-1]
    return oa_text(
        f"About {topic}: the documents say what to do, step by step, with the defaults and the "
        f"options that matter ({doc} — {heading}). " * 2
    )


async def session(llm: FakeLLM, questions: Sequence[str], history_for: History, verified: list[int]) -> list[int]:
    """Ask every question in turn, storing each exchange; the tokens of each request the LLM received.
    `verified`: gets 1 for each answer whose citations are all verified, 0 for one with none or one not."""
    provider = resolve("openai", base_url=llm.openai_url, api_key_env="BENCH_FAKE_KEY")
    model = make_model(provider, max_retries=0, timeout_s=30)
    first = len(llm.requests)
    stored: list[Message] = []
    async with connect(DocsFolder(str(REPO / "examples"))) as conn:
        agent = Agent(model, conn, provider.spec.prices, limits=Limits(), log=CallLog(), session="bench")
        for i, q in enumerate(questions):
            llm.push(oa_tools([(f"s{i}", "search_documents", json.dumps({"query": q, "mode": "keyword"}))]))
            llm.responder = functools.partial(cited_answer, q)
            result = await agent.ask(f"What do the docs say about {q}?", history_for(stored, q))
            stored += result.new_messages
            verified.append(len(result.citations) and int(all(c.verified for c in result.citations)))
    await model.aclose()
    return [
        estimate_tokens(json.dumps(r.body.get("messages", [])) + json.dumps(r.body.get("tools", [])))
        for r in llm.requests[first:]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--budget", type=int, default=3000, help="memory budget in tokens (DOCS_AGENT_MEMORY_TOKENS)")
    args = parser.parse_args()
    questions = [TOPICS[i % len(TOPICS)] for i in range(args.questions)]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            {
                "MCP_DOCS_INDEX_DIR": f"{tmp}/index",
                "MCP_DOCS_EMBEDDINGS": "none",
                "DOCS_AGENT_HOME": f"{tmp}/home",
                "BENCH_FAKE_KEY": "bench-fake-key-0123456789",
            }
        )
        with FakeLLM() as llm:
            verified: list[int] = []
            full = anyio.run(session, llm, questions, lambda h, q: list(h), verified)
            memory = anyio.run(session, llm, questions, lambda h, q: remember(h, q, args.budget).messages(), verified)
    total_full, total_memory = sum(full), sum(memory)
    rows = [
        ("full-history replay", f"{total_full:,}", f"{full[-1]:,}", "1.00"),
        (
            f"memory (budget {args.budget:,})",
            f"{total_memory:,}",
            f"{memory[-1]:,}",
            f"{total_memory / total_full:.2f}",
        ),
    ]
    table(
        ("mode", "tokens sent, whole session", "last request", "ratio"),
        rows,
        title=f"docs-agent chat, {args.questions} questions, 2 LLM calls each (estimated input tokens)",
    )
    print(f"saved: {total_full - total_memory:,} tokens ({1 - total_memory / total_full:.0%})")
    print(
        f"answers whose citations are all verified: {sum(verified)} of {len(verified)} "
        "(the others found nothing and cite nothing)"
    )
    write_results(
        "agent_memory",
        {
            "questions": args.questions,
            "budget_tokens": args.budget,
            "full_history_tokens": full,
            "memory_tokens": memory,
            "total_full": total_full,
            "total_memory": total_memory,
            "answers_all_citations_verified": sum(verified),
        },
    )


if __name__ == "__main__":
    run_script(main)
