"""Serving the MCP server: stdio (`stdio.py`), Streamable HTTP (`process.py`, its guards in `http_security.py`,
`http_sessions.py`, `http_connections.py`, `http_messages.py`) and several processes on one port (`workers.py`).

A new transport goes here; what the server answers is built in `mcp_docs.mcp`. Nothing is imported here, so that
stdio never loads uvicorn."""
