"""`mcp-docs status` counts broken links from the resolution each sync stores with every link row (issue 30's
gap): the same figures as resolving every link again, through the CLI over real index files, across syncs that
add, rename and delete the notes links point to."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from mcp_docs.library import Library
from mcp_docs.link_graph import LinkGraph
from mcp_docs.links import link_target
from mcp_docs.settings import Settings

from .server_fixtures import write
from .test_cli import run


def _status(root: Path, index: Path) -> dict:
    out = run("status", "--root", str(root), "--index-dir", str(index), "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def _full_resolution(root: Path, index: Path) -> set[tuple[str, int, str, str, int]]:
    """Every link resolved again, one by one, as the catalog stands: (note, line, target, reason, count) of each
    link that reaches no note."""
    broken = set()
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        graph = LinkGraph(lib.catalog, lib.settings.extensions)
        for link in lib.catalog.links():
            target = link_target(link.kind, link.target, link.heading)
            if target is None or not link.key:
                continue
            resolution = graph.resolve(target, link.doc_id)
            if resolution.id is None:
                reason = (
                    "ambiguous: " + ", ".join(resolution.candidates[:5]) if resolution.ambiguous else "no such document"
                )
                shown = link.target + (f"#{link.heading}" if link.kind == "wiki" and link.heading else "")
                broken.add((link.doc_id, link.line, shown, reason, link.count))
    return broken


def _listed(status: dict) -> set[tuple[str, int, str, str, int]]:
    return {(b["id"], b["line"], b["target"], b["reason"], b["count"]) for b in status["broken_links"]}


def _vault(root: Path) -> None:
    for lang in ("en", "fr"):  # the same names in sibling language folders: the nearest one wins
        write(root, f"{lang}/Start.md", "# Start\n\n[[Canvas]] [[Callouts#Kinds]] [[Later]] [[Gone]] [[Nowhere]]\n")
        write(root, f"{lang}/Plugins/Canvas.md", "# Canvas\n\nSee [[Missing page]] and [[Missing page]].\n")
        write(root, f"{lang}/Callouts.md", "# Callouts\n\n## Kinds\n\nnote\n")
        write(root, f"{lang}/Gone.md", "# Gone\n")
    write(root, "Release notes/v1.md", "# v1\n\n[[Canvas]] and [[Start]]\n")  # en/ and fr/ tie: ambiguous


def test_status_figures_match_resolving_every_link_again_across_syncs(tmp_path: Path) -> None:
    root, index = tmp_path / "vault", tmp_path / "index"
    _vault(root)
    assert run("index", "--root", str(root), "--index-dir", str(index)).returncode == 0
    first = _status(root, index)
    assert _listed(first) == _full_resolution(root, index)
    notes = {t["target"]: t["notes"] for t in first["broken_link_targets"]}
    assert notes == {"Missing page": 2, "Later": 2, "Nowhere": 2, "Canvas": 1, "Start": 1}  # the release note ties
    # Links that change meaning only through other notes' syncs: a target created, one deleted, one renamed.
    write(root, "en/Later.md", "# Later\n")  # en/Start's [[Later]] resolves; fr/Start's reaches it too
    (root / "fr/Gone.md").unlink()  # fr/Start's [[Gone]] now reaches en/Gone.md
    (root / "en/Gone.md").rename(root / "en/Elsewhere.md")  # and then nothing
    (root / "fr/Callouts.md").rename(root / "fr/Legendes.md")
    assert run("index", "--root", str(root), "--index-dir", str(index)).returncode == 0
    second = _status(root, index)
    assert _listed(second) == _full_resolution(root, index)
    targets = {t["target"]: (t["notes"], t["links"]) for t in second["broken_link_targets"]}
    assert targets["Gone"] == (2, 2) and targets["Missing page"] == (2, 4) and "Later" not in targets
    assert second["broken_link_targets"][0]["notes"] >= second["broken_link_targets"][-1]["notes"]  # most notes first


def test_status_reads_the_stored_resolution_instead_of_resolving_every_link(tmp_path: Path) -> None:
    """A stored resolution is what status counts: a link row marked as resolving to a note is not listed,
    although resolving it again would find nothing (before, status resolved all 6,280 notes' links each time)."""
    root, index = tmp_path / "vault", tmp_path / "index"
    _vault(root)
    assert run("index", "--root", str(root), "--index-dir", str(index)).returncode == 0
    assert ("en/Start.md", 3, "Nowhere", "no such document", 1) in _listed(_status(root, index))
    with sqlite3.connect(index / "catalog.sqlite") as conn:
        conn.execute("update links set resolved = 'en/Canvas.md' where target = 'Nowhere'")
    listed = _listed(_status(root, index))
    assert not any(target == "Nowhere" for _, _, target, _, _ in listed)
    assert ("en/Start.md", 3, "Later", "no such document", 1) in listed  # the others still come
    # A row not resolved yet (null: a sync was cut short before resolving it) is resolved for its reason.
    with sqlite3.connect(index / "catalog.sqlite") as conn:
        conn.execute("update links set resolved = null where target = 'Nowhere'")
    assert ("en/Start.md", 3, "Nowhere", "no such document", 1) in _listed(_status(root, index))
