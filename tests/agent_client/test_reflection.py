"""`--reflect` end to end (both wire formats): critique, one revision below the threshold, or the answer kept."""

from __future__ import annotations

import json

import pytest

from agent_client.mcp_session import connect
from agent_client.models import AssistantMessage

from . import tiny_docs_server
from .fake_llm import FakeLLM, oa_text, oa_tools
from .helpers import ask
from .test_cli import TINY, cli, llm_args
from .test_loop import WIRES, text, tools

pytestmark = pytest.mark.anyio

FIRST = "The port is 7420."
REVISED = "The default port is 7420 (guides/setup.md — Installation)."
WEAK = json.dumps({"grounded": 5, "complete": 4, "cited": 1, "problems": "The port claim cites no source."})
STRONG = json.dumps({"grounded": 5, "complete": 5, "cited": 5, "problems": ""})


@pytest.fixture
async def docs():
    async with connect(tiny_docs_server.server) as conn:
        yield conn


def research(wire: str):  # type: ignore[no-untyped-def]
    return [
        tools(wire, [("c1", "read_section", '{"id": "guides/setup.md", "section": "Installation"}')]),
        text(wire, FIRST),
    ]


@pytest.mark.parametrize("wire", WIRES)
async def test_a_weak_answer_is_revised_once(llm: FakeLLM, docs, wire: str) -> None:
    llm.push(*research(wire), text(wire, WEAK), text(wire, REVISED))
    result = await ask("Which port?", llm, docs, wire, reflect=True)
    assert result.stopped_reason == "final" and result.answer == REVISED
    assert result.reflection is not None and result.reflection.revised and result.reflection.cited == 1
    assert result.citations[0].verified  # checked on the revised answer
    assert result.new_messages[-1] == AssistantMessage(content=REVISED)  # the session keeps the revision
    assert len(llm.requests) == 4 and result.usage.prompt_tokens == 400  # the review's tokens are counted
    critique = llm.requests[2].body
    assert "tools" not in critique
    sent = json.dumps(critique)
    assert "7420" in sent and FIRST in sent and "widget init" in sent  # the answer and the section it came from
    assert "The port claim cites no source." in json.dumps(llm.requests[3].body)


@pytest.mark.parametrize("wire", WIRES)
async def test_a_good_answer_is_kept_without_a_revision(llm: FakeLLM, docs, wire: str) -> None:
    llm.push(*research(wire), text(wire, STRONG))
    result = await ask("Which port?", llm, docs, wire, reflect=True)
    assert result.answer == FIRST and result.reflection is not None and not result.reflection.revised
    assert len(llm.requests) == 3


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize(
    ("reply", "sentence"),
    [
        ("Looks fine to me.", "The critique was not a JSON object."),
        (
            json.dumps({"grounded": 9, "complete": 5, "cited": 5}),
            "The critique did not have the expected shape (grounded:",
        ),
    ],
)
async def test_a_critique_that_does_not_parse_keeps_the_answer(
    llm: FakeLLM, docs, wire: str, reply: str, sentence: str
) -> None:
    llm.push(*research(wire), text(wire, reply))
    result = await ask("Which port?", llm, docs, wire, reflect=True)
    assert result.stopped_reason == "final" and result.answer == FIRST and result.reflection is None
    [note] = result.notes
    assert note.startswith("--reflect: " + sentence) and note.endswith("docs-agent kept the answer as it was.")


async def test_no_review_past_the_token_budget(llm: FakeLLM, docs) -> None:
    llm.push(oa_text(FIRST, prompt=500))
    result = await ask("Which port?", llm, docs, reflect=True, max_tokens=100)
    assert result.answer == FIRST and len(llm.requests) == 1 and result.reflection is None


def test_ask_json_has_the_reflection(llm: FakeLLM, capsys, monkeypatch) -> None:
    llm.push(
        oa_tools([("c1", "read_section", '{"id": "guides/setup.md", "section": "Installation"}')]),
        oa_text(FIRST),
        oa_text(WEAK),
        oa_text(REVISED),
    )
    code, stdout, _ = cli(
        capsys, monkeypatch, "ask", "port?", "--server-cmd", TINY, *llm_args(llm), "--reflect", "--json"
    )
    out = json.loads(stdout)
    assert code == 0 and out["answer"] == REVISED
    assert out["reflection"] == {
        "grounded": 5,
        "complete": 4,
        "cited": 1,
        "problems": "The port claim cites no source.",
        "revised": True,
    }
