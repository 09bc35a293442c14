"""The table of tools is the one place a tool is declared: the SDK registration, the middleware's argument
errors, the instructions and the tests read it. A tool added to a table is served, documented and checked
with nothing else written."""

from __future__ import annotations

from typing import Annotated

import pytest
from mcp import Client
from pydantic import Field

from mcp_docs.library import Library
from mcp_docs.mcp.server import INSTRUCTIONS, build_server
from mcp_docs.mcp.tool_table import TOOL_NAMES, TOOLS, ToolEntry, _param
from mcp_docs.models import ListResult
from mcp_docs.render import render_list
from mcp_docs.tools import DocsTools

pytestmark = pytest.mark.anyio


def in_folder(tools: DocsTools, folder: str, limit: int = 2) -> ListResult:
    """A new tool's method: what a contributor writes on DocsTools, here a function of the same shape."""
    return tools.list_documents(folder, None, limit, None)


IN_FOLDER = ToolEntry(
    name="documents_in_folder",
    title="Documents in a folder",
    description="The first documents under a folder.",
    method=in_folder,
    parameters=(
        _param("folder", Annotated[str, Field(description="Folder path.")]),
        _param("limit", Annotated[int, Field(description="How many (1-200).")], 2),
    ),
    result=ListResult,
    render=render_list,
)


async def test_a_tool_is_one_entry(library: Library) -> None:
    async with Client(build_server(library, table=(*TOOLS, IN_FOLDER))) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert list(listed) == [*TOOL_NAMES, "documents_in_folder"]
        tool = listed["documents_in_folder"]
        assert tool.title == "Documents in a folder" and tool.annotations.read_only_hint
        assert tool.input_schema["required"] == ["folder"]
        assert tool.output_schema is not None and "$ref" not in str(tool.output_schema)  # compacted by the middleware

        answer = await client.call_tool("documents_in_folder", {"folder": "guides"})
        assert not answer.is_error
        assert len(answer.structured_content["documents"]) == 2 < answer.structured_content["total"]
        assert answer.content[0].text == render_list(ListResult.model_validate(answer.structured_content))

        # the middleware knows the new tool's arguments: one sentence naming the argument, not pydantic's report
        wrong = await client.call_tool("documents_in_folder", {"folder": "guides", "limit": "many"})
        assert wrong.is_error
        assert wrong.content[0].text == (
            "documents_in_folder: argument 'limit' must be an integer (How many (1-200)), not \"many\"."
        )


def test_every_tool_of_the_table_is_taught_by_the_instructions() -> None:
    for name in TOOL_NAMES:
        assert name in INSTRUCTIONS, f"the server instructions never mention {name}: say when to use it"


def test_each_entry_calls_a_method_whose_parameters_are_the_tools() -> None:
    """The SDK passes the validated arguments by name to `method(tools, **arguments)`: the names must match."""
    import inspect

    for entry in TOOLS:
        method = list(inspect.signature(entry.method).parameters)[1:]
        assert [p.name for p in entry.parameters] == method, entry.name
