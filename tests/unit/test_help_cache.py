"""`help` texts are made once per process (the warm path of `tools/call help`, issue 37): the registry, its tools,
actions and the MCP paths are declared once, so a text keyed by them never goes stale and the cache never grows."""

from agent_workspace.mcp_server import help_text
from agent_workspace.mcp_server.dispatch import surface_registry
from agent_workspace.mcp_server.surfaces import SURFACES
from agent_workspace.tools import REGISTRY


def test_each_paths_registry_is_made_once_so_its_help_is_cached_once():
    for surface in SURFACES:
        first, again = surface_registry(REGISTRY, surface), surface_registry(REGISTRY, surface)

        assert first is again
        assert help_text.overview(first) is help_text.overview(again)


def test_a_cached_text_is_the_one_made_from_the_registry():
    tool = REGISTRY.tool("task")
    assert tool is not None
    action = tool.action("create")
    assert action is not None

    assert help_text.overview(REGISTRY) == help_text.overview.__wrapped__(REGISTRY)
    assert help_text.tool_help(tool) == help_text.tool_help.__wrapped__(tool)
    assert help_text.action_help(tool, action) == help_text.action_help.__wrapped__(tool, action)
