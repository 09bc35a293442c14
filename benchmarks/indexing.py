"""Keyword indexing speed, peak memory, freshness and query latency.

    python -m benchmarks.indexing [--corpora scifact,otel] [--synthetic 10000,100000] [--profile]

Each measurement runs in a fresh child process (`--child`), so the peak memory is that of one cold
index build: resident memory of the process tree (the sync uses worker processes for parsing) sampled
every 10 ms with psutil, plus `ru_maxrss` of the process and of its waited-for children.

Per corpus: cold full index (fresh index folder), a no-change re-sync, a one-file change re-indexed
through `Library.sync(paths=[id])` and then found by a search for a new word (freshness), and keyword
query latency (`Library.search`, max_results=5) over the corpus' own questions. Corpora:
- scifact: the 5,183 SciFact abstracts as Markdown (written by benchmarks.scifact into /tmp).
- otel: a copy of ../shared/bench/otel-docs (en + fr, 834 files) in /tmp (the change test needs to write).
- synth-N: a synthetic vault of N files (benchmarks.synth), for growth with corpus size.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import threading
import time
from pathlib import Path

from .common import (
    CACHE,
    SHARED_BENCH,
    Skip,
    dir_size_mb,
    percentiles,
    require,
    run_child,
    table,
    write_results,
)

TARGETS = {"scifact": 3.0, "otel": 2.0}


class TreeRss:
    """Peak RSS of this process plus its children, sampled in a thread."""

    def __init__(self, interval: float = 0.01) -> None:
        import psutil

        self.proc = psutil.Process()
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        total = 0
        try:
            total = self.proc.memory_info().rss
            for child in self.proc.children(recursive=True):
                with contextlib.suppress(Exception):
                    total += child.memory_info().rss
        except Exception:
            return
        self.peak = max(self.peak, total)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> TreeRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    @property
    def peak_mb(self) -> float:
        return round(self.peak / 2**20, 1)


def _queries_for(name: str, root: Path) -> list[str]:
    if name == "scifact":
        path = SHARED_BENCH / "scifact" / "queries.test.jsonl"
        if path.exists():
            return [json.loads(line)["text"] for line in path.read_text().splitlines() if line.strip()]
    if name == "otel":
        from .otel_quality import load_questions

        return [q["question"] for q in load_questions()]
    rng = random.Random(3)
    words = []
    for p in sorted(root.rglob("*.md"))[:50]:
        words += [w for w in p.read_text(encoding="utf-8").split() if w.isalpha() and len(w) > 4][:200]
    return [" ".join(rng.sample(words, rng.randint(2, 6))) for _ in range(200)] if words else ["note"]


def child(args: argparse.Namespace) -> dict[str, object]:
    """One cold index build and the follow-up measurements, in this (fresh) process."""
    import resource

    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    root, index_dir = Path(args.root), Path(args.index_dir)
    if index_dir.exists():
        shutil.rmtree(index_dir)
    out: dict[str, object] = {"name": args.name}
    files = sum(1 for _ in root.rglob("*.md"))
    out["files"] = files
    out["corpus_mb"] = dir_size_mb(root)
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
    cpu0 = os.times()
    with TreeRss() as rss:
        t0 = time.perf_counter()
        lib = Library(Settings.load(root, index_dir, embeddings="none"))
        if profiler:
            profiler.enable()
        report = lib.sync()
        if profiler:
            profiler.disable()
        out["index_s"] = round(time.perf_counter() - t0, 3)
    cpu1 = os.times()
    # CPU seconds of this process and its reaped worker processes: robust to a busy machine.
    out["index_cpu_s"] = round(
        (cpu1.user - cpu0.user)
        + (cpu1.system - cpu0.system)
        + (cpu1.children_user - cpu0.children_user)
        + (cpu1.children_system - cpu0.children_system),
        3,
    )
    out["load_avg_1m"] = round(os.getloadavg()[0], 2)
    out["peak_tree_rss_mb"] = rss.peak_mb
    out["ru_maxrss_self_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    out["ru_maxrss_children_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
    out["added"] = report.added
    out["skipped"] = len(report.skipped)
    out["files_per_s"] = round(files / out["index_s"], 1) if out["index_s"] else None  # type: ignore[operator]
    out["index_mb"] = dir_size_mb(index_dir)
    if profiler:
        import io
        import pstats

        buf = io.StringIO()
        pstats.Stats(profiler, stream=buf).sort_stats("cumulative").print_stats(35)
        prof_path = CACHE / f"profile-{args.name}.txt"
        prof_path.write_text(buf.getvalue())
        out["profile"] = str(prof_path)

    t0 = time.perf_counter()
    lib.sync()
    out["resync_nochange_s"] = round(time.perf_counter() - t0, 3)

    # Freshness: edit one file, re-index just that path, search for the new word.
    if args.writable:
        target = sorted(root.rglob("*.md"))[len(list(root.rglob("*.md"))) // 2]
        rel = target.relative_to(root).as_posix()
        original = target.read_bytes()
        samples, full_samples = [], []
        try:
            for i in range(5):
                word = f"zqxfresh{i}{random.randint(0, 10**6)}"
                target.write_bytes(original + f"\n\nA new line with {word}.\n".encode())
                t0 = time.perf_counter()
                lib.sync([rel])
                found = [r.id for r in lib.search(word, max_results=1, mode="keyword").results]
                samples.append((time.perf_counter() - t0) * 1000)
                assert found == [rel], (found, rel)
                word = f"zqyfull{i}{random.randint(0, 10**6)}"
                target.write_bytes(original + f"\n\nAnother line with {word}.\n".encode())
                t0 = time.perf_counter()
                lib.sync()
                found = [r.id for r in lib.search(word, max_results=1, mode="keyword").results]
                full_samples.append((time.perf_counter() - t0) * 1000)
                assert found == [rel], (found, rel)
        finally:
            target.write_bytes(original)
            lib.sync([rel])
        out["freshness_one_path_ms"] = percentiles(samples)
        out["freshness_full_scan_ms"] = percentiles(full_samples)

    queries = _queries_for(args.name, root)
    for q in queries[:20]:  # warm-up
        lib.search(q, max_results=5, mode="keyword")
    lat = []
    for q in queries:
        t0 = time.perf_counter()
        lib.search(q, max_results=5, mode="keyword")
        lat.append((time.perf_counter() - t0) * 1000)
    out["query_ms"] = percentiles(lat)
    lib.close()
    return out


def prepare_corpus(name: str) -> Path:
    if name == "scifact":
        from .scifact import load_beir, write_markdown

        corpus, _, _ = load_beir(SHARED_BENCH / "scifact")
        write_markdown(corpus, CACHE / "scifact-md")
        return CACHE / "scifact-md"
    if name == "otel":
        src = require(SHARED_BENCH / "otel-docs", "OpenTelemetry docs")
        dst = CACHE / "otel-docs-copy"
        if not dst.exists():
            shutil.copytree(src, dst)
            for p in [dst, *dst.rglob("*")]:
                os.chmod(p, 0o755 if p.is_dir() else 0o644)
        return dst
    if name.startswith("synth-"):
        from .synth import ensure_vault

        n = int(name.split("-", 1)[1])
        dst = CACHE / name
        ensure_vault(dst, n)
        return dst
    raise SystemExit(f"unknown corpus {name}")


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", default="scifact,otel")
    ap.add_argument("--synthetic", default="", help="comma-separated file counts, e.g. 10000,100000")
    ap.add_argument("--profile", action="store_true", help="cProfile the cold sync (written to /tmp)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--name")
    ap.add_argument("--root")
    ap.add_argument("--index-dir")
    ap.add_argument("--writable", action="store_true")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return {}

    names = [c for c in args.corpora.split(",") if c] + [f"synth-{n}" for n in args.synthetic.split(",") if n]
    results = {}
    for name in names:
        try:
            root = prepare_corpus(name)
        except Skip as exc:
            print(f"{name}: skipped ({exc})")
            continue
        child_args = [
            "--child",
            "--name",
            name,
            "--root",
            str(root),
            "--index-dir",
            str(CACHE / f"idx-{name}"),
            "--writable",
        ]
        if args.profile:
            child_args.append("--profile")
        results[name] = run_child("benchmarks.indexing", child_args, timeout=7200)
        print(f"{name}: {json.dumps(results[name])}", flush=True)
    rows = []
    for name, r in results.items():
        rows.append(
            [
                name,
                r["files"],
                r["corpus_mb"],
                r["index_s"],
                r.get("index_cpu_s", "-"),
                r["files_per_s"],
                r["peak_tree_rss_mb"],
                r["index_mb"],
                r["resync_nochange_s"],
                r.get("freshness_one_path_ms", {}).get("p50", "-"),
                r.get("freshness_full_scan_ms", {}).get("p50", "-"),
                r["query_ms"]["p50"],
                r["query_ms"]["p95"],
            ]
        )
    table(
        [
            "corpus",
            "files",
            "MB",
            "index s",
            "CPU s",
            "files/s",
            "peak RSS MB",
            "index MB",
            "no-op resync s",
            "fresh 1 path ms",
            "fresh full scan ms",
            "query p50 ms",
            "query p95 ms",
        ],
        rows,
        title="Keyword indexing (cold, fresh process), freshness and query latency",
    )
    write_results(
        "indexing" + ("-" + "-".join(names) if args.synthetic else ""), {"corpora": results, "targets_s": TARGETS}
    )
    return results


if __name__ == "__main__":
    main()
