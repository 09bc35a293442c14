"""The last step: documents to the result models, each section with a snippet of why it matched."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..models import DocumentMatch, IndexInfo, SectionMatch
from ..query_text import QUERY_STOPWORDS, identifiers
from ..snippets import make_snippet, snippet_words

if TYPE_CHECKING:
    from ..index.hits import RankedSection
    from ..store.api import CatalogReader, VectorSearch
    from .ranking import DocumentGroup

# Snippets were half of a search result's JSON (OpenTelemetry questions, 220 characters for every section): a
# document's lead section keeps a window that shows why it matched, the sections after it a shorter one.
LEAD_SNIPPET_CHARS = 180
OTHER_SNIPPET_CHARS = 100


def snippet_terms(query: str) -> list[str]:
    """The words a snippet is centred on: the query's, without its stopwords (unless it is nothing else), and
    its identifiers whole."""
    words = snippet_words(query)  # a word with its vowel signs (Hindi, Thai): no single consonants in bold
    terms = [w for w in words if w not in QUERY_STOPWORDS] or words
    return terms + identifiers(query)


def document_matches(
    groups: list[DocumentGroup[RankedSection]], named: Mapping[str, str | None], terms: list[str]
) -> list[DocumentMatch]:
    """One DocumentMatch per document, best first; `named`: the languages their front matter names."""
    return [
        DocumentMatch(
            id=g.doc_id,
            title=g.hits[0].title,
            score=round(g.score, 4),
            tags=list(g.hits[0].tags),
            language=named.get(g.doc_id),
            sections=[
                SectionMatch(
                    heading=s.heading,
                    heading_path=s.heading_path,
                    line_start=s.line_start,
                    line_end=s.line_end,
                    snippet=make_snippet(s.body, terms, LEAD_SNIPPET_CHARS if i == 0 else OTHER_SNIPPET_CHARS),
                )
                for i, s in enumerate(g.hits)
            ],
        )
        for g in groups
    ]


def index_info(catalog: CatalogReader, vectors: VectorSearch | None) -> IndexInfo:
    """The documents indexed and the chunks still waiting for their vectors, as every search reports them."""
    pending = vectors.pending() if vectors is not None else 0
    return IndexInfo(documents=catalog.count(), pending_embeddings=pending)
