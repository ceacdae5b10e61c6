"""The Chrome extension end to end: Debian's Chromium with extension/ loaded, the app under uvicorn, a shop page.

The shop is served from a second loopback server (its own origin) and registers WebMCP tools through
`navigator.modelContext`, which the extension's content script provides. The human uses the extension's popup
(opened as a tab); the agent is the real MCP client, each call in a thread of its own with `asyncio.run`, since
Playwright's sync API owns this thread's event loop. The server gives a site 5 seconds (`site_timeout_seconds`),
so the time-out is reached for real, quickly.

The tests share one browser, server and shop (starting Chromium with an extension is the slow part) and run in
file order; each brings the extension to the state it needs (signed in, site shared) through the popup. That server
has no push (the ticket mint answers 503), so the extension long-polls; the tests at the end sign in to a second
server that has push, as `make serve` runs it (the local WebSocket gateway and the queue driver), and watch the
extension hear its calls on the socket with no long-poll.
"""

import asyncio
import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, Worker, expect

from agent_workspace.domain import push as push_rules
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.local.stack import Seed, local_runtime, seed
from agent_workspace.runtime import Runtime
from agent_workspace.services.accounts import issue_token
from tests.e2e.console_page import Background
from tests.support import Agent, LiveServer, bearer, free_port, mcp_client

SITE_TIMEOUT = 5  # seconds the server gives the site (the reference's 60, shortened for the test)
WAIT_MS = 15_000  # bounded waits for what the popup and the page show
WATCHDOG_S = 30  # the extension's alarm period: the longest a stopped worker stays stopped

# The shop: a list on the page, and its WebMCP tools. list_items only reads; add_item changes the page, so it asks.
SHOP_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Corner Shop</title></head>
<body>
<h1>Shopping list</h1>
<ul id="items"></ul>
<script>
  const items = ["milk"];
  const list = document.getElementById("items");
  const item = (name) => Object.assign(document.createElement("li"), {textContent: name});
  const render = () => list.replaceChildren(...items.map(item));
  render();
  const readOnly = {readOnlyHint: true};
  window.LIST_ITEMS = {
    name: "list_items",
    description: "List the items on the shopping list",
    inputSchema: {type: "object", properties: {}, additionalProperties: false},
    annotations: readOnly,
    execute: async () => ({items: [...items]}),
  };
  navigator.modelContext.registerTool(window.LIST_ITEMS);
  navigator.modelContext.registerTool({
    name: "add_item",
    description: "Add an item to the shopping list",
    inputSchema: {
      type: "object",
      properties: {name: {type: "string", minLength: 1, maxLength: 40}},
      required: ["name"],
      additionalProperties: false,
    },
    execute: async ({name}) => { items.push(name); render(); return {added: name, items: [...items]}; },
  });
  navigator.modelContext.registerTool({
    name: "check_stock",
    description: "Ask the warehouse whether an item is in stock (it never answers)",
    annotations: readOnly,
    execute: () => new Promise(() => {}),
  });
  navigator.modelContext.registerTool({
    name: "export_catalogue",
    description: "The whole catalogue (300 KiB)",
    annotations: readOnly,
    execute: async () => ({catalogue: "x".repeat(300 * 1024)}),
  });
  navigator.modelContext.registerTool({
    name: "price_check",
    description: "Today's prices",
    annotations: readOnly,
    execute: async () => { throw new Error("the price list is being updated"); },
  });
  if (new URLSearchParams(location.search).has("offers")) {
    navigator.modelContext.registerTool({
      name: "list_offers", description: "This week's offers", annotations: readOnly, execute: async () => ["tea"],
    });
  }
</script>
</body>
</html>
"""
SHOP_TOOLS = ["list_items", "add_item", "check_stock", "export_catalogue", "price_check"]


# -- the servers -------------------------------------------------------------------------------------------------------


class RecordingServer(LiveServer):
    """The app under uvicorn on a free loopback port, noting when each request arrived: the extension's polls and
    reports are seen from the server's side, whatever state the browser is in.

    With `push`, as `make serve` runs it (`LiveServer`); and requests to a path the test `hold`s wait until it
    lets them go."""

    def __init__(self, runtime: Runtime, push: bool = False) -> None:
        self.requests: list[tuple[float, str, str, str]] = []  # (monotonic time, method, path, query)
        self._held: set[tuple[str, str]] = set()
        super().__init__(runtime, push)

    def around(self, app: Any) -> Any:
        async def recorded(scope, receive, send):
            if scope["type"] in ("http", "websocket"):
                # A socket's upgrade is noted as method "WS", without its query: that holds the ticket.
                method, path = scope.get("method", "WS"), scope["path"]
                query = scope["query_string"].decode() if method != "WS" else ""
                self.requests.append((time.monotonic(), method, path, query))
                while (method, path) in self._held:
                    await asyncio.sleep(0.02)
            await app(scope, receive, send)

        return recorded

    def __enter__(self) -> "RecordingServer":
        super().__enter__()
        return self

    def seen(self, method: str, path: str | re.Pattern, since: float = 0.0, query: str | None = None) -> list[float]:
        """When requests `method` `path` (a string, or a pattern the path must match), with exactly `query` when
        given, arrived after `since`."""
        matches = path.fullmatch if isinstance(path, re.Pattern) else path.__eq__
        return [
            at
            for at, m, p, q in list(self.requests)
            if m == method and matches(p) and at > since and (query is None or q == query)
        ]

    def queries(self, method: str, path: str, since: float = 0.0) -> list[str]:
        """The query strings of the requests `method` `path` that arrived after `since`."""
        return [q for at, m, p, q in list(self.requests) if m == method and p == path and at > since]

    @contextlib.contextmanager
    def holding(self, method: str, path: str) -> Iterator[None]:
        """Requests `method` `path` wait (after being recorded) until the block ends."""
        self._held.add((method, path))
        try:
            yield
        finally:
            self._held.discard((method, path))


class _ShopHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if urlsplit(self.path).path != "/":
            self.send_error(404)
            return
        body = SHOP_PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def bridge_server(moto_endpoint, aws_clients) -> Iterator[tuple[Runtime, Seed, RecordingServer]]:
    """A stack without push, as most are configured: the ticket mint answers 503, so the extension long-polls."""
    runtime = local_runtime(moto_endpoint, clients=aws_clients, site_timeout_seconds=SITE_TIMEOUT)
    seeded = seed(runtime)
    with RecordingServer(runtime) as server:
        yield runtime, seeded, server


@pytest.fixture(scope="module")
def push_server(moto_endpoint, aws_clients) -> Iterator[tuple[Runtime, Seed, RecordingServer]]:
    """A second stack, with push, as `make serve` runs it: the tests at the end of the file sign in to it."""
    runtime = local_runtime(moto_endpoint, clients=aws_clients, site_timeout_seconds=SITE_TIMEOUT)
    seeded = seed(runtime)
    with RecordingServer(runtime, push=True) as server:
        yield runtime, seeded, server


@pytest.fixture(scope="module")
def shop_origin() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ShopHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


# -- the world the tests share -----------------------------------------------------------------------------------------


@dataclass
class World:
    runtime: Runtime
    server: RecordingServer
    seeded: Seed
    shop: str  # the shop's origin
    context: BrowserContext
    extension_id: str

    @property
    def popup_url(self) -> str:
        return f"chrome-extension://{self.extension_id}/popup.html"

    def worker(self) -> Worker:
        workers = [w for w in self.context.service_workers if urlsplit(w.url).hostname == self.extension_id]
        assert workers, "the extension's service worker is not there"
        return workers[0]

    def badge(self) -> str:
        return self.worker().evaluate("chrome.action.getBadgeText({})")

    def stored(self, area: str, key: str) -> Any:
        return self.worker().evaluate(f"chrome.storage.{area}.get({json.dumps(key)})").get(key)

    def shop_pages(self) -> list[Page]:
        return [page for page in self.context.pages if page.url.startswith(self.shop)]

    def shop_page(self) -> Page:
        """An open tab of the shop, brought to the front (so it is the popup's most recently used web tab)."""
        pages = self.shop_pages()
        page = pages[0] if pages else self.context.new_page()
        if not pages:
            page.goto(f"{self.shop}/")
        page.bring_to_front()
        return page


@pytest.fixture(scope="module")
def world(bridge_server, push_server, shop_origin, extension_context) -> Iterator[World]:
    """Set up in this order on purpose: the browser closes first, so no long-poll or socket holds a server's exit."""
    runtime, seeded, server = bridge_server
    context, extension_id = extension_context
    world = World(runtime, server, seeded, shop_origin, context, extension_id)
    yield world
    assert (world.stored("session", "worker") or {}).get("errors", []) == []  # nothing escaped the worker's handlers


@pytest.fixture(scope="module")
def push_world(world, push_server) -> World:
    """The same browser and shop, and the stack with push."""
    runtime, seeded, server = push_server
    return World(runtime, server, seeded, world.shop, world.context, world.extension_id)


@pytest.fixture
def popup(world) -> Iterator[Page]:
    """The extension's popup, opened as a tab 400 px wide; fails the test on any script error in it."""
    problems: list[str] = []
    page = world.context.new_page()
    page.set_viewport_size({"width": 400, "height": 760})
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))

    def on_console(message) -> None:
        if message.type == "error":
            problems.append(f"console: {message.text}")

    page.on("console", on_console)
    page.goto(world.popup_url)
    yield page
    page.close()
    assert problems == [], problems


# -- the agent ---------------------------------------------------------------------------------------------------------


def site_tools(world: World, action: str, /, **payload: Any) -> Background:
    """The agent's `siteTools` call, started: `.result()` → (text, is_error)."""

    async def run() -> tuple[str, bool]:
        async with mcp_client(world.server.url, world.seeded.agent_token, timeout=60) as client:
            return await Agent(client).act("siteTools", action, **payload)

    return Background(lambda: asyncio.run(run()))


def site_tools_answer(world: World, action: str, /, **payload: Any) -> Any:
    """A `siteTools` action that must succeed, run in the background against the live server: its JSON answer."""
    text, is_error = site_tools(world, action, **payload).result()
    assert not is_error, text
    return json.loads(text)


def new_task(world: World) -> str:
    async def run() -> str:
        async with mcp_client(world.server.url, world.seeded.agent_token) as client:
            return await Agent(client).create(title="Stock the kitchen", body="")

    return Background(lambda: asyncio.run(run())).result()


def until(
    read: Callable[[], Any], done: Callable[[Any], bool], what: str, seconds: float = 15, page: Page | None = None
) -> Any:
    """Read until `done` holds, within a bounded time; with `page`, Playwright delivers its events meanwhile (the sync
    API dispatches them only while the test's thread is inside a Playwright call)."""
    deadline = time.monotonic() + seconds
    while True:
        value = read()
        if done(value):
            return value
        assert time.monotonic() < deadline, f"{what} never came; last seen: {value!r}"
        if page is not None:
            page.wait_for_timeout(100)
        else:
            time.sleep(0.1)


# -- the human, in the popup -------------------------------------------------------------------------------------------


def pill(popup: Page):
    return popup.locator("#state")


def sign_in(popup: Page, world: World, token: str | None = None, server: str | None = None) -> None:
    popup.get_by_label("Server URL").fill(server or world.server.url)
    popup.get_by_label("Human token").fill(token or world.seeded.human_token)
    popup.get_by_role("button", name="Sign in").click()


def signed_in(popup: Page, world: World) -> None:
    expect(pill(popup)).to_have_text(re.compile(r"\S"))  # the popup has read its state
    if pill(popup).text_content() != "Connected":
        expect(popup.get_by_role("button", name="Sign in")).to_be_visible()
        sign_in(popup, world)
    expect(pill(popup)).to_have_text("Connected", timeout=WAIT_MS)


def shared(popup: Page, world: World) -> None:
    """Signed in, with the shop shared from one of its tabs."""
    world.shop_page()
    signed_in(popup, world)
    if world.shop not in (world.stored("local", "shared") or {}):
        popup.reload()
        popup.get_by_role("button", name="Share this site").click()
    sites = popup.get_by_role("region", name="Shared sites")
    expect(sites.get_by_role("listitem").filter(has_text=world.shop).first).to_contain_text("online", timeout=WAIT_MS)


def card_of(popup: Page, tool: str):
    approvals = popup.get_by_role("region", name=re.compile("^Waiting for you"))
    return approvals.get_by_role("listitem").filter(has_text=tool)


# -- the schema checker, in Chromium -----------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^(a+)+$"},
        "count": {"type": "integer", "minimum": 1, "maximum": 9},
        "size": {"enum": ["S", "M"]},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
        "kind": {"const": "fruit"},
        "note": {"type": ["string", "null"]},
    },
    "required": ["name"],
    "additionalProperties": False,
}
NESTED = {"type": "object", "additionalProperties": {"$ref": "#"}}


@pytest.mark.parametrize(
    ("schema", "arguments", "mismatch"),
    [
        (SCHEMA, {"name": "ab", "count": 3, "size": "M", "tags": ["x"], "kind": "fruit", "note": None}, None),
        (SCHEMA, {"name": "🍎🍐"}, None),  # two code points (four UTF-16 units): within maxLength 4 either way
        (SCHEMA, {"name": "zz!"}, None),  # pattern is not evaluated: a page's regular expression could hang the worker
        (SCHEMA, {}, 'at arguments: "name" is required'),
        (SCHEMA, {"name": "a"}, "at arguments.name: must be at least 2 characters"),
        (SCHEMA, {"name": "abcde"}, "at arguments.name: must be at most 4 characters"),
        (SCHEMA, {"name": "ab", "count": 2.5}, "at arguments.count: must be integer, not number"),
        (SCHEMA, {"name": "ab", "count": 10}, "at arguments.count: must be at most 9"),
        (SCHEMA, {"name": "ab", "count": 0}, "at arguments.count: must be at least 1"),
        (SCHEMA, {"name": "ab", "size": "L"}, 'at arguments.size: must be one of ["S","M"]'),
        (SCHEMA, {"name": "ab", "tags": []}, "at arguments.tags: must have at least 1 items"),
        (SCHEMA, {"name": "ab", "tags": ["x", 2]}, "at arguments.tags[1]: must be string, not number"),
        (SCHEMA, {"name": "ab", "tags": ["x", "y", "z"]}, "at arguments.tags: must have at most 2 items"),
        (SCHEMA, {"name": "ab", "kind": "veg"}, 'at arguments.kind: must be "fruit"'),
        (SCHEMA, {"name": "ab", "note": 1}, "at arguments.note: must be string or null, not number"),
        (SCHEMA, {"name": "ab", "colour": "red"}, 'at arguments: "colour" is not allowed (no additional properties)'),
        (NESTED, {"a": {"a": {"a": {}}}}, None),  # $ref is not followed: the server checked it
        ({"type": "object", "properties": {"deep": {}}}, "text", "at arguments: must be object, not string"),
    ],
)
def test_the_extensions_schema_check_names_the_first_mismatch_and_never_runs_patterns(
    world, popup, schema, arguments, mismatch
):
    found = popup.evaluate(
        "async ([schema, args]) => (await import('/lib/schema.js')).checkArguments('t', schema, args)",
        [schema, arguments],
    )
    assert found == (None if mismatch is None else f"the arguments do not match t's current inputSchema {mismatch}")


def test_the_schema_check_is_bounded_in_depth(world, popup):
    deep = popup.evaluate(
        """async () => {
            const {checkArguments} = await import('/lib/schema.js');
            let schema = {type: "array"}, value = [];
            for (let i = 0; i < 40; i++) { schema = {type: "array", items: schema}; value = [value]; }
            return checkArguments('t', schema, value);
        }"""
    )
    assert deep is not None and deep.endswith("nested deeper than 32 levels"), deep


# -- signing in --------------------------------------------------------------------------------------------------------


def test_a_token_the_server_refuses_shows_token_refused_and_is_not_kept(world, popup):
    expect(pill(popup)).to_have_text("Signed out")
    sign_in(popup, world, token="not-a-token")
    expect(pill(popup)).to_have_text("Token refused", timeout=WAIT_MS)
    expect(popup.get_by_role("status")).to_contain_text("The server refused this token")
    assert world.stored("local", "auth") is None
    assert world.stored("local", "status")["state"] == "refused"


def test_signing_in_shows_connected_the_workspaces_reached_and_starts_polling(world, popup):
    signed_in_at = time.monotonic()
    sign_in(popup, world)
    expect(pill(popup)).to_have_text("Connected", timeout=WAIT_MS)
    expect(popup.locator("#connection-detail")).to_contain_text(f"Connected to {world.server.url}")
    expect(popup.locator("#reach")).to_have_text(
        "Shared with every workspace of this account: Local workspace.", timeout=WAIT_MS
    )
    until(lambda: world.server.seen("GET", "/api/bridge/calls", since=signed_in_at), bool, "a long-poll")
    # This stack has no push: the extension asked for a socket, heard 503, and long-polls by itself.
    assert world.server.seen("POST", "/api/push/tickets", since=signed_in_at)
    assert set(world.server.queries("GET", "/api/bridge/calls", since=signed_in_at)) == {"wait=20"}
    assert world.stored("local", "status")["delivery"] == "poll"
    expect(popup.locator("#connection-detail")).to_contain_text(", polling.")
    assert world.stored("local", "auth") == {"server": world.server.url, "token": world.seeded.human_token}
    assert world.stored("sync", "auth") is None  # the token never leaves this device


# -- sharing -----------------------------------------------------------------------------------------------------------


def test_sharing_the_shop_from_the_popup_shows_it_online_with_its_tools(world, popup):
    world.shop_page()
    signed_in(popup, world)
    popup.reload()
    this_site = popup.get_by_role("region", name="This site")
    expect(this_site).to_contain_text(world.shop)
    expect(this_site).to_contain_text(f"This page offers 5 tools: {', '.join(SHOP_TOOLS)}.")
    this_site.get_by_role("button", name="Share this site").click()
    expect(popup.get_by_role("status")).to_have_text(f"Shared {world.shop} with 5 tools.", timeout=WAIT_MS)
    card = popup.get_by_role("region", name="Shared sites").get_by_role("listitem").filter(has_text=world.shop).first
    expect(card).to_contain_text("5 tools · online", timeout=WAIT_MS)
    tools = card.get_by_role("list", name=f"Tools of {world.shop}").get_by_role("listitem")
    expect(tools).to_have_text([name if name == "add_item" else f"{name} read-only" for name in SHOP_TOOLS])

    found = site_tools_answer(world, "search")
    assert found["online"] is True
    assert [(s["site"], s["title"], s["online"]) for s in found["sites"]] == [(world.shop, "Corner Shop", True)]
    assert [t["name"] for t in found["sites"][0]["tools"]] == SHOP_TOOLS
    definition = site_tools_answer(world, "getDefinition", site=world.shop, tool="add_item")
    assert definition == {
        "site": world.shop,
        "name": "add_item",
        "description": "Add an item to the shopping list",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 40}},
            "required": ["name"],
            "additionalProperties": False,
        },
        "annotations": {},
    }
    assert site_tools_answer(world, "getDefinition", site=world.shop, tool="list_items")["annotations"] == {
        "readOnlyHint": True
    }


def test_a_page_of_the_shop_that_loads_with_other_tools_is_reported_again(world, popup):
    shared(popup, world)
    page = world.shop_page()
    page.goto(f"{world.shop}/?offers")

    def names() -> list[str]:
        return [t["name"] for site in site_tools_answer(world, "search")["sites"] for t in site["tools"]]

    until(names, lambda found: found == [*SHOP_TOOLS, "list_offers"], "the page's new tool in search")
    page.goto(f"{world.shop}/")
    until(names, lambda found: found == SHOP_TOOLS, "the tool gone again")


# -- calls -------------------------------------------------------------------------------------------------------------


def test_a_read_only_tool_runs_in_the_page_without_asking(world, popup):
    shared(popup, world)
    task_id = new_task(world)
    answer = site_tools_answer(world, "call", taskId=task_id, site=world.shop, tool="list_items", arguments={})
    assert answer["result"] == {"items": ["milk"]}
    assert (answer["site"], answer["tool"]) == (world.shop, "list_items")
    assert "third-party" in answer["notice"]
    assert world.badge() == ""


def test_a_tool_that_changes_the_page_runs_after_allow_once_in_the_popup(world, popup, artifacts):
    shared(popup, world)
    shop = world.shop_page()
    task_id = new_task(world)
    call = site_tools(world, "call", taskId=task_id, site=world.shop, tool="add_item", arguments={"name": "eggs"})

    until(world.badge, lambda text: text == "1", "the badge counting one call to decide on")
    card = card_of(popup, "add_item")
    expect(card).to_contain_text(f"add_item on {world.shop}", timeout=WAIT_MS)
    expect(card).to_contain_text(f"Workspace: Local workspace · Task: {task_id}")
    expect(card.get_by_label("Arguments")).to_have_text('{\n  "name": "eggs"\n}')
    expect(popup.locator("#approvals-count")).to_have_text("1")
    expect(shop.locator("#items li")).to_have_text(["milk"])  # nothing ran yet
    popup.screenshot(path=str(artifacts / "extension-popup.png"), full_page=True)

    card.get_by_role("button", name="Allow once").click()
    text, is_error = call.result()
    assert not is_error, text
    assert json.loads(text)["result"] == {"added": "eggs", "items": ["milk", "eggs"]}
    expect(shop.locator("#items li")).to_have_text(["milk", "eggs"])
    expect(card).to_have_count(0, timeout=WAIT_MS)
    until(world.badge, lambda text: text == "", "the badge cleared")


def test_deny_in_the_popup_fails_the_call_with_the_reason_and_leaves_the_page(world, popup):
    shared(popup, world)
    shop = world.shop_page()
    before = shop.locator("#items li").all_text_contents()
    task_id = new_task(world)
    call = site_tools(world, "call", taskId=task_id, site=world.shop, tool="add_item", arguments={"name": "caviar"})
    card_of(popup, "add_item").get_by_role("button", name="Deny").click(timeout=WAIT_MS)
    text, is_error = call.result()
    assert is_error and f"the human denied running add_item on {world.shop}" in text, text
    assert shop.locator("#items li").all_text_contents() == before


def test_always_allow_in_the_popup_lets_the_next_calls_of_that_tool_run_without_asking(world, popup):
    shared(popup, world)
    shop = world.shop_page()
    task_id = new_task(world)
    call = site_tools(world, "call", taskId=task_id, site=world.shop, tool="add_item", arguments={"name": "tea"})
    card_of(popup, "add_item").get_by_role("button", name="Always allow").click(timeout=WAIT_MS)
    text, is_error = call.result()
    assert not is_error, text
    answer = site_tools_answer(
        world, "call", taskId=task_id, site=world.shop, tool="add_item", arguments={"name": "jam"}
    )
    assert answer["result"]["added"] == "jam"  # nobody was asked: the call ran straight away
    assert shop.locator("#items li").all_text_contents()[-2:] == ["tea", "jam"]
    assert world.badge() == ""


def test_a_site_that_does_not_answer_in_time_fails_the_call_and_the_extension_posts_nothing_late(world, popup):
    shared(popup, world)
    task_id = new_task(world)
    started = time.monotonic()
    text, is_error = site_tools(world, "call", taskId=task_id, site=world.shop, tool="check_stock").result()
    assert is_error and f"the site did not answer within {SITE_TIMEOUT} seconds" in text, text
    assert SITE_TIMEOUT <= time.monotonic() - started < SITE_TIMEOUT + 5
    assert world.server.seen("POST", re.compile(r"/api/bridge/calls/\w+/result"), since=started) == []


def test_a_result_over_256_kib_and_an_exception_in_the_page_reach_the_agent_as_errors(world, popup):
    shared(popup, world)
    task_id = new_task(world)
    text, is_error = site_tools(world, "call", taskId=task_id, site=world.shop, tool="export_catalogue").result()
    size = len(json.dumps({"catalogue": "x" * 300 * 1024}, separators=(",", ":")))
    assert is_error and f"the result is {size:,} bytes, over the 256 KiB limit" in text, text
    text, is_error = site_tools(world, "call", taskId=task_id, site=world.shop, tool="price_check").result()
    assert is_error and "the site answered with an error: Error: the price list is being updated" in text, text


def test_arguments_that_no_longer_match_the_pages_schema_are_refused_in_the_browser(world, popup):
    shared(popup, world)
    shop = world.shop_page()
    # The page changes list_items without loading again: the server still holds the schema it was told.
    shop.evaluate(
        """() => {
            navigator.modelContext.unregisterTool("list_items");
            navigator.modelContext.registerTool({...window.LIST_ITEMS,
                inputSchema: {type: "object", properties: {aisle: {type: "integer"}}, required: ["aisle"]}});
        }"""
    )
    try:
        task_id = new_task(world)
        text, is_error = site_tools(world, "call", taskId=task_id, site=world.shop, tool="list_items").result()
        assert is_error, text
        assert 'the arguments do not match list_items\'s current inputSchema at arguments: "aisle" is required' in text
    finally:
        shop.evaluate(
            """() => {
                navigator.modelContext.unregisterTool("list_items");
                navigator.modelContext.registerTool(window.LIST_ITEMS);
            }"""
        )


def test_a_call_with_no_tab_of_the_site_open_opens_one_in_the_background(world, popup):
    shared(popup, world)
    for page in world.shop_pages():
        page.close()
    until(
        lambda: world.worker().evaluate(f"chrome.tabs.query({{url: '{world.shop}/*'}}).then((tabs) => tabs.length)"),
        lambda count: count == 0,
        "every shop tab closed",
    )
    task_id = new_task(world)
    answer = site_tools_answer(world, "call", taskId=task_id, site=world.shop, tool="list_items")
    assert answer["result"] == {"items": ["milk"]}  # a fresh page
    tabs = world.worker().evaluate(
        f"chrome.tabs.query({{url: '{world.shop}/*'}}).then((tabs) => tabs.map((t) => [t.url, t.active]))"
    )
    assert tabs == [[f"{world.shop}/", False]]  # opened at the page it was shared from, not brought to the front


# -- the service worker ------------------------------------------------------------------------------------------------


def test_a_stopped_service_worker_is_started_by_the_alarm_and_runs_calls_again(world, popup):
    shared(popup, world)
    popup.close()  # an open popup asks the worker every 2 s, which would start it at once: here only the alarm may
    starts = len(world.stored("session", "worker")["starts"])
    shop = world.shop_page()
    cdp = world.context.new_cdp_session(shop)
    ours = f"chrome-extension://{world.extension_id}/"
    stopped: list[float] = []
    cdp.on(
        "ServiceWorker.workerVersionUpdated",
        lambda event: stopped.extend(
            time.monotonic()
            for v in event["versions"]
            if v["scriptURL"].startswith(ours) and v["runningStatus"] == "stopped"
        ),
    )
    cdp.send("ServiceWorker.enable")
    cdp.send("ServiceWorker.stopAllWorkers")
    until(lambda: stopped, bool, "the worker stopped", seconds=10, page=shop)
    stopped_at = stopped[0]

    polls = until(
        lambda: world.server.seen("GET", "/api/bridge/calls", since=stopped_at),
        bool,
        "a long-poll from the restarted worker",
        seconds=WATCHDOG_S + 15,
    )
    restarted_after = polls[0] - stopped_at
    task_id = new_task(world)
    answer = site_tools_answer(world, "call", taskId=task_id, site=world.shop, tool="list_items")
    ran_after = time.monotonic() - stopped_at
    print(f"\nworker stopped -> next long-poll after {restarted_after:.1f} s; a call answered {ran_after:.1f} s after")
    cdp.detach()

    assert answer["result"] == {"items": ["milk"]}
    assert restarted_after <= WATCHDOG_S + 5
    worker = world.stored("session", "worker")
    assert len(worker["starts"]) == starts + 1
    started = worker["starts"][-1]  # by the alarm: it fired as the worker started (epoch ms, the worker's clock)
    assert any(0 <= alarm - started < 2000 for alarm in worker["alarms"]), worker


# -- the connection ----------------------------------------------------------------------------------------------------


class Proxy:
    """A TCP proxy in front of the server that the test can cut: the browser then cannot reach the server at all."""

    def __init__(self, port: int) -> None:
        self._target = port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._open = True
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            if not self._open:
                client.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", self._target))
            self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self._open = False
        for end in self._sockets:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
        self._sockets.clear()

    def restore(self) -> None:
        self._open = True

    def close(self) -> None:
        self.cut()
        self._listener.close()


def signed_out(popup: Page) -> None:
    expect(pill(popup)).to_have_text(re.compile(r"\S"))
    if pill(popup).text_content() in ("Connected", "Offline"):
        popup.get_by_role("button", name="Sign out").click()
    expect(pill(popup)).to_have_text(re.compile("Signed out|Token refused"), timeout=WAIT_MS)


def test_a_server_out_of_reach_shows_offline_with_the_reason_until_it_answers_again(world, popup):
    proxy = Proxy(world.server.port)
    try:
        signed_out(popup)
        sign_in(popup, world, server=proxy.url)
        expect(pill(popup)).to_have_text("Connected", timeout=WAIT_MS)
        proxy.cut()
        expect(pill(popup)).to_have_text("Offline", timeout=WAIT_MS)
        expect(popup.locator("#connection-detail")).to_contain_text(f"Cannot reach {proxy.url}: the connection failed.")
        assert world.stored("local", "status")["error"] == "the connection failed"
        proxy.restore()
        expect(pill(popup)).to_have_text("Connected", timeout=WAIT_MS)  # the back-off is 1, 2, 4 ... s
        signed_out(popup)
    finally:
        proxy.close()


def test_a_token_revoked_while_signed_in_shows_token_refused_and_stops_polling(world, popup):
    runtime, account_id = world.runtime, world.seeded.account_id
    issued = issue_token(runtime.accounts, TokenKind.HUMAN, account_id, None)
    signed_out(popup)
    sign_in(popup, world, token=issued.token)
    expect(pill(popup)).to_have_text("Connected", timeout=WAIT_MS)
    runtime.accounts.revoke_token(account_id, None, issued.record.id)
    expect(pill(popup)).to_have_text("Token refused", timeout=WAIT_MS)
    refused_at = time.monotonic()
    expect(popup.locator("#refused")).to_have_text(
        "The server refused the token. Sign in again with a valid human token."
    )
    expect(popup.get_by_role("button", name="Sign in")).to_be_visible()
    assert world.stored("local", "status")["state"] == "refused"
    popup.wait_for_timeout(1500)  # time in which a loop that kept going would have polled again
    assert world.server.seen("GET", "/api/bridge/calls", since=refused_at) == []


# -- signing out and unsharing -----------------------------------------------------------------------------------------


def test_signing_out_shows_the_browser_offline_to_agents_and_stops_polling(world, popup):
    shared(popup, world)
    popup.get_by_role("button", name="Sign out").click()
    expect(pill(popup)).to_have_text("Signed out", timeout=WAIT_MS)
    signed_out_at = time.monotonic()
    notice = "Signed out. Agents see your Chrome as not connected."
    expect(popup.get_by_role("status")).to_have_text(notice, timeout=WAIT_MS)  # the server was told
    assert world.stored("local", "auth") is None

    found = site_tools_answer(world, "search")
    assert found["online"] is False
    assert [(s["site"], s["online"]) for s in found["sites"]] == [(world.shop, False)]
    task_id = new_task(world)
    text, is_error = site_tools(world, "call", taskId=task_id, site=world.shop, tool="list_items").result()
    assert is_error and "the human's Chrome is not connected" in text, text
    assert world.server.seen("GET", "/api/bridge/calls", since=signed_out_at + 1) == []
    assert world.badge() == ""


def test_stop_sharing_removes_the_site_for_agents(world, popup):
    shared(popup, world)  # signed in again with the same token: the shop is still shared
    assert [s["site"] for s in site_tools_answer(world, "search")["sites"]] == [world.shop]
    popup.get_by_role("button", name=f"Stop sharing {world.shop}").click()
    expect(popup.get_by_role("status")).to_have_text(f"Stopped sharing {world.shop}.", timeout=WAIT_MS)
    expect(popup.get_by_text("No site is shared yet.")).to_be_visible()
    assert site_tools_answer(world, "search") == {"online": True, "sites": []}


# -- push (issue 36): the same extension on a stack that has it --------------------------------------------------------

RESULT = re.compile(r"/api/bridge/calls/\w+/result")
QUIET_S = 35  # longer than the watchdog alarm's period and several keep-alive ticks


def listening(popup: Page, world: World) -> str:
    """Signed in to the push stack, the shop shared, the socket open and its catch-up read: its connection id."""
    if (world.stored("local", "auth") or {}).get("server") not in (None, world.server.url):
        signed_out(popup)
    shared(popup, world)
    gateway = world.server.gateway
    assert gateway is not None
    (connection,) = until(lambda: gateway.connection_ids, bool, "the extension's socket open")
    until(lambda: world.server.seen("GET", "/api/bridge/calls", query="wait=0"), bool, "the catch-up after connecting")
    return connection


def long_polls(world: World, since: float = 0.0) -> list[str]:
    """GET /api/bridge/calls that waited (any but wait=0), after `since`."""
    return [q for q in world.server.queries("GET", "/api/bridge/calls", since=since) if q != "wait=0"]


def test_with_push_a_site_call_reaches_the_extension_on_its_socket_and_nothing_long_polls(push_world, popup):
    listening(popup, push_world)
    expect(popup.locator("#connection-detail")).to_contain_text(
        f"Connected to {push_world.server.url}, live (push).", timeout=WAIT_MS
    )
    assert push_world.stored("local", "status")["delivery"] == "push"
    task_id = new_task(push_world)
    asked_at = time.monotonic()

    answer = site_tools_answer(push_world, "call", taskId=task_id, site=push_world.shop, tool="list_items")

    assert answer["result"] == {"items": ["milk"]}
    server = push_world.server
    assert server.seen("POST", re.compile(r"/push/@connections/.+"), since=asked_at)  # the push went out
    assert server.seen("GET", "/api/bridge/calls", since=asked_at, query="wait=0")  # and brought the call
    assert len(server.seen("POST", RESULT, since=asked_at)) == 1
    assert long_polls(push_world) == []


def test_an_idle_extension_on_push_asks_the_server_nothing_not_even_at_its_alarm(push_world, popup):
    listening(popup, push_world)
    popup.close()  # an open popup asks the worker every 2 s, and the worker asks the server
    worker_now = push_world.worker().evaluate("Date.now()")
    quiet_from = time.monotonic()

    time.sleep(QUIET_S)  # a window to observe nothing in: no event marks "no request"

    asked = [(m, p) for at, m, p, _ in list(push_world.server.requests) if at > quiet_from]
    assert asked == []
    alarms = push_world.stored("session", "worker")["alarms"]
    assert any(at > worker_now for at in alarms)  # the watchdog fired meanwhile, and asked nothing either
    assert push_world.server.gateway.connection_ids  # still listening


def test_a_call_waiting_for_the_human_and_the_decision_reach_the_extension_over_push(push_world, popup):
    listening(popup, push_world)
    popup.close()  # only a push can bring the call to the badge now: no tick, no popup asks the server
    shop = push_world.shop_page()
    task_id = new_task(push_world)
    call = site_tools(
        push_world, "call", taskId=task_id, site=push_world.shop, tool="add_item", arguments={"name": "figs"}
    )
    until(push_world.badge, lambda text: text == "1", "the badge counting the call, from its push")
    (waiting,) = push_world.stored("session", "pending")["calls"]

    decided = httpx.post(
        f"{push_world.server.url}/api/workspaces/{waiting['workspaceId']}/site-calls/{waiting['id']}/decision",
        json={"decision": "allow_once"},
        headers=bearer(push_world.seeded.human_token),
        timeout=10,
    )  # as the console decides it

    assert decided.status_code == 200, decided.text
    text, is_error = call.result()
    assert not is_error, text
    assert json.loads(text)["result"] == {"added": "figs", "items": ["milk", "figs"]}
    expect(shop.locator("#items li")).to_have_text(["milk", "figs"])
    until(push_world.badge, lambda text: text == "", "the badge cleared")
    assert long_polls(push_world) == []


def test_a_socket_the_server_closes_loses_nothing_a_call_queued_in_the_gap_runs_after_the_reconnect(push_world, popup):
    first = listening(popup, push_world)
    server, gateway = push_world.server, push_world.server.gateway
    task_id = new_task(push_world)
    cut_at = time.monotonic()
    with server.holding("WS", "/push"):  # the extension's next socket waits: a gap the test controls
        assert gateway.close(first) == 1
        until(lambda: server.seen("WS", "/push", since=cut_at), bool, "the extension reconnecting")
        assert gateway.connection_ids == []
        call = site_tools(push_world, "call", taskId=task_id, site=push_world.shop, tool="list_items")
        until(
            lambda: push_world.runtime.site_tools.calls_of(push_world.seeded.workspace_id, "queued"),
            bool,
            "the call queued while no socket hears it",
        )

    text, is_error = call.result()

    assert not is_error, text
    assert json.loads(text)["result"]["items"][0] == "milk"  # the list as the page holds it (figs came before)
    (second,) = gateway.connection_ids
    assert second != first
    assert len(server.seen("POST", RESULT, since=cut_at)) == 1  # run once
    assert long_polls(push_world) == []


def test_the_extension_pings_and_renews_its_socket_at_the_cadence_its_ticket_gives(push_world, popup, monkeypatch):
    first = listening(popup, push_world)
    gateway = push_world.server.gateway
    monkeypatch.setattr(push_rules, "PING_SECONDS", 1)
    monkeypatch.setattr(push_rules, "RECONNECT_SECONDS", 6)
    monkeypatch.setattr(gateway, "idle_seconds", 3)  # a socket silent for 3 s is cut, as API Gateway's after 10 min
    ends_before = len(push_world.stored("session", "worker").get("socketEnds", []))
    gateway.close(first)  # the next ticket carries the new cadence

    (second,) = until(lambda: [c for c in gateway.connection_ids if c != first], bool, "a new socket")
    opened_at = time.monotonic()
    until(lambda: second not in gateway.connection_ids, bool, "the socket renewed", seconds=15)
    lasted = time.monotonic() - opened_at

    assert lasted > 4.5  # it outlived the idle timeout: its pings kept it open
    ends = push_world.stored("session", "worker")["socketEnds"][ends_before:]
    assert ends[:2] == ["closed 1001", "renew"]  # cut by the server, then replaced by the extension itself
    until(lambda: gateway.connection_ids, bool, "the renewed socket open")


def test_signing_out_on_push_closes_the_socket_and_agents_see_the_browser_offline(push_world, popup):
    listening(popup, push_world)
    popup.get_by_role("button", name="Sign out").click()
    expect(popup.get_by_role("status")).to_have_text(
        "Signed out. Agents see your Chrome as not connected.", timeout=WAIT_MS
    )
    assert push_world.server.gateway.connection_ids == []
    assert site_tools_answer(push_world, "search")["online"] is False


def test_a_socket_that_cannot_open_falls_back_to_the_long_poll_by_itself(push_world, popup, monkeypatch):
    first = listening(popup, push_world)
    runtime = push_world.runtime
    nowhere = f"ws://127.0.0.1:{free_port()}/push"  # tickets still mint, but name a socket nobody serves
    monkeypatch.setattr(runtime, "settings", runtime.settings.model_copy(update={"push_url": nowhere}))
    cut_at = time.monotonic()
    push_world.server.gateway.close(first)

    until(lambda: long_polls(push_world, since=cut_at), bool, "a long-poll after the socket failed to open")

    assert len(push_world.server.seen("POST", "/api/push/tickets", since=cut_at)) >= 2  # it tried again first
    assert push_world.stored("local", "status")["delivery"] == "poll"
    expect(popup.locator("#connection-detail")).to_contain_text(", polling.", timeout=WAIT_MS)
    task_id = new_task(push_world)
    assert site_tools_answer(push_world, "call", taskId=task_id, site=push_world.shop, tool="list_items")["result"][
        "items"
    ]
