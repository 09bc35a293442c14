"""OpenTelemetry question set: document hit@1/@5 and section hit@5 through the public search API.

    python -m benchmarks.otel_quality [--docs DIR] [--index-dir DIR] [--modes keyword,hybrid,semantic]

The root indexed is the otel-docs folder itself (`../shared/bench/otel-docs`), so document ids carry the
language folder: `en/docs/collector/scaling.md`, `fr/docs/what-is-opentelemetry.md`. The questions
(benchmarks/data/otel_questions.jsonl, written by hand from the docs before any tuning) give the expected
document and the expected section heading path ("Parent > Child"). Headings are compared case-insensitively,
with whitespace collapsed and Hugo heading ids (`{#anchor}`) removed.

A bm25s baseline indexes whole files (document level) for the same questions.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from .common import (
    CACHE,
    DATA_DIR,
    SHARED_BENCH,
    Timer,
    require,
    run_script,
    table,
    write_results,
)

QUESTIONS = DATA_DIR / "otel_questions.jsonl"


def load_questions(path: Path = QUESTIONS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def norm_heading(text: str) -> str:
    return " ".join(re.sub(r"\s*\{#[^}]*\}", "", text).lower().split())


def score_result(q: dict, results: list[tuple[str, list[str]]]) -> dict[str, int]:
    """results: [(doc_id, [heading_path, ...])] best first."""
    ids = [r[0] for r in results]
    want = norm_heading(q["section"])
    section_hit = any(d == q["doc"] and any(norm_heading(h) == want for h in hs) for d, hs in results[:5])
    # Letters and digits only: tells retrieval misses from heading-text problems (e.g. lost underscores).
    loose = re.sub(r"[\W_]+", "", want)
    loose_hit = any(
        d == q["doc"] and any(re.sub(r"[\W_]+", "", norm_heading(h)) == loose for h in hs) for d, hs in results[:5]
    )
    rank = ids.index(q["doc"]) + 1 if q["doc"] in ids else 0
    # The right section first within the right document (when that document is in the top 5).
    first = next((hs[0] for d, hs in results[:5] if d == q["doc"] and hs), None)
    return {
        "doc@1": int(rank == 1),
        "doc@5": int(0 < rank <= 5),
        "section@1 in doc": int(first is not None and norm_heading(first) == want),
        "section@5": int(section_hit),
        "section@5 loose": int(loose_hit),
        "rr": 1.0 / rank if rank else 0.0,
    }


def aggregate(per_q: list[dict], questions: list[dict]) -> dict[str, object]:
    def agg(rows: list[dict]) -> dict[str, float]:
        n = len(rows) or 1
        return {
            "n": len(rows),
            "doc@1": round(sum(r["doc@1"] for r in rows) / n, 3),
            "doc@5": round(sum(r["doc@5"] for r in rows) / n, 3),
            "section@5": round(sum(r.get("section@5", 0) for r in rows) / n, 3),
            "section@1 in doc": round(sum(r.get("section@1 in doc", 0) for r in rows) / n, 3),
            "section@5 loose": round(sum(r.get("section@5 loose", 0) for r in rows) / n, 3),
            "mrr": round(sum(r["rr"] for r in rows) / n, 3),
        }

    groups: dict[str, list[dict]] = defaultdict(list)
    for q, r in zip(questions, per_q, strict=False):
        groups[f"lang={q['lang']}"].append(r)
        groups[f"kind={q['kind']}"].append(r)
    return {"all": agg(per_q), **{k: agg(v) for k, v in sorted(groups.items())}}


def run_library(
    lib, questions: list[dict], mode: str, max_results: int = 5
) -> tuple[list[dict], list[dict], list[float]]:
    per_q, misses, lat = [], [], []
    for q in questions:
        t0 = time.perf_counter()
        res = lib.search(q["question"], max_results=max_results, mode=mode)
        lat.append((time.perf_counter() - t0) * 1000)
        results = [(r.id, [s.heading_path for s in r.sections]) for r in res.results]
        s = score_result(q, results)
        per_q.append(s)
        if not s["section@5"]:
            misses.append(
                {
                    "id": q["id"],
                    "question": q["question"],
                    "expected": f"{q['doc']} § {q['section']}",
                    "got": [f"{d} § {hs[0] if hs else ''}" for d, hs in results[:3]],
                }
            )
    return per_q, misses, lat


def run_bm25s(root: Path, questions: list[dict]) -> list[dict]:
    import bm25s

    try:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
    except ImportError:
        stemmer = None
    files = sorted(p for p in root.rglob("*") if p.suffix in (".md", ".markdown") and p.is_file())
    ids = [p.relative_to(root).as_posix() for p in files]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in files]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    out = []
    for q in questions:
        tok = bm25s.tokenize([q["question"]], stopwords="en", stemmer=stemmer, show_progress=False)
        k = min(5, len(ids))
        docs, _ = retriever.retrieve(tok, k=k, show_progress=False)
        s = score_result(q, [(ids[i], []) for i in docs[0]])
        s.pop("section@5")
        s.pop("section@5 loose")
        s.pop("section@1 in doc")
        out.append(s)
    return out


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=Path, default=SHARED_BENCH / "otel-docs")
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--index-dir", type=Path, default=None, help="default: /tmp/mcp-docs-bench/otel-index-<embeddings>")
    ap.add_argument("--modes", default="keyword")
    ap.add_argument("--embeddings", default="none")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--show-misses", action="store_true")
    ap.add_argument("--store", choices=["tantivy", "postgres"], default="tantivy")
    ap.add_argument(
        "--database-url",
        default=os.environ.get("MCP_DOCS_DATABASE_URL"),
        help="--store postgres: the server's admin URL (default: one started from pgserver in the bench cache); "
        "the database otel_<embeddings> is kept and brought up to date, so the docs are embedded once",
    )
    ap.add_argument(
        "--vectors-from", type=Path, help="--store postgres: an embedded index of the same docs whose vectors to reuse"
    )
    args = ap.parse_args(argv)

    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    require(args.docs / "en", "OpenTelemetry docs")
    questions = load_questions(args.questions)
    payload: dict[str, object] = {
        "questions": len(questions),
        "root": str(args.docs),
        "store": args.store,
        "systems": {},
    }
    rows = []
    with contextlib.ExitStack() as stack:  # --store postgres: the server started here is stopped at the end
        for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
            emb = "none" if mode == "keyword" else args.embeddings
            index_dir = args.index_dir or CACHE / f"otel-index-{emb}"
            with Timer() as t:
                if args.store == "postgres":
                    lib = postgres_library(args, emb, stack)
                else:
                    lib = Library(Settings.load(args.docs, index_dir, embeddings=emb))
                    lib.sync()
            per_q, misses, lat = run_library(lib, questions, mode)
            lib.close()
            agg = aggregate(per_q, questions)
            lat.sort()
            payload["systems"][f"mcp-docs {mode}"] = {  # type: ignore[index]
                "metrics": agg,
                "misses": misses,
                "sync_s": round(t.seconds, 2),
                "query_p50_ms": round(lat[len(lat) // 2], 2),
            }
            for key, m in agg.items():
                rows.append(
                    [
                        f"mcp-docs {mode}",
                        key,
                        m["n"],
                        m["doc@1"],
                        m["doc@5"],
                        m["section@5"],
                        m["section@5 loose"],
                        m["mrr"],
                    ]
                )
            if args.show_misses:
                for m in misses:
                    print(f"MISS {m['id']}: {m['question']}\n   expected {m['expected']}\n   got {m['got']}")
    if not args.no_baseline:
        per_q = run_bm25s(args.docs, questions)
        agg = aggregate(per_q, questions)
        payload["systems"]["bm25s (whole files)"] = {"metrics": agg}  # type: ignore[index]
        for key, m in agg.items():
            rows.append(["bm25s whole files", key, m["n"], m["doc@1"], m["doc@5"], "-", "-", m["mrr"]])
    table(
        ["system", "subset", "n", "doc hit@1", "doc hit@5", "section hit@5", "section hit@5 (alnum)", "MRR"],
        rows,
        title=f"OpenTelemetry questions ({len(questions)}, {args.store} store)",
    )
    write_results("otel_quality", payload)
    return payload


def postgres_library(args: argparse.Namespace, embeddings: str, stack: contextlib.ExitStack) -> Any:
    """A reader of the database `otel_<embeddings>` on `--database-url` (or on a PostgreSQL started from pgserver
    in the bench cache, kept open in `stack`), first brought up to date by a writer: the docs are synced and
    embedded once, later runs find nothing to do. `--vectors-from`: vectors of an embedded index copied in first."""
    from . import pg_store

    if args.database_url is None:
        server = pg_store.start_postgres()
        stack.callback(server.cleanup)
        args.database_url = str(server.get_uri())
    url, created = pg_store.kept_database(args.database_url, f"otel_{embeddings}")
    if created and embeddings != "none" and args.vectors_from is not None:
        pg_store.pg_index(url, embeddings, args.docs, embed=False)
        pg_store.seed_vectors(url, args.vectors_from / "vectors.sqlite")
    print(f"PostgreSQL otel_{embeddings}: {pg_store.pg_index(url, embeddings, args.docs)}", flush=True)
    return pg_store.pg_reader(url, embeddings)


if __name__ == "__main__":
    run_script(main)
