"""Language detection accuracy on the OpenTelemetry docs, labelled by their folder (en/, fr/).

    python -m benchmarks.language_detection [--docs DIR] [--show-errors]

Every page under `en/` is English and every page under `fr/` French (the French pages are the project's
translations; the few untranslated passages they keep are short). Each page is parsed as the index parses it
and `mcp_docs.language.detect_language` looks at its title and sections, as the sync does. Reported: pages
named correctly, named wrongly (a wrong stemmer), and left undecided (the root language then applies), with
the time per page.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from .common import SHARED_BENCH, require, run_script, table, write_results


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=Path, default=SHARED_BENCH / "otel-docs")
    ap.add_argument("--show-errors", action="store_true")
    args = ap.parse_args(argv)
    from mcp_docs.language import detect_language
    from mcp_docs.markdown import parse_markdown

    require(args.docs / "en", "OpenTelemetry docs")
    outcomes: Counter[tuple[str, str]] = Counter()
    errors: list[tuple[str, str | None]] = []
    seconds = parse_seconds = 0.0
    for path in sorted(args.docs.rglob("*.md")):
        rel = path.relative_to(args.docs).as_posix()
        label = rel.split("/", 1)[0]
        if label not in ("en", "fr"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        started = time.perf_counter()
        parsed = parse_markdown(text, path.stem)
        parse_seconds += time.perf_counter() - started
        started = time.perf_counter()
        got = detect_language([parsed.title, *(s.body for s in parsed.sections)])
        seconds += time.perf_counter() - started
        outcomes[(label, "right" if got == label else "undecided" if got is None else "wrong")] += 1
        if got is not None and got != label:
            errors.append((rel, got))
    rows = []
    for label in ("en", "fr"):
        n = sum(v for (lab, _), v in outcomes.items() if lab == label)
        rows.append([label, n, outcomes[(label, "right")], outcomes[(label, "wrong")], outcomes[(label, "undecided")]])
    pages = sum(outcomes.values())
    table(["label", "pages", "right", "wrong", "undecided"], rows, title="Language detection, OTel docs")
    print(
        f"\n{seconds * 1000 / max(pages, 1):.2f} ms per page, {100 * seconds / parse_seconds:.0f} % of the parse time"
    )
    if args.show_errors:
        for rel, got in errors:
            print(f"WRONG {rel}: {got}")
    payload: dict[str, object] = {
        "pages": pages,
        "by_label": {r[0]: dict(zip(["pages", "right", "wrong", "undecided"], r[1:], strict=True)) for r in rows},
        "ms_per_page": round(seconds * 1000 / max(pages, 1), 3),
        "share_of_parse_time": round(seconds / parse_seconds, 3),
        "errors": errors,
    }
    write_results("language_detection", payload)
    return payload


if __name__ == "__main__":
    run_script(main)
