"""Freshness through the running server: from saving a file to the change being searchable over MCP stdio.

    python -m benchmarks.freshness [--corpora otel,synth-10000] [--trials 5]

The server runs as a user starts it (`python -m mcp_docs serve --root R --index-dir I --embeddings none`,
watcher on). For each trial a file is edited (a new unique word appended) or a new file is created, and
`search_documents` is polled every 20 ms over stdio until that file is the top result. The time includes
the watcher's debounce (mcp_docs.watch.DEBOUNCE_MS), the sync and the poll period.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from pathlib import Path

from .common import CACHE, Skip, percentiles, table, write_results
from .indexing import prepare_corpus

POLL_S = 0.02
TIMEOUT_S = 30.0


async def _until_found(client, word: str, doc_id: str) -> float:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < TIMEOUT_S:
        r = await client.call_tool("search_documents", {"query": word, "max_results": 1, "mode": "keyword"})
        results = (r.structured_content or {}).get("results", [])
        if results and results[0]["id"] == doc_id:
            return time.perf_counter() - t0
        await asyncio.sleep(POLL_S)
    return float("nan")


async def measure(root: Path, index_dir: Path, trials: int) -> dict[str, object]:
    from mcp import Client, StdioServerParameters

    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    lib = Library(Settings.load(root, index_dir, embeddings="none"))
    lib.sync()
    lib.close()
    files = sorted(root.rglob("*.md"))
    target = files[len(files) // 3]
    rel = target.relative_to(root).as_posix()
    original = target.read_bytes()
    new_dir = root / "zz-bench-fresh"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_docs", "serve", "--root", str(root), "--index-dir", str(index_dir), "--embeddings", "none"],
        env=dict(os.environ),
    )
    edit, create = [], []
    async with Client(params) as client:
        await client.list_tools()
        await asyncio.sleep(1.0)  # let the watcher start
        try:
            for i in range(trials):
                word = f"zqedit{i}x{random.randint(0, 10**6)}"
                t0 = time.perf_counter()
                target.write_bytes(original + f"\n\nEdited with {word}.\n".encode())
                await _until_found(client, word, rel)
                edit.append((time.perf_counter() - t0) * 1000)
                word = f"zqnew{i}x{random.randint(0, 10**6)}"
                new_dir.mkdir(exist_ok=True)
                new = new_dir / f"fresh-{i}.md"
                t0 = time.perf_counter()
                new.write_text(f"# New note {i}\n\nCreated with {word}.\n", encoding="utf-8")
                await _until_found(client, word, new.relative_to(root).as_posix())
                create.append((time.perf_counter() - t0) * 1000)
                await asyncio.sleep(0.5)
        finally:
            target.write_bytes(original)
            if new_dir.exists():
                for p in new_dir.iterdir():
                    p.unlink()
                new_dir.rmdir()
            await asyncio.sleep(1.0)
    return {
        "files": len(files),
        "edit_ms": percentiles(edit),
        "create_ms": percentiles(create),
        "poll_ms": POLL_S * 1000,
    }


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", default="otel,synth-10000")
    ap.add_argument("--trials", type=int, default=5)
    args = ap.parse_args(argv)
    results, rows = {}, []
    for name in [c for c in args.corpora.split(",") if c]:
        try:
            root = prepare_corpus(name)
        except Skip as exc:
            print(f"{name}: skipped ({exc})")
            continue
        r = asyncio.run(measure(root, CACHE / f"fresh-idx-{name}", args.trials))
        results[name] = r
        rows.append(
            [name, r["files"], r["edit_ms"]["p50"], r["edit_ms"]["max"], r["create_ms"]["p50"], r["create_ms"]["max"]]
        )
    table(
        ["corpus", "files", "edit→searchable p50 ms", "max ms", "new file→searchable p50 ms", "max ms"],
        rows,
        title="Freshness through the running server (watcher, stdio, keyword)",
    )
    write_results("freshness", {"corpora": results})
    return results


if __name__ == "__main__":
    main()
