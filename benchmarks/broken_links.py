"""Broken links on a real vault, and what a link bomb costs (issue 30).

    python -m benchmarks.broken_links vault [--root /work/data/obsidian-help]
    python -m benchmarks.broken_links bomb [--mb 1,2,4]
    python -m benchmarks.broken_links hub [--notes 20000]

`vault` indexes the root (embeddings off) and counts what `mcp-docs status` reports as broken: links written
(each occurrence), distinct (note, target) pairs, targets, by reason; and the 10 targets most notes link to.
`bomb` writes one note of N MB of `[[a]] ` next to `a.md` for each size and, in a fresh process per size (an
honest peak RSS), indexes it and times each tool that answers about it: linear in the size is the aim.
`hub` writes N notes, 100 per folder, each linking `[[hub]]`, and times the backlink answers about `hub.md`
(each link row stores its resolved target, indexed: the first page is one query however many notes link).
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

from .common import CACHE, dir_size_mb, peak_rss_mb, require, run_child, run_script, table, write_results


def _broken(root: Path, index: Path) -> dict[str, object]:
    from mcp_docs.library import Library
    from mcp_docs.link_graph import LinkGraph
    from mcp_docs.settings import Settings

    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        start = time.perf_counter()
        report = lib.sync()
        index_s = time.perf_counter() - start
        start = time.perf_counter()
        broken = LinkGraph(lib.catalog, lib.settings.extensions).broken()
        broken_s = time.perf_counter() - start
        documents = lib.catalog.count()
        outside = _targets_of(lib, "Release notes/")
    pairs = [b for t in broken for b in t.links]
    return {
        "documents": documents,
        "indexed": report.added,
        "index_seconds": round(index_s, 1),
        "status_links_seconds": round(broken_s, 2),
        "broken_links_written": sum(b.count for b in pairs),
        "broken_note_target_pairs": len(pairs),
        "broken_targets": len(broken),
        "by_reason": dict(Counter(b.reason.split(":")[0] for b in pairs)),
        "top_targets": [(t.target, t.notes, t.reason[:60]) for t in broken[:10]],
        "release_notes_links_by_target_folder": outside,
    }


def _targets_of(lib: Any, prefix: str) -> dict[str, int]:
    """Where the links written under `prefix` (the help vault's English `Release notes/`, outside every language
    folder) resolve, by the target's top folder: the linking note's language, or the shortest path's."""
    from mcp_docs.link_graph import LinkGraph
    from mcp_docs.links import link_target

    graph = LinkGraph(lib.catalog, lib.settings.extensions)
    where: Counter[str] = Counter()
    for link in lib.catalog.links():
        target = link_target(link.kind, link.target, link.heading)
        if link.doc_id.startswith(prefix) and target is not None and target.path:
            found = graph.resolve(target, link.doc_id).id
            where["(none)" if found is None else found.split("/", 1)[0]] += link.count
    return dict(where.most_common())


def vault(args: argparse.Namespace) -> None:
    root = require(Path(args.root), "the vault")
    index = CACHE / "broken-links" / "index"
    shutil.rmtree(index, ignore_errors=True)
    result = _broken(root, index)
    table(["figure", "value"], [(k, v) for k, v in result.items() if k not in ("top_targets", "by_reason")])
    table(["reason", "pairs"], sorted(result["by_reason"].items()))  # type: ignore[attr-defined]
    table(["target", "notes", "why"], result["top_targets"], title="most notes first")  # type: ignore[arg-type]
    where = result["release_notes_links_by_target_folder"]
    table(["top folder", "links"], sorted(where.items()), title="links from Release notes/ resolve to")  # type: ignore[attr-defined]
    write_results("broken_links_vault", {"root": str(root), **result})


def _bomb_child(args: argparse.Namespace) -> None:
    """In a fresh process: index the bomb vault, then time each tool's answer about it."""
    from mcp_docs.library import Library
    from mcp_docs.link_graph import LinkGraph
    from mcp_docs.settings import Settings
    from mcp_docs.tools import DocsTools

    root, index = Path(args.root), Path(args.index)
    out: dict[str, object] = {}
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        start = time.perf_counter()
        lib.sync()
        out["index_s"] = round(time.perf_counter() - start, 2)
        out["index_rss_mb"] = peak_rss_mb()
        tools = DocsTools(lib)
        calls = {
            "list_documents(linked_to=a)": lambda: tools.list_documents(linked_to="a"),
            "read_document(a.md, outline)": lambda: tools.read_document("a.md", mode="outline"),
            "read_document(bomb.md, outline)": lambda: tools.read_document("bomb.md", mode="outline"),
            "status broken links": lambda: LinkGraph(lib.catalog, lib.settings.extensions).broken(),
        }
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            out[name] = round(time.perf_counter() - start, 3)
    out["index_mb"] = dir_size_mb(index)
    print(json.dumps(out))


def bomb(args: argparse.Namespace) -> None:
    rows = []
    results = []
    for mb in [float(x) for x in args.mb.split(",")]:
        base = CACHE / "link-bomb" / f"{mb:g}mb"
        shutil.rmtree(base, ignore_errors=True)
        root = base / "vault"
        root.mkdir(parents=True)
        links = int(mb * 1_000_000) // 6
        (root / "bomb.md").write_text("# Bomb\n\n" + "[[a]] " * links + "\n", encoding="utf-8")
        (root / "a.md").write_text("# A\n\nthe target\n", encoding="utf-8")
        out = run_child("benchmarks.broken_links", ["_child", "--root", str(root), "--index", str(base / "index")])
        results.append({"mb": mb, "links": links, **out})
        rows.append([f"{mb:g}", f"{links:,}", *out.values()])
    headers = ["MB", "links", *[k for k in results[0] if k not in ("mb", "links")]]
    table(headers, rows, title="one note of N MB of [[a]] (a fresh process each)")
    write_results("broken_links_bomb", {"sizes": results})


def hub(args: argparse.Namespace) -> None:
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings
    from mcp_docs.tools import DocsTools

    base = CACHE / "link-hub" / str(args.notes)
    root = base / "vault"
    if not (root / "hub.md").exists():
        for i in range(args.notes):
            folder = root / f"f{i // 100:04d}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"n{i}.md").write_text(f"# Note {i}\n\nSee [[hub]].\n", encoding="utf-8")
        (root / "hub.md").write_text("# Hub\n\nthe centre\n", encoding="utf-8")
    rows = []
    with Library(Settings.load(root, base / "index", embeddings="none", environ={})) as lib:
        start = time.perf_counter()
        lib.sync()
        rows.append(("index (incremental after the first run)", round(time.perf_counter() - start, 1)))
        tools = DocsTools(lib)
        for name, call in {
            "list_documents(linked_to=hub), first page": lambda: tools.list_documents(linked_to="hub", limit=50),
            "read_document(hub.md, outline)": lambda: tools.read_document("hub.md", mode="outline"),
        }.items():
            times = []
            for _ in range(3):
                start = time.perf_counter()
                call()
                times.append(time.perf_counter() - start)
            rows.append((name + ", best of 3 (s)", round(min(times), 3)))
    table(["figure", "value"], rows, title=f"{args.notes:,} notes linking [[hub]]")
    write_results("broken_links_hub", {"notes": args.notes, **dict(rows)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    v = sub.add_parser("vault")
    v.add_argument("--root", default="/work/data/obsidian-help")
    b = sub.add_parser("bomb")
    b.add_argument("--mb", default="1,2,4")
    h = sub.add_parser("hub")
    h.add_argument("--notes", type=int, default=20_000)
    c = sub.add_parser("_child")
    c.add_argument("--root", required=True)
    c.add_argument("--index", required=True)
    args = parser.parse_args()
    {"vault": vault, "bomb": bomb, "hub": hub, "_child": _bomb_child}[args.what](args)


if __name__ == "__main__":
    run_script(main)
