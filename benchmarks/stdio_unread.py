"""What a stdio server holds for a client that writes requests and never reads stdout (issue 26).

    cd /tmp && /usr/bin/time -v python /path/to/benchmarks/stdio_unread.py [--tree SRC] [--calls 1500]

Starts `python -m mcp_docs serve` over stdio on a one-note vault (a 48 KB note, so each read_document reply is
~100 KB: its text twice, as text and structured content), sends `--calls` read_document calls without reading a
reply, waits until the server neither takes requests nor uses CPU for 3 s, then prints how many requests it
took and its resident memory, and kills it. `--tree` runs another source tree (e.g. a checkout of the code
before the change) through PYTHONPATH: run from a folder without an `mcp_docs` package (python -m puts the
current folder first on the path).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def rss_kb(pid: int) -> int:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", help="source tree to run (its mcp_docs package), through PYTHONPATH")
    parser.add_argument("--calls", type=int, default=1500)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="stdio-unread-"))
    (base / "vault").mkdir()
    line = "Line {}: the quarterly backup drill restores every volume in turn.\n"
    (base / "vault" / "big.md").write_text("# Big\n\n" + "".join(line.format(i) for i in range(700)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_DOCS_")}
    if args.tree:
        env["PYTHONPATH"] = args.tree
    command = [sys.executable, "-m", "mcp_docs", "serve", "--root", str(base / "vault"), "--index-dir"]
    command += [str(base / "index"), "--embeddings", "none", "--no-watch"]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
    proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}) + "\n").encode())
    proc.stdin.flush()
    proc.stdout.readline()  # the only reply this client reads
    proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    proc.stdin.flush()
    before = rss_kb(proc.pid)
    written = 0

    def write() -> None:
        nonlocal written
        assert proc.stdin is not None
        call = {"name": "read_document", "arguments": {"id": "big.md", "max_chars": 50000}}
        try:
            for i in range(args.calls):
                message = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": call}
                proc.stdin.write((json.dumps(message) + "\n").encode())
                proc.stdin.flush()
                written += 1
        except OSError:
            return

    threading.Thread(target=write, daemon=True).start()
    last, busy, still, end = -1, -1, 0, time.monotonic() + 120
    while time.monotonic() < end and written < args.calls and still < 3:
        time.sleep(1)
        now = cpu_ticks(proc.pid)
        still = still + 1 if (written, now) == (last, busy) else 0
        last, busy = written, now
    time.sleep(2)
    after = rss_kb(proc.pid)
    print(
        f"requests taken {written} of {args.calls}; server RSS {before // 1024} MB after initialize, {after // 1024} MB at the end"
    )
    proc.kill()
    proc.wait()


if __name__ == "__main__":
    main()
