"""Time to useful semantic search, and to full hybrid, on a multilingual vault (issue 29).

    python -m benchmarks.time_to_useful [--root /work/data/obsidian-help] [--per-language 10] [--languages 20]
                                        [--section-seconds 120] [--questions 40] [--minutes 10]

The Obsidian help vault (public, third party: read where it is checked out, never copied into the repository) has
~36 language folders of 173 notes each, translations of one another (the `permalink` field ties them). A subset
is linked into a temporary folder at run time: every English page, and the translations of `--per-language` of
them in the first `--languages` - 1 other language folders. It is indexed with the local
model the index decides (multilingual-e5-small for this mix), then embedded in the worker's order, timed by phase:

1. every document's own unit (title, description, lead): `EmbeddingWorker.embed_documents`;
2. section chunks, for at most `--section-seconds` (the rate is what matters; the rest is extrapolated).

The full vault's counts (documents, document units, distinct section texts) come from chunking it all, so the
times for the whole vault are the subset's rates applied to them, plus the measured sync. On this shared 2-core
machine every figure is an extrapolation from a subset, and says so.

Quality at `--minutes` minutes, on questions generated at run time (make_questions): a translated page's
front-matter `description` asked of the English folder, whose page with the same permalink is the answer
(cross-lingual: what a multilingual model is chosen for). doc hit@5 for: keyword; hybrid and semantic in the old
order at that time (sections only, the share the old order reached by then: no document vectors); in the new order
at that time (the documents' own vectors reached by then, then sections); and once every document has its own
vector and no section has one. Both orders at the same embedding rates, measured here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import threading
import time
from pathlib import Path

from .common import machine, require, run_script, write_results

DEFAULT_ROOT = Path("/work/data/obsidian-help")
_SENTENCE = re.compile(r"(?<=[.!?。])\s+")
_LANGUAGE = re.compile(r"^[a-z]{2}(-[A-Za-z]{2})?$")
_PERMALINK = re.compile(r"^permalink:\s*(.+)$", re.MULTILINE)
_DESCRIPTION = re.compile(r"^description:\s*(.+)$", re.MULTILINE)


def language_folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and _LANGUAGE.match(p.name))


def permalink(note: Path) -> str | None:
    """The page's `permalink` front matter field: the same for a page and its translations in this vault."""
    head = note.read_text(encoding="utf-8", errors="replace")[:2000]
    m = _PERMALINK.search(head) if head.startswith("---") else None
    return m.group(1).strip().strip("'\"") if m else None


def link_subset(root: Path, target: Path, languages: int, per_language: int) -> list[str]:
    """Hard links (or copies) of every English page, and the translations (same permalink) of `per_language` of
    them, evenly spread, in the first `languages` - 1 other language folders: a translated vault, as the whole one
    is, whose English folder holds all the answers the questions could name."""
    folders = language_folders(root)
    folders = [f for f in folders if f.name == "en"] + [f for f in folders if f.name != "en"][: languages - 1]
    english = sorted((root / "en").rglob("*.md"))
    step = max(1, len(english) // per_language)
    wanted = {p for p in (permalink(n) for n in english[::step]) if p}
    wanted = set(sorted(wanted)[:per_language])
    chosen: list[str] = []
    for folder in folders:
        for note in sorted(folder.rglob("*.md")):
            # every English page (what the questions are asked of), the chosen ones' translations
            if folder.name != "en" and permalink(note) not in wanted:
                continue
            rel = note.relative_to(root)
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(note, dest)
            except OSError:
                dest.write_bytes(note.read_bytes())
            chosen.append(rel.as_posix())
    return chosen


def full_counts(root: Path, max_chars: int) -> dict[str, int]:
    """Documents, document units and section chunks (all and distinct texts) of the whole vault, by chunking it."""
    from mcp_docs.index.chunking import chunk_document, document_chunk
    from mcp_docs.loader import file_stem, parse_file

    docs = units = chunks = 0
    texts: set[str] = set()
    unit_texts: set[str] = set()
    started = time.perf_counter()
    for note in sorted(root.rglob("*.md")):
        try:
            parsed = parse_file(note.read_bytes(), file_stem(note.name), 10).parsed
        except Exception:  # a note the parser rejects is skipped by the index too
            continue
        docs += 1
        unit = document_chunk(parsed, max_chars)
        if unit is not None:
            units += 1
            unit_texts.add(unit.hash)
        for c in chunk_document(parsed, max_chars):
            chunks += 1
            texts.add(c.hash)
    return {
        "documents": docs,
        "document_units": units,
        "document_units_distinct": len(unit_texts - texts),
        "section_chunks": chunks,
        "section_chunks_distinct": len(texts),
        "parse_and_chunk_seconds": round(time.perf_counter() - started, 1),
    }


def make_questions(root: Path, ids: list[str], n: int) -> list[dict[str, str]]:
    """Cross-lingual questions: a translated page's `description` (French, Czech, Thai...) asked of the English
    folder, whose page with the same permalink is the answer. Keyword search rarely bridges two languages; this
    is what a multilingual model's vectors are for, and what 'useful semantic search' means in such a vault."""
    english = {permalink(root / i): i for i in ids if i.startswith("en/")}
    candidates = []
    for doc_id in ids:
        if doc_id.startswith("en/"):
            continue
        head = (root / doc_id).read_text(encoding="utf-8", errors="replace")[:2000]
        m = _DESCRIPTION.search(head)
        answer = english.get(permalink(root / doc_id))
        if m and answer and len(m.group(1).strip()) >= 20:
            candidates.append({"query": m.group(1).strip().strip("'\""), "doc": answer, "from": doc_id})
    step = max(1, len(candidates) // n)
    return candidates[::step][:n]


def hit_at_5(lib, questions: list[dict[str, str]], mode: str) -> float:  # type: ignore[no-untyped-def]
    hits = 0
    for q in questions:
        result = lib.search(q["query"], max_results=5, mode=mode, folder="en")
        hits += q["doc"] in [r.id for r in result.results]
    return round(hits / len(questions), 3) if questions else 0.0


def embed_sections_for(worker, seconds: float, limit: int | None = None) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    """Embed section chunks for up to `seconds` (or until `limit` are done): (chunks embedded, seconds taken)."""
    stop = threading.Event()
    timer = threading.Timer(seconds, stop.set)
    started = time.perf_counter()
    done = 0

    def progress(n: int, total: int) -> None:
        nonlocal done
        done = n
        if limit is not None and n >= limit:
            stop.set()

    timer.start()
    try:
        worker.embed_pending(stop, progress=progress)
    finally:
        timer.cancel()
    return done, time.perf_counter() - started


def otel_document_level(docs: Path, model: str | None) -> dict[str, object]:
    """The OpenTelemetry questions with every document's own vector and no section vector (the state the new order
    reaches first), against keyword alone and the fully embedded index: does a document-level start cost quality?"""
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    from .otel_quality import aggregate, load_questions, score_result

    questions = load_questions()
    env = {"MCP_DOCS_EMBEDDINGS_MODEL": model} if model else {}
    out: dict[str, object] = {}
    with (
        tempfile.TemporaryDirectory(prefix="mcp-docs-ttu-otel-") as tmp,
        Library(Settings.load(docs, Path(tmp) / "index", embeddings="local", environ=env)) as lib,
    ):
        lib.sync()
        assert lib.embedding is not None
        worker = lib.embedding
        worker.chunk_dirty()
        started = time.perf_counter()
        units = worker.embed_documents()
        out["model"] = worker.store.embedder.model_id if worker.store.embedder else None
        out["document_units"] = units
        out["document_seconds"] = round(time.perf_counter() - started, 1)

        def run(mode: str) -> dict[str, object]:
            rows = []
            for q in questions:
                res = lib.search(q["question"], max_results=10, mode=mode)
                rows.append(score_result(q, [(r.id, [s.heading_path for s in r.sections]) for r in res.results]))
            return aggregate(rows, questions)

        out["keyword"] = run("keyword")
        out["documents_only"] = {mode: run(mode) for mode in ("hybrid", "semantic")}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--languages", type=int, default=20)
    ap.add_argument("--per-language", type=int, default=10)
    ap.add_argument("--section-seconds", type=float, default=120.0)
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--otel", type=Path, help="instead: the OTel questions with document vectors only (docs folder)")
    ap.add_argument("--model", help="with --otel: the local model (default: the one the index decides)")
    args = ap.parse_args()
    if args.otel:
        result = otel_document_level(require(args.otel, "the OpenTelemetry docs"), args.model)
        print(json.dumps(result, indent=2, ensure_ascii=False))
        write_results("time_to_useful_otel", {"machine": machine(), **result})
        return
    root = require(args.root, "a multilingual vault (the Obsidian help vault)")

    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    with tempfile.TemporaryDirectory(prefix="mcp-docs-ttu-") as tmp:
        vault = Path(tmp) / "vault"
        ids = link_subset(root, vault, args.languages, args.per_language)
        settings = Settings.load(vault, Path(tmp) / "index", embeddings="local", environ={})
        with Library(settings) as lib:
            started = time.perf_counter()
            lib.sync()
            sync_seconds = time.perf_counter() - started
            assert lib.embedding is not None and lib.vectors is not None
            worker, store = lib.embedding, lib.embedding.store
            assert store.embedder is not None
            model = store.embedder.model_id
            started = time.perf_counter()
            worker.chunk_dirty()
            chunk_seconds = time.perf_counter() - started
            store.embedder.load()
            started = time.perf_counter()
            units = worker.embed_documents()
            doc_seconds = time.perf_counter() - started
            doc_rate = units / doc_seconds if doc_seconds else 0.0
            sections_total = store.pending_sections()
            questions = make_questions(vault, ids, args.questions)
            keyword = hit_at_5(lib, questions, "keyword")
            conn = store._conn()

            full = full_counts(root, store.embedder.max_chars)
            # the section rate, measured on as many chunks as the time given allows
            embedded, took = embed_sections_for(worker, args.section_seconds)
            section_rate = embedded / took if took else 0.0
            # the whole vault: subset rates applied to its counts
            # (the sync scaled by documents; reading and chunking for the vectors as measured on the whole vault)
            sync_full = sync_seconds * full["documents"] / max(1, len(ids)) + full["parse_and_chunk_seconds"]
            to_documents = sync_full + full["document_units_distinct"] / doc_rate if doc_rate else None
            to_full = (
                to_documents + full["section_chunks_distinct"] / section_rate if to_documents and section_rate else None
            )
            old_to_full = sync_full + full["section_chunks_distinct"] / section_rate if section_rate else None
            # at `minutes`: the share of the sections each order has embedded by then (the old order: sections only)
            budget = args.minutes * 60 - sync_full
            old_share = min(1.0, max(0.0, budget * section_rate / full["section_chunks"])) if section_rate else 0.0
            new_docs_share = min(1.0, max(0.0, budget * doc_rate / full["document_units"])) if doc_rate else 0.0
            left = budget - (full["document_units_distinct"] / doc_rate if doc_rate else budget)
            new_share = min(1.0, max(0.0, left * section_rate / full["section_chunks"])) if section_rate else 0.0

            saved: dict[tuple[str, int], bytes] = {}  # vectors hidden from search for a state, put back later

            def restore_all() -> None:
                with store._write() as w:
                    for (table, cid), blob in saved.items():
                        vec = "doc_vec" if table == "doc_chunks" else "vec"
                        w.execute(f"insert into {vec}(chunk_id, embedding) values (?, ?)", (cid, blob))
                        w.execute(f"update {table} set embedded = 1 where id = ?", (cid,))
                saved.clear()

            def show_first(table: str, keep: int) -> None:
                """Only the newest `keep` units of `table` keep their vectors (the worker's order); the others
                look exactly as not embedded yet: no vector, embedded = 0."""
                vec = "doc_vec" if table == "doc_chunks" else "vec"
                with store._write() as w:
                    ids_desc = [
                        int(r[0]) for r in w.execute(f"select id from {table} where embedded = 1 order by id desc")
                    ]
                    for cid in ids_desc[keep:]:
                        row = w.execute(f"select embedding from {vec} where chunk_id = ?", (cid,)).fetchone()
                        if row is not None:
                            saved[(table, cid)] = bytes(row[0])
                            w.execute(f"delete from {vec} where chunk_id = ?", (cid,))
                        w.execute(f"update {table} set embedded = 0 where id = ?", (cid,))

            def set_state(sections_share: float, documents_share: float) -> None:
                """Section vectors for the first `sections_share` of the subset's chunks and document vectors for the
                first `documents_share` of its documents (the worker's order: newest first); embedding what is
                missing."""
                restore_all()
                want = round(sections_share * sections_total)
                have = int(conn.execute("select count(*) from chunks where embedded = 1").fetchone()[0])
                if want > have:
                    embed_sections_for(worker, 3600, limit=want - have)
                show_first("chunks", want)
                show_first("doc_chunks", round(documents_share * units))
                store._has_vectors = False

            def quality() -> dict[str, float]:
                return {mode: hit_at_5(lib, questions, mode) for mode in ("hybrid", "semantic")}

            set_state(old_share, 0.0)
            old_quality = quality()
            set_state(new_share, new_docs_share)
            new_quality = quality()
            set_state(0.0, 1.0)
            documents_quality = quality()
            restore_all()

    payload = {
        "machine": machine(),
        "note": "shared 2-core machine; subset measured, whole-vault times extrapolated from the subset's rates",
        "model": model,
        "subset": {
            "documents": len(ids),
            "languages": args.languages,
            "sync_seconds": round(sync_seconds, 1),
            "chunking_seconds": round(chunk_seconds, 1),
            "document_units": units,
            "document_units_per_s": round(doc_rate, 2),
            "section_chunks": sections_total,
            "section_chunks_timed": embedded,
            "section_chunks_per_s": round(section_rate, 2),
        },
        "whole_vault": full,
        "extrapolated_minutes": {
            "to_document_vectors_for_all": round(to_documents / 60, 1) if to_documents else None,
            "to_full_hybrid": round(to_full / 60, 1) if to_full else None,
            "to_full_hybrid_old_order": round(old_to_full / 60, 1) if old_to_full else None,
        },
        f"at_{args.minutes:g}_minutes": {
            "old_order_section_share": round(old_share, 3),
            "new_order_document_share": round(new_docs_share, 3),
            "new_order_section_share": round(new_share, 3),
        },
        "questions": len(questions),
        "doc_hit_at_5": {
            "keyword": keyword,
            "old_order": old_quality,
            "new_order": new_quality,
            "document_vectors_for_all_no_section": documents_quality,
        },
    }
    print(json.dumps(payload, indent=2, ensure_ascii=False))
    write_results("time_to_useful", payload)


if __name__ == "__main__":
    run_script(main)
