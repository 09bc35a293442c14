"""Security and reliability tests: the twelve requirements of notes/security.md, attacked through real MCP clients."""
