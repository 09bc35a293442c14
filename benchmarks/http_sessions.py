"""Memory of abandoned Streamable HTTP sessions: N `initialize` requests, never a DELETE.

    python -m benchmarks.http_sessions [--sessions 10000] [--concurrency 8]

A real `mcp-docs serve --transport http` process on 127.0.0.1 (tiny vault, no embeddings) with the
settings of the environment (MCP_DOCS_MAX_SESSIONS, MCP_DOCS_SESSION_IDLE_SECONDS). Reports the server's
resident memory (VmRSS from /proc) before and after, and the live session count from /health.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def open_sessions(base: str, n: int, concurrency: int) -> dict[int, int]:
    statuses: dict[int, int] = {}
    todo = iter(range(n))

    async def worker(client: httpx2.AsyncClient) -> None:
        for _ in todo:
            r = await client.post(f"{base}/mcp", json=INIT, headers=HEADERS)
            statuses[r.status_code] = statuses.get(r.status_code, 0) + 1

    async with httpx2.AsyncClient(timeout=30) as client:
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
    return statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        root.mkdir()
        for i in range(20):
            (root / f"note{i}.md").write_text(f"# Note {i}\n\nA small note about topic {i}.\n")
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_DOCS_TOKEN")}
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mcp_docs",
                "serve",
                "--root",
                str(root),
                "--index-dir",
                str(Path(tmp) / "idx"),
                "--embeddings",
                "none",
                "--no-watch",
                "--transport",
                "http",
                "--port",
                str(port),
            ],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx2.get(f"{base}/health", timeout=1).status_code == 200:
                        break
                except httpx2.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("server did not start")
                time.sleep(0.1)
            asyncio.run(open_sessions(base, 20, 1))  # warm up the code paths before the baseline
            before = rss_mb(proc.pid)
            started = time.perf_counter()
            statuses = asyncio.run(open_sessions(base, args.sessions, args.concurrency))
            seconds = time.perf_counter() - started
            after = rss_mb(proc.pid)
            health = httpx2.get(f"{base}/health", timeout=30).json()
            print(
                json.dumps(
                    {
                        "sessions_opened": args.sessions,
                        "statuses": statuses,
                        "rss_before_mb": round(before, 1),
                        "rss_after_mb": round(after, 1),
                        "growth_mb": round(after - before, 1),
                        "live_sessions": health.get("sessions"),
                        "seconds": round(seconds, 1),
                    }
                ),
                flush=True,
            )
        finally:
            proc.terminate()
            try:
                proc.wait(60)  # thousands of open sessions take a while to close
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    main()
