"""Side by side on SciFact through MCP stdio: mcp-docs (keyword) and markdown-vault-mcp (keyword), same run.

    python -m benchmarks.side_by_side [--mvm /path/to/markdown-vault-mcp] [--queries 300]

markdown-vault-mcp is optional: install it in its own virtualenv (`python -m venv /tmp/mvm-venv &&
/tmp/mvm-venv/bin/pip install markdown-vault-mcp==5.1.0`); it is looked up on PATH and in /tmp/mvm-venv/bin,
and skipped if absent. Both servers index the same SciFact Markdown folder (written by benchmarks.scifact),
are started over stdio, and receive the 300 test queries through their search tool (20 results, the most mcp-docs accepts over MCP): the
tool's default query, and for markdown-vault-mcp also the words joined with OR (its default ANDs the terms).
Reported: nDCG@10 / Recall@20, queries with no result, time from start until every file is indexed
(cold index build included) and search latency p50/p95 through stdio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import sys
import time
from pathlib import Path

from .common import CACHE, SHARED_BENCH, percentiles, table, write_results
from .scifact import evaluate, load_beir, recall_at_k, write_markdown

LIMIT = 20  # mcp-docs' search_documents accepts 1-20 results over MCP
PROBE = "cerebral white matter diffusion"


def _ids_mcp_docs(result) -> list[str]:
    sc = result.structured_content or {}
    return [r["id"].removesuffix(".md") for r in sc.get("results", [])]


def _ids_mvm(result) -> list[str]:
    sc = result.structured_content or {}
    items = sc.get("result", sc if isinstance(sc, list) else [])
    out = []
    for r in items or []:
        path = r.get("path", "") if isinstance(r, dict) else ""
        out.append(Path(path).name.removesuffix(".md"))
    return out


async def _count_mcp_docs(client) -> int:
    r = await client.call_tool("search_documents", {"query": "cell", "max_results": 1, "mode": "keyword"})
    return int(((r.structured_content or {}).get("index") or {}).get("documents", 0))


async def _count_mvm(client) -> int:
    r = await client.call_tool("stats", {})
    return int((r.structured_content or {}).get("document_count", 0))


async def run_server(
    params, tool: str, make_args, parse, queries: dict[str, str], count, files: int, probe: str
) -> dict[str, object]:
    """Start the server, wait until it has indexed every file and a probe search is stable, then query."""
    from mcp import Client

    t0 = time.perf_counter()
    run: dict[str, list[str]] = {}
    lat = []
    async with Client(params, read_timeout_seconds=600) as client:
        last, same = None, 0
        while time.perf_counter() - t0 < 600:
            n = await count(client)
            r = await client.call_tool(tool, make_args(probe))
            ids = parse(r)
            same = same + 1 if (ids and ids == last and n >= files) else 0
            last = ids
            if same >= 2:
                break
            await asyncio.sleep(0.25)
        ready = time.perf_counter() - t0
        for qid, text in queries.items():
            t1 = time.perf_counter()
            r = await client.call_tool(tool, make_args(text))
            lat.append((time.perf_counter() - t1) * 1000)
            run[qid] = [] if r.is_error else parse(r)
    return {"run": run, "start_to_ready_s": round(ready, 2), "latency_ms": percentiles(lat)}


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=SHARED_BENCH / "scifact")
    ap.add_argument("--work-dir", type=Path, default=CACHE / "scifact-md")
    ap.add_argument("--mvm", default=None, help="markdown-vault-mcp executable")
    ap.add_argument("--queries", type=int, default=300)
    args = ap.parse_args(argv)

    from mcp import StdioServerParameters

    corpus, queries, qrels = load_beir(args.data)
    write_markdown(corpus, args.work_dir)
    queries = dict(list(queries.items())[: args.queries])
    qrels = {q: qrels[q] for q in queries}
    systems: dict[str, dict] = {}

    idx = CACHE / "sbs-mcp-docs-index"
    shutil.rmtree(idx, ignore_errors=True)
    params = StdioServerParameters(
        command=sys.executable,
        env=dict(os.environ),
        args=[
            "-m",
            "mcp_docs",
            "serve",
            "--root",
            str(args.work_dir),
            "--index-dir",
            str(idx),
            "--embeddings",
            "none",
            "--no-watch",
        ],
    )
    systems["mcp-docs keyword"] = asyncio.run(
        run_server(
            params,
            "search_documents",
            lambda q: {"query": q, "max_results": LIMIT, "mode": "keyword"},
            _ids_mcp_docs,
            queries,
            _count_mcp_docs,
            len(corpus),
            PROBE,
        )
    )

    mvm = (
        args.mvm
        or shutil.which("markdown-vault-mcp")
        or ("/tmp/mvm-venv/bin/markdown-vault-mcp" if Path("/tmp/mvm-venv/bin/markdown-vault-mcp").exists() else None)
    )
    if mvm:
        for label, make in (
            ("markdown-vault-mcp keyword (default)", lambda q: {"query": q, "limit": LIMIT, "mode": "keyword"}),
            (
                "markdown-vault-mcp keyword, words OR-ed",
                lambda q: {"query": " OR ".join(re.findall(r"[^\W_]+", q)), "limit": LIMIT, "mode": "keyword"},
            ),
        ):
            state = CACHE / "sbs-mvm"
            shutil.rmtree(state, ignore_errors=True)
            state.mkdir(parents=True)
            env = dict(
                os.environ,
                MARKDOWN_VAULT_MCP_SOURCE_DIR=str(args.work_dir),
                MARKDOWN_VAULT_MCP_INDEX_PATH=str(state / "index.db"),
                MARKDOWN_VAULT_MCP_READ_ONLY="true",
                MARKDOWN_VAULT_MCP_FILE_WATCHER="false",
            )
            p = StdioServerParameters(command=mvm, args=["serve"], env=env)
            try:
                systems[label] = asyncio.run(
                    run_server(p, "search", make, _ids_mvm, queries, _count_mvm, len(corpus), PROBE)
                )
            except Exception as exc:  # a peer failing is a finding, not a crash of the benchmark
                print(f"{label}: failed ({type(exc).__name__}: {exc})")
    else:
        print("markdown-vault-mcp not installed: skipped")

    rows, payload = [], {}
    for name, r in systems.items():
        m = evaluate(r["run"], qrels)
        m.pop("recall@100")
        m["recall@20"] = round(sum(recall_at_k(r["run"].get(q, []), qrels[q], 20) for q in qrels) / len(qrels), 4)
        payload[name] = {**m, "start_to_ready_s": r["start_to_ready_s"], "latency_ms": r["latency_ms"]}
        rows.append(
            [
                name,
                m["ndcg@10"],
                m["recall@20"],
                m["empty_queries"],
                r["start_to_ready_s"],
                r["latency_ms"].get("p50"),
                r["latency_ms"].get("p95"),
            ]
        )
    table(
        ["system (stdio MCP)", "nDCG@10", "R@20", "empty", "start→all indexed s", "search p50 ms", "p95 ms"],
        rows,
        title=f"SciFact through MCP stdio, same run ({len(queries)} queries, {LIMIT} results)",
    )
    write_results("side_by_side", {"systems": payload})
    return payload


if __name__ == "__main__":
    main()
