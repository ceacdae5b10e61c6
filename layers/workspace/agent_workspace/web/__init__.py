"""What both HTTP surfaces share, below them: bearer-token authentication and problem JSON, the same on the REST API
(`api/`) and the MCP endpoint (`mcp_server/`)."""
