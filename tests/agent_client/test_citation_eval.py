"""benchmarks/citation_eval's scripted model on the example vault: what it truly read is verified, what it
invented is not (precision and recall 1.0), whatever the shape it cites in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.citation_eval import Tally, evaluate

from .fake_llm import FakeLLM

pytestmark = pytest.mark.anyio
EXAMPLES = Path(__file__).parent.parent.parent / "examples"
QUESTIONS = [
    {"id": f"q{i}", "question": q}
    for i, q in enumerate(
        ["How do I install the collector on Linux?", "When do backups run?", "Which receivers are configured?"] * 3
    )
]


async def test_precision_and_recall_are_one_on_the_example_vault(llm: FakeLLM, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MCP_DOCS_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("MCP_DOCS_EMBEDDINGS", "none")
    monkeypatch.setenv("BENCH_FAKE_KEY", "bench-fake-key-0123456789")
    subprocess.run(
        [sys.executable, "-m", "mcp_docs", "index", "--root", str(EXAMPLES)], check=True, capture_output=True
    )
    tally = Tally()
    await evaluate(EXAMPLES, QUESTIONS, llm, tally)
    c = tally.counts
    assert c["tp"] >= 9 and c["tn"] >= 27, c  # every question cites what it read and what it invented
    assert c["fp"] == 0 and c["fn"] == 0, tally.wrong
    assert tally.missed_parse == []  # all seven shapes parsed
    assert {r.split(": ")[1] for r in tally.reasons} == {
        "no such document",
        "no such heading in that document",
        "never read",
    }
