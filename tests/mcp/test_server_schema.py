"""Output schemas are self-contained: clients validate every result against them, and `$ref` resolution is slow."""

import json

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from mcp_docs.library import Library
from mcp_docs.mcp.server import build_server


@pytest.mark.anyio
async def test_output_schemas_have_no_refs_and_still_validate_results(library: Library) -> None:
    async with Client(build_server(library)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for tool in tools.values():
            assert tool.output_schema is not None
            text = json.dumps(tool.output_schema)
            assert "$ref" not in text and "$defs" not in text
        result = await client.call_tool("search_documents", {"query": "linux install", "mode": "keyword"})
        assert not result.is_error
        Draft202012Validator(tools["search_documents"].output_schema).validate(result.structured_content)
        assert result.structured_content["results"][0]["sections"][0]["heading_path"]
