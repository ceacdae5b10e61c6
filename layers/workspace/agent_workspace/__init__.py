"""Agent Workspace: one shared workspace for AI agents and their humans, served over MCP."""

__version__ = "0.1.0"
