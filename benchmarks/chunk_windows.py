"""Chunk windows and chunk-to-section scoring, measured offline on two halves of the questions (issue 31 item 2).

The question: do shorter chunks (a SciFact claim matches one or two sentences of an abstract), scored by their best
chunk (MaxP), by their mean, or by the best mixed with the document's own vector, lift semantic and so hybrid?

Every document of an embedded index is cut again by the product's own chunker (`index.chunking.chunk_document`) at
each `--windows` size, the chunks embedded with the index's own embedder (MiniLM or e5, int8) and cached in
`--cache` (never in the repository: SciFact is CC BY-NC), and a query's cosines with every chunk become one score
per section by each `--scorers` rule:

- `max`: the best chunk (what the product does: a section scores with its best chunk);
- `mean`: the mean of the section's chunks;
- `maxmean:A`: (1 - A) × best + A × mean;
- `maxdoc:B`: (1 - B) × best + B × the cosine of the document's own vector (title and lead,
  `chunking.document_chunk`), as stored in the index;
- `top2`: the mean of the two best chunks (the best alone for a section of one);
- `first`: the section's first chunk alone (FirstP).

Searches are the shipped pipeline (`Library.search`: BM25, the per-query keyword share, fusion, document signals,
the language view) on a COPY of an embedded index, with one step replaced: the vector store's chunk KNN grouped to
sections (`VectorQueries._chunk_hits`) returns the variant's section scores. `--windows index` keeps the index's
own chunks: with `max` it must give the shipped figures, a check of the harness. Halves: odd / even question ids.

    cp -r EMBEDDED_INDEX /tmp/copy        # opened once with `Library.sync()` if main's full-text schema moved
    python -m benchmarks.chunk_windows scifact --root SCIFACT_MD --index-dir /tmp/copy --windows index,500 \
        --scorers max,mean,maxmean:0.3,maxdoc:0.2
    python -m benchmarks.chunk_windows otel-en --root ../shared/bench/otel-docs/en --index-dir /tmp/copy2 ...
    python -m benchmarks.chunk_windows otel --root ../shared/bench/otel-docs --index-dir /tmp/copy3 ...   # e5

Figures: benchmarks/REPORT.md, "Chunk windows and MaxP (issue 31 item 2, fourth pass)".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.fusion_halves import SCIFACT, Question, fixed_share, halves, otel_questions, run, scifact_questions
from benchmarks.otel_quality import QUESTIONS

Key = tuple[str, int]  # (document id, section index)


@dataclass
class ChunkSet:
    """One cut of the collection: each chunk's section, the text after its prefix, and its vector (unit length)."""

    keys: list[Key]
    pieces: list[str]
    vectors: np.ndarray


def index_chunks(conn: Any) -> ChunkSet:
    """The index's own section chunks, as stored."""
    rows = conn.execute(
        "select c.doc_id, c.section_idx, c.text, c.prefix_len, v.embedding from chunks c "
        "join vec v on v.chunk_id = c.id where c.embedded = 1 order by c.id"
    ).fetchall()
    return ChunkSet(
        [(str(r[0]), int(r[1])) for r in rows],
        [str(r[2])[int(r[3]) :] for r in rows],
        np.stack([np.frombuffer(bytes(r[4]), dtype=np.float32) for r in rows]),
    )


def document_vectors(conn: Any) -> dict[str, np.ndarray]:
    rows = conn.execute("select u.doc_id, v.embedding from doc_chunks u join doc_vec v on v.chunk_id = u.id")
    return {str(d): np.frombuffer(bytes(b), dtype=np.float32) for d, b in rows}


def cut(root: Path, doc_ids: list[str], max_chars: int, overlap: int) -> tuple[list[Key], list[str], list[str]]:
    """(section, piece, text) of every chunk of the documents, by the product's parser and chunker."""
    from mcp_docs.index.chunking import chunk_document
    from mcp_docs.loader import file_stem, parse_file

    keys: list[Key] = []
    pieces: list[str] = []
    texts: list[str] = []
    for doc_id in sorted(doc_ids):
        parsed = parse_file((root / doc_id).read_bytes(), file_stem(doc_id), None).parsed
        for chunk in chunk_document(parsed, max_chars, overlap):
            keys.append((doc_id, chunk.section_idx))
            pieces.append(chunk.piece)
            texts.append(chunk.text)
    return keys, pieces, texts


def embedded_cut(root: Path, doc_ids: list[str], max_chars: int, overlap: int, cache: Path, embedder: Any) -> ChunkSet:
    """The cut at max_chars, embedded once and cached (keyed by the model and the texts themselves)."""
    keys, pieces, texts = cut(root, doc_ids, max_chars, overlap)
    digest = hashlib.blake2b("\x00".join(texts).encode(), digest_size=8).hexdigest()
    model = embedder.model_id.replace(":", "_").replace("/", "_")
    path = cache / f"{max_chars}-{overlap}-{model}-{digest}.npy"
    if path.exists():
        return ChunkSet(keys, pieces, np.load(path))
    print(f"embedding {len(texts):,} chunks of ≤ {max_chars} characters (overlap {overlap})...", file=sys.stderr)
    started, parts, step = time.monotonic(), [], 512
    for i in range(0, len(texts), step):
        parts.append(embedder.embed_passages(texts[i : i + step]))
        done = i + len(parts[-1])
        print(f"  {done:,}/{len(texts):,} ({done / (time.monotonic() - started):.1f}/s)", file=sys.stderr, flush=True)
    vectors = np.concatenate(parts).astype(np.float32)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return ChunkSet(keys, pieces, vectors)


# per-chunk cosines (sorted by section: `starts` the first row of each), the document vector's cosine per section
Scorer = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def scorer(spec: str) -> Scorer:
    """The rule named by `spec` (see the module's docstring)."""
    name, _, arg = spec.partition(":")
    w = float(arg) if arg else 0.0

    def best(c: np.ndarray, starts: np.ndarray, doc_cos: np.ndarray) -> np.ndarray:
        return np.maximum.reduceat(c, starts)

    def mean(c: np.ndarray, starts: np.ndarray, doc_cos: np.ndarray) -> np.ndarray:
        return np.add.reduceat(c, starts) / np.diff(np.append(starts, len(c)))

    def top2(c: np.ndarray, starts: np.ndarray, doc_cos: np.ndarray) -> np.ndarray:
        ends = np.append(starts[1:], len(c))
        return np.array([np.sort(c[s:e])[-2:].mean() for s, e in zip(starts, ends, strict=True)])

    rules: dict[str, Scorer] = {
        "max": best,
        "mean": mean,
        "top2": top2,
        "first": lambda c, s, d: c[s],
        "maxmean": lambda c, s, d: (1 - w) * best(c, s, d) + w * mean(c, s, d),
        "maxdoc": lambda c, s, d: (1 - w) * best(c, s, d) + w * d,
    }
    if name not in rules:
        raise SystemExit(f"unknown scorer {spec!r}: one of {', '.join(rules)}")
    return rules[name]


class SectionScores:
    """Per-section scores of one chunk set under one rule, for any query vector."""

    def __init__(self, chunks: ChunkSet, doc_vectors: dict[str, np.ndarray], rule: Scorer) -> None:
        order = sorted(range(len(chunks.keys)), key=lambda i: (chunks.keys[i], i))
        keys = [chunks.keys[i] for i in order]
        self.matrix = chunks.vectors[order]
        self.pieces = [chunks.pieces[i] for i in order]
        self.starts = np.array([i for i in range(len(keys)) if i == 0 or keys[i] != keys[i - 1]])
        self.keys = [keys[i] for i in self.starts]
        dim = self.matrix.shape[1]
        zero = np.zeros(dim, dtype=np.float32)
        self.doc_matrix = np.stack([doc_vectors.get(doc_id, zero) for doc_id, _ in self.keys])
        self.rule = rule
        self.row_of_doc: dict[str, list[int]] = {}
        for row, (doc_id, _) in enumerate(self.keys):
            self.row_of_doc.setdefault(doc_id, []).append(row)

    def scores(self, query: np.ndarray) -> np.ndarray:
        q = np.ascontiguousarray(query, dtype=np.float32)
        return self.rule(self.matrix @ q, self.starts, self.doc_matrix @ q)

    def best(self, query: np.ndarray, limit: int, docs: Any = None) -> list[tuple[int, float]]:
        """(section row, score) of the `limit` best sections, within the documents filter the store was given."""
        s = self.scores(query)
        if docs is not None:
            inside, ids = docs
            mask = np.zeros(len(s), dtype=bool)
            mask[[r for d in ids for r in self.row_of_doc.get(d, [])]] = True
            s = np.where(mask if inside else ~mask, s, -np.inf)
        top = np.argsort(-s, kind="stable")[:limit]
        return [(int(i), float(s[i])) for i in top if np.isfinite(s[i])]


class Blend(SectionScores):
    """Two or more cuts at once (`--windows index+500`): a section's score is the mean of its scores in each cut
    (a section one cut merged into its parent takes the others' mean)."""

    def __init__(self, parts: list[SectionScores]) -> None:
        self.parts = parts
        self.keys = sorted({k for p in parts for k in p.keys})
        row = {k: i for i, k in enumerate(self.keys)}
        self.rows = [np.array([row[k] for k in p.keys]) for p in parts]
        first: dict[Key, tuple[int, int]] = {}
        for n, p in enumerate(parts):
            for i, k in enumerate(p.keys):
                first.setdefault(k, (n, i))
        self.pieces = [parts[first[k][0]].pieces[int(parts[first[k][0]].starts[first[k][1]])] for k in self.keys]
        self.starts = np.arange(len(self.keys))
        self.row_of_doc = {}
        for i, (doc_id, _) in enumerate(self.keys):
            self.row_of_doc.setdefault(doc_id, []).append(i)

    def scores(self, query: np.ndarray) -> np.ndarray:
        total = np.zeros(len(self.keys))
        count = np.zeros(len(self.keys))
        for p, rows in zip(self.parts, self.rows, strict=True):
            total[rows] += p.scores(query)
            count[rows] += 1
        return total / np.maximum(count, 1)


def use_scores(store: Any, scores: SectionScores | None) -> None:
    """The store's chunk KNN grouped to sections (`_chunk_hits`) answers from `scores`; None: the shipped one."""
    if scores is None:
        store.__dict__.pop("_chunk_hits", None)
        return
    from mcp_docs.index.hits import VectorHit

    conn = store._conn()
    meta = {
        (str(r[0]), int(r[1])): r
        for r in conn.execute(
            "select s.doc_id, s.idx, s.heading, s.heading_path, s.line_start, s.line_end, d.title, d.tags "
            "from sections s join docs d on d.doc_id = s.doc_id"
        )
    }

    def chunk_hits(query: np.ndarray, limit: int, folder: Any = None, tags: Any = (), docs: Any = None) -> list:
        assert not folder and not tags, "the question sets use no filters"
        hits = []
        for row, sim in scores.best(query, limit, docs):
            doc_id, idx = scores.keys[row]
            m = meta[(doc_id, idx)]
            piece = scores.pieces[row] if isinstance(scores, Blend) else scores.pieces[int(scores.starts[row])]
            hits.append(VectorHit(doc_id, idx, sim, m[6], m[2], m[3], m[4], m[5], piece, tuple(json.loads(m[7]))))
        return hits

    store._chunk_hits = chunk_hits


def scale_vectors_from_floor(on: bool) -> None:
    """With `on`, hybrid's fusion scales the vector side min–max over its candidates, (cosine − lowest) / (best −
    lowest), instead of cosine / best: shorter chunks raise every section's best cosine, and over the best
    alone the candidates' scaled scores bunch near 1, so they order the fused list less."""
    from dataclasses import replace as copy

    from mcp_docs.search import hybrid

    shipped = hybrid.__dict__.setdefault("_shipped_fuse", hybrid.fuse)
    if not on:
        hybrid.fuse = shipped
        return

    def fuse(keyword_hits: Any, vector_hits: Any, limit: int, **kw: Any) -> Any:
        cutoff = kw.pop("min_similarity", hybrid.MIN_SIMILARITY)
        kept = [h for h in vector_hits if h.similarity >= cutoff]
        if len(kept) > 1:
            low = min(h.similarity for h in kept) - 1e-6
            kept = [copy(h, similarity=h.similarity - low) for h in kept]
        return shipped(keyword_hits, kept, limit, min_similarity=0.0, **kw)

    hybrid.fuse = fuse


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("set", choices=["scifact", "otel", "otel-en"])
    ap.add_argument("--root", type=Path, required=True, help="the index's root")
    ap.add_argument("--index-dir", type=Path, required=True, help="a COPY of an embedded index of the root")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/chunk-windows"), help="embedded cuts, outside the repo")
    ap.add_argument("--windows", default="index", help="'index' and/or chunk sizes (max_chars), comma-separated")
    ap.add_argument("--overlap", type=int, default=150, help="characters carried over between chunks")
    ap.add_argument("--scorers", default="max,mean,top2,maxmean:0.3,maxdoc:0.2")
    ap.add_argument("--modes", default="semantic,hybrid")
    ap.add_argument("--share", type=float, help="a fixed keyword share for every hybrid query (fusion_halves)")
    ap.add_argument("--floor", action="store_true", help="hybrid scales cosines min–max (scale_vectors_from_floor)")
    ap.add_argument("--scifact-data", type=Path, default=SCIFACT)
    ap.add_argument("--questions", type=Path, default=QUESTIONS, help="OTel: another question file (cross-lingual)")
    ap.add_argument("--json", type=Path, help="append each row as a JSON line to this file")
    args = ap.parse_args(argv)

    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    questions: list[Question]
    if args.set == "scifact":
        questions, depth = scifact_questions(args.scifact_data), 100
    else:
        questions, depth = otel_questions(args.set == "otel-en", args.questions), 5
    lib = Library(Settings.load(args.root, args.index_dir, embeddings="local"))
    store = lib.vectors
    assert store is not None and store.embedder is not None, "an index with vectors"
    conn = store._conn()
    if conn.execute("select count(*) from chunks where embedded = 0").fetchone()[0]:
        raise SystemExit(f"{args.index_dir} is not fully embedded: run `mcp-docs index` on it first")
    own = index_chunks(conn)
    doc_vectors = document_vectors(conn)
    doc_ids = [str(r[0]) for r in conn.execute("select doc_id from docs")]
    scale_vectors_from_floor(args.floor)
    fixed_share(args.share)
    print(f"{args.set} ({store.embedder.model_id}) | window | chunks | scorer | mode | all | odd | even", flush=True)
    try:
        for window in args.windows.split(","):
            cuts = [
                own
                if size == "index"
                else embedded_cut(args.root, doc_ids, int(size), args.overlap, args.cache, store.embedder)
                for size in window.split("+")
            ]
            count = sum(len(c.keys) for c in cuts)
            for spec in args.scorers.split(","):
                parts = [SectionScores(c, doc_vectors, scorer(spec)) for c in cuts]
                use_scores(store, parts[0] if len(parts) == 1 else Blend(parts))
                for mode in args.modes.split(","):
                    line = halves(run(lib, questions, mode, depth))
                    print(f"{args.set} | {window} | {count:,} | {spec} | {mode} | {line}", flush=True)
                    if args.json:
                        row = {
                            "set": args.set,
                            "window": window,
                            "overlap": args.overlap,
                            "chunks": count,
                            "floor": args.floor,
                        }
                        row |= {"scorer": spec, "mode": mode, "figures": line}
                        with args.json.open("a", encoding="utf-8") as fh:
                            fh.write(json.dumps(row) + "\n")
    finally:
        use_scores(store, None)
        scale_vectors_from_floor(False)
        fixed_share(None)
        lib.close()


if __name__ == "__main__":
    main(sys.argv[1:])
