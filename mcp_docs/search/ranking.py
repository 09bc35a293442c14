"""Pure ranking helper: section hits → documents."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

SECTIONS_PER_DOCUMENT = 3
# A document whose other sections also match is a slightly better answer than one lucky section:
# its score is the best section's plus this share of its next best returned sections (OpenTelemetry
# questions: document hit@1 0.653 -> 0.693; SciFact, one section per document, unchanged).
OTHER_SECTIONS_WEIGHT = 0.1
# Within a document, the same idea one level down: a section whose subsections also match covers them,
# so it leads with its score plus this share of theirs. A subsection repeats its parents' headings, so
# it matches the query's words as well as its shorter parent and often a little better, while the
# question is about the whole (OpenTelemetry questions, section hit@1 within the right document:
# hybrid 0.760 -> 0.840 at 0.1). Too much and a parent hides the one child asked about ("Spans" before
# "Spans > Span Links"): 0.05-0.08 is best on both halves of the questions in both modes, 0.1 and 0.02 at
# the edges (hybrid 0.840 -> 0.853, keyword section hit@5 0.893 -> 0.907; benchmarks/REPORT.md).
SUBSECTIONS_WEIGHT = 0.07
PATH_SEPARATOR = " > "


class Outlined(Protocol):
    @property
    def heading_path(self) -> str: ...


H = TypeVar("H", bound=Outlined)
# Document ids, best first → the share of the best document's score each one gains (document_signals.py).
Bonus = Callable[[Sequence[str]], Mapping[str, float]]


@dataclass
class DocumentGroup(Generic[H]):
    doc_id: str
    score: float
    hits: list[H]


def group_by_document(
    hits: Sequence[tuple[str, float, H]],
    max_documents: int,
    per_document: int = SECTIONS_PER_DOCUMENT,
    *,
    bonus: Bonus | None = None,
    candidates: int = 10,
) -> list[DocumentGroup[H]]:
    """Rank documents by their best section (plus a small share of their next best ones);
    keep each document's `per_document` leading sections (see `lead_sections`).

    `hits` are (doc_id, score, payload), best first. `bonus`: document-level evidence for the `candidates`
    best documents, each gaining that share of the best document's score before the final order.
    """
    groups: dict[str, DocumentGroup[H]] = {}
    members: dict[str, list[tuple[float, H]]] = {}
    for doc_id, score, payload in hits:
        group = groups.get(doc_id)
        if group is None:
            groups[doc_id] = DocumentGroup(doc_id, score, [payload])
            members[doc_id] = [(score, payload)]
            continue
        members[doc_id].append((score, payload))
        if len(group.hits) < per_document:
            group.hits.append(payload)
            group.score += OTHER_SECTIONS_WEIGHT * score
    ranked = sorted(groups.values(), key=lambda g: -g.score)  # stable: ties keep hit order
    if bonus is not None and len(ranked) > 1:
        top = ranked[0].score
        leading = ranked[:candidates]
        extra = bonus([g.doc_id for g in leading])
        for group in leading:
            group.score += top * extra.get(group.doc_id, 0.0)
        ranked = sorted(leading, key=lambda g: -g.score) + ranked[candidates:]
    ranked = ranked[:max_documents]
    for group in ranked:
        group.hits = lead_sections(members[group.doc_id], per_document)
    return ranked


def lead_sections(scored: Sequence[tuple[float, H]], n: int) -> list[H]:
    """One document's sections (score, payload), best first → the `n` to show, in order: each section's
    score plus `SUBSECTIONS_WEIGHT` times the scores of its matching subsections (by heading path)."""
    lead = [score for score, _ in scored]
    index: dict[str, list[int]] = {}
    for i, (_, payload) in enumerate(scored):
        index.setdefault(payload.heading_path, []).append(i)
    for score, payload in scored:
        parts = payload.heading_path.split(PATH_SEPARATOR)
        for depth in range(1, len(parts)):
            for i in index.get(PATH_SEPARATOR.join(parts[:depth]), ()):
                lead[i] += SUBSECTIONS_WEIGHT * score
    order = sorted(range(len(scored)), key=lambda i: -lead[i])  # stable: ties keep hit order
    return [scored[i][1] for i in order[:n]]


def lead_with(groups: list[DocumentGroup[H]], first: DocumentGroup[H]) -> list[DocumentGroup[H]]:
    """`groups` (best first) with `first`'s document at the top, at the best score: moved up with its own
    sections when listed, else `first` itself put there. The others keep their order."""
    if not groups or groups[0].doc_id == first.doc_id:
        return groups
    listed = next((g for g in groups if g.doc_id == first.doc_id), None)
    lead = listed if listed is not None else DocumentGroup(first.doc_id, first.score, first.hits)
    lead.score = groups[0].score
    rest = [g for g in groups if g.doc_id != first.doc_id]
    return [lead, *rest[: len(groups) - 1]]
