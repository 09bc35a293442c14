"""The one embedding worker, whichever store keeps the vectors: it fills a `store.api.VectorWriter` (the embedded
store's sqlite-vec `VectorStore`, PostgreSQL's pgvector `PgVectors`), in the foreground (`mcp-docs index`) or in a
background thread (a server that writes).

One pass: re-chunk the documents the store marks stale (reading them through the jail), then embed
the chunks still without a vector, EMBED_BATCH per write transaction, so an interrupted run resumes
where it stopped. Every document's own unit (title and lead, chunking.document_chunk) comes before any
section chunk: one vector per document makes semantic search cover the whole collection early (the Obsidian help
vault: 6,289 units against 57,678 section chunks). Order of embedding, within each level, so a live server
improves where it matters first:
1. the documents recent searches returned, the most recent search first;
2. the other documents of their folders (what a user looks at next is often next to it);
3. the rest, newest first (the last modified documents are chunked last and get the highest ids).
A chunk the embedder rejects on its own is marked FAILED and skipped; a failing embedder (model, endpoint)
stops the run, keeps its reason in the store for `status` and search notes, and the thread retries later.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence

from ..embedders import EmbedderError
from ..errors import DatabaseUnavailable, ParseTimeout
from ..loader import content_hash, file_stem, parse_file, read_markdown
from ..markdown import ParsedDocument
from ..paths import Jail
from ..settings import Settings
from ..store.api import PendingChunk, VectorWriter
from ..store.embedded.records import folder_of  # the folder both stores record (a pure function)

log = logging.getLogger(__name__)

EMBED_BATCH = 32  # chunks per write transaction and per stop check (the embedder batches further)
CHUNK_COMMIT_DOCS = 200
IDLE_WAIT_SECONDS = 30.0
RETRY_SECONDS = 60.0
RATE_SAVE_SECONDS = 10.0  # how often the measured rate is saved (for `mcp-docs status` in another process)
# How many documents and folders of recent searches are remembered for the order (older ones drop out).
SEARCHED_DOCS = 50
SEARCHED_FOLDERS = 10

ProgressFn = Callable[[int, int], None]


class SearchedFirst:
    """The documents and folders recent searches returned, most recent first, bounded (thread-safe)."""

    def __init__(self, docs: int = SEARCHED_DOCS, folders: int = SEARCHED_FOLDERS) -> None:
        self._max_docs, self._max_folders = docs, folders
        self._docs: OrderedDict[str, None] = OrderedDict()
        self._folders: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def note(self, doc_ids: Sequence[str]) -> None:
        """One search's results, best first: they go before everything remembered so far."""
        with self._lock:
            for doc_id in reversed(doc_ids):
                _push(self._docs, doc_id, self._max_docs)
            for folder in reversed(list(dict.fromkeys(folder_of(d) for d in doc_ids))):
                _push(self._folders, folder, self._max_folders)

    def order(self) -> tuple[list[str], list[str]]:
        with self._lock:
            return list(self._docs), list(self._folders)


def _push(items: OrderedDict[str, None], key: str, limit: int) -> None:
    items[key] = None
    items.move_to_end(key, last=False)
    while len(items) > limit:
        items.popitem()


class EmbeddingWorker:
    def __init__(self, store: VectorWriter, jail: Jail, settings: Settings) -> None:
        self.store = store
        self.jail = jail
        self.settings = settings
        self.searched = SearchedFirst()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- what to embed first -------------------------------------------------------------------
    def on_sync(self, changed_ids: list[str], deleted_ids: list[str]) -> None:
        """Synchronizer listener: the store marks the changes, the thread wakes up for them."""
        self.store.on_sync(changed_ids, deleted_ids)
        if changed_ids:
            self._wake.set()

    def searched_for(self, doc_ids: Iterable[str]) -> None:
        """A search returned these documents (best first): embed them, then their folders, before the rest."""
        self.searched.note(list(doc_ids))

    # -- chunking ------------------------------------------------------------------------------
    def chunk_dirty(self, stop: threading.Event | None = None, progress: ProgressFn | None = None) -> int:
        """Re-chunk the documents the store marks stale, keeping the chunks (and vectors) whose content did not change.

        Least recently modified first: chunk ids grow in that order, and the newest chunks are embedded
        first, so the documents a user just edited get their vectors first."""
        store = self.store
        if store.embedder is None:
            return 0
        dirty = sorted(store.dirty())
        total = len(dirty)
        # A few edited files (the watcher's case) are looked up one by one, a first build reads them all at once.
        fingerprints = store.catalog.fingerprints(dirty if total <= CHUNK_COMMIT_DOCS else None) if total else {}
        mtimes = {doc_id: fp.mtime_ns for doc_id, fp in fingerprints.items()}
        done = 0
        while not (stop and stop.is_set()):
            batch = sorted(store.dirty(), key=lambda d: (mtimes.get(d, 0), d))[:CHUNK_COMMIT_DOCS]
            if not batch:
                break
            store.store_documents([(doc_id, *self._read(doc_id)) for doc_id in batch])
            done += len(batch)
            if progress:
                progress(done, max(total, done))
        return done

    def _read(self, doc_id: str) -> tuple[str | None, ParsedDocument | None]:
        try:
            path = self.jail.resolve_id(doc_id)
            data = read_markdown(self.jail, path, self.settings.max_file_bytes)
        except (OSError, ValueError) as exc:  # unreadable, outside, too large, binary: the sync skipped it too
            log.debug("cannot read %s for embedding: %s", doc_id, exc)
            return None, None
        try:
            parsed = parse_file(data, file_stem(doc_id), self.settings.parse_seconds).parsed
        except ParseTimeout as exc:
            log.debug("not embedding %s: %s", doc_id, exc)
            return None, None
        except Exception:  # a parser bug must not stop the worker
            log.exception("could not parse %s for embedding", doc_id)
            return None, None
        return content_hash(data), parsed

    # -- embedding -----------------------------------------------------------------------------
    def embed_pending(
        self,
        stop: threading.Event | None = None,
        progress: ProgressFn | None = None,
        total: int | None = None,
    ) -> int:
        """Embed chunks not embedded yet, in the order above, committing every EMBED_BATCH (an interrupted run resumes)."""
        store = self.store
        if store.embedder is None:
            return 0
        store.embedder.load()
        total = total if total is not None else store.pending_chunks()
        done = 0
        started = saved = time.perf_counter()
        if progress:
            progress(0, total)  # the total is known before the first batch ends
        while not (stop and stop.is_set()):
            if store.dirty():
                self.chunk_dirty(stop)
            rows = store.pending_batch(EMBED_BATCH, *self.searched.order())
            if not rows:
                break
            self._embed_rows(rows)
            done += len(rows)
            now = time.perf_counter()
            store.last_rate = done / (now - started) if now > started else None
            if now - saved > RATE_SAVE_SECONDS:
                saved = now
                store.save_rate()
            if progress:
                progress(done, max(total, done))
        if done:
            store.save_rate()
        return done

    def embed_documents(self, stop: threading.Event | None = None) -> int:
        """Embed only the document-level units still waiting (the first phase of `embed_pending`); returns how many."""
        store = self.store
        if store.embedder is None:
            return 0
        store.embedder.load()
        done = 0
        while not (stop and stop.is_set()):
            if store.dirty():
                self.chunk_dirty(stop)
            rows = [r for r in store.pending_batch(EMBED_BATCH, *self.searched.order()) if r[0] < 0]
            if not rows:
                break
            self._embed_rows(rows)
            done += len(rows)
        return done

    def _embed_rows(self, rows: Sequence[PendingChunk]) -> None:
        """Embed and store one batch; an input the embedder rejects is marked FAILED alone, the others are stored."""
        store = self.store
        assert store.embedder is not None
        texts = list(dict.fromkeys(text for _, text in rows))  # the same text twice in a batch is embedded once
        try:
            unique = store.embedder.embed_passages(texts)
        except EmbedderError:
            raise  # the embedder itself cannot run (model, endpoint): nothing is marked, the run stops
        except Exception as exc:
            if len(rows) == 1:
                cid = rows[0][0]
                log.warning("chunk %d of %s cannot be embedded (%s): skipped", cid, store.doc_of(cid), exc)
                store.mark_failed(cid)
                return
            for row in rows:  # find the culprit: one at a time
                self._embed_rows([row])
            return
        by_text = dict(zip(texts, unique, strict=False))
        store.store_vectors([(cid, by_text[text]) for cid, text in rows if text in by_text])

    def build(self, progress: ProgressFn | None = None, chunking: ProgressFn | None = None) -> int:
        """Bring the vectors up to date in the foreground (`mcp-docs index`); returns the chunks embedded.

        `chunking` hears (documents read, documents to read), then `progress` (chunks embedded, to embed)."""
        store = self.store
        if store.embedder is None:
            return 0
        store.refresh()
        self.chunk_dirty(progress=chunking)
        try:
            done = self.embed_pending(progress=progress)
        except EmbedderError as exc:
            store.set_error(str(exc))
            raise
        store.set_error(None)
        return done

    # -- background thread ---------------------------------------------------------------------
    def start(self) -> None:
        """Embed in a background thread: keyword search answers meanwhile, new changes are picked up as they come."""
        if self.store.embedder is None or self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="mcp-docs-embedder", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        store = self.store
        while not self._stop.is_set():
            self._wake.clear()
            try:
                store.refresh()
                store.busy = True
                self.chunk_dirty(self._stop)
                self.embed_pending(self._stop)
                store.set_error(None)
                wait = IDLE_WAIT_SECONDS
            except EmbedderError as exc:
                log.warning("embedding failed: %s (retrying in %.0fs)", exc, RETRY_SECONDS)
                store.set_error(str(exc))
                wait = RETRY_SECONDS
            except DatabaseUnavailable as exc:  # the store's database is away (/health says so): try again later
                log.warning("%s; embedding again in %.0fs", exc, RETRY_SECONDS)
                wait = RETRY_SECONDS
            except Exception as exc:  # the worker must survive anything; keyword search is unaffected
                if self._stop.is_set():
                    break
                log.exception("embedding worker error")
                store.error = f"{type(exc).__name__}: {exc}"
                wait = RETRY_SECONDS
            finally:
                store.busy = False
            self._wake.wait(wait)
        store.close_thread_connection()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until nothing is pending (tests and benchmarks use it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.store.busy and self.store.pending() == 0:
                return True
            time.sleep(0.05)
        return False

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)
