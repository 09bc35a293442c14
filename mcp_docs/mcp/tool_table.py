"""The MCP tools, one entry each: the one place to add a tool.

An entry names the tool, its title and description, the typed `DocsTools` method it calls, the parameters the
model sees (their names are the method's), the result model and the renderer of its text. `build_server`
registers every entry with the SDK, the middleware learns each one's arguments from the same parameters, and
the tests read the names from here. Adding a tool: one entry below, its method on `DocsTools` (tools.py,
plain Python the CLI can call too), its renderer (render.py) and a test.

The parameters are written as `inspect.Parameter`s with `Annotated` types, the form the SDK reads a
function's signature in, so the input schema the clients see is the one a hand-written function gave.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, Field

from ..models import ListResult, ReadDocumentResult, ReadSectionResult, SearchResult
from ..render import render_list, render_read_document, render_read_section, render_search
from ..search.request import MAX_SEARCH_RESULTS
from ..tools import (
    DEFAULT_MAX_CHARS,
    DEFAULT_SEARCH_CHARS,
    MAX_LIST_LIMIT,
    MAX_MAX_CHARS,
    READ_MODES,
    SEARCH_MODES,
    DocsTools,
)


def _one_of(values: tuple[str, ...], description: str | None = None) -> Any:
    """An enum in the schema the model sees, checked by the tool itself (not by the SDK's validation), so a
    wrong value gets the tool's one sentence, the same as on the command line."""
    return Field(description=description, json_schema_extra={"enum": list(values)})


def _param(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation, default=default)


@dataclass(frozen=True)
class ToolEntry:
    """One MCP tool. `method` is called as `method(tools, **arguments)`: the parameters' names are its own."""

    name: str
    title: str
    description: str
    method: Callable[..., BaseModel]
    parameters: tuple[inspect.Parameter, ...]
    result: type[BaseModel]
    render: Callable[[Any], str]

    def signature(self) -> inspect.Signature:
        """What the SDK builds the input schema from; the return annotation gives the output schema."""
        from mcp.types import CallToolResult

        return inspect.Signature(list(self.parameters), return_annotation=Annotated[CallToolResult, self.result])


_BUDGET = f"Budget, max {MAX_MAX_CHARS}."

TOOLS: tuple[ToolEntry, ...] = (
    ToolEntry(
        name="search_documents",
        title="Search documents",
        description="Search the Markdown documents. Returns document ids, ranked best first, each with its best "
        "sections (heading path, line range, snippet) to pass to read_section.",
        method=DocsTools.search_documents,
        parameters=(
            _param("query", Annotated[str, Field(description="Keywords or a question.")]),
            _param(
                "max_results",
                Annotated[int, Field(description=f"Documents to return (1-{MAX_SEARCH_RESULTS}).")],
                5,
            ),
            _param("mode", Annotated[str, _one_of(SEARCH_MODES)], "hybrid"),
            _param("folder", Annotated[str | None, Field(description="Only under this folder.")], None),
            _param("tags", Annotated[list[str] | None, Field(description="Documents must have all these tags.")], None),
            _param(
                "max_chars",
                Annotated[int, Field(description=f"Budget for the whole result, max {MAX_MAX_CHARS}.")],
                DEFAULT_SEARCH_CHARS,
            ),
        ),
        result=SearchResult,
        render=render_search,
    ),
    ToolEntry(
        name="list_documents",
        title="List documents",
        description="Browse documents under a folder (recursive): titles, summaries, subfolders; or what links to "
        "one. Paginated.",
        method=DocsTools.list_documents,
        parameters=(
            _param("folder", Annotated[str, Field(description="Folder path; '' is the root.")], ""),
            _param("tag", Annotated[str | None, Field(description="Only documents with this tag.")], None),
            _param("limit", Annotated[int, Field(description=f"Page size (1-{MAX_LIST_LIMIT}).")], 50),
            _param("cursor", Annotated[str | None, Field(description="next_cursor of the previous page.")], None),
            _param(
                "linked_to",
                Annotated[
                    str | None,
                    Field(description="Only documents that link to this id: 'which notes link to X?' (backlinks)."),
                ],
                None,
            ),
        ),
        result=ListResult,
        render=render_list,
    ),
    ToolEntry(
        name="read_document",
        title="Read document",
        description="Read a document from disk. Use mode='outline' first for long documents, then read_section.",
        method=DocsTools.read_document,
        parameters=(
            _param(
                "id",
                Annotated[str, Field(description="Document id, e.g. 'guides/setup.md', or a link: '[[Setup]]'.")],
            ),
            _param(
                "mode",
                Annotated[
                    str,
                    _one_of(
                        READ_MODES, "outline: headings with line ranges and sizes; summary: headings and first lines."
                    ),
                ],
                "full",
            ),
            _param("max_chars", Annotated[int, Field(description=_BUDGET)], DEFAULT_MAX_CHARS),
            _param("offset", Annotated[int, Field(description="next_offset to continue.")], 0),
        ),
        result=ReadDocumentResult,
        render=render_read_document,
    ),
    ToolEntry(
        name="read_section",
        title="Read section",
        description="Read one section of a document (with its subsections by default).",
        method=DocsTools.read_section,
        parameters=(
            _param("id", Annotated[str, Field(description="Document id.")]),
            _param(
                "section",
                Annotated[
                    str,
                    Field(
                        description="Heading or path 'Parent > Child' (case-insensitive, partial ok); '' if id is "
                        "'[[Doc#Heading]]'."
                    ),
                ],
                "",
            ),
            _param("max_chars", Annotated[int, Field(description=_BUDGET)], DEFAULT_MAX_CHARS),
            _param("offset", Annotated[int, Field(description="next_offset to continue.")], 0),
            _param("include_subsections", bool, True),
        ),
        result=ReadSectionResult,
        render=render_read_section,
    ),
)

TOOL_NAMES: tuple[str, ...] = tuple(t.name for t in TOOLS)


__all__ = ["TOOLS", "TOOL_NAMES", "ToolEntry"]
