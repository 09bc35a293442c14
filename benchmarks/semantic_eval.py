"""Semantic and hybrid search: quality (SciFact, OpenTelemetry questions), embedding cost and query latency.

    python -m benchmarks.semantic_eval            # everything (first run embeds SciFact: ~10 min on 2 cores)
    python -m benchmarks.semantic_eval --tune     # also print the fusion grids (keyword share base and gain)
    python -m benchmarks.semantic_eval build --root DIR --index-dir DIR   # one cold build, JSON line (child process)

Data is read from ../shared/bench (SciFact is CC BY-NC: written as Markdown to a cache folder outside the
repository, /tmp/mcp-docs-bench by default, never into the repo). Embedded indexes are cached there too, so
a second run only measures queries. Steps:

1. SciFact: sync + embed with the default local embedder (MiniLM int8) in a child process → throughput
   (chunks/s), peak memory, index size; then nDCG@10 / Recall@10 / Recall@100 for keyword, semantic and
   hybrid through `Library.search(max_results=100)`; hybrid query latency p50/p95 (max_results=10,
   query embedding included).
2. OpenTelemetry docs (834 files): time from nothing to fully hybrid-searchable (sync + embed, cold), and
   the question set of benchmarks/data/otel_questions.jsonl (doc hit@1/@5, section hit@5, MRR) per mode.
3. One-paragraph edit: a copy of the collector docs, one paragraph of the largest file changed → chunks
   re-embedded and seconds, versus the chunks of the file.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from .common import (
    CACHE,
    SHARED_BENCH,
    Skip,
    Timer,
    dir_size_mb,
    peak_rss_mb,
    percentiles,
    require,
    run_child,
    table,
    write_results,
)

# The keyword share per query is base + gain x peak (mcp_docs/search/hybrid.py); gain 0 is a fixed share.
GRID_SHARE_BASE = (0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.85)
GRID_SHARE_GAIN = (0.0, 1.0, 1.5, 2.0, 2.5, 3.0)
SCIFACT_INDEX = CACHE / "semantic-scifact-index"
OTEL_INDEX = CACHE / "semantic-otel-index"
# beside the index, not in it: the index folder refuses files mcp-docs did not write there
OTEL_BUILD = CACHE / "semantic-otel-build.json"


# -- child: one cold build ---------------------------------------------------------------------


def build(root: Path, index_dir: Path, embeddings: str = "local", fresh: bool = False) -> dict[str, object]:
    """Sync + embed everything in this process; what it cost."""
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    if fresh and index_dir.exists():
        shutil.rmtree(index_dir)
    started = time.perf_counter()
    lib = Library(Settings.load(root, index_dir, embeddings=embeddings))
    with Timer() as t_sync:
        report = lib.sync()
    assert lib.vectors is not None
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] > 15:
            last[0] = now
            print(f"  embedded {done}/{total}", file=sys.stderr, flush=True)

    with Timer() as t_chunk:
        lib.vectors.refresh()
        lib.embedding.chunk_dirty()
    pending = lib.vectors.pending_chunks()
    with Timer() as t_load:
        lib.vectors.embedder.load()  # type: ignore[union-attr]
    with Timer() as t_embed:
        embedded = lib.embedding.embed_pending(progress=progress)
    total_s = time.perf_counter() - started
    status = lib.vectors.status()
    lib.close()
    return {
        "documents": report.added + report.updated + report.unchanged,
        "sync_s": round(t_sync.seconds, 2),
        "chunk_s": round(t_chunk.seconds, 2),
        "model_load_s": round(t_load.seconds, 2),
        "embed_s": round(t_embed.seconds, 2),
        "chunks_embedded": embedded,
        "chunks_pending_before": pending,
        "chunks_total": status["chunks"],
        "chunks_per_s": round(embedded / t_embed.seconds, 1) if embedded and t_embed.seconds else None,
        "total_s": round(total_s, 2),
        "peak_rss_mb": peak_rss_mb(),
        "index_mb": dir_size_mb(index_dir),
        "vectors_mb": round((index_dir / "vectors.sqlite").stat().st_size / 2**20, 2),
    }


def main_build(argv: list[str]) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--index-dir", type=Path, required=True)
    ap.add_argument("--embeddings", default="local")
    ap.add_argument("--fresh", action="store_true")
    a = ap.parse_args(argv)
    print(json.dumps(build(a.root, a.index_dir, a.embeddings, a.fresh)))


# -- SciFact ----------------------------------------------------------------------------------


def scifact_hits(lib, queries: dict[str, str], depth: int) -> dict[str, tuple[list, list]]:
    """Per query: the keyword section list and the vector section list, `depth` deep (for offline fusion)."""
    assert lib.vectors is not None
    out = {}
    for qid, text in queries.items():
        kw = lib.keyword_sections(text, depth)
        vec = lib.vectors.section_hits(lib.vectors.embed_query(text), depth)
        out[qid] = (kw, vec)
    return out


def doc_run(sections: list, n: int = 100) -> list[str]:
    """Sections best first → document ids best first (first occurrence), as the library groups them."""
    seen: dict[str, None] = {}
    for s in sections:
        seen.setdefault(s.doc_id.removesuffix(".md"), None)
        if len(seen) >= n:
            break
    return list(seen)


def _share(keyword_hits: list, base: float, gain: float) -> float:
    from mcp_docs.search.hybrid import query_keyword_share

    return query_keyword_share([score for _, score in keyword_hits], base, gain)


def tune(hits: dict[str, tuple[list, list]], qrels: dict, depth: int, min_sim: float) -> list[dict]:
    from mcp_docs.search.hybrid import fuse

    from .scifact import evaluate

    rows = []
    for base in GRID_SHARE_BASE:
        for gain in GRID_SHARE_GAIN:
            run = {
                qid: doc_run(
                    [
                        s
                        for s, _ in fuse(
                            kw[:depth],
                            vec[:depth],
                            depth,
                            keyword_share=_share(kw[:depth], base, gain),
                            min_similarity=min_sim,
                        )
                    ]
                )
                for qid, (kw, vec) in hits.items()
            }
            m = evaluate(run, qrels)
            rows.append({"share_base": base, "share_gain": gain, **m})
    rows.sort(key=lambda r: -r["ndcg@10"])
    return rows


def scifact(args: argparse.Namespace, payload: dict) -> None:
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    from .scifact import evaluate, load_beir, write_markdown

    corpus, queries, qrels = load_beir(require(args.data / "scifact", "SciFact"))
    md = CACHE / "scifact-md"
    write_markdown(corpus, md)
    build_info = None
    if args.fresh or not (SCIFACT_INDEX / "vectors.sqlite").exists() or _pending(md, SCIFACT_INDEX):
        print("embedding SciFact (child process, cold unless resuming)…", flush=True)
        build_info = run_child(
            "benchmarks.semantic_eval",
            ["build", "--root", str(md), "--index-dir", str(SCIFACT_INDEX), *(["--fresh"] if args.fresh else [])],
            timeout=4 * 3600,
        )
        (CACHE / "semantic-scifact-build.json").write_text(json.dumps(build_info))
    elif (CACHE / "semantic-scifact-build.json").exists():
        build_info = json.loads((CACHE / "semantic-scifact-build.json").read_text())
    payload["scifact_build"] = build_info
    lib = Library(Settings.load(md, SCIFACT_INDEX, embeddings="local"))
    lib.sync()
    assert lib.vectors is not None
    lib.vectors.embedder.load()  # type: ignore[union-attr]
    systems: dict[str, dict] = {}
    rows = []
    for mode in ("keyword", "semantic", "hybrid"):
        run = {
            qid: [r.id.removesuffix(".md") for r in lib.search(text, max_results=100, mode=mode).results]  # type: ignore[arg-type]
            for qid, text in queries.items()
        }
        m = evaluate(run, qrels)
        systems[mode] = m
        rows.append([mode, m["ndcg@10"], m["recall@10"], m["recall@100"]])
    table(["mode", "nDCG@10", "R@10", "R@100"], rows, title=f"SciFact test, {len(queries)} queries (max_results=100)")
    payload["scifact"] = systems

    # latency: what an agent asks (max_results=10), query embedding included, warm
    lat: dict[str, dict] = {}
    texts = list(queries.values())
    for mode in ("keyword", "semantic", "hybrid"):
        samples = []
        for text in texts:
            lib.vectors._query_cache.clear()  # measure the query embedding every time
            t0 = time.perf_counter()
            lib.search(text, max_results=10, mode=mode)  # type: ignore[arg-type]
            samples.append((time.perf_counter() - t0) * 1000)
        lat[mode] = percentiles(samples)
    samples = []
    for text in texts:
        lib.vectors._query_cache.clear()
        t0 = time.perf_counter()
        lib.vectors.embed_query(text)
        samples.append((time.perf_counter() - t0) * 1000)
    lat["query embedding only"] = percentiles(samples)
    table(
        ["search (max_results=10)", "p50 ms", "p95 ms", "max ms"],
        [[k, v["p50"], v["p95"], v["max"]] for k, v in lat.items()],
        title="SciFact query latency (warm, 300 queries)",
    )
    payload["scifact_latency_ms"] = lat

    if args.tune:
        hits = scifact_hits(lib, queries, 800)
        grid = tune(hits, qrels, 800, lib.vectors.embedder.min_similarity)  # type: ignore[union-attr]
        payload["scifact_tuning"] = grid
        table(
            ["share base", "share gain", "nDCG@10", "R@100"],
            [[g["share_base"], g["share_gain"], g["ndcg@10"], g["recall@100"]] for g in grid[:15]],
            title="SciFact fusion grid (best 15)",
        )
    lib.close()


def _pending(root: Path, index_dir: Path) -> bool:
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    with Library(Settings.load(root, index_dir, embeddings="local")) as lib:
        lib.sync()
        return bool(lib.vectors and lib.vectors.pending())


# -- OpenTelemetry -----------------------------------------------------------------------------


def otel(args: argparse.Namespace, payload: dict) -> None:
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    from .otel_quality import aggregate, load_questions, run_library

    docs = require(args.data / "otel-docs", "OpenTelemetry docs")
    if args.fresh or not (OTEL_BUILD).exists():
        print("OpenTelemetry docs: cold build to fully hybrid-searchable (child process)…", flush=True)
        info = run_child(
            "benchmarks.semantic_eval",
            ["build", "--root", str(docs), "--index-dir", str(OTEL_INDEX), "--fresh"],
            timeout=4 * 3600,
        )
        (OTEL_BUILD).write_text(json.dumps(info))
    info = json.loads((OTEL_BUILD).read_text())
    payload["otel_build"] = info
    table(
        [
            "corpus",
            "files",
            "chunks",
            "sync s",
            "chunk s",
            "model load s",
            "embed s",
            "chunks/s",
            "total s",
            "peak RSS MB",
            "vectors MB",
        ],
        [
            [
                "otel-docs",
                info["documents"],
                info["chunks_total"],
                info["sync_s"],
                info["chunk_s"],
                info["model_load_s"],
                info["embed_s"],
                info["chunks_per_s"],
                info["total_s"],
                info["peak_rss_mb"],
                info["vectors_mb"],
            ]
        ]
        + (
            [
                [
                    "scifact",
                    b["documents"],
                    b["chunks_total"],
                    b["sync_s"],
                    b["chunk_s"],
                    b["model_load_s"],
                    b["embed_s"],
                    b["chunks_per_s"],
                    b["total_s"],
                    b["peak_rss_mb"],
                    b["vectors_mb"],
                ]
            ]
            if (b := payload.get("scifact_build"))
            else []
        ),
        title="Cold build to fully hybrid-searchable (MiniLM int8, 2 threads)",
    )
    questions = load_questions()
    lib = Library(Settings.load(docs, OTEL_INDEX, embeddings="local"))
    lib.sync()
    rows = []
    results = {}
    for mode in ("keyword", "semantic", "hybrid"):
        per_q, misses, lat = run_library(lib, questions, mode)
        agg = aggregate(per_q, questions)
        results[mode] = {"metrics": agg, "misses": misses, "query_p50_ms": percentiles(lat)["p50"]}
        for key in ("all", "lang=en", "lang=fr"):
            if key in agg:
                m = agg[key]
                rows.append(
                    [mode, key, m["n"], m["doc@1"], m["doc@5"], m["section@1 in doc"], m["section@5"], m["mrr"]]
                )
    if args.tune:
        payload["otel_tuning"] = otel_tune(lib, questions)
    lib.close()
    table(
        ["mode", "subset", "n", "doc hit@1", "doc hit@5", "section hit@1 in doc", "section hit@5", "MRR"],
        rows,
        title=f"OpenTelemetry questions ({len(questions)})",
    )
    payload["otel"] = results


def otel_tune(lib, questions: list[dict]) -> list[dict]:
    """The same fusion grid on the OpenTelemetry questions (default depth: max_results=5 → 50 candidates),
    on all questions and on each half (odd / even numbered: tune on one, check on the other)."""
    from mcp_docs.search.hybrid import fuse
    from mcp_docs.search.ranking import group_by_document

    from .otel_quality import aggregate, score_result

    assert lib.vectors is not None
    min_sim = lib.vectors.embedder.min_similarity
    hits = [
        (lib.keyword_sections(q["question"], 50), lib.vectors.section_hits(lib.vectors.embed_query(q["question"]), 50))
        for q in questions
    ]
    grid = []
    for base in GRID_SHARE_BASE:
        for gain in GRID_SHARE_GAIN:
            per_q = []
            for q, (kw, vec) in zip(questions, hits, strict=False):
                fused = fuse(kw, vec, 50, keyword_share=_share(kw, base, gain), min_similarity=min_sim)
                groups = group_by_document([(s.doc_id, sc, s) for s, sc in fused], 5)
                per_q.append(score_result(q, [(g.doc_id, [h.heading_path for h in g.hits]) for g in groups]))
            halves = [aggregate(per_q[i::2], questions[i::2])["all"] for i in (0, 1)]
            m = aggregate(per_q, questions)["all"]
            grid.append({"share_base": base, "share_gain": gain, **m, "odd": halves[0], "even": halves[1]})
    grid.sort(key=lambda r: (-r["doc@1"], -r["doc@5"], -r["mrr"]))
    table(
        [
            "share base",
            "share gain",
            "doc@1",
            "doc@5",
            "section@1 in doc",
            "section@5",
            "MRR",
            "odd doc@1/@5",
            "even doc@1/@5",
        ],
        [
            [
                g["share_base"],
                g["share_gain"],
                g["doc@1"],
                g["doc@5"],
                g["section@1 in doc"],
                g["section@5"],
                g["mrr"],
                f"{g['odd']['doc@1']}/{g['odd']['doc@5']}",
                f"{g['even']['doc@1']}/{g['even']['doc@5']}",
            ]
            for g in grid[:15]
        ],
        title="OpenTelemetry fusion grid (best 15 by doc hit@1)",
    )
    return grid


# -- partial coverage ----------------------------------------------------------------------------

COVERAGE_POINTS = (0.0, 0.1, 0.5, 0.9, 1.0)


def strip_vectors(index_dir: Path, keep: float, order: str, seed: int = 0) -> int:
    """Leave vectors on `keep` of the chunks, as a run stopped part-way would ("prefix": the worker's order)
    or on a random sample of whole documents ("random"); the others go back to pending. Returns the chunks
    left with vectors."""
    import random

    import apsw
    import sqlite_vec

    conn = apsw.Connection(str(index_dir / "vectors.sqlite"))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    rows = conn.execute("select id, doc_id from chunks order by id").fetchall()
    target = round(keep * len(rows))
    if order == "prefix":
        kept = {cid for cid, _ in rows[:target]}
    else:
        by_doc: dict[str, list[int]] = {}
        for cid, doc_id in rows:
            by_doc.setdefault(doc_id, []).append(cid)
        docs = sorted(by_doc)
        random.Random(seed).shuffle(docs)
        kept = set()
        for doc_id in docs:
            if len(kept) >= target:
                break
            kept.update(by_doc[doc_id])
    drop = [cid for cid, _ in rows if cid not in kept]
    with conn:
        conn.execute("update chunks set embedded = 0 where id in (select value from json_each(?))", (json.dumps(drop),))
        conn.execute("delete from vec where chunk_id in (select value from json_each(?))", (json.dumps(drop),))
    kept_now = int(conn.execute("select count(*) from chunks where embedded = 1").fetchone()[0])
    conn.close()
    return kept_now


def coverage(args: argparse.Namespace, payload: dict) -> None:
    """Keyword vs hybrid on the OTel questions while vectors cover only part of the collection (from the cached
    fully embedded OTel index, copied and stripped)."""
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    from .otel_quality import aggregate, load_questions, run_library

    docs = require(args.data / "otel-docs", "OpenTelemetry docs")
    require(OTEL_INDEX / "vectors.sqlite", "the embedded OTel index (run the otel step first)")
    questions = load_questions()
    scratch = CACHE / "semantic-coverage-index"
    rows, out = [], []
    for order, seeds in (("prefix", (0,)), ("random", (0, 1, 2))):
        for keep in COVERAGE_POINTS:
            if order == "random" and keep in (0.0, 1.0):
                continue  # the same index as the prefix run
            for seed in seeds:
                if scratch.exists():
                    shutil.rmtree(scratch)
                shutil.copytree(OTEL_INDEX, scratch)
                kept = strip_vectors(scratch, keep, order, seed)
                with Library(Settings.load(docs, scratch, embeddings="local")) as lib:
                    lib.sync()
                    note = lib.search(questions[0]["question"], mode="hybrid").note
                    point = {"order": order, "keep": keep, "seed": seed, "chunks_with_vectors": kept, "note": note}
                    for mode in ("keyword", "hybrid"):
                        per_q, _, _ = run_library(lib, questions, mode)
                        point[mode] = aggregate(per_q, questions)["all"]
                out.append(point)
                k, h = point["keyword"], point["hybrid"]
                rows.append(
                    [
                        order,
                        f"{keep:.0%}",
                        seed,
                        kept,
                        k["doc@1"],
                        h["doc@1"],
                        k["doc@5"],
                        h["doc@5"],
                        k["section@5"],
                        h["section@5"],
                        note or "",
                    ]
                )
    shutil.rmtree(scratch, ignore_errors=True)
    table(
        [
            "vectors on",
            "coverage",
            "seed",
            "chunks",
            "kw doc@1",
            "hyb doc@1",
            "kw doc@5",
            "hyb doc@5",
            "kw sec@5",
            "hyb sec@5",
            "hybrid note",
        ],
        rows,
        title=f"Partial coverage: OpenTelemetry questions ({len(questions)})",
    )
    payload["coverage"] = out


# -- one-paragraph edit ------------------------------------------------------------------------


def paragraph_edit(args: argparse.Namespace, payload: dict) -> None:
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    src = require(args.data / "otel-docs" / "en" / "docs" / "collector", "OpenTelemetry collector docs")
    root = CACHE / "semantic-edit-root"
    index = CACHE / "semantic-edit-index"
    for p in (root, index):
        if p.exists():
            shutil.rmtree(p)
    shutil.copytree(src, root)
    with Library(Settings.load(root, index, embeddings="local")) as lib:
        lib.sync()
        assert lib.vectors is not None
        lib.embedding.build()
        conn = lib.vectors._conn()
        doc_id, n_chunks = conn.execute(
            "select doc_id, count(*) c from chunks group by doc_id order by c desc limit 1"
        ).fetchone()
        path = root / doc_id
        text = path.read_text()
        paragraphs = [
            p for p in text.split("\n\n") if len(p) > 200 and not p.lstrip().startswith(("```", "|", "-", "{{"))
        ]
        target = paragraphs[len(paragraphs) // 2]
        path.write_text(text.replace(target, target + " This sentence was added by the edit benchmark.", 1))
        with Timer() as t_sync:
            lib.sync()
        with Timer() as t_embed:
            embedded = lib.embedding.build()
    info = {
        "document": doc_id,
        "document_chunks": n_chunks,
        "chunks_reembedded": embedded,
        "sync_s": round(t_sync.seconds, 3),
        "embed_s": round(t_embed.seconds, 3),
        "total_s": round(t_sync.seconds + t_embed.seconds, 3),
    }
    table(
        ["document", "its chunks", "re-embedded", "sync s", "re-chunk + embed s"],
        [[doc_id, n_chunks, embedded, info["sync_s"], info["embed_s"]]],
        title="One-paragraph edit",
    )
    payload["paragraph_edit"] = info


def throughput(args: argparse.Namespace, payload: dict) -> None:
    """Embedding alone, on real chunks (the first 512 of the cached SciFact index), in a fresh child process."""
    info = run_child("benchmarks.semantic_eval", ["throughput", "--index-dir", str(SCIFACT_INDEX)])
    table(
        ["chunks", "avg chars", "model load s", "chunks/s", "RSS before load MB", "peak RSS MB", "load avg 1 min"],
        [
            [
                info["chunks"],
                info["avg_chars"],
                info["load_s"],
                info["chunks_per_s"],
                info["rss_before_mb"],
                info["peak_rss_mb"],
                info["loadavg"],
            ]
        ],
        title="Embedding throughput (MiniLM int8, 2 threads, batches of 8)",
    )
    payload["throughput"] = info


def main_throughput(argv: list[str]) -> None:
    import os

    import apsw
    import psutil

    from mcp_docs.embedders import MiniLMEmbedder

    ap = argparse.ArgumentParser()
    ap.add_argument("--index-dir", type=Path, required=True)
    ap.add_argument("--n", type=int, default=512)
    a = ap.parse_args(argv)
    conn = apsw.Connection(str(a.index_dir / "vectors.sqlite"), flags=apsw.SQLITE_OPEN_READONLY)
    texts = [r[0] for r in conn.execute("select text from chunks order by id limit ?", (a.n,))]
    conn.close()
    rss_before = psutil.Process().memory_info().rss / 2**20
    embedder = MiniLMEmbedder()
    with Timer() as t_load:
        embedder.load()
    embedder.embed_passages(texts[:8])  # warm-up
    with Timer() as t:
        embedder.embed_passages(texts)
    print(
        json.dumps(
            {
                "chunks": len(texts),
                "avg_chars": round(sum(map(len, texts)) / len(texts)),
                "load_s": round(t_load.seconds, 2),
                "chunks_per_s": round(len(texts) / t.seconds, 1),
                "rss_before_mb": round(rss_before, 1),
                "peak_rss_mb": peak_rss_mb(),
                "loadavg": round(os.getloadavg()[0], 2),
            }
        )
    )


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=SHARED_BENCH)
    ap.add_argument("--fresh", action="store_true", help="rebuild the cached embedded indexes (slow)")
    ap.add_argument("--tune", action="store_true", help="print the SciFact fusion grid")
    ap.add_argument(
        "--only",
        default="scifact,otel,coverage,edit,throughput",
        help="comma-separated subset of scifact,otel,coverage,edit,throughput",
    )
    args = ap.parse_args(argv)
    payload: dict = {}
    steps = {"scifact": scifact, "otel": otel, "coverage": coverage, "edit": paragraph_edit, "throughput": throughput}
    for name in [s.strip() for s in args.only.split(",") if s.strip()]:
        steps[name](args, payload)
    write_results("semantic", payload)
    return payload


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "build":
        main_build(sys.argv[2:])
    elif len(sys.argv) > 1 and sys.argv[1] == "throughput":
        main_throughput(sys.argv[2:])
    else:
        try:
            main()
        except Skip as exc:
            print(f"skipped: {exc}")
            sys.exit(0)
