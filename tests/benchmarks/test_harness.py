"""Keeps the benchmark harness from rotting: runs its pieces on a tiny synthetic vault (no timing assertions)."""

from __future__ import annotations

import pytest

pytest.importorskip("psutil")

from benchmarks import otel_quality, scifact, synth
from benchmarks.indexing import TreeRss


def test_metrics_formulas() -> None:
    assert scifact.ndcg_at_k(["a", "b"], {"a": 1}) == 1.0
    assert scifact.ndcg_at_k(["x", "a"], {"a": 1}) == pytest.approx(1 / 1.5849625, rel=1e-6)
    assert scifact.recall_at_k(["a", "x"], {"a": 1, "b": 1}, 10) == 0.5
    assert otel_quality.norm_heading("Location {#location} >  Setup") == "location > setup"
    s = otel_quality.score_result({"doc": "d.md", "section": "A > B"}, [("x.md", []), ("d.md", ["a > b"])])
    assert s == {"doc@1": 0, "doc@5": 1, "section@1 in doc": 1, "section@5": 1, "section@5 loose": 1, "rr": 0.5}
    later = otel_quality.score_result({"doc": "d.md", "section": "A > B"}, [("d.md", ["intro", "a > b"])])
    assert later["section@5"] == 1 and later["section@1 in doc"] == 0


def test_synthetic_vault_indexes_and_searches(tmp_path) -> None:
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    root = tmp_path / "vault"
    info = synth.ensure_vault(root, 10, seed=1)
    assert info["files"] == 10
    files = sorted(root.rglob("*.md"))
    assert len(files) == 10
    with TreeRss() as rss:
        lib = Library(Settings.load(root, tmp_path / "index", embeddings="none"))
        report = lib.sync()
    assert report.added == 10 and rss.peak > 0
    word = next(w for w in files[3].read_text().split() if w.isalpha() and len(w) > 6)
    assert lib.search(word, max_results=5, mode="keyword").results
    lib.close()


def test_embed_throughput_runs_both_sides_and_skips_without_data(tmp_path, monkeypatch) -> None:
    import subprocess
    import sys

    from benchmarks import embed_throughput
    from benchmarks.common import REPO

    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.embed_throughput", "--data", str(tmp_path / "absent")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(REPO),
    )
    # --data names the folder, so the skip names it (the OTel docs by name only when no --data is given)
    assert out.returncode == 0 and out.stdout.startswith(f"skipped: {tmp_path / 'absent'} not found"), out.stderr
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(
        "# Exporters\n\nSend spans to a backend.\n\n## Batching\n\nThe batch processor groups spans.\n"
    )
    (docs / "b.md").write_text("# Sampling\n\nHead sampling decides at the root span.\n")
    # a subsection under 200 characters joins its parent's chunk (index/chunking.py): a third page, a third chunk
    (docs / "c.md").write_text("# Metrics\n\nA counter only goes up.\n")
    monkeypatch.setattr(embed_throughput, "CACHE", tmp_path / "cache")
    texts = embed_throughput.sample_texts(docs, 3)
    assert len(texts) == 3 and embed_throughput.sample_texts(docs, 3) == texts  # cached: both sides embed the same
    assert embed_throughput.run_store(texts) > 0 and embed_throughput.run_bare(texts) > 0
