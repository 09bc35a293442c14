"""Shared helpers for the benchmarks: data locations, tables, JSON results, timing, peak memory."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO / "benchmarks" / "results"
DATA_DIR = REPO / "benchmarks" / "data"
# External data lives beside the repository and is never copied into it (see its NOTICE.md files).
SHARED_BENCH = Path(os.environ.get("MCP_DOCS_BENCH_DATA", REPO.parent / "shared" / "bench"))
if not SHARED_BENCH.exists() and Path("/work/shared/bench").exists():
    SHARED_BENCH = Path("/work/shared/bench")
CACHE = Path(os.environ.get("MCP_DOCS_BENCH_CACHE", "/tmp/mcp-docs-bench"))


class Skip(Exception):
    """Raised when a benchmark's external data is missing: the runner reports it and moves on."""


def run_script(main) -> None:  # type: ignore[no-untyped-def]
    """Entry point of a benchmark script: missing data is a clean skip (exit 0), not a traceback."""
    try:
        main()
    except Skip as exc:
        print(f"skipped: {exc}")
        sys.exit(0)


def require(path: Path, what: str) -> Path:
    if not path.exists():
        raise Skip(f"{what} not found at {path} (pass a path argument or set MCP_DOCS_BENCH_DATA)")
    return path


def machine() -> dict[str, object]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor()
    try:
        import psutil

        mem = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:  # pragma: no cover
        mem = None
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "memory_gib": mem,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "commit": _git_commit(),
    }


def _git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def write_results(name: str, payload: dict[str, object]) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": name, "machine": machine(), **payload}
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    print(f"\nresults written to {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    return path


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], title: str | None = None) -> str:
    rows = [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in rows)) if rows else len(str(h)) for i, h in enumerate(headers)]
    lines = []
    if title:
        lines.append(f"\n## {title}\n")
    lines.append("| " + " | ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=False)) + " |")
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + " |")
    text = "\n".join(lines)
    print(text)
    return text


def _fmt(value: object) -> str:
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 100:
            return f"{value:.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.3f}"
    return str(value)


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    if not samples_ms:
        return {"n": 0}
    s = sorted(samples_ms)

    def pct(p: float) -> float:
        k = (len(s) - 1) * p
        lo = int(k)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (k - lo)

    return {
        "n": len(s),
        "p50": round(pct(0.50), 3),
        "p95": round(pct(0.95), 3),
        "p99": round(pct(0.99), 3),
        "mean": round(statistics.fmean(s), 3),
        "max": round(s[-1], 3),
    }


class Timer:
    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


def peak_rss_mb() -> float:
    """Peak resident memory of this process (Linux: ru_maxrss is in KiB)."""
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(rss / 1024 if sys.platform != "darwin" else rss / 2**20, 1)


def dir_size_mb(path: Path) -> float:
    total = 0
    for p in path.rglob("*"):
        try:
            if p.is_file():
                total += p.stat().st_size
        except OSError:
            pass
    return round(total / 2**20, 2)


def run_child(module: str, args: Sequence[str], timeout: float = 3600) -> dict[str, object]:
    """Run `python -m module args` in a fresh process (honest peak RSS) and parse its last JSON line."""
    proc = subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=timeout, cwd=str(REPO)
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{module} {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    for line in reversed(proc.stdout.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"{module} printed no JSON line:\n{proc.stdout[-2000:]}")
