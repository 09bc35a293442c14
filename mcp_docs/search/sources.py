"""What the search pipeline reads, as small protocols: the stores are passed in, never imported.

Today's `library.Library` (and `store.pg_library.PgLibrary`) satisfies `SearchSources`; a library composed over a
`Store` protocol passes in whatever answers these few calls. Nothing here knows Tantivy, SQLite or PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # for the annotations only
    from ..index.hits import RankedSection
    from ..index.store_api import CatalogReader, VectorSearch
    from ..rerank import RerankStage
    from .ranking import Bonus


class KeywordHit(Protocol):
    """One keyword hit: the key its document is grouped by (Tantivy's 64-bit document key, or the id itself), its
    score, and its section (which a store may read only when first asked: index.fulltext.KeywordHit)."""

    @property
    def doc_key(self) -> int | str: ...

    @property
    def score(self) -> float: ...

    @property
    def section(self) -> RankedSection: ...

    @property
    def heading_path(self) -> str: ...


class SearchedFor(Protocol):
    """The embedding worker's hook: documents a search returned are embedded first while embedding is under way."""

    def searched_for(self, doc_ids: Iterable[str]) -> None: ...


class SearchSources(Protocol):
    """Everything a search reads: the catalog, the vectors (None: embeddings are off), keyword search, the
    document-level evidence, the collection's languages, the reranker and the embedding worker's hook."""

    @property
    def catalog(self) -> CatalogReader: ...

    @property
    def vectors(self) -> VectorSearch | None: ...

    @property
    def embedding(self) -> SearchedFor | None: ...

    @property
    def reranker(self) -> RerankStage | None: ...

    @property
    def languages(self) -> frozenset[str]:
        """The languages of the collection's documents (the configured one when it is empty)."""
        ...

    def keyword_hits(
        self, query: str, limit: int, folder: str | None = None, tags: Iterable[str] = ()
    ) -> Sequence[KeywordHit]:
        """The best `limit` sections for `query`'s words, best first, within `folder` and carrying all `tags`."""
        ...

    def document_bonus(self, query: str, by_key: bool = False, fused: bool = False) -> Bonus | None:
        """Document-level evidence for the best documents (search/document_signals.py), given their ids or, with
        `by_key`, their hits' keys as text; None when the store keeps none. `fused`: the scores are hybrid's."""
        ...

    def empty_note(self) -> str | None:
        """Why nothing is indexed, when nothing is; None otherwise."""
        ...
