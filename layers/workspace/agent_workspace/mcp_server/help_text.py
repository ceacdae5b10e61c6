"""The texts of `help`, generated from the registry so they always match what the server accepts.

The registry, its tools and actions are declared once and never change, so each text is made once per process
(`cache`, keyed by their identity) rather than wrapped and formatted again on every `help` call.
"""

import json
import textwrap
from functools import cache
from typing import Any

from agent_workspace.tool_registry import Action, Registry, Tool

CALL_SHAPE = 'Every tool takes {"action": "<action>", "payload": {...}}.'
_NAME_COLUMN = 13  # "  task         This workspace's tasks..."
_ACTION_COLUMN = 21
_TYPE_COLUMN = 9
_WIDTH = 100


@cache
def overview(registry: Registry) -> str:
    lines = [CALL_SHAPE, "", "Tools:"]
    indent = " " * (2 + _NAME_COLUMN)
    for tool in registry:
        lines.append(f"  {tool.name.ljust(_NAME_COLUMN)}{tool.summary}")
        # The reference's one line per tool, wrapped under itself once a tool has more actions than fit.
        names = ", ".join(a.name for a in tool.actions)
        lines += textwrap.wrap(names, _WIDTH, initial_indent=f"{indent}actions: ", subsequent_indent=indent + " " * 9)
    lines += [
        "",
        'Run help {"action": "<tool>"} for a tool\'s actions, or {"action": "<tool>.<action>"} '
        "for one action's payload and an example.",
    ]
    return "\n".join(lines)


@cache
def tool_help(tool: Tool) -> str:
    lines = [f'Usage: {tool.name} {{"action": "<action>", "payload": {{...}}}}', "", "Actions:"]
    lines += [f"  {action.name.ljust(_ACTION_COLUMN)}{action.summary}" for action in tool.all_actions()]
    return "\n".join(lines)


def help_tool_help() -> str:
    return "\n".join(
        [
            'Usage: help {"action": "<topic>"}',
            "",
            "help {} lists the tools; a tool's name lists its actions; <tool>.<action> shows that action's payload.",
        ]
    )


def fields(action: Action) -> list[tuple[str, str, str, bool]]:
    """(name, type, description, required) for each payload field, in declaration order."""
    schema = action.payload.model_json_schema()
    required = set(schema.get("required", []))
    return [
        (name, json_type(prop), prop.get("description", ""), name in required)
        for name, prop in schema.get("properties", {}).items()
    ]


def json_type(prop: dict[str, Any]) -> str:
    if "type" in prop:
        return str(prop["type"])
    if "enum" in prop or "const" in prop:
        values = prop.get("enum", [prop.get("const")])
        return _type_of_value(values[0])
    if "$ref" in prop:
        return "object"
    for option in prop.get("anyOf", []):
        if option.get("type") != "null":
            return json_type(option)
    return "any"


def _type_of_value(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string"}.get(type(value), "object")


@cache
def action_help(tool: Tool, action: Action) -> str:
    declared = fields(action)
    required = [f for f in declared if f[3]]
    optional = [f for f in declared if not f[3]]
    if not declared:
        usage = f'{tool.name} {{"action": "{action.name}"}}'
    else:
        shown = [f'"{name}": <{kind}>' for name, kind, _, _ in required]
        if optional:
            shown.append("...")
        usage = f'{tool.name} {{"action": "{action.name}", "payload": {{{", ".join(shown)}}}}}'
    lines = [f"Usage: {usage}", "", action.summary]
    if not declared:
        lines += ["", "Takes no payload."]
    for heading, group in (("Required:", required), ("Optional:", optional)):
        if group:
            lines += ["", heading]
            lines += [
                f"  {name.ljust(_ACTION_COLUMN)}{kind.ljust(_TYPE_COLUMN)}{description}".rstrip()
                for name, kind, description, _ in group
            ]
    lines += ["", "Example:", f"  {example_call(tool, action)}"]
    return "\n".join(lines)


def example_call(tool: Tool, action: Action) -> str:
    call: dict[str, Any] = {"action": action.name}
    if action.example:
        call["payload"] = action.example
    return f"{tool.name} {json.dumps(call, ensure_ascii=False)}"
