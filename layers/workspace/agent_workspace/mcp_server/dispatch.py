"""Turns a `tools/call` into one action run: old names, flat calls, strict decoding, error texts.

Everything an agent can get wrong is answered here with a tool error that names the tool, the
action and the field; nothing below this module ever reaches the agent as a stack trace.
"""

import difflib
import inspect
import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agent_workspace.blocking import run_blocking
from agent_workspace.domain import oauth
from agent_workspace.domain.errors import WorkspaceError, field_path
from agent_workspace.domain.paging import ANSWER_MAX, structured_wire_size, text_wire_size
from agent_workspace.domain.text import DETAIL_MAX, echo
from agent_workspace.mcp_server import help_text
from agent_workspace.mcp_server.legacy import RENAMED_FIELDS
from agent_workspace.mcp_server.surfaces import REFERENCE_TOOL_NAMES, WORKSPACE, ListedTool, Surface
from agent_workspace.mcp_server.tool_schemas import result_schema
from agent_workspace.observability import logger
from agent_workspace.tool_registry import Action, Call, HelpPayload, Registry, TextBlocks, Tool

HELP_TOOL = "help"


@dataclass(frozen=True)
class ToolOutcome:
    text: str
    is_error: bool = False
    blocks: tuple[str, ...] = ()  # the text as separate content blocks, when the action answers several
    # The answer as `structuredContent`, of the tool's outputSchema: the action's JSON object, or its text as
    # {"text": ...}. None for errors and for `help`, which has no output schema.
    structured: dict[str, Any] | None = None


class CallRefused(Exception):
    """The call cannot run as given; `str(self)` is the whole text the agent sees."""


class _HelpArguments(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    action: str | None = None


async def dispatch(
    registry: Registry, call: Call, name: str, arguments: dict[str, Any] | None, surface: Surface = WORKSPACE
) -> ToolOutcome:
    """One `tools/call` on the MCP path of `surface`: only the names that path answers are served."""
    try:
        if name == HELP_TOOL and surface.lists_help:
            return ToolOutcome(answer_help(surface_registry(registry, surface), arguments or {}))
        tool, action, payload = resolve(registry, name, arguments or {}, surface)
        if action is tool.help_action:
            text = _tool_help(tool, payload)
            return ToolOutcome(text, structured={"text": text})  # a text answer of a tool with an outputSchema
        return await _run(tool, action, call, payload, called=name, listed=surface.listed_tool(name))
    except CallRefused as refused:
        return ToolOutcome(str(refused), is_error=True)


def resolve(
    registry: Registry, name: str, arguments: dict[str, Any], surface: Surface = WORKSPACE
) -> tuple[Tool, Action, BaseModel]:
    """Find the tool and action a call means and decode its payload strictly. A name of a reference's tool is called
    flat (its arguments are the payload), and every refusal names the tool as it was called."""
    target = None if surface.lists_action_tool(name) and registry.tool(name) else surface.target(name)
    if target is not None:
        tool = registry.tool(target[0])
        action = tool.action(target[1]) if tool else None
        if tool is None or action is None:
            raise CallRefused(_unknown_tool(registry, name, surface))
        raw_payload: Any = arguments
        # A reference's own tool is named as called; AgentRQ's old names are rewrites to their action (its contract).
        where = name if name in REFERENCE_TOOL_NAMES else f"{tool.name} {action.name}"
    else:
        tool = registry.tool(name) if surface.lists_action_tool(name) else None
        if tool is None:
            raise CallRefused(_unknown_tool(registry, name, surface))
        action = _action_of(tool, arguments)
        raw_payload = _payload_of(tool, action, arguments)
        where = f"{tool.name} {action.name}"
    payload = _renamed(where, RENAMED_FIELDS.get((tool.name, action.name), {}), raw_payload)
    try:
        return tool, action, action.payload.model_validate(payload)
    except ValidationError as error:
        raise CallRefused(f"{where}: {describe_validation_error(error, action)}") from None


@cache
def surface_registry(registry: Registry, surface: Surface) -> Registry:
    """The action tools a path lists (all of them on /mcp), which its `help` describes: one per path and process
    (both are declared once), so the help texts made from it are cached once too (`help_text`)."""
    if surface.action_tools is None:
        return registry
    return registry.only(surface.action_tools)


def _unknown_tool(registry: Registry, name: str, surface: Surface) -> str:
    names = surface_registry(registry, surface).tool_names + [t.name for t in surface.listed]
    return f"unknown tool '{echo(name)}'; tools: {', '.join([*names, *([HELP_TOOL] if surface.lists_help else [])])}"


def _action_of(tool: Tool, arguments: dict[str, Any]) -> Action:
    choices = ", ".join(tool.action_names)
    requested = arguments.get("action")
    if requested is None:
        raise CallRefused(f"{tool.name}: missing field 'action' (one of: {choices})")
    if not isinstance(requested, str):
        raise CallRefused(f"{tool.name}: field 'action' must be a string (one of: {choices})")
    action = tool.action(requested)
    if action is None:
        raise CallRefused(
            f"{tool.name}: unknown action '{echo(requested)}'{_did_you_mean(requested, tool.action_names)}; "
            f"actions: {choices}"
        )
    return action


def _payload_of(tool: Tool, action: Action, arguments: dict[str, Any]) -> dict[str, Any]:
    """The payload, with a flat call's fields (beside `action`) moved into it."""
    where = f"{tool.name} {action.name}"
    payload = arguments.get("payload")
    if payload is None:
        payload = {}
    if not isinstance(payload, dict) and "payload" in action.payload.model_fields:
        # An action with a field of its own named `payload` (publishEvent): a flat call carries it beside action.
        return {k: v for k, v in arguments.items() if k != "action"}
    if not isinstance(payload, dict):
        raise CallRefused(f"{where}: field 'payload' must be an object")
    flat = {k: v for k, v in arguments.items() if k not in ("action", "payload")}
    both = sorted(set(flat) & set(payload))
    if both:
        raise CallRefused(f"{where}: field '{echo(both[0])}' is given both in payload and beside action; give it once")
    return {**payload, **flat}


def _renamed(where: str, renames: dict[str, str], payload: Any) -> Any:
    if not renames or not isinstance(payload, dict):
        return payload
    payload = dict(payload)
    for old, new in renames.items():
        if old in payload:
            if new in payload:
                raise CallRefused(f"{where}: fields '{old}' and '{new}' name the same thing; give only '{new}'")
            payload[new] = payload.pop(old)
    return payload


async def _run(
    tool: Tool, action: Action, call: Call, payload: BaseModel, called: str, listed: ListedTool | None = None
) -> ToolOutcome:
    """Called by the action tool's own name, whose outputSchema wants even a text answer as {"text": …}, or by a
    reference's name (`called`), listed on its path with the action's own schema or none: a peer's text answer has
    no structured copy (OMR's load_agent: "text blocks, with no structured copy"), so there a text answer is text
    only; a JSON answer keeps its structured copy, in the reference's words where it has a presenter (`listed`)."""
    by_action_tool = called == tool.name
    where = called if called in REFERENCE_TOOL_NAMES else f"{tool.name} {action.name}"
    refusal = oauth.scope_refusal(call.principal.scopes, oauth.READ if action.read_only else oauth.WRITE)
    if refusal:
        return ToolOutcome(f"{where}: {refusal}", is_error=True)
    try:
        if inspect.iscoroutinefunction(action.handler):
            result = await action.handler(call, payload)
        else:
            result = await run_blocking(action.handler, call, payload)
    except WorkspaceError as error:
        return ToolOutcome(f"{where}: {error.message}", is_error=True)
    except Exception:
        # The one place an unexpected failure is caught: log it (never the payload) and give a safe text. The
        # record carries the ref the agent is told to report, so the report finds it (under uvicorn and on Lambda).
        ref = call.request_id or "unknown"
        logger.exception("tool action failed", extra={"tool": tool.name, "action": action.name, "ref": ref})
        return ToolOutcome(
            f"{where}: internal error; retry shortly, and report ref {ref} if it persists",
            is_error=True,
        )
    words = listed.words if listed is not None else None
    schema = result_schema(action) if words is not None else None
    presented = words is not None and schema is not None and isinstance(result, dict)
    if presented:
        assert words is not None and schema is not None
        result = words.present(result, schema)
    text = render(result)
    answer = result if isinstance(result, dict) else {"text": text}
    size = text_wire_size(text) + structured_wire_size(text if answer is result else json.dumps(answer))
    if size > ANSWER_MAX:  # Lambda would refuse the response and the client would see a 502
        return ToolOutcome(
            f"{where}: the answer takes {size:,} bytes, more than one response may carry ({ANSWER_MAX:,}); "
            "ask for less (a narrower query or filter, a smaller limit) or read the items one by one",
            is_error=True,
        )
    if call.runtime.settings.check_answers:
        from agent_workspace.mcp_server import answer_checks  # only where the check is on: Lambda never imports it

        if presented:
            assert listed is not None
            answer_checks.check_listed_answer(listed, action, answer)
        else:
            answer_checks.check_answer(tool, action, answer)
    structured = answer if by_action_tool or answer is result else None
    return ToolOutcome(text, blocks=result if isinstance(result, TextBlocks) else (), structured=structured)


def render(result: Any) -> str:
    if isinstance(result, TextBlocks):
        return "\n\n".join(result)
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False)


def _tool_help(tool: Tool, payload: BaseModel) -> str:
    assert isinstance(payload, HelpPayload)
    if payload.topic is None:
        return help_text.tool_help(tool)
    return _action_help(tool, payload.topic, f"{tool.name} help: unknown topic")


def answer_help(registry: Registry, arguments: dict[str, Any]) -> str:
    try:
        topic = _HelpArguments.model_validate(arguments).action
    except ValidationError as error:
        raise CallRefused(f"{HELP_TOOL}: {describe_validation_error(error)}") from None
    if not topic:
        return help_text.overview(registry)
    if topic == HELP_TOOL:
        return help_text.help_tool_help()
    tool_name, _, action_name = topic.partition(".")
    tool = registry.tool(tool_name)
    if tool is None:
        raise CallRefused(
            f"{HELP_TOOL}: unknown topic '{echo(topic)}'{_did_you_mean(tool_name, registry.tool_names)}; "
            f"tools: {', '.join(registry.tool_names)}"
        )
    if not action_name:
        return help_text.tool_help(tool)
    return _action_help(tool, action_name, f"{HELP_TOOL}: {tool.name} has no action")


def _action_help(tool: Tool, name: str, unknown: str) -> str:
    """Help on one action (a tool's own `help` action is the tool's help); an unknown name is refused."""
    action = tool.action(name)
    if action is None:
        raise CallRefused(
            f"{unknown} '{echo(name)}'{_did_you_mean(name, tool.action_names)}; actions: {', '.join(tool.action_names)}"
        )
    return help_text.tool_help(tool) if action is tool.help_action else help_text.action_help(tool, action)


# -- validation errors, in the words an agent can act on ---------------------------------------

_TYPE_NAMES = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "bool_type": "a boolean",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "list_type": "an array",
    "tuple_type": "an array",
}
_MAX_REPORTED = 5


def describe_validation_error(error: ValidationError, action: Action | None = None) -> str:
    known = [name for name, *_ in help_text.fields(action)] if action else []
    problems = [_describe(detail, known) for detail in error.errors(include_url=False)]
    extra = len(problems) - _MAX_REPORTED
    text = "; ".join(problems[:_MAX_REPORTED])
    return f"{text}; and {extra} more" if extra > 0 else text


def _describe(detail: Any, known_fields: list[str]) -> str:
    where = echo(field_path(detail["loc"]))
    kind = detail["type"]
    if kind == "extra_forbidden":
        return f"unknown field '{where}'{_did_you_mean(where, known_fields)}"
    if kind == "missing":
        return f"missing required field '{where}'"
    if kind in _TYPE_NAMES:
        return f"field '{where}' must be {_TYPE_NAMES[kind]}"
    message = echo(str(detail["msg"]).removeprefix("Value error, "), DETAIL_MAX)
    if kind == "literal_error":
        message = message.replace("Input should be", "must be")
        return f"field '{where}' {message}"
    return f"field '{where}': {message}"


def _did_you_mean(given: str, choices: list[str]) -> str:
    if not choices or len(given) > 3 * max(map(len, choices)):  # too long to reach the 0.6 ratio: spare difflib 4 MB
        return ""
    match = difflib.get_close_matches(given, choices, n=1)
    return f" (did you mean '{match[0]}'?)" if match else ""
