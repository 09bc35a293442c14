"""What connections that never finish a request do to `mcp-docs serve --transport http` (Linux: reads /proc).

Starts the server on ROOT, opens CONNECTIONS connections that each send half a request head and hold it, then
reports the server's open file descriptors, whether a real MCP client is answered meanwhile (and how), and how
much the server wrote to stderr; then, with one request body left half-sent, how long SIGTERM takes to stop it.

    python benchmarks/connection_flood.py ROOT [--connections 6000] [--server-fd-limit 4096] [--hold 5]

The server runs with --server-fd-limit descriptors; the flood, with this process's hard limit (`ulimit -Hn`).
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

HALF_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
HALF_BODY = HALF_HEAD + b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def client_call(port: int) -> str:
    async def call() -> str:
        started = time.perf_counter()
        try:
            with anyio.fail_after(15):
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    result = await client.call_tool("list_documents", {"limit": 1})
            outcome = "error result" if result.is_error else "answered"
        except BaseException as exc:  # the outcome is the measurement
            outcome = f"failed ({type(exc).__name__})"
        return f"{outcome} in {time.perf_counter() - started:.2f} s"

    return anyio.run(call)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--connections", type=int, default=6000)
    parser.add_argument("--server-fd-limit", type=int, default=4096, help="the server's RLIMIT_NOFILE")
    parser.add_argument("--hold", type=float, default=5.0, help="seconds the flood is held before measuring")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        err_path = Path(tmp) / "stderr"
        with err_path.open("wb") as err:
            cmd = [sys.executable, "-m", "mcp_docs", "serve", "--root", str(args.root), "--index-dir", tmp + "/idx"]
            cmd += ["--embeddings", "none", "--no-watch", "--transport", "http", "--port", str(port)]
            limit = args.server_fd_limit

            def limited() -> None:  # the same limit wherever this runs (the usual default is 1024)
                resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

            server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=limited)
            try:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and "answered" not in client_call(port):
                    time.sleep(0.2)
                print(f"server descriptor limit {args.server_fd_limit}; client before the flood: {client_call(port)}")
                held: list[socket.socket] = []
                started = time.perf_counter()
                for _ in range(args.connections):
                    try:
                        sock = socket.create_connection(("127.0.0.1", port), timeout=2)
                        sock.sendall(HALF_HEAD)
                        held.append(sock)
                    except OSError:
                        break
                print(f"{len(held)} half-sent connections opened in {time.perf_counter() - started:.1f} s")
                time.sleep(args.hold)
                fds = len(os.listdir(f"/proc/{server.pid}/fd"))
                print(f"during the flood: server holds {fds} descriptors; client {client_call(port)}")
                for sock in held:
                    sock.close()
                time.sleep(1)
                print(f"after the flood: client {client_call(port)}; server stderr {err_path.stat().st_size:,} bytes")
                half = socket.create_connection(("127.0.0.1", port))
                half.sendall(HALF_BODY)
                time.sleep(0.3)
                stopping = time.perf_counter()
                server.send_signal(signal.SIGTERM)
                try:
                    server.wait(60)
                    print(f"SIGTERM with a half-sent body: stopped in {time.perf_counter() - stopping:.2f} s")
                except subprocess.TimeoutExpired:
                    print("SIGTERM with a half-sent body: still running after 60 s")
                half.close()
            finally:
                if server.poll() is None:
                    server.kill()
                    server.wait()
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


if __name__ == "__main__":
    main()
