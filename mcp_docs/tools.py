"""The four document tools as plain typed Python over a Library (no MCP here).

Every method returns a result model from `models.py` or raises `ToolInputError`
with one sentence the model can act on (the closest ids, the list of headings,
what to change). Reads always come from the file on disk at call time, so an
edited file is never served stale and a deleted one is never served at all.

The pure helpers live beside it: argument checks in `tool_arguments.py`, budget fitting in `budget.py`,
section and id matching in `section_match.py`, outline and summary text in `outline.py`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from .budget import MAX_MAX_CHARS, _json_tokens, cut, fit_search, fitting
from .errors import (
    BinaryContent,
    DocumentNotFound,
    FileTooLarge,
    FolderNotFound,
    ParseTimeout,
    PathOutsideRoot,
    PathRefused,
    ToolInputError,
)
from .library import Library
from .link_graph import LinkGraph
from .links import Target, anchor, describe, parse_target
from .loader import content_hash, decode, file_stem
from .markdown import (
    Link,
    ParsedDocument,
    normalize_tag,
    normalize_text,
    section_text,
)
from .models import (
    HEADING_CHARS,
    DocumentEntry,
    FolderEntry,
    ListResult,
    ReadDocumentResult,
    ReadMode,
    ReadSectionResult,
    SearchMode,
    SearchResult,
)
from .outline import outline, outline_of, summary
from .parse_cache import ParseCache
from .paths import printable
from .search.request import clamp_max_results
from .section_match import ID_CHARS, LISTED_CHARS, closest_ids, match_anchor, match_section
from .snippets import clip_list
from .tokens import estimate_tokens
from .tool_arguments import _choice, _int, _no_nul, _unicode

log = logging.getLogger(__name__)

DEFAULT_MAX_CHARS = 8000
MIN_MAX_CHARS = 200
MAX_QUERY_CHARS = 1000
MAX_TAGS = 20
_NO_TAG = "Tag '{tag}' names no tag (only '#' and spaces): give a tag name such as 'project' or '#project'."
MAX_LIST_LIMIT = 200
DEFAULT_SEARCH_CHARS = (
    24_000  # JSON; ~5k chars for five typical results, and 20 fit (~12k tokens with the text, worst case)
)
MIN_SEARCH_CHARS = 1000
LIST_DOCUMENTS_CHARS = 40_000  # one list_documents page (JSON), ~170 typical entries; the rest goes to next_cursor
LIST_FOLDERS_CHARS = 6000
# A document this large gets its outline from the catalog rather than a parse (`_stored_outline`).
STORED_OUTLINE_BYTES = 1_000_000
SEARCH_MODES: tuple[SearchMode, ...] = ("hybrid", "keyword", "semantic")
READ_MODES: tuple[ReadMode, ...] = ("full", "outline", "summary")


def iso_utc(mtime_ns: int) -> str:
    return datetime.fromtimestamp(mtime_ns / 1e9, tz=UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class LoadedDocument:
    id: str
    path: Path
    parsed: ParsedDocument
    text: str
    heading: str | None = None  # the '#heading' of a link target given as the id


class DocsTools:
    def __init__(self, library: Library) -> None:
        self.library = library
        self.parse_cache = ParseCache()

    # -- search_documents -----------------------------------------------------------------
    def search_documents(
        self,
        query: str,
        max_results: int = 5,
        mode: str = "hybrid",
        folder: str | None = None,
        tags: list[str] | None = None,
        max_chars: int = DEFAULT_SEARCH_CHARS,
    ) -> SearchResult:
        notes: list[str] = []
        self._require_root()
        if not isinstance(query, str) or not query.strip():
            raise ToolInputError("The query is empty: give a few keywords or a question.")
        _unicode(query, "query")
        for tag in tags if isinstance(tags, list) else ():
            _unicode(tag, "tag")
            _no_nul(tag, "tag")
        # a NUL separates words like a space does (PostgreSQL's text cannot hold one)
        query = " ".join(query.replace("\x00", " ").split())
        if len(query) > MAX_QUERY_CHARS:
            query = query[:MAX_QUERY_CHARS].rsplit(" ", 1)[0] or query[:MAX_QUERY_CHARS]
            notes.append(f"query cut to its first {len(query)} characters; shorter queries work better.")
        search_mode = _choice(mode, SEARCH_MODES, "search_documents")
        max_results, clamped = clamp_max_results(_int(max_results, "max_results"))
        if clamped:
            notes.append(clamped)
        max_chars = self._max_chars(max_chars, notes, MIN_SEARCH_CHARS)
        if isinstance(tags, str):
            tags = [tags]
        tag_list = [t for t in (tags or []) if isinstance(t, str) and normalize_tag(t)]
        for t in tags or []:
            if isinstance(t, str) and t.strip() and not normalize_tag(t):
                raise ToolInputError(_NO_TAG.format(tag=printable(t, ID_CHARS)))
        if len(tag_list) > MAX_TAGS:
            raise ToolInputError(f"Too many tags ({len(tag_list)}): give at most {MAX_TAGS}.")
        folder = self._folder(folder) if folder else None
        if folder and not self._folder_exists(folder):
            raise FolderNotFound(self._folder_missing_message(folder))
        try:
            result = self.library.search(query, max_results, search_mode, folder, tag_list)
        except PathOutsideRoot as exc:
            raise ToolInputError(str(exc)) from exc
        # The index may lag the disk by a moment: never show a file that is gone.
        kept = [r for r in result.results if self._exists(r.id)]
        if len(kept) != len(result.results):
            result.results = kept
        if result.note:
            notes.insert(0, result.note)
        if not result.results and not self.library.empty_note():
            hint = "No match. Try other or fewer words"
            if folder or tag_list:
                hint += ", drop the folder/tags filter"
            notes.append(hint + ", or browse with list_documents.")
        result.note = " ".join(notes) or None
        fit_search(result, max_chars)
        result.estimated_tokens = _json_tokens(result)
        return result

    # -- list_documents ----------------------------------------------------------------------
    def list_documents(
        self,
        folder: str = "",
        tag: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        linked_to: str | None = None,
    ) -> ListResult:
        self._require_root()
        folder = self._folder(folder or "")
        _unicode(tag, "tag")
        _no_nul(tag, "tag")
        tag_norm = normalize_tag(tag) if isinstance(tag, str) and tag.strip() else None
        if tag_norm == "":  # '#' alone: filtering by it would silently list everything
            raise ToolInputError(_NO_TAG.format(tag=printable(str(tag), ID_CHARS)))
        notes: list[str] = []
        linked_id: str | None = None
        if linked_to is not None and (not isinstance(linked_to, str) or linked_to.strip()):
            linked_id = self.locate(linked_to)[0]  # its backlinks: a page of the catalog's indexed link rows
            notes.append(f"Documents that link to '{printable(linked_id, ID_CHARS)}'.")
        limit = _int(limit, "limit")
        if limit < 1 or limit > MAX_LIST_LIMIT:
            clamped = min(max(limit, 1), MAX_LIST_LIMIT)
            notes.append(f"limit {limit} is out of range 1-{MAX_LIST_LIMIT}: used {clamped}.")
            limit = clamped
        listing = (folder, tag_norm, linked_id)
        offset = self._decode_cursor(cursor, *listing) if cursor else 0
        catalog = self.library.catalog
        records, total = catalog.list_documents(folder, tag_norm, limit, offset, linked_to=linked_id)
        if total == 0 and folder and not self._folder_exists(folder):
            raise FolderNotFound(self._folder_missing_message(folder))
        folders = [
            FolderEntry(path=p, documents=n) for p, n in catalog.subfolders(folder, tag_norm, linked_to=linked_id)
        ]
        shown_folders = fitting(folders, LIST_FOLDERS_CHARS)
        if shown_folders < len(folders):
            notes.append(f"{len(folders)} subfolders, first {shown_folders} shown; pass folder= to go deeper.")
        counts = catalog.section_counts([r.id for r in records])
        documents = [
            DocumentEntry(
                id=r.id,
                title=r.title,
                summary=r.summary,
                tags=list(r.tags),
                size_bytes=r.size,
                modified=iso_utc(r.mtime_ns),
                sections=counts.get(r.id, 0),
                language=r.language,
            )
            for r in records
        ]
        shown = max(1, fitting(documents, LIST_DOCUMENTS_CHARS)) if documents else 0
        if shown < len(documents):
            notes.append(f"page cut to {shown} documents to keep the reply small: continue with next_cursor.")
            records, documents = records[:shown], documents[:shown]
        next_offset = offset + len(records)
        next_cursor = self._encode_cursor(next_offset, *listing) if next_offset < total and records else None
        languages = self.library.languages_text()
        if languages and not (folder or tag_norm or linked_id or offset):  # once, on the first page of everything
            notes.append(f"Languages: {languages}.")
        if total == 0:
            notes.append(
                (
                    "No document links to it"
                    if linked_id is not None and not folder and not tag_norm
                    else "No documents here"
                )
                + (f" with tag '{printable(tag_norm, 60)}'" if tag_norm else "")
                + "."
            )
        result = ListResult(
            folder=folder,
            folders=folders[:shown_folders],
            documents=documents,
            total=total,
            next_cursor=next_cursor,
            note=" ".join(notes) or None,
        )
        result.estimated_tokens = _json_tokens(result)
        return result

    # -- read_document ---------------------------------------------------------------------------
    def read_document(
        self, id: str, mode: str = "full", max_chars: int = DEFAULT_MAX_CHARS, offset: int = 0
    ) -> ReadDocumentResult:
        read_mode = _choice(mode, READ_MODES, "read_document")
        notes: list[str] = []
        max_chars = self._max_chars(max_chars, notes)
        offset = self._offset(offset)
        stored = self._stored_outline(id) if read_mode == "outline" else None
        if stored is not None:
            doc_id, title, text, heading = stored
        else:
            doc = self.load(id)
            doc_id, title, heading = doc.id, doc.parsed.title, doc.heading
            if read_mode == "full":
                text = doc.text
            elif read_mode == "outline":
                text = outline(doc.parsed) + self.links.outline_lines(doc.id, doc.parsed.links)
            else:
                text = summary(doc.parsed)
            if read_mode != "full" and not doc.parsed.sections:
                notes.append("The note has no sections: read_section has nothing to read in it.")
        if heading:
            notes.append(
                f"'#{printable(heading, HEADING_CHARS)}' names a section: "
                f"read it alone with read_section(id='{printable(doc_id, ID_CHARS)}', section=...)."
            )
        content, next_offset = cut(text, offset, max_chars)
        return ReadDocumentResult(
            id=doc_id,
            title=title,
            mode=read_mode,
            content=content,
            offset=offset,
            next_offset=next_offset,
            total_chars=len(text),
            truncated=next_offset is not None,
            estimated_tokens=estimate_tokens(content),
            note=" ".join(notes) or None,
        )

    # -- read_section -----------------------------------------------------------------------------
    def read_section(
        self,
        id: str,
        section: str = "",
        max_chars: int = DEFAULT_MAX_CHARS,
        offset: int = 0,
        include_subsections: bool = True,
    ) -> ReadSectionResult:
        notes: list[str] = []
        max_chars = self._max_chars(max_chars, notes)
        offset = self._offset(offset)
        if not isinstance(section, str):
            section = ""
        _unicode(section, "section")
        doc = self.load(id)
        section = section.strip() or doc.heading or ""  # '[[Note#Heading]]' as the id names the section
        if not section.replace(">", "").strip():  # ' > ' is a path of no heading: every section matched it
            raise ToolInputError("The section is empty: give a heading or a heading path like 'Setup > Linux'.")
        try:
            found = match_section(doc.parsed.sections, section, doc.id)
        except ToolInputError:
            # a link's fragment names a block (`^id`), an explicit heading id (`{#basics}`) or a heading's anchor
            anchored = match_anchor(doc.parsed.sections, doc.parsed.lines, section, anchor)
            if anchored is None:
                raise
            found = anchored.section
            if anchored.block_line is not None:
                notes.append(
                    f"Block '{printable(section.strip().lstrip('#'))}' is line {anchored.block_line}, in this section."
                )
        text = section_text(doc.parsed.lines, found, bool(include_subsections))
        content, next_offset = cut(text, offset, max_chars)
        return ReadSectionResult(
            id=doc.id,
            heading=found.heading,
            heading_path=found.heading_path,
            level=found.level,
            line_start=found.line_start,
            line_end=found.subtree_end if include_subsections else found.line_end,
            content=content,
            offset=offset,
            next_offset=next_offset,
            truncated=next_offset is not None,
            estimated_tokens=estimate_tokens(content),
            total_chars=len(text),
            note=" ".join(notes) or None,
        )

    # -- helpers ------------------------------------------------------------------------------------
    def load(self, doc_id: Any) -> LoadedDocument:
        """Resolve an id (or a link target) inside the root and read and parse the file as it is now (on disk;
        over PostgreSQL, as the writer last stored it)."""
        clean_id, path, heading = self.locate(doc_id)
        try:
            data = self.library.read_bytes(clean_id, path)
        except BinaryContent:
            raise ToolInputError(f"'{clean_id}' is a binary file, not a Markdown document.") from None
        except FileTooLarge as exc:
            raise ToolInputError(f"'{clean_id}' is too large to read ({exc}).") from exc
        except PathOutsideRoot as exc:
            raise PathRefused(f"Refused: {exc}") from exc
        except (FileNotFoundError, IsADirectoryError):
            raise DocumentNotFound(self._unknown_id_message(doc_id)) from None
        except OSError as exc:
            raise ToolInputError(f"'{clean_id}' could not be read ({exc.strerror or type(exc).__name__}).") from exc
        try:
            loaded = self.parse_cache.parse(data, file_stem(clean_id), self.library.settings.parse_seconds)
        except ParseTimeout as exc:
            raise ToolInputError(
                f"'{clean_id}' is not served: {exc}, so it is skipped (see `mcp-docs status`)."
            ) from None
        return LoadedDocument(clean_id, path, loaded.parsed, loaded.text, heading)

    def _stored_outline(self, doc_id: Any) -> tuple[str, str, str, str | None] | None:
        """(id, title, outline, heading) of a large document from the catalog's sections and links, when its
        bytes now are those the catalog indexed (same hash); else None, and the caller parses. A 4.9 MB note
        took ~0.8 s to parse for its outline; its bytes hash in milliseconds. Only above STORED_OUTLINE_BYTES:
        the catalog keeps one link per target (its first heading), where a parse lists each heading linked."""
        try:
            clean_id, path, heading = self.locate(doc_id)
            record = self.library.catalog.document(clean_id)
            if record is None or record.size < STORED_OUTLINE_BYTES:
                return None
            data = self.library.read_bytes(clean_id, path)
        except (ToolInputError, OSError, ValueError):  # whatever it is, load() says it as it always does
            return None
        if content_hash(data) != record.hash:
            return None
        text = normalize_text(decode(data)[0])
        n_lines = text.count("\n") + 1 - (1 if text.endswith("\n") and text.count("\n") > 0 else 0)
        links = [
            Link(link["target"], link["kind"], link.get("heading"), link.get("alias"), link["line"], link["count"])
            for link in record.links
        ]
        body = outline_of(record.title, n_lines, self.library.catalog.sections(clean_id))
        return clean_id, record.title, body + self.links.outline_lines(clean_id, links), heading

    @property
    def links(self) -> LinkGraph:
        return LinkGraph(self.library.catalog, self.library.settings.extensions)  # the catalog may be reopened

    def locate(self, doc_id: Any) -> tuple[str, Path, str | None]:
        """(id, path, heading) of the document `doc_id` names: an exact id first, else a link target
        (`[[Quokka Setup#Linux]]`, a file name, an alias), resolved through the jail either way."""
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise ToolInputError(
                "The id is empty: use a document id like 'guides/setup.md' from search or list results."
            )
        _unicode(doc_id, "id")
        doc_id = _from_resource_uri(doc_id)
        jail = self.library.jail
        heading: str | None = None
        try:
            found: Path | None = None
            # A file name may begin or end with a space: the id as given first, then without stray spaces.
            for candidate in dict.fromkeys((doc_id, doc_id.strip())):
                try:
                    found = self.library.resolve_id(candidate)
                except FileNotFoundError:
                    continue
                doc_id = candidate
                break
            else:
                doc_id = doc_id.strip()
            if found is None or found == jail.root or self.library.is_folder(found):  # a link target?
                target = parse_target(doc_id)
                resolved = self._resolve_link(target) if target is not None else None
                if target is not None and resolved is not None:
                    heading, found = target.heading, self.library.resolve_id(resolved)
            if found is None:
                raise FileNotFoundError(doc_id)
            path = found
        except PathOutsideRoot as exc:
            raise PathRefused(f"Refused: {exc}{_relative_hint(doc_id)}") from exc
        except FileNotFoundError:
            raise DocumentNotFound(self._unknown_id_message(doc_id) + _relative_hint(doc_id)) from None
        if path == jail.root or self.library.is_folder(path):
            raise ToolInputError(
                f"'{printable(doc_id)}' is a folder, not a document: use list_documents(folder='{printable(doc_id)}')."
            )
        return path.relative_to(jail.root).as_posix(), path, heading

    def _resolve_link(self, target: Target) -> str | None:
        resolution = self.links.resolve(target)
        if resolution.ambiguous:
            shown = clip_list(self._main_language_first(resolution.candidates), LISTED_CHARS, ID_CHARS)
            raise ToolInputError(
                f"'{printable(describe(target))}' names {len(resolution.candidates)} documents: "
                f"pass one of these ids: {shown}."
            )
        return resolution.id

    def _main_language_first(self, ids: Sequence[str]) -> list[str]:
        """Candidates in the collection's main language first: 'tar' names 16 tldr pages, the English one
        (`pages/common/tar.md`) last in id order ('/' sorts after '.'), where the list might be cut."""
        counts = self.library.language_counts
        if not counts or len(ids) < 2:
            return list(ids)
        main = max(counts, key=lambda code: counts[code])
        languages = self.library.catalog.languages_of(list(ids))
        return sorted(ids, key=lambda i: languages.get(i) != main)  # stable: id order otherwise

    def _require_root(self) -> None:
        if not self.library.jail.root.is_dir():
            raise ToolInputError(
                "The documents root folder no longer exists (it was moved or deleted while the server runs): "
                "restore it, or restart the server with the new --root."
            )

    def _unknown_id_message(self, doc_id: str) -> str:
        self._require_root()  # a vanished root makes every id unknown: say that instead
        ids = self.library.catalog.ids()
        close = closest_ids(doc_id, ids)
        msg = f"No document '{printable(doc_id)}'."
        if close:
            return msg + " Closest ids: " + clip_list(close, LISTED_CHARS, ID_CHARS) + "."
        return msg + " Use search_documents or list_documents to find ids."

    def _folder(self, folder: Any) -> str:
        if not isinstance(folder, str):
            raise ToolInputError("folder must be a folder path relative to the root, like 'guides'.")
        _unicode(folder, "folder")
        try:
            as_given = self.library.jail.relative_folder(folder)
            if folder == folder.strip() or self._folder_exists(as_given):  # a folder name may begin with a space
                return self._stored_folder(as_given)
            return self._stored_folder(self.library.jail.relative_folder(folder.strip()))
        except PathOutsideRoot as exc:
            raise PathRefused(f"Refused: {exc}") from exc

    def _stored_folder(self, folder: str) -> str:
        """`folder` as the index spells it: a name typed in NFC finds a folder macOS wrote decomposed (NFD), and
        the other way round, as links and ids do. Asks the catalog only for a non-ASCII name not found as is."""
        if not folder or self._folder_exists(folder):
            return folder
        wanted = unicodedata.normalize("NFC", folder)
        depth = wanted.count("/") + 1
        # Else case is ignored, as for ids and links ('fr/édition' for 'fr/Édition'), when one folder fits.
        same_case, any_case = None, set()
        for stored in self.library.catalog.folders():
            prefix = "/".join(stored.split("/")[:depth])
            if unicodedata.normalize("NFC", prefix) == wanted:
                same_case = prefix
            elif _caseless(unicodedata.normalize("NFC", prefix)) == _caseless(wanted):
                any_case.add(prefix)
        if same_case is not None:
            return same_case
        return any_case.pop() if len(any_case) == 1 else folder

    def _nearest_parent(self, folder: str) -> str:
        """The deepest folder above `folder` that holds documents ('' when none does)."""
        parts = folder.split("/")[:-1]
        while parts:
            parent = self._stored_folder("/".join(parts))
            if self._folder_exists(parent):
                return parent
            parts.pop()
        return ""

    def _folder_exists(self, folder: str) -> bool:
        return self.library.folder_exists(folder)

    def _folder_missing_message(self, folder: str) -> str:
        msg = f"No folder '{printable(folder)}'."
        parent = self._nearest_parent(folder)
        if parent:  # 'fr/Editing': the folders of 'fr', where the user was looking, not the 36 of the root
            under = [p for p, _ in self.library.catalog.subfolders(parent, None)]
            if under:
                return f"{msg} Folders under '{printable(parent)}': {clip_list(under, LISTED_CHARS, ID_CHARS)}."
            return f"{msg} '{printable(parent)}' has no subfolders: list_documents(folder='{printable(parent)}')."
        top = [p for p, _ in self.library.catalog.subfolders("", None)]
        return msg + (
            " Top-level folders: " + clip_list(top, LISTED_CHARS, ID_CHARS) + "."
            if top
            else " The root has no subfolders."
        )

    def _exists(self, doc_id: str) -> bool:
        return self.library.has_document(doc_id)

    def _max_chars(self, value: Any, notes: list[str], minimum: int = MIN_MAX_CHARS) -> int:
        value = _int(value, "max_chars")
        if value < minimum or value > MAX_MAX_CHARS:
            clamped = min(max(value, minimum), MAX_MAX_CHARS)
            notes.append(f"max_chars {value} is out of range {minimum}-{MAX_MAX_CHARS}: used {clamped}.")
            return clamped
        return value

    @staticmethod
    def _offset(value: Any) -> int:
        value = _int(value, "offset")
        if value < 0:
            raise ToolInputError("offset must be 0 or a next_offset from a previous result.")
        return value

    def _cursor_key(self, folder: str, tag: str | None, linked_to: str | None) -> str:
        listing = f"{folder}\x00{tag or ''}" + (f"\x00{linked_to}" if linked_to is not None else "")
        return hashlib.blake2b(listing.encode(), digest_size=6).hexdigest()

    def _encode_cursor(self, offset: int, folder: str, tag: str | None, linked_to: str | None) -> str:
        raw = json.dumps({"o": offset, "k": self._cursor_key(folder, tag, linked_to)}, separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    def _decode_cursor(self, cursor: Any, folder: str, tag: str | None, linked_to: str | None) -> int:
        bad = ToolInputError(
            "Invalid cursor: pass next_cursor from the previous list_documents result unchanged, or omit it."
        )
        if not isinstance(cursor, str) or len(cursor) > 200:
            raise bad
        try:
            data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
            offset = int(data["o"])
            key = str(data["k"])
        except (ValueError, KeyError, TypeError, binascii.Error):
            raise bad from None
        if key != self._cursor_key(folder, tag, linked_to) or offset < 0:
            raise ToolInputError(
                "This cursor belongs to another listing: use the same folder, tag and linked_to as the call that returned it."
            )
        return offset


RESOURCE_PREFIX = "docs://"


def _relative_hint(doc_id: str) -> str:
    """What to do with a relative link copied from a document: an agent has no note to read it from, and
    '../setup.md' read from the root is refused or names another file; the linking note's outline has the id."""
    if not doc_id.startswith(("./", "../", ".\\", "..\\")):
        return ""
    return (
        " A relative link is relative to the document it is written in: that document's outline "
        "(read_document(id, mode='outline'), 'Links to') lists the id it leads to."
    )


def _caseless(name: str) -> str:
    """A folder name with case ignored: the Turkish 'İ' as 'I' first, or casefold makes it an 'i' and a combining
    dot, and 'içerik' did not find 'İçerik'."""
    return name.replace("İ", "I").casefold()


def _from_resource_uri(doc_id: str) -> str:
    """The id inside a resource URI (`docs://Release%20notes/v1.md`, as resources/list names each document): an agent
    that saw the resource passes its URI as the id, and was told no such document."""
    if not doc_id.startswith(RESOURCE_PREFIX):
        return doc_id
    return unquote(doc_id[len(RESOURCE_PREFIX) :])
