"""What the catalog keeps of a document, a section, a link and a file's fingerprint, as typed records, and how a
record is a documents-table row (the same columns in the SQLite catalog and the PostgreSQL store). Split from
catalog.py, which reads and writes them, so that module stays about the SQLite file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...links import Name


@dataclass(frozen=True)
class SectionRecord:
    idx: int
    heading: str
    heading_path: str
    level: int
    line_start: int
    line_end: int
    subtree_end: int
    tokens: int


@dataclass(frozen=True)
class DocumentRecord:
    id: str
    folder: str
    hash: str
    mtime_ns: int
    size: int
    title: str
    summary: str
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    front_matter: dict[str, Any]
    lang: str
    links: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...]
    tokens: int
    indexed_at: float = 0.0
    names: tuple[Name, ...] = ()  # how links can name it: file name, folder (index notes), aliases
    # The language its front matter or the detector names (ISO 639-1), None when undecided: what agents are told.
    # `lang` is the language it is analysed in: this one, else the root's.
    language: str | None = None


@dataclass(frozen=True)
class LinkRecord:
    """The links from `doc_id` to one target, the first as written, and how many times it is written there.
    Stored with what it resolves to (`resolved`), which each sync brings up to date for the rows a document
    added, removed or renamed may change (those of its names' keys: `PENDING` until resolved)."""

    doc_id: str
    line: int
    kind: str
    target: str
    heading: str | None
    key: str
    count: int = 1
    n: int = 0  # its row in the document's links


@dataclass(frozen=True)
class Fingerprint:
    hash: str
    size: int
    mtime_ns: int


def folder_of(doc_id: str) -> str:
    return doc_id.rsplit("/", 1)[0] if "/" in doc_id else ""


def document_row(doc: DocumentRecord, indexed_at: float) -> tuple[Any, ...]:
    """A record as a documents-table row (the columns in table order, also the PostgreSQL store's)."""
    return (
        doc.id,
        doc.folder,
        doc.hash,
        doc.mtime_ns,
        doc.size,
        doc.title,
        doc.summary,
        json.dumps(list(doc.tags)),
        json.dumps(list(doc.aliases)),
        json.dumps(doc.front_matter, ensure_ascii=False, default=str),
        doc.lang,
        json.dumps(list(doc.links), ensure_ascii=False),
        json.dumps(list(doc.warnings)),
        doc.tokens,
        indexed_at,
        doc.language,
    )


def document_from_row(row: tuple[Any, ...]) -> DocumentRecord:
    """A documents-table row (its columns in table order, also the PostgreSQL store's) as a record."""
    return DocumentRecord(
        id=row[0],
        folder=row[1],
        hash=row[2],
        mtime_ns=row[3],
        size=row[4],
        title=row[5],
        summary=row[6],
        tags=tuple(json.loads(row[7])),
        aliases=tuple(json.loads(row[8])),
        front_matter=json.loads(row[9]),
        lang=row[10],
        links=tuple(json.loads(row[11])),
        warnings=tuple(json.loads(row[12])),
        tokens=row[13],
        indexed_at=row[14],
        language=row[15],
    )
