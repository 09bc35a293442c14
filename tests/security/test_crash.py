"""Requirement 10 (bounded): kill -9 at random points of indexing and embedding, a few trials.
The full campaign is `python -m tests.security.crash_trials --trials 30`."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from .crash_trials import run_trials


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL and process groups")
def test_r10_kill_9_during_indexing_and_embedding(tmp_path: Path) -> None:
    seed = int(time.time())
    lines: list[str] = []
    failures = run_trials(3, seed, tmp_path, docs=150, embed=True, log=lines.append)
    assert not failures, f"seed {seed}: {failures}\n" + "\n".join(lines)
    assert sum("ok (" in line for line in lines) >= 3, "\n".join(lines)
