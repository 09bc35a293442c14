"""Document vectors first on both stores, side by side in one run: the one embedding worker over the embedded store
and over PostgreSQL (issue 29's leftover; index/embedding_worker.py).

    python -m benchmarks.pg_document_vectors [--root /work/data/obsidian-help] [--languages 4] [--per-language 30]
                                             [--section-seconds 30] [--questions 20] [--database-url URL]
                                             [--stores embedded,postgres]

A subset of the Obsidian help vault (public, third party: linked into a temporary folder at run time, never copied
into the repository; benchmarks/time_to_useful.py's `link_subset`) is indexed into each store with the model the
index decides, then embedded in the worker's order: every document's own unit first (timed: the time to useful
semantic search), then section chunks for at most `--section-seconds` (the rate; the rest is extrapolated).
Cross-lingual questions (time_to_useful.make_questions: a translated page's description asked of the English folder)
are asked with only the document vectors in, and keyword alone for comparison. Without --database-url, a
PostgreSQL with pgvector is started from the `pgserver` wheel in the bench cache (benchmarks/pg_store.py).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from .common import write_results
from .time_to_useful import DEFAULT_ROOT, embed_sections_for, hit_at_5, link_subset, make_questions


def run_store(store: str, vault: Path, index: Path, url: str | None, ids: list[str], args: Any) -> dict[str, object]:
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    extra: dict[str, Any] = {"store": "postgres", "database_url": url} if store == "postgres" else {}
    settings = Settings.load(vault, index, embeddings="local", environ={}, **extra)
    questions = make_questions(vault, ids, args.questions)
    with Library(settings) as lib:
        started = time.perf_counter()
        lib.sync()
        synced = time.perf_counter() - started
        worker, vectors = lib.embedding, lib.vectors
        assert worker is not None and vectors is not None
        worker.chunk_dirty()
        units = worker.embed_documents()
        useful = time.perf_counter() - started
        status = vectors.status()
        at_documents = {
            "keyword": hit_at_5(lib, questions, "keyword"),
            "hybrid": hit_at_5(lib, questions, "hybrid"),
            "semantic": hit_at_5(lib, questions, "semantic"),
        }
        note = lib.search(questions[0]["query"], mode="hybrid").note if questions else None
        done, seconds = embed_sections_for(worker, args.section_seconds)
        left = vectors.status()["pending"]
        rate = done / seconds if seconds else 0.0
        return {
            "store": store,
            "model": status["model"],
            "documents": lib.index_info().documents,
            "sync_seconds": round(synced, 1),
            "document_units_embedded": units,
            "seconds_to_document_vectors": round(useful, 1),
            "doc_hit_at_5_with_document_vectors_only": at_documents,
            "questions": len(questions),
            "note_with_document_vectors_only": note,
            "section_chunks_embedded": done,
            "section_chunks_per_second": round(rate, 1),
            "section_chunks_left": left,
            "extrapolated_seconds_to_full_hybrid": round(useful + seconds + (left / rate if rate else 0.0)),
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--languages", type=int, default=4)
    ap.add_argument("--per-language", type=int, default=30)
    ap.add_argument("--section-seconds", type=float, default=30.0)
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--database-url")
    ap.add_argument("--stores", default="embedded,postgres", help="which stores, in order (comma-separated)")
    args = ap.parse_args()
    server = None
    url = args.database_url
    if url is None:
        from .pg_store import fresh_database, start_postgres

        server = start_postgres()
        url = fresh_database(server.get_uri(), "mcp_docs_pg_document_vectors")
    results: dict[str, object] = {"args": {k: str(v) for k, v in vars(args).items() if k != "database_url"}}
    try:
        with tempfile.TemporaryDirectory(prefix="mcp-docs-pgdocvec-") as tmp:
            vault = Path(tmp) / "vault"
            ids = link_subset(args.root, vault, args.languages, args.per_language)
            for store in args.stores.split(","):
                results[store] = run_store(store, vault, Path(tmp) / f"idx-{store}", url, ids, args)
                print(results[store], flush=True)
    finally:
        if server is not None:
            server.cleanup()
    write_results("pg_document_vectors", results)


if __name__ == "__main__":
    main()
