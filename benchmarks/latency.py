"""Tool latency in-process, through MCP over stdio and over Streamable HTTP (1 and 16 concurrent clients).

    python -m benchmarks.latency [--sizes 1000,10000] [--calls 200] [--concurrency 16] [--corpora otel]

For each corpus (synthetic vaults of N files from benchmarks.synth, or `otel`), the index is built first,
then the server is started as a user would (`python -m mcp_docs serve --root R --index-dir I
--embeddings none --no-watch [--transport http --port P]`) and driven with `mcp.Client`. Measured per tool:
search_documents (keyword, 5 results), read_section (a section the search returned) and read_document
(outline). A bm25s whole-file index of the same corpus gives the baseline query latency in-process.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

from .common import CACHE, Skip, percentiles, table, write_results
from .indexing import _queries_for, prepare_corpus


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve_args(root: Path, index_dir: Path) -> list[str]:
    return [
        "-m",
        "mcp_docs",
        "serve",
        "--root",
        str(root),
        "--index-dir",
        str(index_dir),
        "--embeddings",
        "none",
        "--no-watch",
    ]


def _workload(lib, queries: list[str], calls: int) -> list[tuple[str, dict]]:
    """A fixed mixed list of tool calls: each search is followed by a read_section and an outline read."""
    ops: list[tuple[str, dict]] = []
    rng = random.Random(5)
    while len(ops) < calls * 3:
        q = rng.choice(queries)
        res = lib.search(q, max_results=5, mode="keyword")
        ops.append(("search_documents", {"query": q, "max_results": 5, "mode": "keyword"}))
        if res.results and res.results[0].sections:
            top = res.results[0]
            ops.append(("read_section", {"id": top.id, "section": top.sections[0].heading_path}))
            ops.append(("read_document", {"id": top.id, "mode": "outline"}))
    return ops


def in_process(lib, ops) -> dict[str, dict]:
    from mcp_docs.tools import DocsTools

    tools = DocsTools(lib)
    lat: dict[str, list[float]] = {}
    for name, kw in ops[:30]:
        getattr(tools, name)(**kw)
    for name, kw in ops:
        t0 = time.perf_counter()
        getattr(tools, name)(**kw)
        lat.setdefault(name, []).append((time.perf_counter() - t0) * 1000)
    return {k: percentiles(v) for k, v in lat.items()}


async def _drive(client, ops, lat: dict[str, list[float]]) -> int:
    errors = 0
    for name, kw in ops:
        t0 = time.perf_counter()
        r = await client.call_tool(name, kw)
        lat.setdefault(name, []).append((time.perf_counter() - t0) * 1000)
        errors += int(bool(r.is_error))
    return errors


async def over_stdio(root: Path, index_dir: Path, ops) -> dict[str, object]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=_serve_args(root, index_dir), env=dict(os.environ))
    t0 = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        startup = (time.perf_counter() - t0) * 1000
        await _drive(client, ops[:30], {})
        lat: dict[str, list[float]] = {}
        errors = await _drive(client, ops, lat)
    return {"startup_ms": round(startup, 1), "errors": errors, **{k: percentiles(v) for k, v in lat.items()}}


async def over_http(root: Path, index_dir: Path, ops, concurrency: int) -> dict[str, object]:
    from mcp import Client

    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, *_serve_args(root, index_dir), "--transport", "http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.time() + 120
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError as exc:
                if time.time() > deadline or proc.poll() is not None:
                    raise RuntimeError("HTTP server did not start") from exc
                await asyncio.sleep(0.1)
        out: dict[str, object] = {}
        async with Client(url) as client:
            await _drive(client, ops[:30], {})
            lat: dict[str, list[float]] = {}
            errors = await _drive(client, ops, lat)
        out["single"] = {"errors": errors, **{k: percentiles(v) for k, v in lat.items()}}
        # concurrent clients, each with its own session, searches only
        searches = [o for o in ops if o[0] == "search_documents"]
        lat_c: dict[str, list[float]] = {}

        async def one(i: int) -> int:
            async with Client(url) as c:
                return await _drive(c, searches[i::concurrency], lat_c)

        t0 = time.perf_counter()
        errs = await asyncio.gather(*(one(i) for i in range(concurrency)))
        wall = time.perf_counter() - t0
        n = sum(len(v) for v in lat_c.values())
        out["concurrent"] = {
            "clients": concurrency,
            "calls": n,
            "errors": sum(errs),
            "seconds": round(wall, 2),
            "throughput_per_s": round(n / wall, 1),
            **percentiles(lat_c.get("search_documents", [])),
        }
        return out
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def bm25s_latency(root: Path, queries: list[str]) -> dict[str, float]:
    import bm25s

    try:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
    except ImportError:
        stemmer = None
    files = sorted(root.rglob("*.md"))
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in files]
    t0 = time.perf_counter()
    r = bm25s.BM25()
    r.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    index_s = time.perf_counter() - t0
    lat = []
    for q in queries:
        t0 = time.perf_counter()
        r.retrieve(bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False), k=5, show_progress=False)
        lat.append((time.perf_counter() - t0) * 1000)
    return {"index_s": round(index_s, 2), **percentiles(lat)}


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000", help="synthetic vault sizes")
    ap.add_argument("--corpora", default="", help="extra corpora, e.g. otel")
    ap.add_argument("--calls", type=int, default=200, help="searches per transport (each with 2 reads)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args(argv)

    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    names = [f"synth-{n}" for n in args.sizes.split(",") if n] + [c for c in args.corpora.split(",") if c]
    results: dict[str, dict] = {}
    rows = []
    for name in names:
        try:
            root = prepare_corpus(name)
        except Skip as exc:
            print(f"{name}: skipped ({exc})")
            continue
        index_dir = CACHE / f"lat-idx-{name}"
        lib = Library(Settings.load(root, index_dir, embeddings="none"))
        lib.sync()
        queries = _queries_for(name, root)
        ops = _workload(lib, queries, args.calls)
        r: dict[str, object] = {"files": lib.catalog.count(), "in_process": in_process(lib, ops)}
        lib.close()
        r["stdio"] = asyncio.run(over_stdio(root, index_dir, ops))
        r["http"] = asyncio.run(over_http(root, index_dir, ops, args.concurrency))
        if not args.no_baseline:
            r["bm25s_in_process"] = bm25s_latency(root, queries)
        results[name] = r
        for transport in ("in_process", "stdio"):
            for tool in ("search_documents", "read_section", "read_document"):
                p = r[transport].get(tool, {})  # type: ignore[union-attr]
                rows.append([name, transport, tool, p.get("p50"), p.get("p95"), p.get("p99")])
        for tool in ("search_documents", "read_section", "read_document"):
            p = r["http"]["single"].get(tool, {})  # type: ignore[index]
            rows.append([name, "http", tool, p.get("p50"), p.get("p95"), p.get("p99")])
        c = r["http"]["concurrent"]  # type: ignore[index]
        rows.append(
            [
                name,
                f"http x{c['clients']} clients",
                f"search ({c['throughput_per_s']}/s)",
                c.get("p50"),
                c.get("p95"),
                c.get("p99"),
            ]
        )
        if "bm25s_in_process" in r:
            b = r["bm25s_in_process"]
            rows.append([name, "bm25s in-process", "query top-5", b.get("p50"), b.get("p95"), b.get("p99")])
        print(f"{name} done", flush=True)
    table(["corpus", "transport", "tool", "p50 ms", "p95 ms", "p99 ms"], rows, title="Tool latency")
    suffix = "" if (args.sizes, args.corpora) == ("1000,10000", "") else "-" + "-".join(names)
    write_results("latency" + suffix, {"corpora": results, "calls": args.calls})
    return results


if __name__ == "__main__":
    main()
