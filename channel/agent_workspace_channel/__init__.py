"""agent-workspace-channel: a Claude Code channel (a stdio MCP server) in front of an Agent Workspace."""

__version__ = "0.1.0"
