"""The HTTP surface: one FastAPI app serving MCP at /mcp and the human REST API under /api."""
