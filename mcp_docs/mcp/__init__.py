"""The MCP side of mcp-docs: the table of tools (`tool_table.py`), the server's wiring (`server.py`: tools,
resource, prompt, instructions, /health) and what it adds to the SDK's request handling (`middleware.py`).

A new tool is one entry in `tool_table.TOOLS` plus its `DocsTools` method; how it is served is `mcp_docs.serve`."""
