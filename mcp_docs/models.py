"""Result models of the four tools: the fixed public contract (field names must not change).

Fields that come from the documents (titles, headings, tags, summaries, snippets) are
clipped here, on construction, so no result can grow with a hostile file whatever code
built it; ids are never clipped (they must be passed back unchanged).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field

from .snippets import clip

SearchMode = Literal["hybrid", "keyword", "semantic"]
ReadMode = Literal["full", "outline", "summary"]

HEADING_CHARS = 200
HEADING_PATH_CHARS = 400
TITLE_CHARS = 200
SUMMARY_CHARS = 400
SNIPPET_CHARS = 600
TAG_CHARS = 60
MAX_SHOWN_TAGS = 20
NOTE_CHARS = 1200


def _clipper(limit: int) -> AfterValidator:
    return AfterValidator(lambda text: text if len(text) <= limit else clip(text, limit))


def _cap_tags(tags: list[str]) -> list[str]:
    return [t if len(t) <= TAG_CHARS else clip(t, TAG_CHARS) for t in tags[:MAX_SHOWN_TAGS]]


Heading = Annotated[str, _clipper(HEADING_CHARS)]
HeadingPath = Annotated[str, _clipper(HEADING_PATH_CHARS)]
Title = Annotated[str, _clipper(TITLE_CHARS)]
Summary = Annotated[str, _clipper(SUMMARY_CHARS)]
Snippet = Annotated[str, _clipper(SNIPPET_CHARS)]
Note = Annotated[str, _clipper(NOTE_CHARS)]
Tags = Annotated[list[str], AfterValidator(_cap_tags)]


class SectionMatch(BaseModel):
    heading: Heading
    heading_path: HeadingPath
    line_start: int
    line_end: int
    snippet: Snippet


class DocumentMatch(BaseModel):
    id: str
    title: Title
    score: float
    tags: Tags = Field(default_factory=list)
    sections: list[SectionMatch] = Field(default_factory=list)
    language: str | None = Field(
        default=None,
        description="ISO 639-1 code of the language the document is written in; null when it could not be told.",
    )


class IndexInfo(BaseModel):
    documents: int
    pending_embeddings: int = 0


class SearchResult(BaseModel):
    query: str
    mode_used: SearchMode
    results: list[DocumentMatch]
    index: IndexInfo
    note: Note | None = Field(
        default=None, description="Why the mode used differs from the one asked, or other advice."
    )
    estimated_tokens: int = 0
    reranked: bool = Field(
        default=False, description="Whether a cross-encoder re-scored the leading sections (a rerank stage is set)."
    )


class FolderEntry(BaseModel):
    path: str
    documents: int


class DocumentEntry(BaseModel):
    id: str
    title: Title
    summary: Summary
    tags: Tags = Field(default_factory=list)
    size_bytes: int
    modified: str  # ISO 8601, UTC
    sections: int
    language: str | None = Field(
        default=None,
        description="ISO 639-1 code of the language the document is written in; null when it could not be told.",
    )


class ListResult(BaseModel):
    folder: str
    folders: list[FolderEntry]
    documents: list[DocumentEntry]
    total: int
    next_cursor: str | None = None
    estimated_tokens: int = 0
    note: Note | None = None


class ReadDocumentResult(BaseModel):
    id: str
    title: Title
    mode: ReadMode
    content: str
    offset: int
    next_offset: int | None
    total_chars: int
    truncated: bool
    estimated_tokens: int
    note: Note | None = None


class ReadSectionResult(BaseModel):
    id: str
    heading: Heading
    heading_path: HeadingPath
    level: int
    line_start: int
    line_end: int
    content: str
    offset: int
    next_offset: int | None
    truncated: bool
    estimated_tokens: int
    total_chars: int = 0
    note: Note | None = None
