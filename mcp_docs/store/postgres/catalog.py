"""The catalog's reads over PostgreSQL: what the tools, `status` and the link graph ask of `store.embedded.catalog.Catalog`
(documents, sections, tags, links, names, problems), with the same answers, so they run unchanged on either store.

It implements `index.store_api.CatalogReader` (as Catalog does), in SQL on the `mcp_docs_` tables, plus what the
PostgreSQL writer and library need besides (fingerprints, the stored bytes, folders).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any

from ...links import Name
from ...scan import Problem
from ..embedded.catalog import DocumentRecord, Fingerprint, LinkRecord, SectionRecord, document_from_row
from .database import Database

DOC_COLUMNS = (
    "id, folder, hash, mtime_ns, size, title, summary, tags, aliases, front_matter, lang, links, warnings, tokens, "
    "indexed_at, language"
)


# How long what a keyword query read besides its sections (`PgCatalog.remember`) answers the same search's next
# questions: a search asks them within milliseconds; past this, they are read from the database again.
REMEMBER_SECONDS = 1.0


@dataclass
class _Remembered:
    """What this thread's last keyword query read besides its sections: each answers one later question once."""

    languages: dict[str, str | None] | None
    documents: int | None
    detected: dict[str, str] | None  # `languages_of`: the language each document was indexed in
    records: dict[str, DocumentRecord] | None  # `document`, in a collection of several languages
    at: float


class PgCatalog:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._remembered = threading.local()

    def remember(
        self,
        languages: dict[str, str | None],
        documents: int,
        detected: dict[str, str],
        records: dict[str, DocumentRecord] | None = None,
    ) -> None:
        """The named languages of a keyword query's documents and the number of documents, read in the query's
        own round trip (`PostgresStore.keyword_hits`): the search that ran it asks for both next (its results'
        languages, its index line; in a collection of several languages, the language each was indexed in and its
        document row), which then cost no round trip of their own. Per thread (each search runs on
        one), each used once, and only for REMEMBER_SECONDS, so another caller later on this thread (/health, a
        link lookup) reads the database as before. Search results themselves are never kept across calls."""
        self._remembered.last = _Remembered(languages, documents, detected, records, time.monotonic())

    def _recall(self) -> _Remembered | None:
        last: _Remembered | None = getattr(self._remembered, "last", None)
        if last is None or time.monotonic() - last.at > REMEMBER_SECONDS:
            self._remembered.last = None
            return None
        return last

    def close(self) -> None:
        self.db.close()

    # -- reads -----------------------------------------------------------------------------
    def fingerprints(self, paths: Any = None) -> dict[str, Fingerprint]:
        """Every document's fingerprint, or only those at or under `paths` (one index lookup per path, not all
        rows: the watcher's one-file sync of a large root stays fast). Under a path is in its folder or below it,
        which the folder's index finds."""
        columns = "select id, hash, size, mtime_ns from mcp_docs_documents"
        if paths is None:
            rows = self.db.rows(columns)
        else:
            wanted = sorted(set(paths))
            rows = self.db.rows(
                f"{columns} where id = any(%s) or folder = any(%s) or folder like any(%s)",
                (wanted, wanted, [_under(p) for p in wanted]),
            )
        return {r[0]: Fingerprint(r[1], r[2], r[3]) for r in rows}

    def document(self, doc_id: str) -> DocumentRecord | None:
        last = self._recall()
        if last is not None and last.records is not None and doc_id in last.records:
            return last.records.pop(doc_id)
        rows = self.db.rows(f"select {DOC_COLUMNS} from mcp_docs_documents where id = %s", (doc_id,))
        return document_from_row(rows[0]) if rows else None

    def sections(self, doc_id: str) -> list[SectionRecord]:
        rows = self.db.rows(
            "select idx, heading, heading_path, level, line_start, line_end, subtree_end, tokens "
            "from mcp_docs_sections where doc_id = %s order by idx",
            (doc_id,),
        )
        return [SectionRecord(*r) for r in rows]

    def section_counts(self, doc_ids: list[str]) -> dict[str, int]:
        if not doc_ids:
            return {}
        rows = self.db.rows(
            "select doc_id, count(*) from mcp_docs_sections where doc_id = any(%s) group by doc_id", (doc_ids,)
        )
        return {r[0]: int(r[1]) for r in rows}

    def front_matters(self, doc_ids: list[str]) -> dict[str, dict[str, Any]]:
        if not doc_ids:
            return {}
        last = self._recall()
        if last is not None and last.records is not None and all(d in last.records for d in doc_ids):
            # the keyword statement's document rows (`remember`), each used once: the search's next question costs
            # no round trip (its translations' keys, search/languages.py)
            return {d: last.records.pop(d).front_matter for d in doc_ids}
        rows = self.db.rows("select id, front_matter from mcp_docs_documents where id = any(%s)", (doc_ids,))
        return {r[0]: json.loads(r[1]) for r in rows}

    def named_languages(self, doc_ids: list[str]) -> dict[str, str | None]:
        if not doc_ids:
            return {}
        last = self._recall()
        if last is not None and last.languages is not None and all(d in last.languages for d in doc_ids):
            known, last.languages = last.languages, None
            return {d: known[d] for d in doc_ids}
        rows = self.db.rows("select id, language from mcp_docs_documents where id = any(%s)", (doc_ids,))
        return {r[0]: r[1] for r in rows}

    def languages_of(self, doc_ids: list[str]) -> dict[str, str]:
        if not doc_ids:
            return {}
        last = self._recall()
        if last is not None and last.detected is not None and all(d in last.detected for d in doc_ids):
            known, last.detected = last.detected, None
            return {d: known[d] for d in doc_ids}
        rows = self.db.rows("select id, lang from mcp_docs_documents where id = any(%s)", (doc_ids,))
        return {r[0]: r[1] for r in rows}

    def ids(self) -> list[str]:
        return [r[0] for r in self.db.rows("select id from mcp_docs_documents order by id")]

    def count(self) -> int:
        last = self._recall()
        if last is not None and last.documents is not None:
            documents, last.documents = last.documents, None
            return documents
        return int(self.db.value("select count(*) from mcp_docs_documents"))

    def section_total(self) -> int:
        return int(self.db.value("select count(*) from mcp_docs_sections"))

    def language_counts(self) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self.db.rows("select lang, count(*) from mcp_docs_documents group by lang")}

    def problems(self) -> list[Problem]:
        return [Problem(*r) for r in self.db.rows("select path, kind, detail from mcp_docs_problems order by path")]

    def documents_with_warnings(self) -> list[tuple[str, list[str]]]:
        rows = self.db.rows("select id, warnings from mcp_docs_documents where warnings != '[]' order by id")
        return [(r[0], json.loads(r[1])) for r in rows]

    def content(self, doc_id: str) -> bytes | None:
        """The document's bytes as the writer read them (readers may have no copy of the root)."""
        value = self.db.value("select content from mcp_docs_documents where id = %s", (doc_id,))
        return None if value is None else bytes(value)

    def is_folder(self, folder: str) -> bool:
        return bool(
            self.db.value(
                "select exists(select 1 from mcp_docs_documents where folder = %s or folder like %s)",
                (folder, _under(folder)),
            )
        )

    # -- links ------------------------------------------------------------------------------
    def names(self, keys: Any) -> list[Name]:
        rows = self.db.rows(
            "select key, doc_id, kind, alias from mcp_docs_doc_names where key = any(%s)", (sorted(set(keys)),)
        )
        return [Name(*r) for r in rows]

    def names_of(self, doc_id: str) -> list[Name]:
        rows = self.db.rows("select key, doc_id, kind, alias from mcp_docs_doc_names where doc_id = %s", (doc_id,))
        return [Name(*r) for r in rows]

    def all_names(self) -> list[Name]:
        return [Name(*r) for r in self.db.rows("select key, doc_id, kind, alias from mcp_docs_doc_names")]

    def links(self, keys: Any = None, *, unresolved: bool = False) -> list[LinkRecord]:
        columns = "select doc_id, line, kind, target, heading, key, count from mcp_docs_links"
        if unresolved:  # stored as resolving to no note (''), or not resolved yet (null): what status lists
            rows = self.db.rows(f"{columns} where resolved is null or resolved = '' order by doc_id, n")
        elif keys is None:
            rows = self.db.rows(f"{columns} order by doc_id, n")
        else:
            rows = self.db.rows(f"{columns} where key = any(%s) order by doc_id, n", (sorted(set(keys)),))
        return [LinkRecord(*r) for r in rows]

    def folders(self) -> list[str]:
        """Every folder that holds a document."""
        return [
            r[0] for r in self.db.rows('select distinct folder collate "C" as f from mcp_docs_documents order by f')
        ]

    def linking(self, doc_id: str, limit: int) -> tuple[list[str], int]:
        """The first `limit` documents (by id) that link to `doc_id`, and how many there are (the index)."""
        sql = "from mcp_docs_links where resolved = %s and doc_id != %s"
        total = int(self.db.value(f"select count(distinct doc_id) {sql}", (doc_id, doc_id)))
        rows = self.db.rows(
            f'select distinct doc_id collate "C" as d {sql} order by d limit %s', (doc_id, doc_id, limit)
        )
        return [r[0] for r in rows], total

    def list_documents(
        self,
        folder: str,
        tag: str | None,
        limit: int,
        offset: int,
        ids: list[str] | None = None,
        linked_to: str | None = None,
    ) -> tuple[list[DocumentRecord], int]:
        where, args = _filters(folder, tag, ids, linked_to)
        clause = ("where " + " and ".join(where)) if where else ""
        total = int(self.db.value(f"select count(*) from mcp_docs_documents {clause}", args))
        rows = self.db.rows(
            f'select {DOC_COLUMNS} from mcp_docs_documents {clause} order by id collate "C" limit %s offset %s',
            [*args, limit, offset],
        )
        return [document_from_row(r) for r in rows], total

    def subfolders(
        self, folder: str, tag: str | None, ids: list[str] | None = None, linked_to: str | None = None
    ) -> list[tuple[str, int]]:
        where, args = _filters(folder, tag, ids, linked_to)
        where.append("folder != %s")
        args.append(folder)
        skip = len(folder) + 1 if folder else 0
        rows = self.db.rows(
            "select child, count(*) from (select case when strpos(substr(folder, %s), '/') > 0 "
            "then substr(folder, 1, %s + strpos(substr(folder, %s), '/') - 1) else folder end as child "
            f'from mcp_docs_documents where {" and ".join(where)}) c group by child order by child collate "C"',
            [skip + 1, skip, skip + 1, *args],
        )
        return [(r[0], int(r[1])) for r in rows]


def _under(folder: str) -> str:
    """The LIKE pattern of everything below `folder` (its own wildcards escaped)."""
    return folder.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"


def _filters(
    folder: str, tag: str | None, ids: list[str] | None, linked_to: str | None = None
) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    args: list[Any] = []
    if linked_to is not None:  # its backlinks: the indexed resolved targets of the link rows
        where.append("id in (select doc_id from mcp_docs_links where resolved = %s) and id != %s")
        args += [linked_to, linked_to]
    if folder:
        where.append("(folder = %s or folder like %s)")
        args += [folder, _under(folder)]
    if tag:
        where.append("id in (select doc_id from mcp_docs_doc_tags where tag = %s)")
        args.append(tag)
    if ids is not None:
        where.append("id = any(%s)")
        args.append(ids)
    return where, args
