"""Does search-driven embedding order help? Chunks embedded before a question's answer page has its vectors.

    python -m benchmarks.embed_order [--root /path/to/otel-docs] [--index-dir DIR]

The OpenTelemetry docs (English and French) are indexed and chunked once (no model is loaded, nothing is embedded). For each
English question of benchmarks/data/otel_questions.jsonl, starting with nothing embedded: a user runs the question
as a search (it answers by keyword, as it does before vectors exist), then the worker's own batch order
(`VectorStore.pending_batch`, EMBED_BATCH chunks at a time) is followed, marking chunks done without embedding
them, until every chunk of the page the question is about is done. Reported: that count, median and mean over the
questions, with the searches remembered (the order the worker uses) and without (newest first, the order before).
Chunks, not seconds: multiply by the embedding rate (REPORT.md: ~20 chunks/s on 2 cores) for the wait.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from .common import CACHE, SHARED_BENCH, require, run_script
from .otel_quality import load_questions


def chunks_until(lib, doc_id: str, searched: tuple[list[str], list[str]]) -> int:  # type: ignore[no-untyped-def]
    """Chunks taken in the worker's order before every chunk of `doc_id` is taken (all reset to pending first)."""
    from mcp_docs.index.embedding_worker import EMBED_BATCH

    conn = lib.vectors._conn()
    conn.execute("update chunks set embedded = 0")
    wanted = {int(r[0]) for r in conn.execute("select id from chunks where doc_id = ?", (doc_id,))}
    taken = 0
    while wanted:
        rows = lib.vectors.pending_batch(EMBED_BATCH, *searched)
        if not rows:
            break
        ids = [cid for cid, _ in rows]
        conn.execute(f"update chunks set embedded = 1 where id in ({','.join('?' * len(ids))})", ids)
        taken += len(ids)
        wanted -= set(ids)
    return taken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=SHARED_BENCH / "otel-docs")
    parser.add_argument("--index-dir", type=Path, default=CACHE / "embed-order-index")
    args = parser.parse_args()
    from mcp_docs.index.embedding_worker import SearchedFirst
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    root = require(args.root, "the OpenTelemetry docs")
    questions = [q for q in load_questions() if q["lang"] == "en"]
    with Library(Settings.load(root, args.index_dir, embeddings="local")) as lib:
        lib.sync()
        assert lib.embedding is not None and lib.vectors is not None
        lib.embedding.chunk_dirty()
        total = lib.vectors.pending_chunks()
        before, after, found = [], [], 0
        for q in questions:
            result = lib.search(q["question"], max_results=5, mode="keyword")
            searched = SearchedFirst()
            searched.note([r.id for r in result.results])
            found += q["doc"] in searched.order()[0]
            before.append(chunks_until(lib, q["doc"], ([], [])))
            after.append(chunks_until(lib, q["doc"], searched.order()))
    summary = {
        "questions": len(questions),
        "chunks": total,
        "answer_page_in_top5": found,
        "newest_first": {"median": statistics.median(before), "mean": round(statistics.mean(before))},
        "searched_first": {"median": statistics.median(after), "mean": round(statistics.mean(after))},
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    run_script(main)
