"""The section hit every retriever (keyword, vector, hybrid) returns: what a search result shows of a section;
and a vector search's hit (a section with its best chunk's similarity), before the fusion makes it a RankedSection."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RankedSection:
    doc_id: str
    section_idx: int
    title: str
    heading: str
    heading_path: str
    line_start: int
    line_end: int
    body: str  # the text snippets are cut from (a chunk, for vector-only hits)
    tags: tuple[str, ...]


@dataclass(frozen=True)
class VectorHit:
    """A section found by the vector side, scored by its best chunk's cosine similarity."""

    doc_id: str
    section_idx: int
    similarity: float
    title: str
    heading: str
    heading_path: str
    line_start: int
    line_end: int
    piece: str  # the chunk's text without its title and heading prefix
    tags: tuple[str, ...]
    # "document": the document's own vector (title and lead, vector_store.py), standing in for its sections while
    # they wait for theirs; the hit points at its first section with text
    level: str = "section"


def vector_hit(r: Sequence[Any], level: str = "section") -> VectorHit:
    """A hit from a row of (doc_id, section_idx, similarity, chunk text, prefix length, title, tags as JSON,
    heading, heading_path, line_start, line_end), in the order both stores' vector queries select or arrange it."""
    return VectorHit(
        doc_id=r[0],
        section_idx=int(r[1]),
        similarity=float(r[2]),
        title=r[5],
        heading=r[7],
        heading_path=r[8],
        line_start=r[9],
        line_end=r[10],
        piece=r[3][r[4] :],
        tags=tuple(json.loads(r[6])),
        level=level,
    )


def best_per_section(hits: Iterable[VectorHit], limit: int) -> list[VectorHit]:
    """Chunk hits, nearest first → the first of each section (a section scores with its best chunk), at most `limit`
    sections; read lazily, so the hits past the limit are never built."""
    best: dict[tuple[str, int], VectorHit] = {}
    for hit in hits:
        best.setdefault((hit.doc_id, hit.section_idx), hit)
        if len(best) >= limit:
            break
    return list(best.values())


def with_document_hits(sections: list[VectorHit], documents: list[VectorHit], limit: int) -> list[VectorHit]:
    """One list, best first, for either store: a document's own vector where its sections still wait for theirs,
    section vectors elsewhere (the better of the two for one section)."""
    if not documents:
        return sections
    merged: dict[tuple[str, int], VectorHit] = {}
    for hit in sorted([*sections, *documents], key=lambda h: -h.similarity):
        merged.setdefault((hit.doc_id, hit.section_idx), hit)
    return list(merged.values())[:limit]
