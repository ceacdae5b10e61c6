"""The MCP side: the tool registry, call dispatch, help texts and the Streamable HTTP endpoint."""
