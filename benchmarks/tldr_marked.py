"""Words with combining marks on the tldr pages: hit@1/@5 of the right page for Hindi, Bengali and Tamil queries,
and the false hits of words found on no page, through the public search API (keyword mode).

    python -m benchmarks.tldr_marked [--tldr /work/data/tldr] [--work-dir DIR]

The language folders (pages.hi, pages.bn, pages.ta, pages.ne, pages.ml: public, third-party; read by path, never
copied into the repository) are copied into a folder under --work-dir and indexed there, so that document ids are
`pages.hi/linux/cat.md`. The queries (benchmarks/data/tldr_marked_queries.jsonl) were chosen by hand: a word or two
of one page, each found on that page only; `doc: null` marks a word that is on no page at all.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from mcp_docs.library import Library
from mcp_docs.settings import Settings

LANGUAGES = ("hi", "bn", "ta", "ne", "ml")
QUERIES = Path(__file__).parent / "data" / "tldr_marked_queries.jsonl"


def _root(tldr: Path, work: Path) -> Path:
    root = work / "tldr-marked-root"
    if not root.exists():
        for lang in LANGUAGES:
            shutil.copytree(tldr / f"pages.{lang}", root / f"pages.{lang}")
    return root


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tldr", type=Path, default=Path("/work/data/tldr"))
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/mcp-docs-bench/tldr-marked"))
    ap.add_argument("--index-dir", type=Path, help="default: <work-dir>/index (deleted first)")
    args = ap.parse_args(argv)
    root = _root(args.tldr, args.work_dir)
    index_dir = args.index_dir or args.work_dir / "index"
    shutil.rmtree(index_dir, ignore_errors=True)
    queries = [json.loads(line) for line in QUERIES.read_text(encoding="utf-8").splitlines() if line.strip()]
    lib = Library(Settings.load(root, index_dir, embeddings="none", environ={}))
    try:
        lib.sync()
        per_lang: dict[str, list[tuple[bool, bool]]] = {}
        false_hits: dict[str, int] = {}
        for q in queries:
            found = [r.id for r in lib.search(q["query"], mode="keyword", max_results=10).results]
            if q["doc"] is None:
                false_hits[q["query"]] = len(found)
                continue
            per_lang.setdefault(q["lang"], []).append((found[:1] == [q["doc"]], q["doc"] in found[:5]))
            if q["doc"] not in found[:5]:
                print(f"miss {q['id']} {q['query']}: {found[:5]}", file=sys.stderr)
    finally:
        lib.close()
    rows = {
        lang: (len(h), sum(a for a, _ in h) / len(h), sum(b for _, b in h) / len(h)) for lang, h in per_lang.items()
    }
    every = [h for hits in per_lang.values() for h in hits]
    rows["all"] = (len(every), sum(a for a, _ in every) / len(every), sum(b for _, b in every) / len(every))
    print("| queries | n | hit@1 | hit@5 |\n|---|---|---|---|")
    for lang, (n, h1, h5) in rows.items():
        print(f"| {lang} | {n} | {h1:.3f} | {h5:.3f} |")
    print("words on no page, results returned:", false_hits)
    return {"rows": rows, "false_hits": false_hits}


if __name__ == "__main__":
    main()
