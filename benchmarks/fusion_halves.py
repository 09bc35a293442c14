"""Hybrid fusion measured on two halves of the questions: constants are chosen on the odd ids, checked on the even.

One already embedded index is searched through `Library.search`, in the modes asked, and hybrid again at each
fixed keyword share asked (`--shares 0.1,0.2`: the share every query gets instead of `hybrid.query_keyword_share`'s
per-query one; the rest of the pipeline, document signals included, is unchanged). Each line prints the figure on
all questions, the odd half and the even half: SciFact nDCG@10 (odd / even query ids), the OpenTelemetry questions'
doc hit@1 / doc hit@5 / section hit@5 (odd / even question numbers).

    python -m benchmarks.fusion_halves scifact --root SCIFACT_MD --index-dir DIR --modes semantic,hybrid \
        --shares 0.1,0.2
    python -m benchmarks.fusion_halves otel --root ../shared/bench/otel-docs --index-dir DIR
    python -m benchmarks.fusion_halves otel-en --root ../shared/bench/otel-docs/en --index-dir DIR

DIR is never synced here: build it first with `mcp-docs index --root ROOT --index-dir DIR [--embeddings-model
multilingual-e5-small]` and check with `mcp-docs status` that every chunk is embedded. Figures: benchmarks/REPORT.md,
"Hybrid quality, issue 31 item 2, third pass".
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.otel_quality import QUESTIONS, load_questions, score_result
from benchmarks.scifact import load_beir, ndcg_at_k

SCIFACT = Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "scifact"

# (question id, text, is odd, scorer of one search result) for each question of a set
Question = tuple[str, str, bool, Callable[[Any], dict[str, float]]]


def scifact_questions(data: Path) -> list[Question]:
    _, queries, qrels = load_beir(data)

    def scorer(qrel: dict[str, int]) -> Callable[[Any], dict[str, float]]:
        return lambda res: {"ndcg@10": ndcg_at_k([r.id.removesuffix(".md") for r in res.results], qrel)}

    return [(q, text, int(q) % 2 == 1, scorer(qrels[q])) for q, text in queries.items() if q in qrels]


def otel_questions(english_root: bool, path: Path = QUESTIONS) -> list[Question]:
    out: list[Question] = []
    for q in load_questions(path):
        if english_root:  # the root is otel-docs/en: ids lose their language folder, French questions have no page
            if q["lang"] != "en":
                continue
            q = dict(q, doc=q["doc"].removeprefix("en/"))

        def scorer(res: Any, q: dict = q) -> dict[str, float]:
            s = score_result(q, [(r.id, [x.heading_path for x in r.sections]) for r in res.results])
            return {"doc@1": s["doc@1"], "doc@5": s["doc@5"], "section@5": s["section@5"]}

        out.append((q["id"], q["question"], int(q["id"].split("-")[-1]) % 2 == 1, scorer))
    return out


def halves(rows: list[tuple[bool, dict[str, float]]]) -> str:
    """'all x | odd y | even z', each the mean of every metric, joined by '/'."""
    parts = []
    for name, keep in (("all", lambda odd: True), ("odd", lambda odd: odd), ("even", lambda odd: not odd)):
        chosen = [m for odd, m in rows if keep(odd)]
        means = [sum(m[k] for m in chosen) / len(chosen) for k in chosen[0]] if chosen else []
        parts.append(f"{name} " + "/".join(f"{v:.4f}" for v in means))
    return " | ".join(parts)


def fixed_share(share: float | None) -> None:
    """Every hybrid query gets `share` as its keyword share (None: the per-query rule, as shipped)."""
    from mcp_docs.search import hybrid

    if not hasattr(hybrid, "_shipped_share"):
        hybrid._shipped_share = hybrid.query_keyword_share  # type: ignore[attr-defined]
    shipped = hybrid._shipped_share  # type: ignore[attr-defined]
    hybrid.query_keyword_share = shipped if share is None else (lambda scores, *a, **k: share)


def run(lib: Any, questions: list[Question], mode: str, max_results: int) -> list[tuple[bool, dict[str, float]]]:
    return [(odd, score(lib.search(text, max_results=max_results, mode=mode))) for _, text, odd, score in questions]


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("set", choices=["scifact", "otel", "otel-en"])
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--index-dir", type=Path, required=True)
    ap.add_argument("--modes", default="hybrid", help="comma-separated: keyword, semantic, hybrid")
    ap.add_argument("--shares", default="", help="fixed keyword shares to run hybrid at, comma-separated")
    ap.add_argument("--scifact-data", type=Path, default=SCIFACT)
    args = ap.parse_args(argv)

    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    if args.set == "scifact":
        questions, depth = scifact_questions(args.scifact_data), 100
    else:
        questions, depth = otel_questions(args.set == "otel-en"), 5
    lib = Library(Settings.load(args.root, args.index_dir, embeddings="local"))
    try:
        for mode in args.modes.split(","):
            fixed_share(None)
            print(args.set, mode, "as shipped:", halves(run(lib, questions, mode, depth)), flush=True)
        for share in [float(s) for s in args.shares.split(",") if s]:
            fixed_share(share)
            print(args.set, f"hybrid, keyword share {share}:", halves(run(lib, questions, "hybrid", depth)), flush=True)
    finally:
        fixed_share(None)
        lib.close()


if __name__ == "__main__":
    main(sys.argv[1:])
