"""Language detection accuracy per language folder: the OpenTelemetry docs, the Obsidian help vault, tldr pages.

    python -m benchmarks.language_detection [--tree otel|obsidian|tldr] [--docs DIR] [--per-folder N]
                                            [--show-errors]

Each tree is labelled by its folders: OTel `en/` and `fr/`; the Obsidian help vault's language folders (`en/`,
`cs/`, `pt-br/` -> pt, `zh-TW/` -> zh, `Release notes/` English); tldr's `pages/` (English) and `pages.<code>/`
(`pt_BR` -> pt, `nb` -> no, `zh_TW` -> zh). Folders that are not a language (the Obsidian vault's `.github/`,
`.claude/`, `Sandbox/`, `scripts/`) are left out. Each page is parsed as the index parses it and
`mcp_docs.language.detect_language` looks at its title and sections, as the sync does. Reported per folder: pages
named right, named wrong (a wrong stemmer, a wrong `language` told to agents) and left undecided (the root's
stemmer, `language` null), with the time per page. tldr pages are short and mostly commands: undecided is
allowed there, wrong is not. The trees are third-party: read in place, never copied into the repository.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from pathlib import Path

from .common import SHARED_BENCH, require, run_script, table, write_results

TREES = {
    "otel": SHARED_BENCH / "otel-docs",
    "obsidian": Path("/work/data/obsidian-help"),
    "tldr": Path("/work/data/tldr"),
}
# folder name -> ISO 639-1 code, where they differ
FOLDER_CODES = {"release notes": "en", "pages": "en", "pt-br": "pt", "pt-pt": "pt", "zh-tw": "zh", "nb": "no"}
NOT_LANGUAGES = {".github", ".claude", "sandbox", "scripts", ".git"}


def folder_label(tree: str, folder: str) -> str | None:
    """The language code a top folder stands for, None for a folder that is not a language."""
    name = folder.lower()
    if tree == "tldr":
        if not name.startswith("pages"):
            return None
        name = name.removeprefix("pages.").replace("_", "-") if name != "pages" else name
    if tree == "otel" and name not in ("en", "fr"):
        return None
    if name in NOT_LANGUAGES:
        return None
    return FOLDER_CODES.get(name, name)


def pages(tree: str, docs: Path, per_folder: int | None) -> list[tuple[str, str, Path]]:
    """(folder, label, path) of the pages to look at: every page, or `per_folder` drawn with a fixed seed."""
    found: list[tuple[str, str, Path]] = []
    rng = random.Random(29)
    for folder in sorted(p for p in docs.iterdir() if p.is_dir()):
        label = folder_label(tree, folder.name)
        if label is None:
            continue
        files = sorted(folder.rglob("*.md"))
        if per_folder is not None and len(files) > per_folder:
            files = sorted(rng.sample(files, per_folder))
        found.extend((folder.name, label, path) for path in files)
    return found


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", choices=sorted(TREES), default="otel")
    ap.add_argument("--docs", type=Path, help="the tree's folder (default: where this machine keeps it)")
    ap.add_argument("--per-folder", type=int, help="pages drawn per folder (default: all; tldr: 120)")
    ap.add_argument("--show-errors", action="store_true")
    args = ap.parse_args(argv)
    from mcp_docs.language import detect_language
    from mcp_docs.markdown import parse_markdown

    docs = require(args.docs or TREES[args.tree], f"the {args.tree} tree")
    per_folder = args.per_folder if args.per_folder is not None else (120 if args.tree == "tldr" else None)
    detect_language(["Warm-up: the identifier loads its model on first use, which is not a page's cost."])
    outcomes: Counter[tuple[str, str]] = Counter()
    wrong_as: dict[str, Counter[str]] = {}
    labels: dict[str, str] = {}
    errors: list[tuple[str, str]] = []
    seconds = parse_seconds = 0.0
    for folder, label, path in pages(args.tree, docs, per_folder):
        labels[folder] = label
        text = path.read_text(encoding="utf-8", errors="replace")
        started = time.perf_counter()
        parsed = parse_markdown(text, path.stem)
        parse_seconds += time.perf_counter() - started
        started = time.perf_counter()
        got = detect_language([parsed.title, *(s.body for s in parsed.sections)])
        seconds += time.perf_counter() - started
        outcome = "right" if got == label else "undecided" if got is None else "wrong"
        outcomes[(folder, outcome)] += 1
        if got is not None and got != label:
            wrong_as.setdefault(folder, Counter())[got] += 1
            errors.append((path.relative_to(docs).as_posix(), got))
    rows = []
    for folder, label in labels.items():
        n = sum(outcomes[(folder, o)] for o in ("right", "wrong", "undecided"))
        right = outcomes[(folder, "right")]
        named_as = ", ".join(f"{code} {k}" for code, k in wrong_as.get(folder, Counter()).most_common(3))
        rows.append(
            [
                folder,
                label,
                n,
                right,
                f"{100 * right / max(n, 1):.1f}",
                outcomes[(folder, "undecided")],
                outcomes[(folder, "wrong")],
                named_as,
            ]
        )
    total = sum(outcomes.values())
    table(
        ["folder", "code", "pages", "right", "right %", "undecided", "wrong", "named instead"],
        rows,
        title=f"Language detection per folder, {args.tree}",
    )
    below = [r[0] for r in rows if r[3] < 0.95 * r[2]]
    print(
        f"\n{total} pages; {sum(r[6] for r in rows)} wrong, {sum(r[5] for r in rows)} undecided; folders under 95 % "
        f"right: {', '.join(below) or 'none'}"
    )
    print(f"{seconds * 1000 / max(total, 1):.2f} ms per page, {100 * seconds / parse_seconds:.0f} % of the parse time")
    if args.show_errors:
        for rel, got in errors:
            print(f"WRONG {rel}: {got}")
    keys = ["code", "pages", "right", "right_pct", "undecided", "wrong", "named_instead"]
    payload: dict[str, object] = {
        "tree": args.tree,
        "pages": total,
        "per_folder": per_folder,
        "by_folder": {r[0]: dict(zip(keys, r[1:], strict=True)) for r in rows},
        "ms_per_page": round(seconds * 1000 / max(total, 1), 3),
        "share_of_parse_time": round(seconds / parse_seconds, 3),
        "errors": errors,
    }
    write_results(f"language_detection_{args.tree}", payload)
    return payload


if __name__ == "__main__":
    run_script(main)
