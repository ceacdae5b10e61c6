"""Issue 15: hostile JSON Schemas and patterns, fuzzed on every path that stores or applies one.

A website's tool schema (reported by the human's browser, then applied to an agent's arguments) and an agent's
question schema (asked, then applied to the human's answer) get references to anything outside them in every
form, references that loop, nesting past every limit, catastrophic and huge patterns, and sizes and numbers the
store cannot hold. Whatever comes, the answer is a result or a clear refusal (a 422, a tool error naming the
action), never an internal error, within seconds; and nothing is ever read: every URL urllib is asked to open,
every connection but to the store and the server under test, and every name lookup but loopback's is recorded
(and refused) while the fuzz runs, beside two local servers that count the connections made to them.

`FUZZ_EXAMPLES` sets the examples per test, as in `test_tools_fuzz` (25 by default).
"""

# Work is timed as this process's CPU time (`time.process_time`), which other processes on a busy machine
# (tests run in parallel) do not inflate; unbounded work still shows, as it costs CPU here.

import base64
import decimal
import json
import re
import socket
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import pytest
from botocore.exceptions import ClientError
from hypothesis import given, reject
from hypothesis import strategies as st

from agent_workspace.domain.clock import iso
from agent_workspace.domain.elicitations import Elicitation
from agent_workspace.domain.errors import Unavailable
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.site_tools import Site, SiteTool
from agent_workspace.domain.tasks import Message
from agent_workspace.mcp_server.dispatch import ToolOutcome
from agent_workspace.runtime import Runtime
from tests.fuzz.test_tools_fuzz import FUZZ
from tests.outbound import LEAK_SCHEMA, SECRET, CountingServer, SilentServer
from tests.support import TASK, LiveServer, call, furnished_world

WEATHER = "https://weather.example"
SECONDS = 10  # any answer comes well within this; a fetch of the silent server would never come

# Placeholders for what exists only once the world runs, swapped in before each call (hypothesis prints them).
HTTP, SILENT, FILE = "⟪http⟫", "⟪silent⟫", "⟪file⟫"


# -- the world: a server, its store, a human and an agent, and everything that watches for outbound access --------


@dataclass
class Watch:
    """What the process tried to reach outside the store and the server under test, while the fuzz ran."""

    allowed_ports: set[int]
    reached: list[str] = field(default_factory=list)

    def connect(self, original: Any) -> Any:
        def connect(sock: socket.socket, address: Any) -> Any:
            host, port = (address[0], address[1]) if isinstance(address, tuple) else (str(address), None)
            if host in ("127.0.0.1", "::1", "localhost") and port in self.allowed_ports:
                return original(sock, address)
            self.reached.append(f"connect {host}:{port}")
            raise ConnectionRefusedError("outbound connection refused by the fuzz")

        return connect

    def lookup(self, original: Any) -> Any:
        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            if host in ("127.0.0.1", "::1", "localhost", None):
                return original(host, *args, **kwargs)
            self.reached.append(f"lookup {host}")
            raise socket.gaierror("name lookup refused by the fuzz")

        return getaddrinfo

    def open_url(self, url: Any, *args: Any, **kwargs: Any) -> Any:
        self.reached.append(f"urlopen {getattr(url, 'full_url', url)}")
        raise OSError("outbound access refused by the fuzz")


@dataclass
class World:
    runtime: Runtime
    live: LiveServer
    human: httpx.Client
    agent_token: str
    account_id: str
    workspace_id: str
    task_id: str
    http: CountingServer
    silent: SilentServer
    secret_file: Path
    watch: Watch

    def resolve(self, value: Any) -> Any:
        """`value` with the placeholders swapped for the world's servers and file, keys and strings alike."""
        swaps = {
            HTTP: f"127.0.0.1:{self.http.port}",
            SILENT: f"127.0.0.1:{self.silent.port}",
            FILE: self.secret_file.as_posix(),
        }

        def swap(text: str) -> str:
            for placeholder, real in swaps.items():
                text = text.replace(placeholder, real)
            return text

        if isinstance(value, str):
            return swap(value)
        if isinstance(value, dict):
            return {swap(k) if isinstance(k, str) else k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(item) for item in value]
        return value

    def tool_call(self, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
        return anyio.run(call, self.runtime, self.agent_token, tool, self.resolve(arguments))

    def nothing_was_read(self) -> None:
        touched = self.http.connections + self.silent.connections
        assert touched == 0 and self.watch.reached == [], (touched, self.http.requests, self.watch.reached)


@pytest.fixture(scope="module")
def world(moto_endpoint, aws_clients, tmp_path_factory) -> Iterator[World]:
    """The fuzz's furnished workspace (tests/fuzz/conftest.py), with the servers and the watch around it."""
    secret_file = tmp_path_factory.mktemp("outbound") / "secret.json"
    secret_file.write_text(json.dumps(LEAK_SCHEMA))
    http, silent = CountingServer(), SilentServer()
    with (
        furnished_world(moto_endpoint, aws_clients, agent_wait_seconds=0.2) as base,  # an accepted call parks
        LiveServer(base.runtime) as live,
        pytest.MonkeyPatch.context() as patch,
    ):
        watch = Watch({urlsplit(moto_endpoint).port or 0, live.port})
        patch.setattr(socket.socket, "connect", watch.connect(socket.socket.connect))
        patch.setattr(socket, "getaddrinfo", watch.lookup(socket.getaddrinfo))
        patch.setattr(urllib.request, "urlopen", watch.open_url)
        patch.setattr(urllib.request.OpenerDirector, "open", lambda self, url, *a, **k: watch.open_url(url))
        seeded = base.seeded
        headers = {"authorization": f"Bearer {seeded.human_token}"}
        with httpx.Client(base_url=live.url, headers=headers, timeout=SECONDS * 3) as client:
            yield World(
                base.runtime,
                live,
                client,
                seeded.agent_token,
                seeded.account_id,
                seeded.workspace_id,
                base.ids[TASK],
                http,
                silent,
                secret_file,
                watch,
            )
    http.close()
    silent.close()


# -- strategies: references ----------------------------------------------------------------------------------------

# fmt: off
SCHEMES = ["http", "https", "HTTP", "hTTpS", "file", "ftp", "data", "urn", "jar", "ws", "gopher", "dict", "ldap"]
HOSTS = [HTTP, SILENT, "localhost", "127.0.0.1", "[::1]", "169.254.169.254", "example.com", "0", "2130706433"]
PATHS = ["", "/", "/leak.json", "/leak.json#/enum", "/a/../leak.json", "/%6ceak.json", "/leak.json?x=1#"]
DATA = base64.b64encode(json.dumps(LEAK_SCHEMA).encode()).decode()
FIXED_REFS = [
    f"http://{HTTP}/leak.json", f"https://{HTTP}/leak.json", f"http://{SILENT}/leak.json", f"file://{FILE}",
    f"file:{FILE}", f"FILE://{FILE}", f"data:application/json;base64,{DATA}", "data:,{}",
    'data:application/json,{"enum":["x"]}', "urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66", "urn:x:y#/a", "tag:a,b",
    "other.json#/$defs/x", "other.json", "./leak.json", "../leak.json", "leak.json#", f"//{HTTP}/leak.json",
    "/etc/passwd", "C:\\Windows\\win.ini", "\\\\server\\share\\x", f" http://{HTTP}/x", f"\thttp://{HTTP}/x",
    f"http:/{HTTP}/x", f"http:{HTTP}/x", "%23/$defs/x", "mailto:a@b.c", "javascript:alert(1)", "about:blank", "?x#y",
    # local in form, but naming nothing or no schema
    "#/$defs/missing", "#/properties", "#/enum/0", "#/x-data/0", "#nope", "#/%24defs", "#/properties/x/type",
    "#/..", "#%", "#/~", "##", "#/$defs/a/$ref",
]
# fmt: on
external_refs = st.one_of(
    st.sampled_from(FIXED_REFS),
    st.builds(
        lambda s, h, p: f"{s}://{h}{p}", st.sampled_from(SCHEMES), st.sampled_from(HOSTS), st.sampled_from(PATHS)
    ),
    st.text(max_size=40),
    st.one_of(st.integers(), st.none(), st.booleans(), st.just({}), st.just([]), st.just({"$ref": "#"})),
)


def base(**extra: Any) -> dict[str, Any]:
    """An object schema both paths take (a question's properties must be primitive), with `extra` beside."""
    return {"type": "object", "properties": {"x": {"type": "string"}}, **extra}


def with_x(**keywords: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": {"type": "string", **keywords}}}


PLACES = {  # where a reference may sit: each is reached when the schema is applied
    "property": lambda ref: with_x(**{"$ref": ref}),
    "definition": lambda ref: with_x(**{"$ref": "#/$defs/d"}) | {"$defs": {"d": {"$ref": ref}}},
    "unknown keyword": lambda ref: with_x(**{"$ref": "#/x-more/d"}) | {"x-more": {"d": {"$ref": ref}}},
    "root": lambda ref: base(**{"$ref": ref}),
    "allOf": lambda ref: base(allOf=[{"$ref": ref}]),
    "additional": lambda ref: base(additionalProperties={"items": {"$ref": ref}}),
    "dynamic": lambda ref: with_x(**{"$dynamicRef": ref}),
    "id base": lambda ref: with_x(**{"$ref": ref}) | {"$id": f"http://{HTTP}/schemas/"},
    "draft-07": lambda ref: with_x(**{"$ref": ref}) | {"$schema": "http://json-schema.org/draft-07/schema#"},
}
refers_outside = st.builds(lambda place, ref: PLACES[place](ref), st.sampled_from(list(PLACES)), external_refs)


# -- strategies: loops, nesting -------------------------------------------------------------------------------------

IN_PLACE = ["allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas"]
INTO_PARTS = ["properties", "items", "additionalProperties", "contains", "propertyNames"]


def wrapped(keyword: str, inner: dict[str, Any]) -> dict[str, Any]:
    if keyword in ("allOf", "anyOf", "oneOf"):
        return {keyword: [inner]}
    if keyword in ("dependentSchemas", "properties"):
        return {keyword: {"x": inner}}
    return {keyword: inner}


@st.composite
def looping(draw: st.DrawFn) -> dict[str, Any]:
    """Definitions that refer to one another (or to the root) through in-place keywords or into parts: some loop
    without end, some recurse into the value as a schema may."""
    count = draw(st.integers(1, 5))
    definitions = {}
    for index in range(count):
        target = draw(st.one_of(st.just("#"), st.integers(0, count - 1).map(lambda t: f"#/$defs/d{t}")))
        keyword = draw(st.sampled_from(IN_PLACE + INTO_PARTS))
        definitions[f"d{index}"] = wrapped(keyword, {"$ref": target})
    anchor = draw(st.sampled_from([{}, {"$dynamicAnchor": "d"}]))
    return base(**{"$defs": definitions, "allOf": [{"$ref": "#/$defs/d0"}], **anchor})


def nest(depth: int, keyword: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = wrapped(keyword, schema)
    return schema


deep = st.builds(
    lambda depth, keyword, where: with_x(**nest(depth, keyword)) if where else base(allOf=[nest(depth, keyword)]),
    st.one_of(st.integers(1, 60), st.sampled_from([22, 23, 24, 25, 200])),
    st.sampled_from(IN_PLACE + INTO_PARTS),
    st.booleans(),
)


@st.composite
def doubling(draw: st.DrawFn) -> dict[str, Any]:
    """`a(n) = allOf [a(n-1), a(n-1)]`: work that doubles at each level."""
    levels = draw(st.integers(1, 24))
    definitions: dict[str, Any] = {"a0": {"type": "string"}}
    for level in range(1, levels + 1):
        previous = {"$ref": f"#/$defs/a{level - 1}"}
        definitions[f"a{level}"] = {draw(st.sampled_from(["allOf", "anyOf", "oneOf"])): [previous, previous]}
    return with_x(**{"$ref": f"#/$defs/a{levels}"}) | {"$defs": definitions}


# -- strategies: patterns -------------------------------------------------------------------------------------------

# fmt: off
CATASTROPHIC = [
    "^(a+)+$", "^(a|aa)+$", "(a|aa)+$", "(a|a)*b", "(x+x+)+y", "(.*a){12}", "^(\\w+\\s?)*$", "(a*)*b",
    "(?:a{9999}){999}", "(?=a{9999}){999}", "(a{1000}){1000}", "((a{99}){99}){99}", "(" * 40 + "a" + ")" * 40, "((",
    "[", "\\", "a{99999999999}", "a{" + "9" * 5000 + "}", "(?<=a+)b", "(?R)", "(a(?1)?)", "\\p{L}+", "\\p{Nope}",
    "(?V1)[[a]--[b]]", "(?x) a # {999}", "[[](?:a{9999}){999}", "\\x{263a}{99999}", "(?i)(?:ab{100}){1000}",
    "a{,99999}{,99999}", "(?:abc{e<=3}){50}",
]
TOKENS = ["a", "b", ".", "(", ")", "(?:", "|", "+", "*", "?", "{2}", "{99}", "{9999}", "{2,}", "{,5}", "[", "]", "^",
          "$", "\\", "\\d", "\\p{L}", "(?=", "(?<=", "\\1", "(?R)", "{e<=1}", "[[:alpha:]]", "(?i)", "#", " "]
# fmt: on
patterns = st.one_of(st.sampled_from(CATASTROPHIC), st.lists(st.sampled_from(TOKENS), max_size=16).map("".join))
with_patterns = st.one_of(
    st.builds(lambda p: with_x(pattern=p), patterns),
    st.builds(lambda p: base(patternProperties={p: {}}), patterns),
    st.builds(lambda p: base(patternProperties={p: {}}, additionalProperties=False), patterns),
    st.builds(lambda p: base(patternProperties={p: {}}, unevaluatedProperties=False), patterns),
    st.builds(lambda p: with_x(format="regex", pattern=p), patterns),
    st.builds(
        lambda ps: {"type": "object", "properties": {f"p{i}": {"pattern": p} for i, p in enumerate(ps)}},
        st.lists(patterns, max_size=40),
    ),
)

# -- strategies: what the store cannot hold, and work ---------------------------------------------------------------

too_much = st.one_of(
    st.builds(lambda n: with_x(description="d" * n), st.sampled_from([64 * 1024, 300 * 1024, 500_000])),
    st.builds(lambda n: with_x(maxLength=n), st.sampled_from([10**38, 10**40, 2**127])),
    st.builds(lambda n: with_x(minimum=n), st.sampled_from([1e-200, 1e300, -1e130, 1e125])),
    st.builds(lambda s: with_x(description=s), st.sampled_from(["\ud800", "a\udfffb"])),
    st.builds(lambda s: base(**{"$schema": s}), st.one_of(external_refs, st.sampled_from([
        "http://json-schema.org/draft-03/schema#", "http://json-schema.org/draft-07/schema#",
        "https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2019-09/schema"]))),
    st.builds(lambda n: base(additionalProperties={"items": {"enum": [f"v{i}" for i in range(n)]}}),
              st.sampled_from([10, 20_000])),
    st.builds(lambda n: base(additionalProperties={"items": {"anyOf": [{"const": i} for i in range(n)]}}),
              st.sampled_from([10, 9000])),
    st.just(base(additionalProperties={"uniqueItems": True})),
    st.just(base(required=[{"a": i} for i in range(8000)])),
)  # fmt: skip

hostile_schemas = st.one_of(refers_outside, looping(), deep, doubling(), with_patterns, too_much)

# -- strategies: values to apply them to ----------------------------------------------------------------------------

texts = st.one_of(
    st.builds(lambda n, end: "a" * n + end, st.sampled_from([0, 10, 22, 26, 40, 1000]), st.sampled_from(["", "!"])),
    st.text(max_size=30),
    st.sampled_from(["v", "main", "LEAKED"]),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), texts),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=10,
)
values = st.one_of(
    st.builds(lambda x: {"x": x}, texts),
    st.builds(lambda x, k, v: {"x": x, k: v}, texts, texts, json_values),
    st.builds(lambda x, n: {"x": x, "y": [{"a": i} for i in range(n)]}, texts, st.sampled_from([2, 3000])),
    st.builds(lambda x: {"x": x, "y": ["v19999"] * 2000}, texts),
    st.dictionaries(texts, json_values, max_size=4),
)


# -- the properties -------------------------------------------------------------------------------------------------


JSON = {"content-type": "application/json"}
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def strings_and_keys(value: Any) -> Iterator[str]:
    """Every key, and every string but the empty one (an empty string is stored; an empty key is not)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield from item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and item:
            yield item


def as_json(body: Any) -> str:
    """As a client may send it: ASCII, escapes and lone surrogates (`\\ud800`) included; httpx's json= cannot."""
    return json.dumps(body)


@contextmanager
def storable(value: Any) -> Iterator[None]:
    """A schema written straight to the store, as one stored before these checks. What DynamoDB refuses (numbers
    it cannot hold, items over 400 KB, empty names in a map, text that is no UTF-8) could never have been stored,
    so such an example is no example; moto would even keep an empty name and read the item back broken."""
    if any(text == "" or LONE_SURROGATE.search(text) for text in strings_and_keys(value)):
        reject()
    # DynamoDB nests attributes at most 32 levels deep; the site item holds a schema 2 levels down (its tools list,
    # the tool). moto does not enforce it, and botocore's own validation of a deeper one can run out of stack.
    if nesting(value) > DYNAMODB_NESTING_MAX - 2:
        reject()
    try:
        yield
    except (decimal.DecimalException, ClientError, Unavailable):
        reject()


DYNAMODB_NESTING_MAX = 32


def nesting(value: Any) -> int:
    """Levels of maps and lists in `value` (a map holding only text is 1), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        current, level = stack.pop()
        if isinstance(current, dict | list):
            deepest = max(deepest, level)
            children = current.values() if isinstance(current, dict) else current
            stack.extend((child, level + 1) for child in children)
    return deepest


def assert_clear(prefix: str, outcome: ToolOutcome, started: float) -> None:
    assert time.process_time() - started < SECONDS, outcome.text[:500]
    assert "internal error" not in outcome.text and SECRET not in outcome.text, outcome.text[:2000]
    if outcome.is_error:
        assert outcome.text.startswith(prefix), outcome.text[:2000]


def assert_answered(response: httpx.Response, started: float, allowed: tuple[int, ...]) -> None:
    assert time.process_time() - started < SECONDS, response.text[:500]
    assert response.status_code in allowed, response.text[:2000]
    assert SECRET not in response.text, response.text[:2000]


@FUZZ
@given(schema=hostile_schemas)
def test_a_tool_reported_with_a_hostile_schema_is_stored_or_refused_422_and_nothing_is_read(world, schema):
    tool = {"name": "lookup", "description": "Look up", "inputSchema": schema, "annotations": {"readOnlyHint": True}}
    site = world.resolve({"origin": WEATHER, "tools": [tool]})
    started = time.process_time()
    response = world.human.put("/api/bridge/sites", content=as_json({"sites": [site]}), headers=JSON)
    assert_answered(response, started, (200, 422))
    if response.status_code == 422:
        assert response.json()["detail"].startswith("sites[0].tools[0]"), response.text[:2000]
    world.nothing_was_read()


@FUZZ
@given(schema=hostile_schemas, arguments=values)
def test_an_agent_s_call_to_a_tool_stored_with_a_hostile_schema_answers_a_result_or_a_clear_error(
    world, schema, arguments
):
    stored = Site(WEATHER, "Weather", (SiteTool("lookup", "", world.resolve(schema), {"readOnlyHint": True}),), "")
    with storable(stored.tools[0].input_schema):  # unchecked, as before these checks
        world.runtime.site_tools.replace_sites(world.account_id, [stored], iso(world.runtime.clock()))
    payload = {"taskId": world.task_id, "site": WEATHER, "tool": "lookup", "arguments": arguments}
    started = time.process_time()
    outcome = world.tool_call("siteTools", {"action": "call", "payload": payload})
    assert_clear("siteTools call: ", outcome, started)
    world.nothing_was_read()


@FUZZ
@given(schema=hostile_schemas)
def test_an_agent_s_question_with_a_hostile_schema_is_asked_or_refused_naming_it(world, schema):
    payload = {"taskId": world.task_id, "message": "Which?", "requestedSchema": schema, "timeoutSeconds": 1}
    started = time.process_time()
    outcome = world.tool_call("task", {"action": "elicit", "payload": payload})
    assert_clear("task elicit: ", outcome, started)
    if outcome.is_error:
        assert "requestedSchema" in outcome.text, outcome.text[:2000]
    world.nothing_was_read()


@FUZZ
@given(schema=hostile_schemas, content=values)
def test_the_human_s_answer_to_a_question_stored_with_a_hostile_schema_is_taken_or_refused_422(world, schema, content):
    now = world.runtime.clock()
    question = Elicitation(
        new_id(), world.workspace_id, world.task_id, "Which?", "form", "pending", iso(now),
        iso(now + timedelta(minutes=5)), world.resolve(schema),
    )  # fmt: skip
    with storable(question.requested_schema):  # unchecked, as before these checks
        world.runtime.elicitations.create(question, Message(new_id(), "agent", "Which?", iso(now), kind="question"))
    started = time.process_time()
    response = world.human.post(
        f"/api/workspaces/{world.workspace_id}/elicitations/{question.id}/answer",
        content=as_json({"action": "accept", "content": world.resolve(content)}),
        headers=JSON,
    )
    assert_answered(response, started, (200, 422))
    world.nothing_was_read()


@FUZZ
@given(pattern=st.one_of(patterns, st.text(min_size=3, max_size=16)), description=texts)
def test_a_search_with_a_hostile_pattern_answers_within_a_second_or_two(world, pattern, description):
    tools = tuple(SiteTool(f"tool_{i}", description, {"type": "object"}) for i in range(100))
    sites = [Site(f"https://site{i}.example", f"Site {i}", tools, "") for i in range(5)]
    world.runtime.site_tools.replace_sites(world.account_id, sites, iso(world.runtime.clock()))
    started = time.process_time()
    outcome = world.tool_call("siteTools", {"action": "search", "payload": {"pattern": pattern}})
    assert time.process_time() - started < 3, pattern  # one deadline of 0.5 s for the whole search
    assert_clear("siteTools search: ", outcome, started)
    world.nothing_was_read()
