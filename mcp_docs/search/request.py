"""The first step: what one search asks for, and the limits derived from it once (the contract's, and the depths
the later steps work to)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from ..markdown import normalize_tag
from ..models import SearchMode

# The tool's documented 1-20 (ARCHITECTURE.md, search_documents): the one clamp of max_results, with a note.
MAX_SEARCH_RESULTS = 20
# Sections each side ranks before documents are grouped: eight per document asked for, at least 50 (the fusion's
# own floor, hybrid.CANDIDATES), at most 2000.
MIN_CANDIDATES = 50
CANDIDATES_PER_DOCUMENT = 8
MAX_CANDIDATES = 2000
# In a collection of several languages, documents are grouped this many times deeper (at most) so that the list
# still holds max_results answers once a page and its translations are merged into one.
MAX_LANGUAGE_DEPTH = 4
# When merging a page's versions still left fewer answers than asked (a page in 36 languages), the search runs once
# more this many times deeper.
DEEPER = 4


@dataclass(frozen=True)
class SearchRequest:
    """A search as the pipeline takes it: `folder` already normalised to a POSIX path under the root ("" for
    all), `tags` already normalised (markdown.normalize_tag) and without empties."""

    query: str
    max_results: int = 5
    mode: SearchMode = "hybrid"
    folder: str = ""
    tags: tuple[str, ...] = ()


def search_request(
    query: str,
    max_results: int,
    mode: SearchMode,
    folder: str | None,
    tags: Iterable[str] | None,
    relative_folder: Callable[[str], str],
) -> SearchRequest:
    """A search's arguments, normalised: `relative_folder` is the root's (paths.Jail.relative_folder), which raises
    PathOutsideRoot for a folder outside it; tags that name nothing ('#', spaces) are dropped."""
    folder_norm = relative_folder(folder) if folder else ""
    tag_list = tuple(t for t in (normalize_tag(t) for t in (tags or [])) if t)
    return SearchRequest(query, max_results, mode, folder_norm, tag_list)


@dataclass(frozen=True)
class Limits:
    """How deep each step works: `sections` candidates per side, `depth` documents grouped, `documents` shown."""

    documents: int
    sections: int
    depth: int
    several_languages: bool


def clamp_max_results(max_results: int) -> tuple[int, str | None]:
    """The contract's limit: `max_results` within 1-MAX_SEARCH_RESULTS, and the note saying so when it was not."""
    if 1 <= max_results <= MAX_SEARCH_RESULTS:
        return max_results, None
    clamped = min(max(max_results, 1), MAX_SEARCH_RESULTS)
    return clamped, f"max_results {max_results} is out of range 1-{MAX_SEARCH_RESULTS}: used {clamped}."


def limits(max_results: int, languages: frozenset[str]) -> Limits:
    """The depths of one search, worked out once. `max_results` is taken as given (the tool clamps it to the
    contract's 1-20; the benchmarks ask for 100)."""
    several = len(languages) > 1
    return Limits(
        documents=max_results,
        sections=min(max(MIN_CANDIDATES, max_results * CANDIDATES_PER_DOCUMENT), MAX_CANDIDATES),
        depth=max_results * min(len(languages), MAX_LANGUAGE_DEPTH) if several else max_results,
        several_languages=several,
    )


def deeper(limit: Limits) -> Limits:
    """`limit` DEEPER times deeper: more sections per side and more documents grouped."""
    return replace(limit, sections=min(limit.sections * DEEPER, MAX_CANDIDATES), depth=limit.depth * DEEPER)
