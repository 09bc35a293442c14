"""mcp-docs: search and read a Markdown knowledge base from LLM agents, over MCP."""

__version__ = "0.1.0"
