"""docs-agent: a thin tool-calling client that answers questions from documents served over MCP."""

__version__ = "0.1.0"
