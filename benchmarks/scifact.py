"""SciFact (BEIR) retrieval quality through the public search API, with a bm25s baseline side by side.

    python -m benchmarks.scifact [--data DIR] [--work-dir DIR] [--no-baseline]

Each corpus document is written as a Markdown file `<_id>.md` (`# title` + text) into a cache folder
OUTSIDE the repository (default /tmp/mcp-docs-bench/scifact-md; the data is CC BY-NC, never copied into the
repo), indexed with the Library (keyword only), and the 300 test queries are run through `Library.search`
with max_results=100. Metrics: nDCG@10 (binary relevance, BEIR/trec_eval formula), Recall@10, Recall@100.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

from .common import (
    CACHE,
    SHARED_BENCH,
    Timer,
    require,
    run_script,
    table,
    write_results,
)

TARGET_NDCG = 0.69


def load_beir(data: Path) -> tuple[list[dict], dict[str, str], dict[str, dict[str, int]]]:
    require(data / "corpus.jsonl", "SciFact corpus")
    corpus = [json.loads(line) for line in (data / "corpus.jsonl").open(encoding="utf-8") if line.strip()]
    queries_all = {
        q["_id"]: q["text"]
        for q in (json.loads(line) for line in (data / "queries.test.jsonl").open(encoding="utf-8") if line.strip())
    }
    qrels: dict[str, dict[str, int]] = {}
    with (data / "qrels" / "test.tsv").open(encoding="utf-8") as fh:
        next(fh)  # header
        for line in fh:
            qid, did, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, {})[did] = int(score)
    queries = {qid: queries_all[qid] for qid in qrels if qid in queries_all}
    return corpus, queries, qrels


def write_markdown(corpus: list[dict], out: Path) -> int:
    """Write `<_id>.md` files; rewrites only what changed (a marker holds the corpus size)."""
    out.mkdir(parents=True, exist_ok=True)
    marker = out.parent / f"{out.name}.complete"
    if marker.exists() and marker.read_text().strip() == str(len(corpus)):
        return len(corpus)
    for doc in corpus:
        title = " ".join(doc.get("title", "").split()) or doc["_id"]
        (out / f"{doc['_id']}.md").write_text(f"# {title}\n\n{doc.get('text', '').strip()}\n", encoding="utf-8")
    marker.write_text(str(len(corpus)))
    return len(corpus)


def ndcg_at_k(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if relevant.get(d, 0) > 0)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def recall_at_k(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant) if relevant else 0.0


def evaluate(run: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    qids = [q for q in qrels]
    n = len(qids)
    return {
        "ndcg@10": round(sum(ndcg_at_k(run.get(q, []), qrels[q]) for q in qids) / n, 4),
        "recall@10": round(sum(recall_at_k(run.get(q, []), qrels[q], 10) for q in qids) / n, 4),
        "recall@100": round(sum(recall_at_k(run.get(q, []), qrels[q], 100) for q in qids) / n, 4),
        "empty_queries": sum(1 for q in qids if not run.get(q)),
        "queries": n,
    }


def run_library(
    md_dir: Path, index_dir: Path, queries: dict[str, str], mode: str = "keyword", embeddings: str = "none"
) -> tuple[dict[str, list[str]], dict[str, float]]:
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    timings: dict[str, float] = {}
    with Timer() as t_open:
        lib = Library(Settings.load(md_dir, index_dir, embeddings=embeddings))
    with Timer() as t_sync:
        lib.sync()
    timings["open_s"] = round(t_open.seconds, 3)
    timings["sync_s"] = round(t_sync.seconds, 3)
    run: dict[str, list[str]] = {}
    lat = []
    for qid, text in queries.items():
        t0 = time.perf_counter()
        res = lib.search(text, max_results=100, mode=mode)  # type: ignore[arg-type]
        lat.append((time.perf_counter() - t0) * 1000)
        run[qid] = [r.id.removesuffix(".md") for r in res.results]
    lat.sort()
    timings["query_p50_ms"] = round(lat[len(lat) // 2], 2)
    lib.close()
    return run, timings


def run_bm25s(corpus: list[dict], queries: dict[str, str]) -> tuple[dict[str, list[str]], str]:
    import bm25s

    try:
        import Stemmer  # PyStemmer

        stemmer = Stemmer.Stemmer("english")
        label = "bm25s (Lucene BM25, English stopwords + Snowball stemmer)"
    except ImportError:
        stemmer = None
        label = "bm25s (Lucene BM25, English stopwords, NO stemmer: pip install PyStemmer)"
    ids = [d["_id"] for d in corpus]
    texts = [f"{d.get('title', '')} {d.get('text', '')}" for d in corpus]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    qids = list(queries)
    qtok = bm25s.tokenize([queries[q] for q in qids], stopwords="en", stemmer=stemmer, show_progress=False)
    docs, _scores = retriever.retrieve(qtok, k=100, show_progress=False)
    return {qid: [ids[i] for i in docs[n]] for n, qid in enumerate(qids)}, label


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=SHARED_BENCH / "scifact")
    ap.add_argument("--work-dir", type=Path, default=CACHE / "scifact-md", help="where the Markdown files go")
    ap.add_argument("--index-dir", type=Path, default=None, help="default: <work-dir>-index-<mode>")
    ap.add_argument("--modes", default="keyword", help="comma-separated: keyword,semantic,hybrid")
    ap.add_argument("--embeddings", default="none", help="embeddings for semantic/hybrid modes (local|openai)")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--fresh", action="store_true", help="delete the index first (measures a cold build)")
    args = ap.parse_args(argv)

    corpus, queries, qrels = load_beir(args.data)
    n = write_markdown(corpus, args.work_dir)
    print(f"SciFact: {n} documents as Markdown in {args.work_dir}, {len(queries)} test queries")
    rows = []
    payload: dict[str, object] = {"documents": n, "queries": len(queries), "systems": {}}
    for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
        emb = "none" if mode == "keyword" else args.embeddings
        index_dir = args.index_dir or args.work_dir.parent / f"{args.work_dir.name}-index-{emb}"
        if args.fresh and index_dir.exists():
            import shutil

            shutil.rmtree(index_dir)
        run, timings = run_library(args.work_dir, index_dir, queries, mode, emb)
        metrics = evaluate(run, qrels)
        payload["systems"][f"mcp-docs {mode}"] = {**metrics, **timings}  # type: ignore[index]
        rows.append(
            [
                f"mcp-docs {mode}",
                metrics["ndcg@10"],
                metrics["recall@10"],
                metrics["recall@100"],
                metrics["empty_queries"],
                timings["query_p50_ms"],
            ]
        )
    if not args.no_baseline:
        t0 = time.perf_counter()
        run, label = run_bm25s(corpus, queries)
        metrics = evaluate(run, qrels)
        payload["systems"]["bm25s"] = {**metrics, "label": label, "total_s": round(time.perf_counter() - t0, 2)}  # type: ignore[index]
        rows.append(
            [
                "bm25s baseline",
                metrics["ndcg@10"],
                metrics["recall@10"],
                metrics["recall@100"],
                metrics["empty_queries"],
                "-",
            ]
        )
        print(f"baseline: {label}")
    table(
        ["system", "nDCG@10", "R@10", "R@100", "empty", "query p50 ms"],
        rows,
        title=f"SciFact test ({len(queries)} queries, target keyword nDCG@10 >= {TARGET_NDCG})",
    )
    write_results("scifact", payload)
    return payload


if __name__ == "__main__":
    run_script(main)
