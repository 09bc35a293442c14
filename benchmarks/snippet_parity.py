"""Snippet parity: the snippets of this checkout's `mcp_docs.snippets` against those of another revision's, over
every paragraph of a tree of notes, for English words (what an English query brings to another language's notes)
and the words of the note's own file name. Any difference is printed with the two snippets.

    python -m benchmarks.snippet_parity --root /work/data/obsidian-help --rev efc72ad
    python -m benchmarks.snippet_parity --root /work/data/tldr --rev efc72ad --words file,directory,git

The trees are read by path (public, third-party: never copied into the repository). The other revision's module
is read with `git show REV:mcp_docs/snippets.py` and loaded beside this one; both use this checkout's helpers.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import types
from collections import Counter
from pathlib import Path

from mcp_docs import snippets

ENGLISH = "Obsidian,vault,Markdown,plugin,Canvas,Sync,Publish,PDF,URL,iOS,Android,CSS,YAML,Ctrl,Cmd,API,JSON"


def module_at(rev: str) -> types.ModuleType:
    """`mcp_docs/snippets.py` as it was at `rev`, loaded as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{rev}:mcp_docs/snippets.py"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout.replace("from .", "from mcp_docs.")  # its relative imports (inline, ascii_fold), from this checkout
    module = types.ModuleType(f"snippets_at_{rev}")
    exec(compile(source, module.__name__, "exec"), module.__dict__)
    return module


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--rev", required=True, help="the git revision to compare with")
    ap.add_argument("--words", default="", help="English words added to the default list, comma-separated")
    ap.add_argument("--show", type=int, default=3, help="differences printed per top folder")
    args = ap.parse_args(argv)
    other = module_at(args.rev)
    english = [[w] for w in (ENGLISH + "," + args.words).split(",") if w]
    pairs: Counter[str] = Counter()
    differ: Counter[str] = Counter()
    for path in sorted(args.root.rglob("*.md")):
        folder = path.relative_to(args.root).parts[0]
        own = snippets.snippet_words(path.stem)
        queries = english + ([own] if own else [])
        for paragraph in path.read_text(encoding="utf-8", errors="replace").split("\n\n"):
            if not paragraph.strip():
                continue
            for terms in queries:
                pairs[folder] += 1
                mine, theirs = snippets.make_snippet(paragraph, terms), other.make_snippet(paragraph, terms)
                if mine != theirs:
                    differ[folder] += 1
                    if differ[folder] <= args.show:
                        print(f"{folder} {terms}\n  {args.rev}: {theirs[:200]}\n  here: {mine[:200]}")
    for folder in sorted(differ):
        print(f"{folder}: {differ[folder]:,} of {pairs[folder]:,} differ")
    print(f"total: {sum(differ.values()):,} of {sum(pairs.values()):,} paragraph/query pairs differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
