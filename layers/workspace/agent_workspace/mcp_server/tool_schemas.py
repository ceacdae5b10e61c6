"""A tool's `inputSchema` and `outputSchema`, generated from its actions' payload and result models.

The input schema shows each action's payload fields, so a client that reads only `tools/list` can fill a
call; the field descriptions stay in `help` (docs/tools.md), which keeps the listing small. The output
schema is a `oneOf` over the tool's result models, each closed, so exactly one branch matches an answer.
"""

from functools import cache
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from agent_workspace.mcp_server.surfaces import ListedTool
from agent_workspace.tool_registry import Action, Answer, Tool

DEFS = "#/$defs/{model}"


class TextAnswer(Answer):
    """An action's answer that is a text ("task created with id=…", "null"), as structured content."""

    text: str


def input_schema(tool: Tool) -> dict[str, Any]:
    actions = tool.all_actions()
    defs, names = _schemas([a.payload for a in actions], "validation")
    branches = []
    for action in actions:
        fields = _undescribed(defs[names[action.payload]])
        if fields.get("properties"):  # an action without fields takes no payload
            branches.append({"title": action.name, **{k: v for k, v in fields.items() if k != "additionalProperties"}})
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": tool.action_names, "description": "The action to run."},
            "payload": {
                "type": "object",
                "description": (
                    "The action's fields; leave it out when the action takes none. The branch titled with an "
                    'action lists its fields; help {"action": "<tool>.<action>"} describes them.'
                ),
                "anyOf": branches,
            },
        },
        "required": ["action"],
    }
    nested = {name: _undescribed(nested) for name, nested in _referenced(branches, defs).items()}
    if nested:
        schema["$defs"] = nested
    return schema


def output_schema(tool: Tool) -> dict[str, Any]:
    models = result_models(tool)
    defs, names = _schemas(list(models), "serialization")
    defs = _undescribed(defs)
    branches = [
        {"$ref": DEFS.format(model=names[model]), "description": f"The answer of {', '.join(actions)}."}
        for model, actions in models.items()
    ]
    return {"type": "object", "oneOf": branches, "$defs": defs}


def flat_input_schema(listed: ListedTool, action: Action) -> dict[str, Any]:
    """A reference's tool takes its action's payload fields as its own arguments: that payload's schema, with the
    fields described (a reference tool has one action, so the listing can afford it) and the reference's own rules.
    An override of None leaves a field out: the action takes it, the reference has no such parameter."""
    defs, names = _schemas([action.payload], "validation")
    schema: dict[str, Any] = {**defs[names[action.payload]]}
    properties = {**schema.get("properties", {})}
    for field_name, change in listed.input_overrides.items():
        if change is None:
            properties.pop(field_name, None)
        else:
            properties[field_name] = {**properties.get(field_name, {}), **change}
    schema["properties"] = properties
    required = [*schema.get("required", []), *(r for r in listed.required if r not in schema.get("required", []))]
    required = [r for r in required if r in properties]
    if required:
        schema["required"] = required
    nested = _referenced(schema, defs)
    if nested:
        schema["$defs"] = nested
    return schema


def flat_output_schema(listed: ListedTool, action: Action) -> dict[str, Any] | None:
    """The action's own result models, for an action that answers JSON only (a text answer of a reference's tool has
    no structured copy, so it may carry no outputSchema), in the reference's words where it has them."""
    schema = result_schema(action)
    if schema is None:
        return None
    return _inlined(listed.words.schema(schema) if listed.words else schema)


@cache
def result_schema(action: Action) -> dict[str, Any] | None:
    """What an action that answers JSON only answers: its result models by reference to their `$defs` entries,
    where a reference's words find them (`flat_output_schema` writes the one model out at the top)."""
    if action.result is None or action.text_too:
        return None
    models = models_of(action)
    defs, names = _schemas(models, "serialization")
    refs = [{"$ref": DEFS.format(model=names[model])} for model in models]
    root = refs[0] if len(refs) == 1 else {"type": "object", "oneOf": refs}
    return {**root, "$defs": _undescribed(defs)}


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """A result schema with its one model written out at the top, as a client reads it, and `$defs` holding only
    what that refers to (the reference's words may leave a model unused)."""
    defs = schema["$defs"]
    ref = schema.get("$ref")
    top = defs[ref.rsplit("/", 1)[1]] if isinstance(ref, str) else {k: v for k, v in schema.items() if k != "$defs"}
    used = _referenced(top, defs)
    nested = {name: model for name, model in defs.items() if name in used}  # in pydantic's order, as before
    return {**top, **({"$defs": nested} if nested else {})}


def result_models(tool: Tool) -> dict[type[BaseModel], list[str]]:
    """Each result model of the tool, with the actions that answer it, in the order actions are declared."""
    models: dict[type[BaseModel], list[str]] = {}
    for action in tool.all_actions():
        for model in models_of(action):
            models.setdefault(model, []).append(action.name)
    return models


def models_of(action: Action) -> list[type[BaseModel]]:
    results = action.result if isinstance(action.result, tuple) else (action.result,)
    return [m for m in (*results, TextAnswer if action.answers_text else None) if m is not None]


def _schemas(models: list[type[BaseModel]], mode: Any) -> tuple[dict[str, Any], dict[type[BaseModel], str]]:
    """The schemas of `models` and of what they nest, under shared `$defs` names, and each model's name there."""
    unique = list(dict.fromkeys(models))
    refs, top = models_json_schema([(m, mode) for m in unique], ref_template=DEFS)
    defs = {name: _compact(schema) for name, schema in top.get("$defs", {}).items()}
    return defs, {m: str(refs[(m, mode)]["$ref"].rsplit("/", 1)[1]) for m in unique}


def _referenced(schemas: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """The `$defs` entries `schemas` refer to, directly or through each other."""
    wanted: dict[str, Any] = {}
    pending = [schemas]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and (name := ref.rsplit("/", 1)[1]) not in wanted:
                wanted[name] = defs[name]
                pending.append(defs[name])
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return wanted


def _compact(schema: Any) -> Any:
    """Drops what only pydantic needs (titles, null defaults) and writes `anyOf: [X, null]` as `type: [x, null]`."""
    if isinstance(schema, list):
        return [_compact(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _compact(prop) for name, prop in value.items()}
            continue
        out[key] = _compact(value)
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and _NULL in options:
        other = options[1 - options.index(_NULL)]
        if isinstance(other.get("type"), str) and not set(other) & (set(out) | {"const"}):
            out = {k: v for k, v in out.items() if k != "anyOf"} | other | {"type": [other["type"], "null"]}
            if "enum" in other:
                out["enum"] = [*other["enum"], None]
    return out


_NULL = {"type": "null"}


def _undescribed(schema: Any) -> Any:
    """A schema without its fields' descriptions: `help` has them, and the listing stays small."""
    if isinstance(schema, list):
        return [_undescribed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        key: {name: _undescribed(p) for name, p in value.items()} if key == "properties" else _undescribed(value)
        for key, value in schema.items()
        if key != "description"
    }
