"""The library: one documents root with its index, read, searched and kept up to date through a store
(store/api.py: the embedded index folder, PostgreSQL, or any other the registry names).

This is the narrow interface the tools and the CLI use: sync, search, and catalog reads. The library is composed
from a store, never subclassed: what differs between stores is theirs. Everything here is synchronous and
thread-safe for readers; one sync runs at a time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .embedders import EmbedderError
from .errors import IndexBusy
from .index import document_signals, translations
from .index.hits import RankedSection
from .index.ranking import Bonus, DocumentGroup, group_by_document, lead_with
from .language import STOPWORDS, describe_languages, query_language_beyond_stopwords
from .markdown import normalize_tag
from .models import DocumentMatch, IndexInfo, SearchMode, SearchResult, SectionMatch
from .paths import Jail
from .render import plural
from .rerank import make_reranker
from .scan import Scanner, load_rules
from .settings import Settings
from .snippets import make_snippet
from .store.api import Progress, SyncReport
from .store.embedded.fulltext import QUERY_STOPWORDS, identifiers, query_words

if TYPE_CHECKING:
    from .index.language_mix import LanguageView
    from .store.api import BackgroundEmbedding, CatalogReader, KeywordHit, Store, VectorSearch

log = logging.getLogger(__name__)

# Snippets were half of a search result's JSON (OpenTelemetry questions, 220 characters for every section): a
# document's lead section keeps a window that shows why it matched, the sections after it a shorter one.
LEAD_SNIPPET_CHARS = 180
OTHER_SNIPPET_CHARS = 100
READER_REFRESH_SECONDS = 5.0  # how often a reader looks for languages another process's writer added


def open_library(settings: Settings, read_only: bool = False) -> Library:
    """The library of the store the settings choose, or one sentence saying why it cannot be opened."""
    from .store.registry import store_kind

    kind = store_kind(settings)
    kind.check(settings, read_only)
    try:
        return Library(settings, read_only=read_only)
    except Exception as exc:
        kind.refuse(settings, exc)
        raise


class Library:
    store: Store

    def __init__(self, settings: Settings, store: Store | None = None, *, read_only: bool = False) -> None:
        """`store`: the index to use; by default the one `settings.store` names (store/registry.py), opened here.
        `read_only`: a reader's view of an index another process writes (a reading HTTP worker, a PostgreSQL
        server without a root): nothing in the index is created, repaired or changed, and `sync` refuses."""
        self.settings = settings
        self.read_only = read_only
        self.jail = Jail(settings.root, load_rules(settings.root, settings.extensions))
        self.scanner = Scanner(self.jail)
        self._sync_lock = threading.Lock()
        # Why the last sync failed as a whole (None once one succeeds): /health says "degraded" meanwhile, since
        # searches still answer from what was committed before, but changes on disk are not reaching the index.
        self.sync_error: str | None = None
        if store is None:
            from .store.registry import open_store

            store = open_store(settings, self.jail, self.scanner, read_only)
        self.store = store
        self._refresh_stats([], [])
        store.add_commit_listener(self._refresh_stats)
        self.reranker = make_reranker(settings)

    # What the tools, commands and fusion read, from whichever store (store/api.py).
    @property
    def catalog(self) -> CatalogReader:
        return self.store.catalog

    @property
    def vectors(self) -> VectorSearch | None:
        return self.store.vectors

    @property
    def embedding(self) -> BackgroundEmbedding | None:
        return self.store.embedding

    # -- lifecycle ---------------------------------------------------------------------
    def storage_lost(self) -> bool:
        """The index vanished under us, for example its folder deleted by hand while serving."""
        return self.store.storage_lost()

    def location(self) -> str:
        """Where the index lives, as a person reads it."""
        return self.store.location()

    def health_problem(self) -> str | None:
        """Why the index cannot answer right now (for /health), or None."""
        return self.store.health_problem()

    def close(self) -> None:
        self.store.close()
        if self.reranker is not None:
            self.reranker.close()

    def start_embedding(self) -> None:
        """Fill the vectors in the background (the server calls this); keyword search answers meanwhile."""
        self.store.start_embedding()

    def embed(self, progress: Progress | None = None) -> int:
        """Embed what is pending in the foreground (`mcp-docs index`); the number embedded."""
        return self.store.embed(progress)

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sync --------------------------------------------------------------------------------
    def sync(self, paths: Iterable[str] | None = None, progress: Progress | None = None) -> SyncReport:
        with self._sync_lock, self.recording_sync_errors():
            return self.store.sync(paths, progress)

    @contextmanager
    def recording_sync_errors(self) -> Iterator[None]:
        """Keep why a sync failed as a whole in `sync_error` (for /health), clear it when one succeeds."""
        try:
            yield
        except IndexBusy:
            raise  # another process is writing the index: it is kept fresh, just not by this one right now
        except Exception as exc:
            self.sync_error = f"the last sync failed ({type(exc).__name__}: {str(exc)[:300]})"
            raise
        self.sync_error = None

    def _refresh_stats(self, changed: list[str], deleted: list[str]) -> None:
        """After each committed batch, so a long first sync shows its progress in every search."""
        self.language_counts = self.catalog.language_counts()
        self._languages = frozenset(self.language_counts or {self.settings.language})
        self._languages_at = time.monotonic()

    def languages_text(self) -> str:
        """'92 % English, 8 % French': what agents are told so they can phrase queries in those languages."""
        return describe_languages(self.language_counts)

    def empty_note(self) -> str | None:
        """Why nothing is indexed, in plain words, when nothing is; None otherwise."""
        if self.catalog.count():
            return None
        skipped = len(self.catalog.problems())
        if skipped:
            return f"No document is indexed: all {plural(skipped, 'Markdown file')} were skipped (`mcp-docs status` says why)."
        extensions = ", ".join(self.settings.extensions)
        return f"The folder {self.settings.root} holds no Markdown files (the files read end in {extensions})."

    # -- search -------------------------------------------------------------------------------
    def index_info(self) -> IndexInfo:
        pending = self.vectors.pending() if self.vectors is not None else 0
        return IndexInfo(documents=self.catalog.count(), pending_embeddings=pending)

    def keyword_sections(
        self, query: str, limit: int, folder: str | None = None, tags: Iterable[str] = ()
    ) -> list[tuple[RankedSection, float]]:
        return [(hit.section, hit.score) for hit in self.keyword_hits(query, limit, folder, tags)]

    def keyword_hits(
        self, query: str, limit: int, folder: str | None = None, tags: Iterable[str] = ()
    ) -> Sequence[KeywordHit]:
        if self.store.written_elsewhere and time.monotonic() - self._languages_at > READER_REFRESH_SECONDS:
            self._refresh_stats([], [])  # the writer may have indexed documents of another language meanwhile
        return self.store.keyword_hits(query, limit, folder or None, list(tags), self._languages)

    def keyword_documents(
        self, query: str, limit: int, folder: str | None, tags: Iterable[str], max_documents: int
    ) -> list[DocumentGroup[RankedSection]]:
        """The keyword search's documents, best first."""
        hits = self.keyword_hits(query, limit, folder, tags)
        return group_keyword_hits(hits, max_documents, self.document_bonus(query, by_key=True))

    def document_bonus(self, query: str, by_key: bool = False) -> Bonus | None:
        """Document-level evidence for the best documents of `query` (index/document_signals.py), from the store:
        their ids (or, `by_key`, their keyword hits' keys as text) → the share of the best score each one gains;
        None where the store keeps none."""
        return self.store.document_bonus(query, self._languages, by_key)

    def search(
        self,
        query: str,
        max_results: int = 5,
        mode: SearchMode = "hybrid",
        folder: str | None = None,
        tags: Iterable[str] | None = None,
    ) -> SearchResult:
        folder_norm = self.jail.relative_folder(folder) if folder else ""
        tag_list = [t for t in (normalize_tag(t) for t in (tags or [])) if t]
        limit = min(max(50, max_results * 8), 2000)
        note: str | None = None
        mode_used: SearchMode = mode
        if mode != "keyword" and (self.vectors is None or not self.vectors.ready()):
            mode_used = "keyword"
            reason = self.vectors.unavailable_reason() if self.vectors is not None else "embeddings are off"
            note = f"{mode} search is unavailable ({reason}): keyword results shown."
        ranked: list[tuple[RankedSection, float]] = []
        covered = 1.0
        view: LanguageView | None = None
        several = len(self._languages) > 1
        language = self.query_language(query) if several else None
        if mode_used != "keyword":
            assert self.vectors is not None
            from .index import (  # with numpy and the vector store: only once vectors are in use
                hybrid,
                language_mix,
            )

            try:
                covered = self.vectors.coverage()  # once: the fusion weighs by it, the note reports it
                vector = self.vectors.embed_query(query)
                # None in a collection of one language, and while embedding fills in (language_mix.MIN_COVERAGE)
                view = self.vectors.language_view(vector) if covered >= language_mix.MIN_COVERAGE else None
                ranked = hybrid.search(
                    self.vectors,
                    self.keyword_sections,
                    query,
                    limit,
                    mode_used,
                    folder_norm or None,
                    tag_list,
                    coverage=self.fusion_coverage(covered),
                    vector=vector,
                    view=view,
                    language=language,
                )
                note = self.coverage_note(mode_used, covered)
            except EmbedderError as exc:
                mode_used = "keyword"
                note = f"{mode} search failed ({exc}): keyword results shown."
        # In a collection of several languages a page and its translation are one answer (index/translations.py):
        # documents are grouped deeper so that the list still holds max_results answers once pairs are merged.
        # In every mode, so that a page is one answer whichever mode the agent picks (and hybrid, merged, is never
        # compared with an unmerged keyword list). A question's words find the pages of its language, so in keyword
        # search pairs are rare; on the OpenTelemetry questions the one change is a language-less identifier
        # (OTEL_PYTHON_EXCLUDED_URLS) whose French page now shows as its English original, the French one named.
        depth = max_results * min(len(self._languages), 4) if several else max_results
        shown: list[DocumentGroup[RankedSection]] | None = None
        if mode_used == "keyword" and self.reranker is None:
            shown = self.keyword_documents(query, limit, folder_norm, tag_list, depth)
        elif mode_used == "keyword":
            ranked = self.keyword_sections(query, limit, folder_norm, tag_list)
        if not ranked and not shown and self.empty_note():
            note = self.empty_note()  # not "vectors are not built yet": there is nothing to search
        reranked = False
        if self.reranker is not None and ranked:  # after fusion, before grouping: documents follow the new order
            outcome = self.reranker.rerank(query, ranked, rerank_text)
            if outcome.order is not None:
                ranked = [(ranked[i][0], score) for i, score in outcome.order]
            reranked = outcome.reranked
            note = " ".join(n for n in (note, outcome.note) if n) or None
        groups = (
            shown
            if shown is not None
            else group_by_document(
                [(s.doc_id, sc, s) for s, sc in ranked],
                depth,
                # semantic search ranks by meaning alone (the signals count the query's words); a reranker
                # has read the sections themselves, and its order stands
                bonus=self.document_bonus(query) if mode_used != "semantic" and not reranked else None,
                candidates=document_signals.CANDIDATES,
            )
        )
        if mode_used == "hybrid" and covered < 1.0 and not reranked and groups:
            # While embedding fills in, the first answer is keyword's: the vectors cover only part of the collection,
            # so their best is only the best of that part, and a near-miss with vectors must not take the top from
            # the answer without them (or from a page its rivals' vectors outvote before its own are in). They still
            # reorder and add to what follows. On the OTel questions, part-way hybrid's own first answer was never
            # better than keyword's and at 6 of 14 coverage points one question worse (benchmarks/REPORT.md,
            # "Keyword's first answer while embedding fills in").
            first = self.keyword_documents(query, limit, folder_norm, tag_list, 1)
            if first:
                groups = lead_with(groups, first[0])
        if several:
            groups, versions = self.one_answer_per_translation(groups, language, view, max_results)
            if versions:
                note = " ".join(n for n in (note, versions) if n)
        if self.embedding is not None:  # while embedding is under way, what searches return is embedded first
            self.embedding.searched_for(g.doc_id for g in groups)
        words = query_words(query)
        terms = [w for w in words if w not in QUERY_STOPWORDS] or words
        terms += identifiers(query)
        named = self.catalog.named_languages([g.doc_id for g in groups])
        results = [
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
        return SearchResult(
            query=query, mode_used=mode_used, results=results, index=self.index_info(), note=note, reranked=reranked
        )

    def fusion_coverage(self, sections: float) -> float:
        """How much of the collection the vector side ranks, for the fusion's keyword share (hybrid.coverage_share):
        the sections' coverage, plus a share (DOCUMENT_LEVEL_CREDIT) of the rest for the documents whose own vector
        stands in for their waiting sections."""
        ready, total = self._document_vectors()
        if sections >= 1.0 or not total:
            return sections
        from .store.embedded.vector_store import DOCUMENT_LEVEL_CREDIT

        return sections + (1.0 - sections) * DOCUMENT_LEVEL_CREDIT * ready / total

    def _document_vectors(self) -> tuple[int, int]:
        """(documents with their own vector, documents): (0, 0) for a store without document-level vectors."""
        counts = getattr(self.vectors, "document_vectors", None)
        return counts() if counts is not None else (0, 0)

    def coverage_note(self, mode: str, sections: float) -> str | None:
        """While embedding fills in, which level is ready: 'Document vectors ready for all 6,289 documents; sections
        12 % …'; the store's own sentence when it has no document-level vectors (PostgreSQL)."""
        assert self.vectors is not None
        ready, total = self._document_vectors() if sections < 1.0 else (0, 0)
        if not ready:
            return self.vectors.coverage_note(mode, sections)
        level = f"all {total:,} documents" if ready >= total else f"{ready:,} of {total:,} documents"
        share = 100 * sections
        percent = "<1" if 0 < share < 1 else str(min(99, int(share)))
        why = f" ({self.vectors.error})" if self.vectors.error else ""
        rest = "ranked by keyword and document vectors" if mode == "hybrid" else "found by its document's vector"
        return (
            f"Document vectors ready for {level}; sections {percent} %{why}: a document whose sections are not "
            f"embedded yet is {rest}."
        )

    def one_answer_per_translation(
        self,
        groups: list[DocumentGroup[RankedSection]],
        language: str | None,
        view: LanguageView | None,
        limit: int,
    ) -> tuple[list[DocumentGroup[RankedSection]], str | None]:
        """Documents best first → the first `limit` answers, each page and its translation merged into one entry at
        the better rank of the two, showing the version in `language` (the query's, `query_language`), or the
        better-ranked one when the query's words name no language (index/translations.py); and a sentence naming the versions left out (None
        when no pair was found: the documents are returned as they are)."""
        ids = [g.doc_id for g in groups]
        language_of: Callable[[str], str]
        if view is not None:
            language_of = view.language_of
        else:
            langs = self.catalog.languages_of(ids)
            language_of = lambda doc_id: langs.get(doc_id, "")  # noqa: E731
        sections: dict[str, int] = {}

        def same_page(a: str, b: str) -> bool:  # read once, and only when two ids could be a pair
            if not sections:
                sections.update(self.catalog.section_counts(ids))
            return translations.alike(sections.get(a, 0), sections.get(b, 0))

        declared = {}  # the pages whose front matter names their translations (translations.declared_key)
        for doc_id in ids:
            record = self.catalog.document(doc_id)
            key = translations.declared_key(record.front_matter) if record is not None else None
            if key is not None:
                declared[doc_id] = key
        answers = translations.collapse(ids, language_of, language, same_page, declared)
        answers = answers[:limit]
        if not translations.has_pairs(answers):
            return groups[:limit], None
        merged = [DocumentGroup(a.shown, groups[a.rank].score, groups[a.shown_rank].hits) for a in answers]
        listed = "; ".join(f"{a.shown} (also {', '.join(a.others)})" for a in answers if a.others)
        return merged, f"Pages found in several languages are shown once: {listed}."

    def query_language(self, query: str) -> str | None:
        """The query's language, among the collection's: the one whose function words it uses most
        (document_signals.query_language), None when it uses none (an identifier, a few names) or two tie. On the
        OpenTelemetry questions it names 93 of 110, none wrongly; the language the query's vector is closest to
        named two English identifiers French."""
        stopwords = {code: STOPWORDS[code] for code in self._languages if code in STOPWORDS}
        return document_signals.query_language(query_words(query), stopwords) or query_language_beyond_stopwords(
            query, self._languages
        )

    # -- documents (the tools read them through these: a store without the root on disk serves them itself) ------
    def resolve_id(self, doc_id: str) -> Path:
        """The file or folder an id names inside the root (see Jail.resolve_id), or FileNotFoundError."""
        return self.store.files.resolve_id(doc_id)

    def is_folder(self, path: Path) -> bool:
        return self.store.files.is_folder(path)

    def folder_exists(self, folder: str) -> bool:
        return self.store.files.folder_exists(folder)

    def has_document(self, doc_id: str) -> bool:
        return self.store.files.has_document(doc_id)

    def read_bytes(self, doc_id: str, path: Path) -> bytes:
        """The document's bytes as they are now (raises what loader.read_markdown raises)."""
        return self.store.files.read_bytes(doc_id, path)

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Block until no sync is running (tests and benchmarks use it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._sync_lock.acquire(timeout=0.05):
                self._sync_lock.release()
                return


def group_keyword_hits(
    hits: Sequence[KeywordHit], max_documents: int, bonus: Bonus | None = None
) -> list[DocumentGroup[RankedSection]]:
    """Keyword hits grouped into documents by their key before their stored fields are read: only the sections
    of the documents shown are (about 19 of 50 hits on the OpenTelemetry questions, for 5 documents). `bonus`
    is given the keys, as text."""
    groups = group_by_document(
        [(str(hit.doc_key), hit.score, hit) for hit in hits],
        max_documents,
        bonus=bonus,
        candidates=document_signals.CANDIDATES,
    )
    return [DocumentGroup(g.hits[0].section.doc_id, g.score, [h.section for h in g.hits]) for g in groups]


def rerank_text(hit: tuple[RankedSection, float]) -> str:
    """What the cross-encoder reads of a section: where it sits (its heading path), then its text."""
    return f"{hit[0].heading_path}\n{hit[0].body}"
