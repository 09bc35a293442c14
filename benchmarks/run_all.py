"""Run every benchmark in turn and write benchmarks/results/*.json.

    python -m benchmarks.run_all [--quick] [--with-100k]

--quick: SciFact + OTel quality, token economy, indexing of SciFact/OTel, latency at 1k files (minutes).
Default adds the 10k synthetic vault to indexing and latency; --with-100k adds the 100,000-file vault
to indexing (about 10 minutes more on 2 cores). Benchmarks whose data is missing are skipped.
Semantic/hybrid quality lives in benchmarks/semantic_*.py (run separately, needs the embedding model).
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback

from .common import Skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--with-100k", action="store_true")
    args = ap.parse_args(argv)

    from . import (
        freshness,
        indexing,
        latency,
        otel_quality,
        scifact,
        side_by_side,
        token_economy,
    )

    synth = "" if args.quick else ("10000,100000" if args.with_100k else "10000")
    steps = [
        ("scifact", lambda: scifact.main([])),
        ("otel_quality", lambda: otel_quality.main([])),
        ("token_economy", lambda: token_economy.main([])),
        ("indexing", lambda: indexing.main([])),
        ("latency", lambda: latency.main(["--sizes", "1000" if args.quick else "1000,10000"])),
        ("freshness", lambda: freshness.main(["--corpora", "otel" if args.quick else "otel,synth-10000"])),
    ]
    if not args.quick:
        steps.append(("side by side (SciFact over stdio)", lambda: side_by_side.main([])))
    if synth:
        steps.insert(4, ("indexing synthetic", lambda: indexing.main(["--corpora", "", "--synthetic", synth])))
    failed = []
    for name, fn in steps:
        print(f"\n=== {name} ===", flush=True)
        t0 = time.perf_counter()
        try:
            fn()
        except Skip as exc:
            print(f"skipped: {exc}")
        except Exception:
            traceback.print_exc()
            failed.append(name)
        print(f"({name}: {time.perf_counter() - t0:.0f} s)", flush=True)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
