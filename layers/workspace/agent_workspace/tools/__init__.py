"""Every tool the server serves, in the order `help` and `tools/list` show them."""

from agent_workspace.tool_registry import Registry
from agent_workspace.tools import agent, board, memory, pano, site_tools, skills, task, workspace

REGISTRY = Registry(
    tools=(task.TOOL, memory.TOOL, skills.TOOL, workspace.TOOL, site_tools.TOOL, pano.TOOL, board.TOOL, agent.TOOL)
)
