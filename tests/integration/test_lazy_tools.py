"""Each tool is built when a call first needs it (issue 37): creating the app imports no tool's module, a call imports
its own tool's only, and the resources' and skills' handlers wait for their first request. Under SnapStart all of it
is built before the snapshot; what every path lists and answers stays the same (tests/contract/test_surface_snapshot).
"""

import pytest

from agent_workspace.mcp_server.surfaces import SURFACES
from agent_workspace.tool_registry import Registry, ToolModule
from agent_workspace.tools import REGISTRY
from tests.support import ROOT, function_environment, in_fresh_interpreter

TOOL_MODULES = {entry.module for entry in REGISTRY.tools if isinstance(entry, ToolModule)}
DEFERRED = (
    "agent_workspace.mcp_server.resources",
    "agent_workspace.mcp_server.prompts",
    "agent_workspace.mcp_server.skill_reads",
)

# Run in a fresh interpreter: what a cold start has imported after each step, printed as JSON.
_COLD = """
import asyncio, json, sys
from agent_workspace.app import create_app
from agent_workspace.config import Settings
from agent_workspace.domain.models import Principal
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.mcp_server.dispatch import dispatch
from agent_workspace.mcp_server.surfaces import MASARO
from agent_workspace.runtime import Runtime
from agent_workspace.store.clients import AwsClients
from agent_workspace.tool_registry import Call
from agent_workspace.tools import REGISTRY

def loaded():
    return sorted(m for m in sys.modules if m.startswith("agent_workspace.tools.") or m in {deferred})

runtime = Runtime(Settings.model_construct(), AwsClients("us-east-1"))
app = create_app(runtime)
steps = {{"created": loaded()}}
call = Call(Principal(TokenKind.AGENT, account_id="a", token_id="t", workspace_id="w"), runtime)
asyncio.run(dispatch(REGISTRY, call, "nothing", {{}}))
steps["unknown tool"] = loaded()
outcome = asyncio.run(dispatch(REGISTRY, call, "memory", {{"action": "help"}}))
steps["memory help"] = loaded()
refused = asyncio.run(dispatch(REGISTRY, call, "get_task", {{"taskId": 7}}, MASARO))
steps["get_task refused"] = loaded()
print(json.dumps({{"steps": steps, "help": outcome.text, "refused": refused.text}}))
"""


@pytest.fixture(scope="module")
def cold() -> dict:
    return in_fresh_interpreter(_COLD.format(deferred=repr(set(DEFERRED))))


def test_creating_the_app_imports_no_tool_and_no_deferred_handler(cold):
    assert cold["steps"]["created"] == []


def test_an_unknown_tool_is_refused_without_importing_any_tool(cold):
    assert cold["steps"]["unknown tool"] == []


def test_a_call_imports_its_own_tool_only(cold):
    memory = "agent_workspace.tools.memory"
    assert memory in cold["steps"]["memory help"]
    assert not set(cold["steps"]["memory help"]) & (TOOL_MODULES - {memory})
    assert cold["help"].startswith('Usage: memory {"action": "<action>"')


def test_a_references_tool_imports_the_tool_of_its_action(cold):
    """Masaro's get_task runs `task show`: its refusal is the task tool's, and the task tool is now loaded."""
    assert "agent_workspace.tools.task" in cold["steps"]["get_task refused"]
    assert "field 'taskId' must be a string" in cold["refused"]
    assert not set(cold["steps"]["get_task refused"]) & (TOOL_MODULES - {"agent_workspace.tools.task", *_of("memory")})


def _of(name: str) -> set[str]:
    return {entry.module for entry in REGISTRY.tools if entry.name == name}


def test_the_registry_names_its_tools_without_loading_them_and_loads_each_as_declared():
    names = REGISTRY.tool_names
    assert names == [tool.name for tool in REGISTRY]
    assert REGISTRY.only(("pano", "task")).tool_names == ["task", "pano"]


def test_a_module_declaring_another_tool_than_named_is_refused_at_its_first_use():
    wrong = Registry((ToolModule("memory", "agent_workspace.tools.task"),))
    with pytest.raises(TypeError, match="agent_workspace.tools.task.TOOL is not the tool 'memory'"):
        wrong.tool("memory")


_SNAPSHOT = """
import json, sys, types
hooks = []
fake = types.ModuleType("snapshot_restore_py")
fake.register_before_snapshot = hooks.append
fake.register_after_restore = lambda hook: None
sys.modules["snapshot_restore_py"] = fake
sys.path.insert(0, {function!r})
import app
from agent_workspace.mcp_server import server
watched = {watched}
before = sorted(watched & set(sys.modules))
for hook in hooks:
    hook()
from agent_workspace.domain import tasks
print(json.dumps([before, sorted(watched - set(sys.modules)), server.listed_tools.cache_info().currsize,
                  app._app._rest_included, [view.__pydantic_complete__ for view in tasks.VIEWS]]))
"""


def test_the_lambda_builds_every_tool_and_listing_before_its_snapstart_snapshot(runtime):
    watched = {*TOOL_MODULES, *DEFERRED}
    code = _SNAPSHOT.format(function=str(ROOT / "functions" / "api"), watched=repr(watched))
    env = {"POWERTOOLS_TRACE_DISABLED": "true", **function_environment("api", runtime)}
    before, missing, listings, rest, views = in_fresh_interpreter(code, env)
    assert before == []  # the cold start imported none of them
    assert missing == []  # the hooks imported every one
    assert listings == len(SURFACES) and rest is True
    assert views == [True] * len(views)  # the task views, built on first use elsewhere, are in the snapshot too
