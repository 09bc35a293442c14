"""Questions in many languages about a vault translated page by page: is the answer the page in the question's
language, at reading speed?

    python -m benchmarks.multilingual_eval --index-dir DIR [--modes keyword,hybrid] [--embeddings local]
        [--root /work/data/obsidian-help] [--half odd|even] [--show-misses]

The vault is the Obsidian help (public, third-party: read where it is checked out, never copied into the
repository). Every translation of a page carries the same `permalink` in its front matter, so a question names
its page by permalink and its language by the folder it is written for (`th`, `pt-br`, `zh-TW`); the page's path
in each folder is read from the vault at run time. The questions (benchmarks/data/obsidian_multilingual.jsonl)
were written by hand as a user would type them: paraphrases, a few words, some without accents or with a typo;
not the pages' titles. A few ask, in another language, about a page that exists only in English (`Release
notes/`): the cross-lingual fallback.

Per mode, over the page questions:
- lang@1, lang@5: the page in the question's folder first / in the first five;
- any@5: some language version of the page in the first five (translations merged into one answer count);
- other-version-first: the first answer is the right page, but in another language;
- foreign-first: the first answer is in another language folder than the question's (any page);
and english-only@5 for the Release-notes questions. `--half odd|even` keeps every other question (tune on one
half, check on the other).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from .common import DATA_DIR, require, run_script, table, write_results

QUESTIONS = DATA_DIR / "obsidian_multilingual.jsonl"
DEFAULT_ROOT = Path("/work/data/obsidian-help")
_PERMALINK = re.compile(r"^permalink:\s*(\S+)\s*$", re.MULTILINE)


def load_questions(path: Path = QUESTIONS, half: str | None = None) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if half is None:
        return rows
    keep = 1 if half == "odd" else 0
    return [q for i, q in enumerate(rows, 1) if i % 2 == keep]


def permalinks(root: Path) -> dict[str, str]:
    """Document id (path under the root) → the permalink its front matter declares."""
    found: dict[str, str] = {}
    for path in root.rglob("*.md"):
        with path.open(encoding="utf-8", errors="replace") as f:
            head = f.read(2000)
        if head.startswith("---") and (m := _PERMALINK.search(head)):
            found[path.relative_to(root).as_posix()] = m.group(1).strip("/")
    return found


def folder_of(doc_id: str) -> str:
    return doc_id.split("/", 1)[0]


def score(q: dict, ids: list[str], pages: dict[str, str]) -> dict[str, int]:
    """One question's figures from the result ids, best first."""
    if "english_only" in q:
        return {"english-only@5": int(any(d in q["english_only"] for d in ids[:5]))}
    want = q["permalink"].strip("/")
    right = [pages.get(d) == want for d in ids]
    in_lang = [r and folder_of(d) == q["folder"] for r, d in zip(right, ids, strict=True)]
    first = ids[0] if ids else ""
    return {
        "lang@1": int(bool(in_lang[:1] and in_lang[0])),
        "lang@5": int(any(in_lang[:5])),
        "any@5": int(any(right[:5])),
        "other-version-first": int(bool(right[:1] and right[0] and not in_lang[0])),
        "foreign-first": int(bool(first) and folder_of(first) != q["folder"]),
    }


def aggregate(rows: list[dict[str, int]]) -> dict[str, float]:
    keys = sorted({k for r in rows for k in r})
    out: dict[str, float] = {}
    for k in keys:
        values = [r[k] for r in rows if k in r]
        out[k] = round(sum(values) / len(values), 3) if values else 0.0
    return out


def run(lib, questions: list[dict], mode: str, pages: dict[str, str]) -> tuple[list[dict], list[dict], list[float]]:  # type: ignore[no-untyped-def]
    rows, misses, lat = [], [], []
    for q in questions:
        t0 = time.perf_counter()
        res = lib.search(q["question"], max_results=5, mode=mode)
        lat.append((time.perf_counter() - t0) * 1000)
        ids = [r.id for r in res.results]
        s = score(q, ids, pages)
        rows.append(s)
        if not s.get("lang@1", s.get("english-only@5")):
            misses.append({"id": q["id"], "folder": q["folder"], "question": q["question"], "got": ids[:3]})
    return rows, misses, lat


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--index-dir", type=Path, required=True, help="an index of --root (mcp-docs index)")
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--modes", default="keyword")
    ap.add_argument("--embeddings", default="local", help="the index's embedder, for the vector modes")
    ap.add_argument("--half", choices=("odd", "even"))
    ap.add_argument("--show-misses", action="store_true")
    ap.add_argument(
        "--read-only",
        action="store_true",
        help="search the index as it is, without a sync (and so without embedding more meanwhile): a frozen copy",
    )
    ap.add_argument("--store", choices=("embedded", "postgres"), default="embedded")
    ap.add_argument("--database-url", help="with --store postgres: the database to index --root into and search")
    args = ap.parse_args(argv)

    from mcp_docs.library import Library, open_library
    from mcp_docs.settings import Settings

    require(args.root / "en", "Obsidian help vault")
    pages = permalinks(args.root)
    questions = load_questions(args.questions, args.half)
    payload: dict[str, object] = {"questions": len(questions), "half": args.half, "systems": {}}
    rows_out = []
    for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
        emb = "none" if mode == "keyword" else args.embeddings
        if args.store == "postgres":  # the same questions through the PostgreSQL store (synced as a writer)
            settings = Settings.load(
                args.root, args.index_dir, embeddings=emb, store="postgres", database_url=args.database_url
            )
            lib = open_library(settings, read_only=args.read_only)
        else:
            lib = Library(Settings.load(args.root, args.index_dir, embeddings=emb), read_only=args.read_only)
        if not args.read_only:
            lib.sync()
        rows, misses, lat = run(lib, questions, mode, pages)
        lib.close()
        page_rows = [r for r in rows if "lang@1" in r]
        fallback = [r for r in rows if "english-only@5" in r]
        agg = {**aggregate(page_rows), **aggregate(fallback)}
        lat.sort()
        payload["systems"][mode] = {"metrics": agg, "misses": misses, "p50_ms": round(lat[len(lat) // 2], 1)}  # type: ignore[index]
        rows_out.append(
            [
                mode,
                len(page_rows),
                agg.get("lang@1"),
                agg.get("lang@5"),
                agg.get("any@5"),
                agg.get("other-version-first"),
                agg.get("foreign-first"),
                f"{agg.get('english-only@5')} ({len(fallback)})",
                round(lat[len(lat) // 2], 1),
            ]
        )
        if args.show_misses:
            for m in misses:
                print(f"MISS {mode} {m['id']} [{m['folder']}] {m['question']}\n   got {m['got']}")
    table(
        ["mode", "n", "lang@1", "lang@5", "any@5", "other version first", "foreign first", "english-only@5", "p50 ms"],
        rows_out,
        title=f"Obsidian help, multilingual questions ({len(questions)}{', ' + args.half if args.half else ''})",
    )
    write_results("multilingual_eval" + (f"_{args.half}" if args.half else ""), payload)
    return payload


if __name__ == "__main__":
    run_script(main)
