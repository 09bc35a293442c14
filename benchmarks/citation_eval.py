"""docs-agent citation check: precision and recall of `verified` on the OTel questions, against a scripted
model that cites both what it read and what it invented.

    python -m benchmarks.citation_eval [--limit N] [--root /work/shared/bench/otel-docs]

The real docs-agent loop and the real mcp-docs server (stdio, keyword search over the OTel docs, en + fr, a
fresh index in a temp folder) answer each question of benchmarks/data/otel_questions.jsonl through the
loopback fake LLM (tests/agent_client/fake_llm.py, OpenAI wire format). The scripted model reads only the
text of the tool results it is sent, as a real model would: it searches the question (and, hostile, the id
of a document that does not exist), reads the first section of the top hit, then answers with citations in
one of seven shapes, rotating:

- truly read: the section it read; the first section the search showed of the second hit;
- invented: the document it searched for but that does not exist; a heading the read document does not
  have; the read section under a shortened id (`install.md` for `guides/install.md`); the read document with
  a heading of the second hit; a real document of the corpus that no tool result showed.

Precision: of the citations docs-agent marked verified, the share truly read. Recall: of the citations
truly read, the share marked verified. Both must be 1.0. "Truly read" is decided by the script from the
text the model was sent, independently of docs-agent's check (which reads the structured results).
No network, no API key; skips cleanly when the OTel docs are absent."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio

from agent_client.calllog import CallLog
from agent_client.loop import Agent, Limits
from agent_client.mcp_session import DocsFolder, connect
from agent_client.providers import make_model, resolve
from tests.agent_client.fake_llm import FakeLLM, Reply, oa_text, oa_tools

from .common import DATA_DIR, SHARED_BENCH, require, run_script, table, write_results

GHOST = "notes/ghost-licence.md"
_HIT = re.compile(r"^\d+\.\s+(?P<id>.+?)\s+—\s")
_SECTION = re.compile(r"§\s+(?P<path>.+?)\s+\(L\d+-\d+\)")
_READ_HEAD = re.compile(r"^(?P<id>.+?) § (?P<path>.+?) \(L\d+-\d+")


@dataclass
class Cited:
    id: str
    heading: str | None
    truly_read: bool
    kind: str


@dataclass
class Script:
    """The scripted model: one instance per question, reacting to the tool results in each request."""

    corpus: list[str]
    shape: int
    cited: list[Cited] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        question = max(i for i, m in enumerate(messages) if m["role"] == "user")
        results = [m["content"] for m in messages[question + 1 :] if m["role"] == "tool"]
        if not results:
            return oa_tools(
                [
                    ("s1", "search_documents", json.dumps({"query": messages[question]["content"], "mode": "keyword"})),
                    ("s2", "search_documents", json.dumps({"query": f"{GHOST} Terms", "mode": "keyword"})),
                ]
            )
        hits = parse_search(results[0])
        if len(results) == 2:
            if not hits:
                return oa_text("The documents do not say.")
            top_id, top_paths = hits[0]
            return oa_tools([("r1", "read_section", json.dumps({"id": top_id, "section": top_paths[0]}))])
        return oa_text(self.answer(hits, results))

    def answer(self, hits: list[tuple[str, list[str]]], results: list[str]) -> str:
        shown_ids = {doc for text in results[:2] for doc, _ in parse_search(text)}
        head = _READ_HEAD.match(results[-1])
        if head is None or results[-1].startswith("ERROR"):
            return "The documents do not say."
        read_id, read_path = head.group("id"), head.group("path")
        read_heading = read_path.split(" > ")[-1]
        shown_ids.add(read_id)
        top_headings = {p.split(" > ")[-1] for p in hits[0][1]} | {read_heading}
        cites = [Cited(read_id, read_heading, True, "read section"), Cited(GHOST, "Terms", False, "searched-for id")]
        cites.append(Cited(read_id, "Invented Heading Nowhere", False, "invented heading"))
        if "/" in read_id:
            cites.append(Cited(read_id.rsplit("/", 1)[1], read_heading, False, "shortened id"))
        if len(hits) > 1:
            second_id, second_paths = hits[1]
            second_heading = second_paths[0].split(" > ")[-1]
            cites.append(Cited(second_id, second_heading, True, "search match"))
            if second_heading not in top_headings:
                cites.append(Cited(read_id, second_heading, False, "heading of another hit"))
        unseen = next((d for d in self.corpus if d not in shown_ids), None)
        if unseen is not None:
            cites.append(Cited(unseen, None, False, "document never shown"))
        self.cited = cites
        return (
            "From the documentation:\n"
            + "\n".join(f"- point {n + 1} {cite(c, self.shape + n, n + 1)}" for n, c in enumerate(cites))
            + "\n\n"
            + "\n".join(footnote(c, n + 1) for n, c in enumerate(cites) if (self.shape + n) % 7 == 6)
        )


def cite(c: Cited, shape: int, n: int) -> str:
    """One citation in one of the seven shapes models write."""
    h = c.heading
    return [
        f"({c.id} — {h})" if h else f"({c.id})",
        f"({c.id} > {h})" if h else f"({c.id})",
        f"(`{c.id}` — {h})" if h else f"(`{c.id}`)",
        f"(**{c.id}** — {h})" if h else f"(**{c.id}**)",
        f"(source: {c.id} — {h})" if h else f"(source: {c.id})",
        f"[source](docs://{quote(c.id)}#{quote(h)})" if h else f"[source](docs://{quote(c.id)})",
        f"[^{n}]",
    ][shape % 7]


def footnote(c: Cited, n: int) -> str:
    return f"[^{n}]: {c.id} — {c.heading}" if c.heading else f"[^{n}]: {c.id}"


def parse_search(text: str) -> list[tuple[str, list[str]]]:
    """(id, section paths) per hit, from mcp-docs' text rendering, the way a model reads it."""
    hits: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        m = _HIT.match(line)
        if m:
            hits.append((m.group("id"), []))
        elif hits and line.startswith(" "):
            hits[-1][1].extend(s.group("path") for s in _SECTION.finditer(line))
    return [(doc, paths) for doc, paths in hits if paths]


@dataclass
class Tally:
    counts: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    missed_parse: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)


async def evaluate(root: Path, questions: list[dict[str, Any]], llm: FakeLLM, tally: Tally) -> None:
    corpus = sorted(str(p.relative_to(root)) for p in root.rglob("*.md") if p.name != "NOTICE.md")
    provider = resolve("openai", base_url=llm.openai_url, api_key_env="BENCH_FAKE_KEY")
    model = make_model(provider, max_retries=0, timeout_s=60)
    async with connect(DocsFolder(str(root))) as conn:
        agent = Agent(model, conn, provider.spec.prices, limits=Limits(max_iterations=4), log=CallLog())
        for i, q in enumerate(questions):
            script = Script(corpus[i * 7 % len(corpus) :] + corpus, shape=i)
            llm.responder = script
            result = await agent.ask(q["question"])
            got = {(c.id, c.heading): c for c in result.citations}
            for c in script.cited:
                found = got.get((c.id, c.heading))
                if found is None:
                    tally.missed_parse.append(f"{q['id']}: {c.id} — {c.heading}")
                    verified = False
                else:
                    verified = found.verified
                    if not verified:
                        tally.reasons[f"{c.kind}: {found.reason}"] += 1
                key = ("tp" if verified else "fn") if c.truly_read else ("fp" if verified else "tn")
                tally.counts[key] += 1
                if key in ("fp", "fn"):
                    tally.wrong.append(f"{q['id']} {key}: {c.id} — {c.heading} ({c.kind})")
    await model.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=SHARED_BENCH / "otel-docs")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions (default: all)")
    args = parser.parse_args()
    root = require(args.root, "the OTel docs")
    questions = [json.loads(line) for line in (DATA_DIR / "otel_questions.jsonl").read_text().splitlines() if line]
    questions = questions[: args.limit] if args.limit else questions
    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            {
                "MCP_DOCS_INDEX_DIR": f"{tmp}/index",
                "MCP_DOCS_EMBEDDINGS": "none",
                "DOCS_AGENT_HOME": f"{tmp}/home",
                "BENCH_FAKE_KEY": "bench-fake-key-0123456789",
            }
        )
        # index first: a server still building its index answers "0 documents"
        subprocess.run(
            [sys.executable, "-m", "mcp_docs", "index", "--root", str(root)], check=True, capture_output=True
        )
        with FakeLLM() as llm:
            anyio.run(evaluate, root, questions, llm, tally)
    c = tally.counts
    precision = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 0.0
    recall = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 0.0
    table(
        ("questions", "citations", "truly read", "invented", "verified", "precision", "recall"),
        [
            (
                len(questions),
                sum(c.values()),
                c["tp"] + c["fn"],
                c["fp"] + c["tn"],
                c["tp"] + c["fp"],
                f"{precision:.3f}",
                f"{recall:.3f}",
            )
        ],
        title="docs-agent citations on the OTel questions (scripted model, real loop and mcp-docs)",
    )
    table(("unverified citation: reason given", "count"), sorted(tally.reasons.items()))
    for line in [*tally.missed_parse[:10], *tally.wrong[:10]]:
        print("  !", line)
    write_results(
        "citation_eval",
        {
            "questions": len(questions),
            "counts": dict(c),
            "precision": precision,
            "recall": recall,
            "reasons": dict(tally.reasons),
            "not_parsed": tally.missed_parse,
            "wrong": tally.wrong,
        },
    )


if __name__ == "__main__":
    run_script(main)
