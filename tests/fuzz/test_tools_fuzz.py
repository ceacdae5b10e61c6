"""Issue 9: every tool and action fuzzed with random and adversarial payloads.

Whatever an agent sends, the answer is the action's result or a tool error that names the tool and the
action: never an unhandled exception, never "internal error", never a 500 over HTTP.

The (tool, action) pairs come from REGISTRY, so a new action is fuzzed without touching this file. The
strategies build the arguments of a call four ways: arbitrary JSON for the whole arguments object or for
`payload`; the action's own payload model with adversarial values per field (wrong types, huge strings,
deep nesting, unicode, NUL and control characters, extreme numbers, ids that look right but are not);
extra unknown fields; flat calls and fields given both flat and in the payload.

`FUZZ_EXAMPLES` sets the examples per test (25 by default; e.g. FUZZ_EXAMPLES=500 for a soak run).
"""

import json
import operator
import os
import re
from collections.abc import Iterator
from functools import cache
from types import NoneType, UnionType
from typing import Any, Literal, Union, get_args, get_origin

import httpx
import pytest
from hypothesis import HealthCheck, Phase, currently_in_test_context, event, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agent_workspace.domain.text import echo
from agent_workspace.mcp_server.dispatch import HELP_TOOL, ToolOutcome
from agent_workspace.mcp_server.legacy import OLD_TOOL_NAMES
from agent_workspace.mcp_server.surfaces import REFERENCE_TOOL_NAMES
from agent_workspace.tool_registry import Action
from agent_workspace.tools import REGISTRY
from tests.support import DOC, QUESTION, TASK, TASK_PREFIX, TASK_SWAPPED, WORKSPACE, LiveServer

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # a call goes to moto and back; its time says nothing about the property
    database=None,  # nothing written into the repository; a failure prints its example to copy into @example
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)

ACTIONS = [(tool, action) for tool in REGISTRY for action in tool.all_actions()]
ACTION_IDS = [f"{tool.name}.{action.name}" for tool, action in ACTIONS]


# -- adversarial values -----------------------------------------------------------------------------------

# fmt: off
PLAUSIBLE = [
    # ids of things that exist, bare and in disguise
    TASK, DOC, WORKSPACE, QUESTION, TASK_PREFIX, "log",
    f"{TASK} ", f" {TASK}", f"{TASK}\n", f"{TASK}\x00", f"{DOC}/../{TASK}", TASK_SWAPPED,
    f"{TASK}#", f"{TASK}#ATT#log", f"{TASK}#MSG#",
    # ids that look right but name nothing, or are one character off the id format
    "0kGogHmaqvZ", "00000000000", "zzzzzzzzzzz", "0kGogHmaqv", "0kGogHmaqvZZ", "0kGogHmaqv_", "0kGogHmaqv\x00",
    "\uff10kGogHmaqvZ", "0kGogHmaqv\u200b",
    # memory names, skill URIs, origins, tool names
    "deploys.md", "MEMORY.md", "../MEMORY.md", "deploys.md/../../x", "deploys", ".md", "a" * 65 + ".md",
    "skill://release-notes", "skill://release-notes/SKILL.md", "skill://release-notes/templates/entry.md",
    "skill://release-notes/../../etc/passwd", "skill://", "skill:///", "skill://RELEASE-NOTES", "skill://release-notes/",
    "skill://release-notes//x", "memory://deploys.md", "file:///etc/passwd",
    "https://github.com", "https://github.com/", "http://localhost:8000", "https://gïthub.com", "javascript:alert(1)",
    "https://[::1", "search_issues",
    # schedules, zones, enum words, MIME types, base64
    "30 * * * *", "*/5 * * * *", "30 14 25 4 *", "61 * * * *", "0 0 31 2 *", "* * * * * *", "@reboot",
    "Europe/Berlin", "Mars/Olympus", "UTC", "../../etc/localtime", "form", "url", "human", "agent", "completed",
    "ongoing", "base64", "text/plain", "image/png", "b2s=", "!!notbase64", "=", "deploy_done", "help",
    "[log](deploy.log)", "![x](../../x.png)", "---\ndescription: x\n---\n", "---\n---\n", "{{7*7}}", "' OR '1'='1",
]
SPECIAL_CHARS = [
    "\x00", "\x01", "\x08", "\x1b", "\x7f", "\x85", "\t", "\n", "\r",  # NUL and control characters
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff",  # zero-width
    "\u202e", "\u202d", "\u200f", "\u061c", "\u2067",  # right-to-left
    "\u2028", "\u2029", "\ufffd", "\uffff", "e\u0301",  # separators, replacement, noncharacter, combining
    "\U0001d54f", "\U0001f600", "\U0001f469\u200d\U0001f4bb", "\U0010ffff",  # astral
    "\\", '"', "'", "/", "..", "%00", "%2e%2e", "*", "?", "#", "{", "}", "$", "<", ">", "&", ":", ".",
]
HUGE_UNITS = ["a", "\x00", "é", "\U0001f600", "\u202e", "\u200b", "ab\n", '\\"', "0kGogHmaqvZ", "AAAA"]
# fmt: on

plausible = st.sampled_from(PLAUSIBLE)
short_text = st.lists(st.one_of(st.sampled_from(SPECIAL_CHARS), st.characters(codec="utf-8")), max_size=30).map("".join)
# Up to ~200 KB, cheap to draw: a unit repeated, at lengths around the limits the services check.
huge_text = st.builds(
    lambda unit, size: unit * max(1, size // len(unit)),
    st.sampled_from(HUGE_UNITS),
    st.one_of(
        st.integers(1_000, 200_000),
        st.sampled_from([2_000, 16 * 1024, 16 * 1024 + 1, 64 * 1024 + 1, 96 * 1024 + 1, 128 * 1024, 200_000]),
    ),
)
texts = st.one_of(
    plausible,
    short_text,
    huge_text,
    st.just(""),
    st.builds(operator.add, plausible, short_text),
    st.builds(operator.add, short_text, plausible),
)
ints = st.one_of(
    st.integers(),
    st.sampled_from([0, -1, 1, 2, 50, 200, 201, 3600, 3601, 2**53 + 1, 2**63, -(2**63) - 1, 2**64, 10**40, -(10**40)]),
)
floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),  # JSON carries neither
    st.sampled_from([1e308, -1e308, -0.0, 0.0, 5e-324, 1.5, 1.0]),
)
scalars = st.one_of(st.none(), st.booleans(), ints, floats, plausible, short_text)
keys = st.one_of(plausible, short_text)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4), max_leaves=12
)


def _nest(depth: int, shape: str, leaf: Any) -> Any:
    value = leaf
    for level in range(depth):
        as_list = shape == "list" or (shape == "mixed" and level % 2)
        value = [value] if as_list else {"a": value}
    return value


# 200-400 levels; and depths the JSON parser of /mcp still lets through (it refuses about 200 and more), 33 being
# one more than DynamoDB stores.
depths = st.one_of(st.integers(200, 400), st.sampled_from([33, 64, 128, 190]))
deep = st.builds(_nest, depths, st.sampled_from(["list", "dict", "mixed"]), scalars)
any_json = st.one_of(json_values, json_values, deep, huge_text)


# Objects close to what the dict-typed fields (requestedSchema, arguments) take, to get past their checks.
PLAUSIBLE_OBJECTS = [
    {},
    {
        "type": "object",
        "properties": {"branch": {"type": "string", "enum": ["main", "release"]}},
        "required": ["branch"],
    },
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": -(10**40)}, "ok": {"type": "boolean"}}},
    {"type": "object", "properties": {"x": {"type": "object"}}},
    {"type": "object", "properties": {"\x00": {"type": "string"}}, "required": ["\x00", "\x00"]},
    {"type": "array", "items": {"type": "string"}},
    {"query": "is:open label:bug"},
]


def _strategy_for(annotation: Any, *, typed: bool) -> st.SearchStrategy[Any]:
    """Values of the field's own type, adversarial within it; with typed=False, enums get any string too."""
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is Any:
        return any_json
    if annotation is NoneType:
        return st.none()
    if origin in (Union, UnionType):
        return st.one_of(*[_strategy_for(arg, typed=typed) for arg in args])
    if origin is Literal:
        return st.sampled_from(args) if typed else st.one_of(st.sampled_from(args), texts)
    if annotation is str:
        return texts
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        return ints
    if annotation is float:
        return floats
    if origin is list:
        item = _strategy_for(args[0], typed=typed)
        # Also just over the per-call limits (10 attachments, 50 pano files), by repeating one item.
        over = st.builds(operator.mul, item.map(lambda x: [x]), st.sampled_from([11, 51]))
        return st.one_of(st.lists(item, max_size=3), over)
    if origin is dict:
        return st.one_of(
            st.sampled_from(PLAUSIBLE_OBJECTS),
            st.dictionaries(keys, json_values, max_size=5),
            deep.map(lambda v: {"a": v}),
        )
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return model_fields(annotation, typed=typed)
    return any_json


def _field_value(annotation: Any, *, typed: bool) -> st.SearchStrategy[Any]:
    """The field's type; unless typed, sometimes anything at all."""
    own = _strategy_for(annotation, typed=typed)
    return own if typed else st.one_of(own, own, any_json)


@cache
def model_fields(model: type[BaseModel], *, typed: bool) -> st.SearchStrategy[dict[str, Any]]:
    """A payload of the model: typed, one that decodes (with adversarial content); else any field may be off,
    and required fields may be missing."""
    fields = model.model_fields.items()
    required = {name: _field_value(f.annotation, typed=typed) for name, f in fields if f.is_required()}
    optional = {name: _field_value(f.annotation, typed=typed) for name, f in fields if not f.is_required()}
    if typed:
        return st.fixed_dictionaries(required, optional=optional)
    return st.one_of(
        st.fixed_dictionaries(required, optional=optional),
        st.fixed_dictionaries({}, optional={**required, **optional}),
    )


extra_fields = st.dictionaries(
    st.one_of(keys, st.sampled_from(["url", "chatId", "Title", "taskid", "__proto__", "constructor", "payload"])),
    json_values,
    min_size=1,
    max_size=3,
)


def _split(fields: dict[str, Any], flat_names: list[str], doubled: list[str]) -> dict[str, Any]:
    """Some fields beside action instead of in the payload, some given in both places."""
    flat = {name: value for name, value in fields.items() if name in flat_names or name in doubled}
    payload = {name: value for name, value in fields.items() if name not in flat_names}
    return {"payload": payload, **flat}


@cache
def arguments_for(tool_name: str, action: Action) -> st.SearchStrategy[dict[str, Any]]:
    name = st.just(action.name)
    typed, loose = model_fields(action.payload, typed=True), model_fields(action.payload, typed=False)
    field_names = list(action.payload.model_fields)
    some_names = st.lists(st.sampled_from(field_names), unique=True) if field_names else st.just([])
    return st.one_of(
        # (b) the action's fields: payloads that decode, with adversarial values, to reach the action itself;
        # then payloads with any field of a wrong type or missing
        st.fixed_dictionaries({"action": name, "payload": typed}),
        st.fixed_dictionaries({"action": name, "payload": typed}),
        st.builds(lambda f: {"action": action.name, **f}, typed),
        st.fixed_dictionaries({"action": name}, optional={"payload": loose}),
        # (c) flat calls, unknown fields, fields given twice
        st.builds(lambda f: {"action": action.name, **f}, loose),
        st.builds(lambda f, x: {"action": action.name, "payload": {**f, **x}}, typed, extra_fields),
        st.builds(lambda f, x: {"action": action.name, **f, **x}, loose, extra_fields),
        st.builds(lambda f, a, b: {"action": action.name, **_split(f, a, b)}, typed, some_names, some_names),
        # (a) arbitrary JSON for the payload and for the whole arguments object
        st.fixed_dictionaries({"action": name, "payload": any_json}),
        st.builds(lambda rest: {**rest, "action": action.name}, st.dictionaries(keys, any_json, max_size=4)),
        st.dictionaries(st.one_of(st.sampled_from(["action", "payload", *field_names]), keys), any_json, max_size=4),
    ).map(lambda arguments: _bounded_wait(tool_name, arguments))


def _bounded_wait(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """task elicit waits for a human for timeoutSeconds (default an hour): a valid one here waits 1 s at most."""
    if (OLD_TOOL_NAMES.get(tool) or (tool, arguments.get("action"))) != ("task", "elicit"):
        return arguments
    arguments = dict(arguments)
    payload = arguments.get("payload") if tool == "task" else None
    if isinstance(payload, dict):
        arguments["payload"] = payload = dict(payload)
    holders = [d for d in (arguments, payload) if isinstance(d, dict) and "timeoutSeconds" in d]
    for holder in holders:
        if type(holder["timeoutSeconds"]) is int and holder["timeoutSeconds"] > 1:
            holder["timeoutSeconds"] = 1
    if not holders:
        (payload if isinstance(payload, dict) else arguments)["timeoutSeconds"] = 1
    return arguments


# -- the property ---------------------------------------------------------------------------------------------

# What an unhandled exception leaves in a text; any of it that the call did not send itself is a leak.
LEAKS = re.compile(r"internal error|Traceback|File \"|\b[A-Z]\w*(?:Error|Exception)\b|botocore|pydantic_core")


def _strings(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(k for k in item if isinstance(k, str))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


DECODING = re.compile(r"(missing required field|unknown field|fields? '[^']*' (must|is given|and)|field '[^']*':)")


def _refusal_kind(text: str) -> str:
    """For --hypothesis-show-statistics: how far the fuzz gets past decoding into the actions."""
    _, _, rest = text.partition(": ")
    if text.startswith("unknown tool") or re.match(r"(missing field 'action'|field 'action'|unknown action)", rest):
        return "no such tool or action"
    return "payload did not decode" if DECODING.match(rest) else "by the action"


def assert_tool_answer(tool: str, arguments: dict[str, Any], outcome: ToolOutcome) -> None:
    assert isinstance(outcome, ToolOutcome) and isinstance(outcome.text, str)
    text = outcome.text
    if currently_in_test_context():
        event("answered" if not outcome.is_error else "refused: " + _refusal_kind(text))
    if not outcome.is_error:
        return
    assert "internal error" not in text, text[:2000]
    sent = list(_strings(arguments))
    for leak in LEAKS.finditer(text):
        assert any(leak.group(0) in given for given in sent), f"{leak.group(0)!r} leaked: {text[:2000]}"
    if tool in REFERENCE_TOOL_NAMES:  # Masaro's and On My Radar's tools name themselves as called (issue 34)
        prefix = f"{tool}: "
    elif tool in OLD_TOOL_NAMES and REGISTRY.tool(tool) is None:  # AgentRQ's old names: rewrites to their action
        prefix = "{} {}: ".format(*OLD_TOOL_NAMES[tool])
    elif tool == HELP_TOOL:
        prefix = f"{HELP_TOOL}: "
    elif (served := REGISTRY.tool(tool)) is None:
        prefix = f"unknown tool '{echo(tool)}'; tools: {', '.join(REGISTRY.tool_names)}, {HELP_TOOL}"
    else:
        requested = arguments.get("action")
        if isinstance(requested, str) and served.action(requested) is not None:
            prefix = f"{tool} {requested}: "
        else:
            prefix = f"{tool}: "
            assert re.match(rf"{tool}: (missing field 'action'|field 'action' must|unknown action)", text), text[:2000]
    assert text.startswith(prefix), f"expected {prefix!r}: {text[:2000]}"


# -- what the fuzz found, fixed: task ids that are no ids reached DynamoDB keys ---------------------------------
# A prefix of a task's id (or its id plus '#ATT#') matched another item's sort key in the conversation Query
# (KeyError, 'internal error'); an id over 1003 bytes made a message key over DynamoDB's 1024-byte limit.

TASK_TOOL = REGISTRY.tool("task")


@settings(FUZZ, phases=[Phase.explicit])  # the examples only
@given(arguments=arguments_for("task", TASK_TOOL.action("get")))
@example(arguments={"action": "get", "payload": {"taskId": "", "includeConversation": True}})
@example(arguments={"action": "get", "payload": {"taskId": TASK_PREFIX, "includeConversation": True}})
@example(arguments={"action": "get", "payload": {"taskId": f"{TASK}#ATT#", "includeConversation": True}})
def test_bug_conversation_of_a_task_id_prefix(world, arguments):
    assert_tool_answer("task", arguments, world.call("task", arguments))


@settings(FUZZ, phases=[Phase.explicit])  # the examples only
@given(arguments=arguments_for("task", TASK_TOOL.action("reply")))
@example(arguments={"action": "reply", "payload": {"taskId": "a" * 1004, "text": "hi"}})
@example(arguments={"action": "reply", "payload": {"taskId": "a" * 200_000, "text": TASK}})
@example(
    arguments={
        "action": "elicit",
        "payload": {"taskId": "a" * 1100, "message": "m", "mode": "url", "url": "https://x.y", "timeoutSeconds": 1},
    }
)
def test_bug_task_ids_over_the_key_size_limit(world, arguments):
    assert_tool_answer("task", arguments, world.call("task", arguments))


# -- the fuzz tests ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("tool", "action"), ACTIONS, ids=ACTION_IDS)
@FUZZ
@given(data=st.data())
def test_every_action_answers_any_arguments_with_its_result_or_an_error_naming_it(world, tool, action, data):
    arguments = data.draw(arguments_for(tool.name, action), label="arguments")
    assert_tool_answer(tool.name, arguments, world.call(tool.name, arguments))


@pytest.mark.parametrize("old_name", sorted(OLD_TOOL_NAMES))
@FUZZ
@given(data=st.data())
def test_old_tool_names_answer_any_arguments_naming_the_tool_as_called_or_its_action(world, old_name, data):
    tool_name, action_name = OLD_TOOL_NAMES[old_name]
    action = REGISTRY.tool(tool_name).action(action_name)
    strategy = st.one_of(
        model_fields(action.payload, typed=True),
        model_fields(action.payload, typed=False),
        st.builds(lambda f, x: {**f, **x}, model_fields(action.payload, typed=True), extra_fields),
        st.dictionaries(keys, any_json, max_size=4),
    ).map(lambda arguments: _bounded_wait(old_name, arguments))
    arguments = data.draw(strategy, label="arguments")
    assert_tool_answer(old_name, arguments, world.call(old_name, arguments))


@pytest.mark.parametrize("tool", [*REGISTRY.tool_names, HELP_TOOL])
@FUZZ
@given(
    action=st.one_of(texts, any_json, st.sampled_from(["Create", "create ", "help.", "task.create", "__init__"])),
    payload=st.one_of(st.none(), any_json),
    flat=st.dictionaries(keys, json_values, max_size=2),
)
def test_bad_action_names_and_help_topics_are_refused_naming_the_tool(world, tool, action, payload, flat):
    arguments = _bounded_wait(tool, {**flat, "action": action, "payload": payload})
    assert_tool_answer(tool, arguments, world.call(tool, arguments))


@FUZZ
@given(
    name=st.one_of(texts, st.sampled_from(["Task", "task ", "tasks", "createtask", "help.task"])),
    arguments=st.one_of(st.none(), st.dictionaries(keys, any_json, max_size=3)),
)
def test_unknown_tools_are_refused_listing_the_tools(world, name, arguments):
    outcome = world.call(name, arguments)
    if REGISTRY.tool(name) is None and name not in OLD_TOOL_NAMES and name != HELP_TOOL:
        assert outcome.is_error, outcome.text[:2000]
    assert_tool_answer(name, arguments or {}, outcome)


# -- raw JSON-RPC over real HTTP --------------------------------------------------------------------------------


def _tools_call(name: Any, arguments: Any, request_id: Any = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def _nested_list(depth: int) -> str:
    return "[" * depth + "]" * depth


WORKSPACE_GET = _tools_call("workspace", {"action": "get"})
RAW_BODIES: dict[str, bytes] = {
    "invalid JSON": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {',
    "empty body": b"",
    "not UTF-8": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "task\xff\xfe"}}',
    "JSON null": b"null",
    "JSON string": b'"tools/call"',
    "lone surrogate escape": json.dumps(_tools_call("task", {"action": "create"}))
    .replace("create", "\\ud800")
    .encode(),
    "NaN and Infinity": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "task", '
    b'"arguments": {"action": "get", "payload": {"limit": NaN, "cursor": Infinity}}}}',
    "2 MB string field": json.dumps(
        _tools_call("task", {"action": "create", "payload": {"title": "x" * 2**21}})
    ).encode(),
    "2 MB tool name": json.dumps(_tools_call("\x00" * 2**21, {})).encode(),
    "2 MB action name": json.dumps(_tools_call("memory", {"action": "\u202e" * 2**20})).encode(),
    "NUL bytes everywhere": json.dumps(
        _tools_call("task\x00", {"action\x00": "get\x00", "payload\x00": "\x00"})
    ).encode(),
    "deeply nested params (150)": json.dumps(
        _tools_call("siteTools", {"action": "search", "payload": {"q": _nest(150, "mixed", "x")}})
    ).encode(),
    "deeply nested params (100 000)": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "task", '
    b'"arguments": {"action": "get", "payload": ' + _nested_list(100_000).encode() + b"}}}",
    "deeply nested body (100 000)": _nested_list(100_000).encode(),
    "wrong jsonrpc version": json.dumps({**WORKSPACE_GET, "jsonrpc": "1.0"}).encode(),
    "no jsonrpc member": json.dumps({k: v for k, v in WORKSPACE_GET.items() if k != "jsonrpc"}).encode(),
    "batch array": json.dumps([WORKSPACE_GET, {**WORKSPACE_GET, "id": 2}]).encode(),
    "empty batch": b"[]",
    "arguments an array": json.dumps(_tools_call("workspace", [1, 2])).encode(),
    "arguments a string": json.dumps(_tools_call("workspace", "get")).encode(),
    "tool name a number": json.dumps(_tools_call(5, {"action": "get"})).encode(),
    "params an array": json.dumps({**WORKSPACE_GET, "params": ["workspace", {"action": "get"}]}).encode(),
    "unknown method": json.dumps({**WORKSPACE_GET, "method": "tools/explode"}).encode(),
    "method a number": json.dumps({**WORKSPACE_GET, "method": 7}).encode(),
    "id an object": json.dumps({**WORKSPACE_GET, "id": {"a": [1]}}).encode(),
    "id 10**40": json.dumps({**WORKSPACE_GET, "id": 10**40}).encode(),
    "a response, not a request": b'{"jsonrpc": "2.0", "id": 1, "result": {"content": []}}',
}
MCP_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
}


@pytest.fixture(scope="module")
def live_world(world) -> Iterator[LiveServer]:
    """The app under uvicorn on the module's world: one server for every body, not one each."""
    with LiveServer(world.runtime) as server:
        yield server


@pytest.mark.parametrize("body", list(RAW_BODIES.values()), ids=list(RAW_BODIES))
def test_raw_json_rpc_bodies_never_get_a_server_error(world, live_world, body):
    live = live_world
    headers = {**MCP_HEADERS, "authorization": f"Bearer {world.token}"}
    response = httpx.post(f"{live.url}/mcp", content=body, headers=headers, timeout=60)
    assert response.status_code < 500, response.text[:2000]
    if response.status_code == 200 and response.content:
        answer = response.json()
        assert "internal error" not in json.dumps(answer), response.text[:2000]
        if "result" in answer:  # a tool error names the tool and action like any other
            outcome = ToolOutcome(answer["result"]["content"][0]["text"], answer["result"].get("isError", False))
            call_params = json.loads(body)["params"]
            assert_tool_answer(call_params["name"], call_params["arguments"], outcome)
    # and the server goes on serving
    assert httpx.get(f"{live.url}/health", timeout=10).status_code == 200
    after = httpx.post(f"{live.url}/mcp", json=WORKSPACE_GET, headers=headers, timeout=10)
    assert after.status_code == 200 and after.json()["result"]["isError"] is False
