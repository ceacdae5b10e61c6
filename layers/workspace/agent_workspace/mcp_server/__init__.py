"""The MCP side: serving the tool registry (`tools.REGISTRY`): dispatch, help texts and the Streamable HTTP endpoint."""
