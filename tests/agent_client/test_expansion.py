"""`--expand` end to end (both wire formats), and the fusion itself on both result formats."""

from __future__ import annotations

import json

import pytest

from agent_client.expansion import distinct_queries, fuse
from agent_client.hits import search_hits
from agent_client.mcp_session import connect

from . import tiny_docs_server
from .fake_llm import FakeLLM, oa_text, oa_tools
from .helpers import ask
from .test_cli import TINY, cli, llm_args, run
from .test_loop import WIRES, text, tool_results, tools

pytestmark = pytest.mark.anyio

NO_EXPANSION = "--expand: The reformulation reply was not a JSON object. docs-agent searched without expansion."
ANSWER = "The default port is 7420 (guides/setup.md — Installation)."
REWRITES = json.dumps({"queries": ["widget port", "backup schedule"]})


@pytest.fixture
async def docs():
    async with connect(tiny_docs_server.server) as conn:
        yield conn


@pytest.mark.parametrize("wire", WIRES)
async def test_reformulations_are_searched_together_and_fused_into_the_first_result(
    llm: FakeLLM, docs, wire: str
) -> None:
    llm.push(text(wire, "```json\n" + REWRITES + "\n```"), text(wire, ANSWER))
    result = await ask("default port?", llm, docs, wire, expand=True)
    assert result.stopped_reason == "final" and result.answer == ANSWER
    assert result.citations[0].verified  # the fused searches count as evidence
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("search_documents", {"query": q}) for q in ("default port?", "widget port", "backup schedule")
    ]
    rewrite = llm.requests[0].body
    assert "tools" not in rewrite  # a cheap call: the question alone, no tool declarations
    assert json.dumps(rewrite).count("default port?") == 1
    [(call_id, fused, is_error)] = tool_results(wire, llm.requests[1].body)
    assert call_id == "expand" and not is_error
    assert "fused from 3 searches" in fused and '"widget port"' in fused
    # found by two of the three searches, the setup guide ranks first, with both its sections
    lines = fused.splitlines()
    assert lines[1].startswith("1. guides/setup.md — Installation") and "guides/setup.md — Configuration" in lines[2]
    assert any(line.startswith("2. ops/backup.md") for line in lines)
    assert result.usage.prompt_tokens == 200 and result.iterations == 1


@pytest.mark.parametrize("wire", WIRES)
async def test_a_reply_that_does_not_parse_is_one_sentence_and_the_question_goes_on(
    llm: FakeLLM, docs, wire: str
) -> None:
    llm.push(
        text(wire, "Try: widget port, backup schedule"),
        tools(wire, [("c1", "search_documents", '{"query": "port"}')]),
        text(wire, ANSWER),
    )
    result = await ask("default port?", llm, docs, wire, expand=True)
    assert result.stopped_reason == "final" and result.answer == ANSWER
    assert result.notes == [NO_EXPANSION]
    assert [c.name for c in result.tool_calls] == ["search_documents"]


def test_verbose_shows_the_reformulations_and_json_stays_clean(llm: FakeLLM, capsys, monkeypatch) -> None:
    llm.push(oa_text(REWRITES), oa_text(ANSWER))
    # a separate process: -v hands the server's stderr to ours, which must be a real file
    proc = run("ask", "default port?", "--server-cmd", TINY, *llm_args(llm), "--expand", "-v")
    assert proc.returncode == 0 and proc.stdout.strip() == ANSWER  # the rewrite call's JSON is never streamed
    assert "searching also: widget port | backup schedule" in proc.stderr
    llm.push(oa_text("not json"), oa_tools([("c1", "search_documents", '{"query": "port"}')]), oa_text(ANSWER))
    code, stdout, _ = cli(
        capsys, monkeypatch, "ask", "default port?", "--server-cmd", TINY, *llm_args(llm), "--expand", "--json"
    )
    out = json.loads(stdout)
    assert code == 0 and out["notes"] == [NO_EXPANSION]


def test_fusion_ranks_by_reciprocal_rank_over_mcp_docs_results() -> None:
    def result(*ids: str) -> str:
        lines = [f'{len(ids)} documents for "q" (hybrid; 9 indexed)']
        for rank, doc in enumerate(ids, start=1):
            lines += [f"{rank}. {doc} — Title of {doc}", f"   § {doc} heading (L1-9): snippet"]
        return "\n".join([*lines, "Next: read_section(id, heading path) for the text."])

    assert search_hits(result("a.md", "b.md")) == [
        ("a.md", ["a.md — Title of a.md", "   § a.md heading (L1-9): snippet"]),
        ("b.md", ["b.md — Title of b.md", "   § b.md heading (L1-9): snippet"]),
    ]
    fused = fuse([result("a.md", "b.md", "c.md"), result("c.md", "b.md"), result("b.md")])
    assert [d for d, _, _ in fused] == ["b.md", "c.md", "a.md"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 62 + 1 / 61)
    assert fuse(["No results."]) == []


def test_distinct_queries() -> None:
    assert distinct_queries("Port?", ["port?", "a", "A", "b", "c", "d"]) == ["Port?", "a", "b", "c"]
