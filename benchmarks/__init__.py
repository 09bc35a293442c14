"""Reproducible measurements for mcp-docs (quality, speed, scale, token economy). See REPORT.md."""
