"""Search throughput over Streamable HTTP with concurrent clients, two server builds side by side.

    mkdir /tmp/mcp-docs-base && git archive <old commit> | tar -x -C /tmp/mcp-docs-base   # the baseline
    python -m benchmarks.http_throughput --root DOCS --baseline-src /tmp/mcp-docs-base [--workers 2]
        [--baseline-workers 1] [--clients 16] [--seconds 15] [--rounds 3] [--mode keyword]

Each build gets its own index (built first with its own `mcp-docs index`) and runs as a real
`mcp-docs serve --transport http` process, with `--workers N` when N > 1 (the baseline with
`--baseline-workers`, by default the same N). The clients run in a separate process
(`... http_throughput load URL`, raw HTTP/1.1 over keep-alive connections, see `RawHttp`), which reports
its own CPU per search; each client opens its own connection, does the session-based
handshake (initialize; the session id is used if the server gives one), then calls `search_documents`
with the OpenTelemetry questions in turn, as fast as the server answers. Rounds alternate baseline and new,
so both see the same machine; the figures are searches per second, latency p50/p95, and errors, per round,
and the ratio new/baseline per round; with workers, `connections_per_worker` is how many of the clients'
connections each worker held in the middle of the round ([8, 8] even, [16] all on one worker), and
`busiest_worker_cpu_share` the busiest worker's part of the server's CPU; `server_cores_used` and
`server_cores_waited` are the cores the server's threads ran on and the cores' worth of them that were ready
but waited for a CPU (a loaded machine shows there, not in the rate alone).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2

from .http_sessions import free_port

REPO = Path(__file__).resolve().parents[1]
QUESTIONS = REPO / "benchmarks" / "data" / "otel_questions.jsonl"
VERSION = "2025-11-25"  # the session-based protocol most clients speak today


def _rpc(method: str, params: dict[str, object], id_: int | None = None) -> dict[str, object]:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id_ is not None:
        message["id"] = id_
    return message


class RawHttp:
    """One keep-alive HTTP/1.1 connection, requests written and responses parsed by hand: a full client
    library (httpx) costs the load process more CPU per request than the server's own HTTP stack, and on
    2 cores that CPU is taken from the server being measured."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path or "/"
        self.headers: dict[str, str] = {}  # sent with every request (session id, protocol version)
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def post(self, message: dict[str, object]) -> tuple[int, dict[str, str], bytes]:
        if self._reader is None or self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        body = json.dumps(message).encode()
        head = [
            f"POST {self.path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            "Accept: application/json, text/event-stream",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            *(f"{k}: {v}" for k, v in self.headers.items()),
        ]
        self._writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        reader = self._reader
        status = int((await reader.readline()).split()[1])
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            payload = await reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding") == "chunked":  # an SSE stream: it ends after the one answer
            chunks = []
            while size := int((await reader.readline()).strip() or b"0", 16):
                chunks.append(await reader.readexactly(size))
                await reader.readline()
            await reader.readline()
            payload = b"".join(chunks)
        else:
            raise ValueError(f"a response without a length: {headers}")
        if headers.get("connection") == "close":
            await self.close()
        return status, headers, payload

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._reader = self._writer = None


def _result(headers: dict[str, str], payload: bytes) -> dict[str, object]:
    """The JSON-RPC message of a response, sent as JSON or as one server-sent event."""
    text = payload.decode()
    if headers.get("content-type", "").startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:") and line[5:].strip())
    message: dict[str, object] = json.loads(text)
    return message


async def _client(
    url: str, queries: list[str], offset: int, mode: str, stop_at: float, warm_until: float
) -> tuple[list[float], int, int]:
    latencies: list[float] = []
    errors = total = 0
    http = RawHttp(url)
    _, init_headers, _ = await http.post(
        _rpc(
            "initialize",
            {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
            0,
        )
    )
    http.headers["mcp-protocol-version"] = VERSION
    if "mcp-session-id" in init_headers:
        http.headers["mcp-session-id"] = init_headers["mcp-session-id"]
    await http.post(_rpc("notifications/initialized", {}))
    i = offset
    while (now := time.perf_counter()) < stop_at:
        query = queries[i % len(queries)]
        i += 1
        args = {"query": query, "mode": mode}
        try:
            status, headers, payload = await http.post(
                _rpc("tools/call", {"name": "search_documents", "arguments": args}, i)
            )
            body = _result(headers, payload)
            failed = status != 200 or "error" in body or bool(body["result"].get("isError"))  # type: ignore[attr-defined]
        except (OSError, ValueError, IndexError, StopIteration, asyncio.IncompleteReadError):
            failed = True
            await http.close()
        total += 1
        if now >= warm_until:
            errors += failed
            latencies.append(time.perf_counter() - now)
    await http.close()
    return latencies, errors, total


async def _load(url: str, clients: int, seconds: float, warmup: float, mode: str) -> dict[str, float]:
    queries = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line.strip()]
    start = time.perf_counter()
    warm_until, stop_at = start + warmup, start + warmup + seconds
    cpu = time.process_time()
    runs = await asyncio.gather(*(_client(url, queries, k * 7, mode, stop_at, warm_until) for k in range(clients)))
    cpu = time.process_time() - cpu
    latencies = sorted(t for run, _, _ in runs for t in run)
    with_warmup = sum(n for _, _, n in runs)
    return {
        "searches": len(latencies),
        "errors": sum(e for _, e, _ in runs),
        "with_warmup": with_warmup,
        "per_second": round(len(latencies) / seconds, 1),
        "p50_ms": round(1000 * latencies[len(latencies) // 2], 1) if latencies else 0.0,
        "p95_ms": round(1000 * latencies[int(len(latencies) * 0.95)], 1) if latencies else 0.0,
        # What the clients cost: on a machine whose cores they share with the server, this is taken from it.
        "client_cpu_ms_per_search": round(1000 * cpu / max(1, with_warmup), 2),
    }


def _env(src: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_DOCS_")}
    env["PYTHONPATH"] = str(src)
    return env


def _ready(base: str, workers: int) -> bool:
    """Reconciled, and (with workers) every worker answering: /health over fresh connections."""
    pids = set()
    for _ in range(8 * workers):
        body = httpx2.get(f"{base}/health", timeout=5, headers={"connection": "close"}).json()
        if body.get("indexing"):
            return False
        pids.add(body.get("worker", {}).get("pid"))
    return len(pids) >= workers


def _serve(src: Path, root: Path, index: Path, extra: list[str], workers: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    args = ["serve", "--transport", "http", "--port", str(port), "--no-watch", *extra]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcp_docs",
            *args,
            "--root",
            str(root),
            "--index-dir",
            str(index),
            "--embeddings",
            "none",
        ],
        env=_env(src),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if _ready(base, workers):
                return proc, f"{base}/mcp"
        except httpx2.HTTPError:
            pass
        time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"the server from {src} did not start")


def _cpu_seconds(pid: int) -> dict[int, float]:
    """User + system CPU of a process and of each of its children (the workers), from /proc (Linux)."""
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    cpu: dict[int, float] = {}
    for p in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            cpu[p] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return cpu


def _scheduler_seconds(pid: int) -> tuple[float, float]:
    """Seconds the threads of a process and its children ran on a CPU, and waited for one while runnable
    (/proc/PID/task/TID/schedstat, Linux): the second is what a busy machine takes from the server."""
    pids = [str(pid), *Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    ran = waited = 0
    for p in pids:
        for stat in Path(f"/proc/{p}/task").glob("*/schedstat"):
            with contextlib.suppress(OSError, ValueError):
                on_cpu, on_queue, _ = stat.read_text().split()
                ran, waited = ran + int(on_cpu), waited + int(on_queue)
    return ran / 1e9, waited / 1e9


def _connections_per_worker(pid: int, port: int) -> list[int]:
    """Established connections on `port` held by each child of `pid` (the workers), most first, from /proc (Linux):
    the socket inodes of each worker's open files, matched with the kernel's TCP table."""
    established: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[1].endswith(f":{port:04X}") and fields[3] == "01":
                    established.add(fields[9])
    counts = []
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        held = 0
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{child}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    held += target.startswith("socket:[") and target[8:-1] in established
        counts.append(held)
    return sorted((c for c in counts if c), reverse=True)


def _round(src: Path, root: Path, index: Path, workers: int, args: argparse.Namespace) -> dict[str, Any]:
    proc, url = _serve(src, root, index, ["--workers", str(workers)] if workers > 1 else [], workers)
    try:
        time.sleep(args.settle)
        load = [sys.executable, "-m", "benchmarks.http_throughput", "load", url]
        load += ["--clients", str(args.clients), "--seconds", str(args.seconds), "--mode", args.mode]
        before, sched, started = _cpu_seconds(proc.pid), _scheduler_seconds(proc.pid), time.perf_counter()
        client = subprocess.Popen(load, env=_env(REPO), stdout=subprocess.PIPE, text=True)
        held: list[int] = []
        if workers > 1:  # which worker holds each client's connection, in the middle of the load
            time.sleep(2.0 + args.seconds / 2)
            held = _connections_per_worker(proc.pid, int(urlsplit(url).port or 80))
        out, _ = client.communicate()
        if client.returncode:
            raise SystemExit(f"the load process failed with status {client.returncode}")
        used = {p: t - before.get(p, 0.0) for p, t in _cpu_seconds(proc.pid).items()}
        ran, waited = (now - then for now, then in zip(_scheduler_seconds(proc.pid), sched, strict=True))
        wall = time.perf_counter() - started
        result: dict[str, Any] = json.loads(out)
        # The server's CPU per search: what a busy machine changes least.
        result["server_cpu_ms_per_search"] = round(1000 * sum(used.values()) / max(1, result.pop("with_warmup")), 1)
        # Cores the server ran on, and cores' worth of its threads that were ready to run but waited for a CPU:
        # on an idle 2-core machine the second stays small; when it exceeds the first, the neighbours set the rate.
        result["server_cores_used"] = round(ran / wall, 2)
        result["server_cores_waited"] = round(waited / wall, 2)
        if workers > 1:  # how the workers shared the clients: [8, 8] is even, [16] is one worker doing it all
            result["connections_per_worker"] = held
            busiest = max(t for p, t in used.items() if p != proc.pid)
            result["busiest_worker_cpu_share"] = round(busiest / max(1e-9, sum(used.values())), 2)
        return result
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    load = sub.add_parser("load", help="the client process: load one server, print one JSON object")
    load.add_argument("url")
    for p in (parser, load):
        p.add_argument("--clients", type=int, default=16)
        p.add_argument("--seconds", type=float, default=15.0)
        p.add_argument("--mode", default="keyword")
    parser.add_argument("--root", type=Path, default=Path("/work/shared/bench/otel-docs/en"))
    parser.add_argument("--baseline-src", type=Path, required=False, help="checkout of the old commit")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--baseline-workers", type=int, default=None, help="default: --workers")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=float, default=2.0, help="seconds between readiness and the load")
    args = parser.parse_args()
    if args.command == "load":
        print(json.dumps(asyncio.run(_load(args.url, args.clients, args.seconds, 2.0, args.mode))))
        return
    variants = [("new", REPO, args.workers)]
    if args.baseline_src:
        variants.insert(0, ("baseline", args.baseline_src.resolve(), args.baseline_workers or args.workers))
    with tempfile.TemporaryDirectory() as tmp:
        for name, src, _ in variants:
            index = Path(tmp) / name
            cmd = [sys.executable, "-m", "mcp_docs", "index", "--root", str(args.root), "--index-dir", str(index)]
            subprocess.run([*cmd, "--embeddings", "none"], env=_env(src), check=True, capture_output=True)
        rows: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in variants}
        for r in range(args.rounds):
            for name, src, workers in variants:
                result = _round(src, args.root, Path(tmp) / name, workers, args)
                rows[name].append(result)
                print(f"round {r + 1} {name:8s} {json.dumps(result)}", flush=True)
        for name, results in rows.items():
            rates = [x["per_second"] for x in results]
            p95 = [x["p95_ms"] for x in results]
            print(f"{name:8s} searches/s median {statistics.median(rates)}, p95 median {statistics.median(p95)} ms")
        if "baseline" in rows:
            ratios = [n["per_second"] / b["per_second"] for n, b in zip(rows["new"], rows["baseline"], strict=True)]
            print(f"ratio new/baseline per round: {', '.join(f'{x:.2f}' for x in ratios)}")
            _print_rounds(rows["baseline"], rows["new"])


def _print_rounds(baseline: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    """Every round in one line each, as REPORT.md's tables want them: a target "in every round" is judged on
    its worst round, which a median hides."""
    print("round | baseline /s | new /s | ratio | p95 baseline / new ms | connections per worker new (baseline)")
    for r, (b, n) in enumerate(zip(baseline, new, strict=True), 1):
        split = n.get("connections_per_worker", "-"), b.get("connections_per_worker", "-")
        print(
            f"{r} | {b['per_second']} | {n['per_second']} | {n['per_second'] / b['per_second']:.2f} | "
            f"{b['p95_ms']} / {n['p95_ms']} | {split[0]} ({split[1]})"
        )


if __name__ == "__main__":
    main()
