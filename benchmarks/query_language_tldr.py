"""A short query's language, checked on text nobody tuned on: tldr's example descriptions in 40 folders.

    python -m benchmarks.query_language_tldr [--root /work/data/tldr] [--pages 25] [--show-wrong]

Each tldr page's first two example lines ("- Copy a file to another directory:") are a few words in the page's
language: a fair stand-in for a user's short question. Every tldr language is in the collection, so the answer
is always in reach; what matters is how often `search.languages.query_language` names the right one, none
(undecided: nothing is preferred) or a wrong one (its pages would be preferred: the error to avoid). The tldr
pages are public, third-party, read where they are checked out and never copied into the repository.
"""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter
from pathlib import Path

from .common import require, run_script, table, write_results

DEFAULT_ROOT = Path("/work/data/tldr")
_MARKUP = re.compile(r"\[.*?\]\(.*?\)|`[^`]*`|\{\{.*?\}\}")


def folder_language(folder: str) -> str | None:
    from mcp_docs.language import declared_language

    return declared_language(folder.split(".", 1)[1].replace("_", "-")) if "." in folder else "en"


def samples(folder: Path, pages: int, rng: random.Random) -> list[str]:
    files = sorted(folder.rglob("*.md"))
    rng.shuffle(files)
    texts = []
    for path in files[:pages]:
        lines = path.read_text(encoding="utf-8").splitlines()
        examples = [_MARKUP.sub("", line[2:].rstrip().rstrip(":")).strip() for line in lines if line.startswith("- ")]
        texts += [t for t in examples[:2] if t]
    return texts


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--pages", type=int, default=25, help="pages drawn per folder (seed 29)")
    ap.add_argument("--show-wrong", action="store_true")
    args = ap.parse_args(argv)

    from mcp_docs.search.languages import query_language

    require(args.root / "pages", "tldr pages")
    folders = sorted(p for p in args.root.iterdir() if p.is_dir() and p.name.startswith("pages"))
    codes = {f.name: folder_language(f.name) for f in folders}
    languages = frozenset(c for c in codes.values() if c)
    rng = random.Random(29)
    total: Counter[str] = Counter()
    rows = []
    for folder in folders:
        want = codes[folder.name]
        counts: Counter[str] = Counter()
        for text in samples(Path(folder), args.pages, rng) if want else []:
            got = query_language(text, languages)
            counts["right" if got == want else "none" if got is None else "wrong"] += 1
            if args.show_wrong and got not in (None, want):
                print(f"WRONG {folder.name}: {got} for {text!r}")
        total.update(counts)
        rows.append([folder.name, want, counts["right"], counts["none"], counts["wrong"]])
    rows.append(["all", "", total["right"], total["none"], total["wrong"]])
    table(["folder", "language", "right", "none", "wrong"], rows, title="tldr examples as queries")
    payload: dict[str, object] = {"counts": dict(total), "folders": {r[0]: r[2:] for r in rows}}
    write_results("query_language_tldr", payload)
    return payload


if __name__ == "__main__":
    run_script(main)
