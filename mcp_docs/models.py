"""Result models of the four tools: the fixed public contract (field names must not change)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

SearchMode = Literal["hybrid", "keyword", "semantic"]
ReadMode = Literal["full", "outline", "summary"]


class SectionMatch(BaseModel):
    heading: str
    heading_path: str
    line_start: int
    line_end: int
    snippet: str


class DocumentMatch(BaseModel):
    id: str
    title: str
    score: float
    tags: list[str] = Field(default_factory=list)
    sections: list[SectionMatch] = Field(default_factory=list)


class IndexInfo(BaseModel):
    documents: int
    pending_embeddings: int = 0


class SearchResult(BaseModel):
    query: str
    mode_used: SearchMode
    results: list[DocumentMatch]
    index: IndexInfo
    note: str | None = Field(default=None, description="Why the mode used differs from the one asked, or other advice.")
    estimated_tokens: int = 0


class FolderEntry(BaseModel):
    path: str
    documents: int


class DocumentEntry(BaseModel):
    id: str
    title: str
    summary: str
    tags: list[str] = Field(default_factory=list)
    size_bytes: int
    modified: str  # ISO 8601, UTC
    sections: int


class ListResult(BaseModel):
    folder: str
    folders: list[FolderEntry]
    documents: list[DocumentEntry]
    total: int
    next_cursor: str | None = None
    estimated_tokens: int = 0
    note: str | None = None


class ReadDocumentResult(BaseModel):
    id: str
    title: str
    mode: ReadMode
    content: str
    offset: int
    next_offset: int | None
    total_chars: int
    truncated: bool
    estimated_tokens: int
    note: str | None = None


class ReadSectionResult(BaseModel):
    id: str
    heading: str
    heading_path: str
    level: int
    line_start: int
    line_end: int
    content: str
    offset: int
    next_offset: int | None
    truncated: bool
    estimated_tokens: int
    total_chars: int = 0
    note: str | None = None
