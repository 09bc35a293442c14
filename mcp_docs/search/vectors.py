"""The vector side and the coverage-aware fusion: the query embedded once, its language view, the fusion weighed by
how much of the collection has vectors, and the note that says how far embedding has got.

numpy, the fusion (hybrid.py) and language_mix are imported only once vectors are in use, so a keyword-only server
stays light (the server imports them at start: mcp/server.py REQUEST_MODULES_WITH_VECTORS).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..models import SearchMode

if TYPE_CHECKING:
    from ..index.hits import RankedSection
    from ..index.language_mix import LanguageView
    from ..store.api import CatalogReader, VectorSearch
    from .hybrid import KeywordSearch


@dataclass(frozen=True)
class VectorRanking:
    """What the vector side gives the later steps: sections best first, the share of the collection with vectors
    (`covered`: 1.0 when all have), and the query's language view (None in a collection of one language, and
    while embedding fills in)."""

    ranked: list[tuple[RankedSection, float]]
    covered: float
    view: LanguageView | None
    note: str | None


# While a document's sections wait, its own vector stands in for them with this weight of coverage (how far the
# vector side is trusted against keyword while sections fill in; benchmarks/REPORT.md, "Keyword's first answer").
DOCUMENT_LEVEL_CREDIT = 0.5


def rank_with_vectors(
    vectors: VectorSearch,
    keyword: KeywordSearch,
    query: str,
    limit: int,
    mode: SearchMode,
    folder: str | None,
    tags: list[str],
    language: str | None,
    catalog: CatalogReader | None = None,
) -> VectorRanking:
    """Semantic or hybrid sections for `query` (hybrid.search). Raises EmbedderError when the query cannot be
    embedded: the caller falls back to keyword (mode.embedder_failed). `catalog`: where hybrid learns which
    foreign pages also exist in the query's language (languages.also_in)."""
    from ..index import language_mix  # with numpy and the vector store: only once vectors are in use
    from . import hybrid, languages

    covered = vectors.coverage()  # once: the fusion weighs by it, the note reports it
    vector = vectors.embed_query(query)
    # None in a collection of one language, and while embedding fills in (language_mix.MIN_COVERAGE)
    view = vectors.language_view(vector) if covered >= language_mix.MIN_COVERAGE else None
    ranked = hybrid.search(
        vectors,
        keyword,
        query,
        limit,
        mode,
        folder,
        tags,
        coverage=fusion_coverage(vectors, covered),
        vector=vector,
        view=view,
        language=language,
        also_in_own=(
            languages.also_in(catalog, view, language)
            if catalog is not None and view is not None and language is not None
            else None
        ),
    )
    return VectorRanking(ranked, covered, view, coverage_note(vectors, mode, covered))


def fusion_coverage(vectors: VectorSearch, sections: float) -> float:
    """How much of the collection the vector side ranks, for the fusion's keyword share (hybrid.coverage_share):
    the sections' coverage, plus a share (DOCUMENT_LEVEL_CREDIT) of the rest for the documents whose own vector
    stands in for their waiting sections."""
    if sections >= 1.0:
        return sections  # asked before the document counts: a statement per search on PostgreSQL
    ready, total = document_vectors(vectors)
    if not total:
        return sections
    return sections + (1.0 - sections) * DOCUMENT_LEVEL_CREDIT * ready / total


def document_vectors(vectors: VectorSearch) -> tuple[int, int]:
    """(documents with their own vector, documents): (0, 0) for a store without document-level vectors."""
    counts = getattr(vectors, "document_vectors", None)
    return counts() if counts is not None else (0, 0)


def coverage_note(vectors: VectorSearch, mode: str, sections: float) -> str | None:
    """While embedding fills in, which level is ready: 'Document vectors ready for all 6,289 documents; sections
    12 % …'; the store's own sentence when it has no document-level vectors (PostgreSQL)."""
    ready, total = document_vectors(vectors) if sections < 1.0 else (0, 0)
    if not ready:
        return vectors.coverage_note(mode, sections)
    level = f"all {total:,} documents" if ready >= total else f"{ready:,} of {total:,} documents"
    share = 100 * sections
    percent = "<1" if 0 < share < 1 else str(min(99, int(share)))
    why = f" ({vectors.error})" if vectors.error else ""
    rest = "ranked by keyword and document vectors" if mode == "hybrid" else "found by its document's vector"
    return (
        f"Document vectors ready for {level}; sections {percent} %{why}: a document whose sections are not "
        f"embedded yet is {rest}."
    )
