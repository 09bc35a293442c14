"""The library: one documents root with its index (catalog, full-text and optional vectors), opened together.

This is the narrow storage interface the tools and the CLI use: sync, search,
and catalog reads. Everything here is synchronous and thread-safe for readers;
one sync runs at a time.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .embedders import EmbedderError, model_name
from .errors import IndexBusy, IndexUnwritable, UserError
from .index import document_signals, ownership, translations
from .index.catalog import SCHEMA_VERSION, Catalog
from .index.fulltext import QUERY_STOPWORDS, FullTextIndex, KeywordHit, doc_key, identifiers, query_words
from .index.hits import RankedSection
from .index.ranking import Bonus, DocumentGroup, group_by_document, lead_with
from .index.read_only_media import writable
from .index.sync import Progress, Synchronizer, SyncReport, recover_interrupted_batch
from .language import STOPWORDS, describe_languages, query_language_beyond_stopwords
from .loader import read_markdown
from .markdown import normalize_tag
from .models import DocumentMatch, IndexInfo, SearchMode, SearchResult, SectionMatch
from .paths import Jail
from .render import plural
from .rerank import make_reranker
from .scan import Scanner, load_rules
from .settings import Settings
from .snippets import make_snippet

if TYPE_CHECKING:
    from .index.embedding_worker import EmbeddingWorker
    from .index.language_mix import LanguageView
    from .index.store_api import CatalogReader, VectorSearch

log = logging.getLogger(__name__)

# Snippets were half of a search result's JSON (OpenTelemetry questions, 220 characters for every section): a
# document's lead section keeps a window that shows why it matched, the sections after it a shorter one.
LEAD_SNIPPET_CHARS = 180
OTHER_SNIPPET_CHARS = 100
READER_REFRESH_SECONDS = 5.0  # how often a reading worker looks for languages the writer added
_GENERATION = re.compile(r"[0-9a-f]{32}")
# SQLite's primary result codes for a file this process may not write: PERM, FULL, READONLY, CANTOPEN.
_CANNOT_WRITE = frozenset({3, 13, 8, 14})


def open_library(settings: Settings, read_only: bool = False) -> Library:
    """The library of `settings`, or one sentence saying why its index cannot be opened."""
    if not read_only and settings.index_dir.is_dir() and not writable(settings.index_dir):
        # Said before anything is opened: SQLite's "unable to open database file" read as damage ("rebuilding").
        raise IndexUnwritable(
            f"the index folder {settings.index_dir} cannot be written (a read-only file system, or another user's "
            "folder): indexing and serving keep it up to date there; search, read and status answer from it as it is."
        )
    try:
        return Library(settings, read_only)
    except (OSError, sqlite3.Error) as exc:
        raise UserError(f"cannot open the index in {settings.index_dir}: {exc}") from exc


class Library:
    # What the tools, commands and fusion use, from either store (index.store_api); the embedded store keeps its
    # own SQLite catalog as `sqlite_catalog` too, for what only it does (schema checks, rebuilds, the sync).
    catalog: CatalogReader
    vectors: VectorSearch | None

    def __init__(self, settings: Settings, read_only: bool = False) -> None:
        """`read_only`: a reading HTTP worker's view of the index another process writes (see workers.py):
        nothing in the index folder is created, repaired or changed, and `sync` refuses."""
        self.settings = settings
        self.read_only = read_only
        self.jail = Jail(settings.root, load_rules(settings.root, settings.extensions))
        self.scanner = Scanner(self.jail)
        self._sync_lock = threading.Lock()
        self._embedding = False  # start_embedding() was called: a reopened vector store starts its worker too
        # Why the last sync failed as a whole (None once one succeeds): /health says "degraded" meanwhile, since
        # searches still answer from what was committed before, but changes on disk are not reaching the index.
        self.sync_error: str | None = None
        self._last_choice = ""  # the last sentence logged about the model (follow_languages)
        self._open_storage()
        self.reranker = make_reranker(settings)

    # -- lifecycle ---------------------------------------------------------------------
    def _open_storage(self) -> None:
        """Open (creating or repairing) the catalog, full-text and vector stores of the index folder."""
        settings = self.settings
        if self.read_only:
            self._open_for_reading()
            return
        ownership.claim(settings.index_dir)  # before anything is written or deleted there
        self.sqlite_catalog = Catalog.open(settings.index_dir / "catalog.sqlite")
        self.catalog = self.sqlite_catalog
        self._check_compatibility()
        self.fulltext = FullTextIndex(settings.index_dir / "fulltext", settings.language)
        self._check_generation()
        # a kill between the two commits
        recover_interrupted_batch(self.sqlite_catalog, self.fulltext, self.settings.extensions)
        self._check_fulltext_matches()
        self.synchronizer = Synchronizer(settings, self.jail, self.scanner, self.sqlite_catalog, self.fulltext)
        self._refresh_stats([], [])
        self.synchronizer.listeners.append(self._refresh_stats)
        self.vectors = None
        self.embedding: EmbeddingWorker | None = None
        if settings.embeddings != "none":
            self._open_vectors()

    def _open_vectors(self, model: str | None = None) -> None:
        """`model`: the local model decided for this index (follow_languages); by default the one its vectors have."""
        # Opening the store is cheap: the model loads on the first embedding (worker or query).
        from .index.embedding_worker import EmbeddingWorker
        from .index.vector_store import VectorStore

        store = VectorStore.open(self.settings, self.sqlite_catalog, model=model)
        self.vectors = store
        self.embedding = EmbeddingWorker(store, self.jail, self.settings)
        self.synchronizer.listeners.append(self.embedding.on_sync)

    def follow_languages(self) -> None:
        """After a sync: the model is decided once per index from the collection's language mix, and changed only
        when that mix clearly changed (index/model_choice.py); the decision and any refusal to change are logged.
        A new model's vectors replace the old ones (a store holds one model's), so everything is embedded again,
        in the background; keyword search answers meanwhile and `status` shows the progress."""
        vectors, worker = self.vectors, self.embedding
        if vectors is None or worker is None or vectors.embedder is None:
            return
        from .index.model_choice import LanguageMix, choose

        mix = LanguageMix.of(self.language_counts, self.sqlite_catalog.language_tokens())
        current = model_name(vectors.embedder.model_id)
        store = worker.store  # the embedded store's own: the decision is kept with its vectors
        choice = choose(self.settings, mix, current, store.chosen_for(), vectors.embedded_chunks() > 0)
        if choice.why and choice.why != self._last_choice:
            log.info("%s", choice.why)  # once per reason, not after every sync of the watcher
            self._last_choice = choice.why
        if choice.model is None or choice.model == current:
            if choice.record:
                store.set_chosen_for(mix)
            return
        chunks = vectors.status()["chunks"]
        if chunks:
            log.info("its %s will be embedded again", plural(chunks, "chunk"))
        worker.stop()  # before the new store empties the old vectors: the thread writes them
        self.synchronizer.listeners.remove(worker.on_sync)
        self._open_vectors(choice.model)  # searches running meanwhile finish on the old store, closed next
        vectors.close()
        assert self.embedding is not None
        self.embedding.store.set_chosen_for(mix)
        if self._embedding:
            self.start_embedding()

    def _open_for_reading(self) -> None:
        settings = self.settings
        if not ownership.is_owned(settings.index_dir):
            raise OSError("no index there yet (the writing worker creates it)")
        self.sqlite_catalog = Catalog(settings.index_dir / "catalog.sqlite", read_only=True)
        self.catalog = self.sqlite_catalog
        self.fulltext = FullTextIndex(settings.index_dir / "fulltext", settings.language, read_only=True)
        self._refresh_stats([], [])
        self.vectors = None
        self.embedding = None  # the writing worker embeds; a reader only queries the vectors it wrote
        if settings.embeddings != "none":
            from .index.vector_store import VectorStore

            self.vectors = VectorStore.open(settings, self.sqlite_catalog, read_only=True)

    def _check_compatibility(self) -> None:
        """Rebuild from scratch when the catalog schema, the root or the root language changed."""
        expected = {
            "schema_version": str(SCHEMA_VERSION),
            "root": str(self.settings.root),
            "language": self.settings.language,
        }
        stored = {k: self.sqlite_catalog.get_meta(k) for k in expected}
        if stored == expected:
            return
        if any(v is not None for v in stored.values()):
            log.info("index settings changed (%s): rebuilding", {k: v for k, v in stored.items() if v != expected[k]})
            self.sqlite_catalog.clear()
            fulltext_dir = self.settings.index_dir / "fulltext"
            if fulltext_dir.exists():
                ownership.remove(fulltext_dir)
        for key, value in expected.items():
            self.sqlite_catalog.set_meta(key, value)

    def _check_generation(self) -> None:
        """If the full-text folder was recreated (schema change, corruption), the catalog must forget too."""
        marker = self.fulltext.path / "generation"
        generation = marker.read_text(errors="replace").strip() if marker.exists() else ""
        if not _GENERATION.fullmatch(generation):  # missing or damaged: a new generation, so a full rebuild
            generation = uuid.uuid4().hex
            marker.write_text(generation)
        if self.sqlite_catalog.get_meta("fulltext_generation") != generation:
            self.sqlite_catalog.clear()
            self.sqlite_catalog.set_meta("fulltext_generation", generation)

    def _check_fulltext_matches(self) -> None:
        """Tantivy silently starts an empty index when its meta.json is lost: if the full-text index holds
        far fewer sections than the catalog lists, the catalog forgets everything and the next sync re-adds it.
        (A crash leaves at most one batch of difference, which the next sync repairs by itself; should that
        batch exceed half the index, this rebuild is only slower than needed, never wrong.)"""
        catalogued = self.catalog.section_total()
        if catalogued and self.fulltext.num_sections() < catalogued // 2:
            log.warning(
                "the full-text index holds %d sections but the catalog lists %d: rebuilding the index",
                self.fulltext.num_sections(),
                catalogued,
            )
            self.sqlite_catalog.clear()

    def storage_lost(self) -> bool:
        """The index folder (or its marker) vanished under us, for example deleted by hand while serving."""
        return not ownership.is_owned(self.settings.index_dir)

    def location(self) -> str:
        """Where the index lives, as a person reads it."""
        return str(self.settings.index_dir)

    def health_problem(self) -> str | None:
        """Why the index cannot answer right now (for /health), or None."""
        if self.storage_lost():  # deleted under us: the watcher's next sync recreates it
            return "the index folder is missing; it is being rebuilt"
        return None

    def _reopen_storage(self) -> None:
        log.warning("the index folder %s was deleted or emptied: recreating it and reindexing", self.settings.index_dir)
        self._close_vectors()
        self.catalog.close()
        self._open_storage()
        if self._embedding:
            self.start_embedding()

    def close(self) -> None:
        self._close_vectors()
        if self.reranker is not None:
            self.reranker.close()
        self.catalog.close()

    def _close_vectors(self) -> None:
        if self.embedding is not None:
            self.embedding.stop()  # before the store: the thread writes to it
        if self.vectors is not None:
            self.vectors.close()

    def start_embedding(self) -> None:
        """Fill the vectors in a background thread (the server calls this); keyword search answers meanwhile."""
        self._embedding = True
        if self.embedding is not None:
            self.embedding.start()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sync --------------------------------------------------------------------------------
    def sync(self, paths: Iterable[str] | None = None, progress: Progress | None = None) -> SyncReport:
        if self.read_only:
            raise IndexBusy("this worker only reads the index; the writing worker keeps it up to date")
        with self._sync_lock, self.recording_sync_errors():
            if self.storage_lost():
                self._reopen_storage()
                paths = None  # everything must be indexed again
            try:
                report = self.synchronizer.run(paths, progress)
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in _CANNOT_WRITE:
                    raise
                raise IndexUnwritable(
                    f"cannot write the index in {self.settings.index_dir} ({exc}): check that this user may "
                    "write that folder and its files, or choose another --index-dir"
                ) from exc
            self.follow_languages()
            return report

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
    ) -> list[KeywordHit]:
        if self.read_only:
            if self.sqlite_catalog.committed_elsewhere():
                # Without this, a reader answered "nothing found" for up to a second after the writer's commit
                # while its catalog (and /health) already counted the new documents.
                self.fulltext.reload()
            if time.monotonic() - self._languages_at > READER_REFRESH_SECONDS:
                self._refresh_stats([], [])  # the writer may have indexed documents of another language meanwhile
        q = self.fulltext.build_query(query, self._languages, folder or None, list(tags))
        if q is None:
            return []
        return self.fulltext.search_hits(q, limit)

    def keyword_documents(
        self, query: str, limit: int, folder: str | None, tags: Iterable[str], max_documents: int
    ) -> list[DocumentGroup[RankedSection]]:
        """The keyword search's documents, best first; another store overrides this with its own hits."""
        hits = self.keyword_hits(query, limit, folder, tags)
        return group_keyword_hits(hits, max_documents, self.document_bonus(query, by_key=True))

    def document_bonus(self, query: str, by_key: bool = False, fused: bool = False) -> Bonus | None:
        """Document-level evidence for the best documents of `query` (index/document_signals.py): their ids
        (or, `by_key`, their full-text keys as text) → the share of the best score each one gains. It reads
        the catalog rows of those documents only, and analyses the query once, on first use. `fused`: the
        scores are hybrid's (document_signals.coverage_weight)."""
        fulltext, catalog, languages = self.fulltext, self.sqlite_catalog, self._languages

        def bonus(ids: Sequence[str]) -> dict[str, float]:
            keys = {(int(i) if by_key else doc_key(i)): i for i in ids}
            found = catalog.document_terms(keys)
            if not found:
                return {}
            signals = fulltext.query_signals(query, languages)
            return {keys[k]: signals.bonus(terms, fused) for k, terms in found.items()}

        return bonus

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
                bonus=self.document_bonus(query, fused=mode_used == "hybrid")
                if mode_used != "semantic" and not reranked
                else None,
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
        from .index.vector_store import DOCUMENT_LEVEL_CREDIT

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

    # -- documents (the tools read them through these, so another store may serve them) ---------------------
    def resolve_id(self, doc_id: str) -> Path:
        """The file or folder an id names inside the root (see Jail.resolve_id), or FileNotFoundError."""
        return self.jail.resolve_id(doc_id)

    def is_folder(self, path: Path) -> bool:
        return path.is_dir()

    def folder_exists(self, folder: str) -> bool:
        jail = self.jail
        try:
            return os.path.isdir(jail.check_servable(jail.root / folder, folder=True))
        except (OSError, ValueError):  # outside, excluded (told apart from missing in no way), or unreadable
            return False

    def has_document(self, doc_id: str) -> bool:
        try:
            return os.path.isfile(os.path.join(self.jail.root, doc_id))  # per result: no Path objects
        except (OSError, ValueError):
            return False

    def read_bytes(self, doc_id: str, path: Path) -> bytes:
        """The document's bytes as they are now (raises what loader.read_markdown raises)."""
        return read_markdown(self.jail, path, self.settings.max_file_bytes)

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Block until no sync is running (tests and benchmarks use it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._sync_lock.acquire(timeout=0.05):
                self._sync_lock.release()
                return


def group_keyword_hits(
    hits: list[KeywordHit], max_documents: int, bonus: Bonus | None = None
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
