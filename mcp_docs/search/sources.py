"""What the search pipeline reads, as small protocols: the stores are passed in, never imported.

`library.Library`, composed over a `Store` (store/api.py, whose protocols for catalog reads, keyword hits and
vectors these use), satisfies `SearchSources`. Nothing here knows Tantivy, SQLite or PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # for the annotations only
    from ..rerank import RerankStage
    from ..store.api import CatalogReader, KeywordHit, VectorSearch
    from .ranking import Bonus


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
