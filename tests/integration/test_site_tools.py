"""Site tools end to end: the agent's real MCP client, the human over REST, and a simulated browser.

The browser is a thread that speaks only the bridge protocol (`api/bridge.py`) with httpx and the
human's token, as the Chrome extension does: it reports its shared sites, long-polls for calls and
posts what a per-tool Python function makes of each. Time-outs are reached by moving
`runtime.clock` forward while the agent waits, never by really waiting.
"""

import json
import threading
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import anyio
import httpx
import pytest

from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.patterns import Deadline
from agent_workspace.domain.site_tools import RESULT_BYTES_MAX, THIRD_PARTY_NOTICE, Site, SiteTool
from agent_workspace.domain.tokens import hash_token
from agent_workspace.local.stack import seed
from agent_workspace.mcp_server.dispatch import dispatch
from agent_workspace.services import accounts
from agent_workspace.services import site_tools as site_tools_service
from agent_workspace.tool_registry import Call
from agent_workspace.tools import REGISTRY
from tests import support
from tests.outbound import SECRET, outbound

pytestmark = pytest.mark.anyio

GITHUB = "https://github.com"
WEATHER = "https://weather.example"
SLOW = "https://slow.example"

SEARCH_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "labels": {"type": "array", "items": {"type": "string"}},
        "limit": {"type": "integer", "minimum": 1},
    },
    "required": ["query"],
    "additionalProperties": False,
}
CREATE_SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string", "minLength": 1}, "body": {"type": "string"}},
    "required": ["title"],
}
CITY_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
READ_ONLY = {"readOnlyHint": True}

# What the browser shares: the origin as the tab knows it (normalised by the server), tools in page order.
SITES = [
    {
        "origin": "https://GitHub.com/",
        "title": "GitHub",
        "tools": [
            {
                "name": "create_issue",
                "description": "Open a new issue; search first to avoid duplicates",
                "inputSchema": CREATE_SCHEMA,
                "annotations": {"destructiveHint": False},
            },
            {
                "name": "search_issues",
                "description": "Search issues in the repository",
                "inputSchema": SEARCH_SCHEMA,
                "annotations": READ_ONLY,
            },
            {
                "name": "list_repos",
                "description": "List the repositories you can see",
                "inputSchema": {"type": "object"},
                "annotations": READ_ONLY,
            },
        ],
    },
    {
        "origin": WEATHER,
        "title": "Weather",
        "tools": [
            {
                "name": "forecast",
                "description": "Tomorrow's forecast for a city",
                "inputSchema": CITY_SCHEMA,
                "annotations": READ_ONLY,
            }
        ],
    },
]
LISTED = {
    "online": True,
    "sites": [
        {
            "site": GITHUB,
            "title": "GitHub",
            "online": True,
            "tools": [
                {"name": "create_issue", "description": "Open a new issue; search first to avoid duplicates"},
                {"name": "search_issues", "description": "Search issues in the repository"},
                {"name": "list_repos", "description": "List the repositories you can see"},
            ],
        },
        {
            "site": WEATHER,
            "title": "Weather",
            "online": True,
            "tools": [{"name": "forecast", "description": "Tomorrow's forecast for a city"}],
        },
    ],
}


# -- the simulated browser ---------------------------------------------------------------------

NEVER = object()  # a handler's answer for "the site never answers"


def echo(arguments: dict) -> Any:
    return {"echo": arguments}


def never(arguments: dict) -> Any:
    return NEVER


def failing(arguments: dict) -> Any:
    raise RuntimeError("the page threw: rate limited")


def oversized(arguments: dict) -> Any:
    return {"blob": "x" * (RESULT_BYTES_MAX + 1)}


def sleeping(seconds: float) -> Callable[[dict], Any]:
    def handler(arguments: dict) -> Any:
        time.sleep(seconds)
        return echo(arguments)

    return handler


class Browser:
    """The human's Chrome: reports sites, long-polls for calls and posts each tool's outcome, over REST only."""

    def __init__(self, url: str, token: str, sites: list[dict], handlers: dict[str, Callable] | None, wait: float):
        self.sites = sites
        self.handlers = handlers or {}
        self.wait = wait
        self.http = httpx.Client(base_url=url, headers={"authorization": f"Bearer {token}"}, timeout=30)
        self.seen: list[dict] = []  # every call a poll handed over, in order
        self.posted: list[tuple[str, int, dict]] = []  # (call id, status code, body) of every result posted
        self.problems: list[str] = []  # anything unexpected on the bridge: the test fails at teardown
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="simulated-browser", daemon=True)

    def report(self) -> dict:
        response = self.http.put("/api/bridge/sites", json={"sites": self.sites})
        assert response.status_code == 200, response.text
        return response.json()

    def poll(self, wait: float) -> list[dict]:
        response = self.http.get("/api/bridge/calls", params={"wait": wait})
        assert response.status_code == 200, response.text
        return response.json()["calls"]

    def post(self, call_id: str, body: dict) -> httpx.Response:
        return self.http.post(f"/api/bridge/calls/{call_id}/result", json=body)

    def start(self) -> "Browser":
        self.report()
        self._thread.start()
        return self

    def stop(self) -> None:
        """Close the browser: at most one long-poll's wait."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.wait + 10)
            assert not self._thread.is_alive(), "the simulated browser did not stop"

    def close(self) -> None:
        self.stop()
        self.http.close()

    def calls_of(self, tool: str) -> list[dict]:
        return [call for call in self.seen if call["tool"] == tool]

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                response = self.http.get("/api/bridge/calls", params={"wait": self.wait})
                if response.status_code != 200:
                    self.problems.append(f"poll answered {response.status_code}: {response.text}")
                    time.sleep(0.1)
                    continue
                for call in response.json()["calls"]:
                    self.seen.append(call)
                    self._answer(call)
            except Exception as error:  # the test fails at teardown; the thread never dies silently
                self.problems.append(repr(error))
                time.sleep(0.1)

    def _answer(self, call: dict) -> None:
        handler = self.handlers.get(call["tool"], echo)
        try:
            outcome = handler(call["arguments"])
        except Exception as error:
            body = {"error": str(error)}
        else:
            if outcome is NEVER:
                return
            body = {"result": outcome}
        response = self.post(call["id"], body)
        self.posted.append((call["id"], response.status_code, response.json()))


async def settled(chrome: "Browser", count: int = 1) -> list[tuple[str, int, dict]]:
    """The browser's posts once `count` are in: the agent may hear of an outcome before the browser has the answer
    to its own post of it (the server stores the outcome, then answers the browser)."""
    with anyio.fail_after(10):
        while len(chrome.posted) < count:
            await anyio.sleep(0.02)
    return chrome.posted


@pytest.fixture
def browser(live, seeded):
    """Start a simulated browser for the seeded human (or another token); all stop at the test's end."""
    started: list[Browser] = []

    def start(
        handlers: dict[str, Callable] | None = None,
        sites: list[dict] = SITES,
        token: str | None = None,
        wait: float = 0.5,
        polling: bool = True,
    ) -> Browser:
        opened = Browser(live.url, token or seeded.human_token, sites, handlers, wait)
        started.append(opened)
        if polling:
            opened.start()
        else:
            opened.report()
        return opened

    yield start
    for opened in started:
        opened.close()
    for opened in started:
        assert opened.problems == [], opened.problems


# -- the agent and the human -------------------------------------------------------------------


class Agent(support.Agent):
    """The shared agent bound to siteTools: `await agent("search", q=...)` → (text, is_error) of one action."""

    async def __call__(self, action: str, /, **payload) -> tuple[str, bool]:
        return await self.act("siteTools", action, **payload)

    async def ok(self, action: str, **payload) -> Any:
        text, is_error = await self(action, **payload)
        assert not is_error, text
        return json.loads(text)

    async def create_task(self) -> str:
        return await self.create(title="Triage", body="")


@pytest.fixture
def agent_type() -> type[Agent]:
    return Agent


class Human:
    """The human over REST, for one workspace: the site-call list, decisions, the task's conversation."""

    def __init__(self, http: httpx.AsyncClient, workspace_id: str) -> None:
        self.http = http
        self.workspace_id = workspace_id

    def on(self, workspace_id: str) -> "Human":
        return Human(self.http, workspace_id)

    async def calls(self, status: str | None = None) -> list[dict]:
        params = {"status": status} if status else {}
        response = await self.http.get(f"/api/workspaces/{self.workspace_id}/site-calls", params=params)
        assert response.status_code == 200, response.text
        return response.json()

    async def decide(self, call_id: str, decision: str) -> httpx.Response:
        return await self.http.post(
            f"/api/workspaces/{self.workspace_id}/site-calls/{call_id}/decision", json={"decision": decision}
        )

    async def messages(self, task_id: str) -> list[dict]:
        response = await self.http.get(f"/api/workspaces/{self.workspace_id}/tasks/{task_id}")
        assert response.status_code == 200, response.text
        return response.json()["conversation"]["messages"]

    async def wait_for_pending(self, count: int = 1) -> list[dict]:
        return await until(lambda: self.calls("pending"), lambda calls: len(calls) >= count, "a pending call")


@pytest.fixture
async def human(live, seeded):
    headers = {"authorization": f"Bearer {seeded.human_token}"}
    async with httpx.AsyncClient(base_url=live.url, headers=headers, timeout=30) as http:
        yield Human(http, seeded.workspace_id)


async def until(read: Callable, done: Callable[[Any], bool], what: str, seconds: float = 10) -> Any:
    """Read (sync or async) until `done` holds, within a bounded time."""
    deadline = time.monotonic() + seconds
    while True:
        value = read()
        if hasattr(value, "__await__"):
            value = await value
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} never came; last seen: {value!r}")
        await anyio.sleep(0.05)


@asynccontextmanager
async def calling(agent: Agent, action: str = "call", seconds: float = 20, **payload):
    """The agent's call running in the background while the block acts as the human, the browser or time."""
    outcome: dict[str, Any] = {}

    async def run() -> None:
        outcome["text"], outcome["is_error"] = await agent(action, **payload)

    with anyio.fail_after(seconds):
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            yield outcome
    assert "text" in outcome


def ok_result(text: str, is_error: bool) -> dict:
    assert not is_error, text
    answer = json.loads(text)
    assert set(answer) == {"site", "tool", "callId", "notice", "result"}, answer
    assert answer["notice"] == THIRD_PARTY_NOTICE
    return answer


# -- search ------------------------------------------------------------------------------------


async def test_search_lists_every_shared_site_with_its_tools_and_online_true(agent, browser):
    browser()
    assert await agent.ok("search") == LISTED


async def test_q_ranks_the_best_matching_tool_first_and_lists_only_matches_but_every_site(agent, browser):
    browser()
    found = await agent.ok("search", q="search issues")
    github, weather = LISTED["sites"]
    create_issue, search_issues, _ = github["tools"]
    assert found == {
        "online": True,
        "sites": [{**github, "tools": [search_issues, create_issue]}, {**weather, "tools": []}],
    }
    weather_first = await agent.ok("search", q="forecast")
    assert [site["site"] for site in weather_first["sites"]] == [WEATHER, GITHUB]
    assert [[t["name"] for t in site["tools"]] for site in weather_first["sites"]] == [["forecast"], []]


async def test_pattern_filters_by_regular_expression_in_any_case(agent, browser):
    browser()
    found = await agent.ok("search", pattern="^list_|CITY")
    assert [(site["site"], [t["name"] for t in site["tools"]]) for site in found["sites"]] == [
        (GITHUB, ["list_repos"]),
        (WEATHER, ["forecast"]),
    ]
    none = await agent.ok("search", pattern="nothing.?here")
    assert [(site["site"], site["tools"]) for site in none["sites"]] == [(GITHUB, []), (WEATHER, [])]


@pytest.mark.parametrize("field", ["q", "pattern"])
@pytest.mark.parametrize("value", ["ab", "a" * 17])
async def test_q_and_pattern_of_the_wrong_length_are_refused_naming_the_field(agent, browser, field, value):
    browser(polling=False)
    text, is_error = await agent("search", **{field: value})
    assert is_error, text
    assert text.startswith("siteTools search:") and f"{field} must be 3-16 characters; got {len(value)}" in text, text


async def test_an_invalid_regular_expression_is_refused(agent, browser):
    browser(polling=False)
    text, is_error = await agent("search", pattern="(unclosed")
    assert is_error and text.startswith("siteTools search: pattern is not a valid regular expression"), text


@pytest.mark.parametrize(
    ("pattern", "description"),
    [("(a+)+$", "a" * 1000 + "!"), ("(x+x+)+y", "x" * 1000), ("(.*a){12}", "a" * 1999)],
)
async def test_a_catastrophic_pattern_answers_quickly_with_a_result_or_a_clear_error(
    agent, browser, pattern, description
):
    slow = [{"origin": SLOW, "title": "Slow", "tools": [{"name": "aaa", "description": description}]}]
    browser(sites=SITES + slow, polling=False)
    started = time.monotonic()
    text, is_error = await agent("search", pattern=pattern)
    assert time.monotonic() - started < 5
    if is_error:
        assert text == "siteTools search: pattern takes too long to evaluate; use a simpler one", text
    else:
        assert [site["site"] for site in json.loads(text)["sites"]] == [GITHUB, SLOW, WEATHER]


async def test_a_browser_silent_for_over_45_seconds_shows_its_last_tools_offline(agent, browser, clock):
    chrome = browser()
    chrome.stop()  # the human closed Chrome
    assert await agent.ok("search") == LISTED  # within 45 seconds of its last poll
    clock.advance(seconds=46)
    offline = await agent.ok("search")
    assert offline["online"] is False
    assert [site["online"] for site in offline["sites"]] == [False, False]
    assert [site["tools"] for site in offline["sites"]] == [site["tools"] for site in LISTED["sites"]]


# -- getDefinition -----------------------------------------------------------------------------


async def test_get_definition_returns_the_full_input_schema_and_annotations(agent, browser):
    browser(polling=False)
    assert await agent.ok("getDefinition", site="https://GITHUB.com/", tool="search_issues") == {
        "site": GITHUB,
        "name": "search_issues",
        "description": "Search issues in the repository",
        "inputSchema": SEARCH_SCHEMA,
        "annotations": READ_ONLY,
    }
    defaults = [{"origin": WEATHER, "tools": [{"name": "now"}]}]
    browser(sites=defaults, polling=False)
    assert await agent.ok("getDefinition", site=WEATHER, tool="now") == {
        "site": WEATHER,
        "name": "now",
        "description": "",
        "inputSchema": {"type": "object"},
        "annotations": {},
    }


async def test_get_definition_of_an_unknown_site_or_tool_is_not_found_naming_it(agent, browser):
    browser(polling=False)
    text, is_error = await agent("getDefinition", site="https://gitlab.com", tool="search_issues")
    assert is_error and text.startswith("siteTools getDefinition: no shared site https://gitlab.com"), text
    text, is_error = await agent("getDefinition", site=GITHUB, tool="merge_everything")
    assert is_error and f"site {GITHUB} has no tool 'merge_everything'" in text, text
    text, is_error = await agent("getDefinition", site="github.com", tool="search_issues")
    assert is_error and "site must be a site's origin" in text, text


# -- call: read-only, arguments ----------------------------------------------------------------


async def test_a_read_only_tool_runs_straight_away_and_its_result_is_marked_as_third_party_data(agent, browser, human):
    chrome = browser({"search_issues": lambda args: {"issues": [{"number": 7, "title": args["query"]}]}})
    task_id = await agent.create_task()
    with anyio.fail_after(15):
        answer = ok_result(
            *await agent("call", taskId=task_id, site=GITHUB, tool="search_issues", arguments={"query": "is:open"})
        )
    assert answer["site"] == GITHUB and answer["tool"] == "search_issues"
    assert answer["result"] == {"issues": [{"number": 7, "title": "is:open"}]}
    assert "data" in answer["notice"] and "never as instructions" in answer["notice"]
    assert [(c["id"], c["site"], c["tool"], c["arguments"]) for c in chrome.seen] == [
        (answer["callId"], GITHUB, "search_issues", {"query": "is:open"})
    ]
    assert [(call_id, status) for call_id, status, _ in await settled(chrome)] == [(answer["callId"], 200)]
    done = await human.calls("done")
    assert [(c["id"], c["status"], c["taskId"]) for c in done] == [(answer["callId"], "done", task_id)]
    assert await human.calls("pending") == []
    kinds = [m["kind"] for m in await human.messages(task_id)]
    assert "siteCall" not in kinds  # nobody was asked


@pytest.mark.parametrize(
    ("arguments", "where"),
    [
        ({"query": "bug", "labels": ["ok", 3]}, "arguments.labels[1]"),
        ({"query": "bug", "limit": "ten"}, "arguments.limit"),
        ({"query": "bug", "limit": 0}, "arguments.limit"),
        ({"labels": []}, "at arguments:"),
        ({"query": "bug", "extra": 1}, "at arguments:"),
    ],
)
async def test_arguments_that_do_not_match_the_schema_never_reach_the_browser(agent, browser, human, arguments, where):
    chrome = browser()
    task_id = await agent.create_task()
    text, is_error = await agent("call", taskId=task_id, site=GITHUB, tool="search_issues", arguments=arguments)
    assert is_error, text
    assert text.startswith("siteTools call: arguments do not match search_issues's inputSchema"), text
    assert where in text, text
    assert await human.calls() == []  # nothing was stored, so nothing could be handed to the browser
    assert chrome.seen == []


async def test_a_call_for_a_task_of_another_workspace_or_an_unknown_tool_is_refused(agent, browser, human):
    browser()
    text, is_error = await agent("call", taskId="0kGogHmaqvZ", site=GITHUB, tool="list_repos")
    assert is_error and "no task 0kGogHmaqvZ in this workspace" in text, text
    task_id = await agent.create_task()
    text, is_error = await agent("call", taskId=task_id, site=GITHUB, tool="delete_repo")
    assert is_error and f"site {GITHUB} has no tool 'delete_repo'" in text, text
    assert await human.calls() == []


# -- call: the human's decision ----------------------------------------------------------------


async def test_allow_once_runs_the_call_once_and_the_next_call_asks_again(agent, browser, human):
    chrome = browser({"create_issue": lambda args: {"number": 42, "title": args["title"]}})
    task_id = await agent.create_task()
    payload = {"taskId": task_id, "site": GITHUB, "tool": "create_issue", "arguments": {"title": "Crash"}}
    async with calling(agent, **payload) as first:
        [pending] = await human.wait_for_pending()
        assert (pending["taskId"], pending["site"], pending["tool"], pending["arguments"], pending["status"]) == (
            task_id,
            GITHUB,
            "create_issue",
            {"title": "Crash"},
            "pending",
        )
        await anyio.sleep(0.3)
        assert chrome.seen == [] and "text" not in first  # the agent waits; nothing ran yet
        messages = await human.messages(task_id)
        [asked] = [m for m in messages if m["kind"] == "siteCall"]
        assert asked["from"] == "agent" and asked["siteCallId"] == pending["id"]
        assert (asked["site"], asked["tool"], asked["arguments"]) == (GITHUB, "create_issue", {"title": "Crash"})
        assert "create_issue" in asked["text"] and GITHUB in asked["text"]
        decided = await human.decide(pending["id"], "allow_once")
        assert decided.status_code == 200, decided.text
        assert decided.json()["decision"] == "allow_once"
    answer = ok_result(first["text"], first["is_error"])
    assert (answer["callId"], answer["result"]) == (pending["id"], {"number": 42, "title": "Crash"})
    assert [c["id"] for c in chrome.calls_of("create_issue")] == [pending["id"]]
    kinds = [(m["kind"], m["from"]) for m in await human.messages(task_id)]
    assert kinds[-2:] == [("siteCall", "agent"), ("siteCallDecision", "human")]

    async with calling(agent, **{**payload, "arguments": {"title": "Crash again"}}) as second:
        [again] = await human.wait_for_pending()
        assert again["id"] != pending["id"]
        assert (await human.decide(again["id"], "deny")).status_code == 200
    assert second["is_error"] and "denied" in second["text"], second
    assert [c["id"] for c in chrome.calls_of("create_issue")] == [pending["id"]]  # ran once only


async def test_always_allow_runs_and_the_next_call_runs_without_asking_in_that_workspace_only(
    agent, browser, human, live, runtime, seeded
):
    chrome = browser()
    task_id = await agent.create_task()
    payload = {"taskId": task_id, "site": GITHUB, "tool": "create_issue", "arguments": {"title": "One"}}
    async with calling(agent, **payload) as first:
        [pending] = await human.wait_for_pending()
        assert (await human.decide(pending["id"], "always_allow")).status_code == 200
    assert ok_result(first["text"], first["is_error"])["result"] == {"echo": {"title": "One"}}

    with anyio.fail_after(15):
        second = ok_result(*await agent("call", **{**payload, "arguments": {"title": "Two"}}))
    assert second["result"] == {"echo": {"title": "Two"}}
    assert [c["arguments"] for c in chrome.calls_of("create_issue")] == [{"title": "One"}, {"title": "Two"}]
    assert await human.calls("pending") == []
    asked = [m for m in await human.messages(task_id) if m["kind"] == "siteCall"]
    assert [m["siteCallId"] for m in asked] == [pending["id"]]  # the second call asked nobody

    workspace, issued = accounts.create_workspace(runtime.accounts, seeded.account_id, "Other", "")
    async with support.connected(live.url, issued.token, Agent) as other_agent:
        other_task = await other_agent.create_task()
        other = human.on(workspace.id)
        async with calling(other_agent, **{**payload, "taskId": other_task}) as third:
            [asked_there] = await other.wait_for_pending()
            assert asked_there["taskId"] == other_task
            assert await human.calls("pending") == []
            assert (await other.decide(asked_there["id"], "deny")).status_code == 200
    assert third["is_error"] and "denied" in third["text"], third
    assert len(chrome.calls_of("create_issue")) == 2


async def test_deny_fails_the_call_with_a_denied_reason_the_browser_never_sees_it_and_a_second_decision_is_409(
    agent, browser, human
):
    chrome = browser()
    task_id = await agent.create_task()
    async with calling(agent, taskId=task_id, site=GITHUB, tool="create_issue", arguments={"title": "x"}) as call:
        [pending] = await human.wait_for_pending()
        denied = await human.decide(pending["id"], "deny")
        assert denied.status_code == 200, denied.text
        assert denied.json()["status"] == "denied"
    assert call["is_error"], call
    assert call["text"] == f"siteTools call: the human denied running create_issue on {GITHUB}"
    assert chrome.seen == []
    for decision in ("allow_once", "deny", "always_allow"):
        again = await human.decide(pending["id"], decision)
        assert again.status_code == 409, again.text
        assert "denied" in again.json()["detail"]
    assert [c["id"] for c in await human.calls("denied")] == [pending["id"]]
    assert await human.calls("pending") == []
    late = chrome.post(pending["id"], {"result": "sneaky"})
    assert late.status_code == 409, late.text


async def test_a_second_decision_after_allow_is_409(agent, browser, human):
    browser()
    task_id = await agent.create_task()
    async with calling(agent, taskId=task_id, site=GITHUB, tool="create_issue", arguments={"title": "x"}) as call:
        [pending] = await human.wait_for_pending()
        assert (await human.decide(pending["id"], "allow_once")).status_code == 200
        assert (await human.decide(pending["id"], "deny")).status_code == 409
    assert ok_result(call["text"], call["is_error"])["result"] == {"echo": {"title": "x"}}


async def test_an_unknown_decision_or_call_is_refused(agent, browser, human):
    browser(polling=False)
    assert (await human.decide("0kGogHmaqvZ", "allow_once")).status_code == 404
    response = await human.decide("0kGogHmaqvZ", "maybe")
    assert response.status_code == 422 and "decision" in response.text


async def test_a_call_id_no_call_could_have_never_reaches_a_key(agent, browser, human, runtime, monkeypatch):
    """DynamoDB refuses a key over 1 KiB with a ValidationException (moto does not): such an id is a 404 first."""
    chrome = browser(polling=False)
    asked = []
    monkeypatch.setattr(runtime.site_tools, "get_call", lambda *args: asked.append(args))
    for call_id in ("x" * 2000, "not-an-id"):
        assert (await human.decide(call_id, "allow_once")).status_code == 404
        assert chrome.post(call_id, {"result": {}}).status_code == 404
    assert asked == []


async def test_a_call_nobody_decides_on_expires_after_the_approval_window(agent, browser, human, clock):
    chrome = browser()
    task_id = await agent.create_task()
    async with calling(agent, taskId=task_id, site=GITHUB, tool="create_issue", arguments={"title": "x"}) as call:
        [pending] = await human.wait_for_pending()
        clock.advance(seconds=601)
    assert call["is_error"] and "did not decide in time" in call["text"], call
    assert [c["id"] for c in await human.calls("expired")] == [pending["id"]]
    assert (await human.decide(pending["id"], "allow_once")).status_code == 409
    assert chrome.seen == []


async def park(runtime, seeded, payload: dict) -> dict:
    """The agent's call as a Lambda with 1.5 s left makes it: it answers `pending` and nobody waits any more."""
    runtime.settings = runtime.settings.model_copy(update={"lambda_return_margin_seconds": 0.5})
    principal = runtime.accounts.resolve_token(hash_token(seeded.agent_token))
    short = Call(principal, runtime, "req", deadline=time.monotonic() + 1.5)
    started = time.monotonic()
    parked = await dispatch(REGISTRY, short, "siteTools", {"action": "call", "payload": payload})
    assert time.monotonic() - started < 1.5
    pending = json.loads(parked.text)
    assert not parked.is_error and pending["status"] == "pending", parked.text
    return pending


async def test_a_wait_longer_than_the_invocation_returns_pending_and_resumes_with_call_id(
    agent, browser, human, runtime, seeded
):
    chrome = browser()
    task_id = await agent.create_task()
    payload = {"taskId": task_id, "site": GITHUB, "tool": "create_issue", "arguments": {"title": "Later"}}
    pending = await park(runtime, seeded, payload)
    assert pending["waitingFor"] == "the human's decision" and pending["callId"] in pending["next"]

    [listed] = await human.calls("pending")
    assert listed["id"] == pending["callId"]
    text, is_error = await agent("call", **{**payload, "tool": "search_issues", "callId": pending["callId"]})
    assert is_error, text
    assert text == f"siteTools call: callId {pending['callId']} is a call of create_issue on {GITHUB}, not of this tool"
    assert (await human.decide(pending["callId"], "allow_once")).status_code == 200
    with anyio.fail_after(15):
        resumed = ok_result(*await agent("call", **payload, callId=pending["callId"]))
    assert (resumed["callId"], resumed["result"]) == (pending["callId"], {"echo": {"title": "Later"}})
    with anyio.fail_after(15):  # asking again for a finished call answers it again, never runs it twice
        assert ok_result(*await agent("call", **payload, callId=pending["callId"]))["result"] == resumed["result"]
    assert len(chrome.calls_of("create_issue")) == 1
    assert len(await human.calls()) == 1


# -- call: failures ----------------------------------------------------------------------------


async def test_a_call_while_the_browser_is_offline_fails_clearly(agent, browser, human, clock):
    chrome = browser()
    chrome.stop()
    task_id = await agent.create_task()
    clock.advance(seconds=46)
    text, is_error = await agent("call", taskId=task_id, site=GITHUB, tool="list_repos")
    assert is_error, text
    assert text == (
        "siteTools call: the human's Chrome is not connected, so site tools cannot run now; try again later"
    )
    assert chrome.seen == [] and await human.calls() == []


async def test_a_site_that_never_answers_fails_after_60_seconds_and_a_late_result_is_409(agent, browser, human, clock):
    chrome = browser({"search_issues": never})
    task_id = await agent.create_task()
    payload = {"taskId": task_id, "site": GITHUB, "tool": "search_issues", "arguments": {"query": "slow"}}
    async with calling(agent, **payload) as call:
        [seen] = await until(lambda: list(chrome.seen), bool, "the browser's call")
        await anyio.sleep(0.5)
        assert "text" not in call  # the agent still waits for the site
        clock.advance(seconds=61)
    assert call["is_error"], call
    assert call["text"] == "siteTools call: the site did not answer within 60 seconds"
    late = chrome.post(seen["id"], {"result": {"issues": []}})
    assert late.status_code == 409, late.text
    assert "no longer awaited" in late.json()["detail"]
    [failed] = await human.calls("failed")
    assert (failed["id"], failed["error"]) == (seen["id"], "the site did not answer within 60 seconds")


async def test_a_call_allowed_after_the_browser_went_offline_fails_clearly(agent, browser, human, clock):
    chrome = browser()
    task_id = await agent.create_task()
    async with calling(agent, taskId=task_id, site=GITHUB, tool="create_issue", arguments={"title": "x"}) as call:
        [pending] = await human.wait_for_pending()
        chrome.stop()
        clock.advance(seconds=46)
        assert (await human.decide(pending["id"], "allow_once")).status_code == 200
    assert call["is_error"], call
    assert call["text"] == "siteTools call: the human's Chrome is not connected, so the call could not run"
    assert chrome.seen == []


async def test_a_slow_site_that_answers_within_the_deadline_succeeds(agent, browser):
    browser({"list_repos": sleeping(0.5)})
    task_id = await agent.create_task()
    with anyio.fail_after(15):
        answer = ok_result(*await agent("call", taskId=task_id, site=GITHUB, tool="list_repos"))
    assert answer["result"] == {"echo": {}}


async def test_the_error_a_site_posts_fails_the_call_carrying_it(agent, browser, human):
    chrome = browser({"search_issues": failing})
    task_id = await agent.create_task()
    with anyio.fail_after(15):
        text, is_error = await agent(
            "call", taskId=task_id, site=GITHUB, tool="search_issues", arguments={"query": "x"}
        )
    assert is_error, text
    assert text == "siteTools call: the site answered with an error: the page threw: rate limited"
    assert [status for _, status, _ in await settled(chrome)] == [200]
    [failed] = await human.calls("failed")
    assert failed["error"] == "the site answered with an error: the page threw: rate limited"


async def test_an_oversized_result_is_refused_422_and_the_agents_call_fails_over_256_kib(agent, browser, human):
    chrome = browser({"list_repos": oversized})
    task_id = await agent.create_task()
    with anyio.fail_after(15):
        text, is_error = await agent("call", taskId=task_id, site=GITHUB, tool="list_repos")
    [(call_id, status, body)] = await settled(chrome)
    assert status == 422, body
    assert "result" in body["detail"]
    assert is_error, text
    assert text.startswith("siteTools call: the site's result is ") and "over the 256 KiB limit" in text, text
    [failed] = await human.calls("failed")
    assert failed["id"] == call_id
    assert chrome.post(call_id, {"result": "small"}).status_code == 409  # no second chance


async def test_a_result_of_exactly_256_kib_is_accepted(agent, browser):
    blob = "y" * (RESULT_BYTES_MAX - len(json.dumps({"blob": ""}, separators=(",", ":"))))  # as sent: compact
    chrome = browser({"list_repos": lambda args: {"blob": blob}})
    task_id = await agent.create_task()
    with anyio.fail_after(15):
        answer = ok_result(*await agent("call", taskId=task_id, site=GITHUB, tool="list_repos"))
    assert answer["result"] == {"blob": blob}
    assert [status for _, status, _ in await settled(chrome)] == [200]


# -- old names ---------------------------------------------------------------------------------


async def test_the_old_site_tool_names_are_rewritten_to_the_actions(agent, browser):
    browser()
    assert json.loads((await agent.raw("listSiteTools", {}))[0]) == LISTED
    ranked = json.loads((await agent.raw("listSiteTools", {"q": "forecast"}))[0])
    assert [site["site"] for site in ranked["sites"]] == [WEATHER, GITHUB]
    text, is_error = await agent.raw("getSiteToolDefinition", {"site": WEATHER, "tool": "forecast"})
    assert not is_error and json.loads(text)["inputSchema"] == CITY_SCHEMA, text
    task_id = await agent.create_task()
    with anyio.fail_after(15):
        answer = ok_result(
            *await agent.raw(
                "callSiteTool",
                {"taskId": task_id, "site": WEATHER, "tool": "forecast", "arguments": {"city": "Oslo"}},
            )
        )
    assert answer["result"] == {"echo": {"city": "Oslo"}}
    text, is_error = await agent.raw("listSiteTools", {"q": "ab"})
    assert is_error and text.startswith("siteTools search: q must be 3-16"), text


# -- isolation and authentication --------------------------------------------------------------


async def test_another_accounts_agent_sees_none_of_the_sites(agent, browser, live, runtime):
    browser(polling=False)
    stranger = seed(runtime)
    async with support.connected(live.url, stranger.agent_token, Agent) as other:
        assert await other.ok("search") == {"online": False, "sites": []}
        text, is_error = await other("getDefinition", site=GITHUB, tool="search_issues")
        assert is_error and f"no shared site {GITHUB}" in text, text
        task_id = await other.create_task()
        text, is_error = await other("call", taskId=task_id, site=GITHUB, tool="list_repos")
        assert is_error and f"no shared site {GITHUB}" in text, text
    assert (await agent.ok("search"))["online"] is True


async def test_another_accounts_human_can_neither_decide_nor_post_a_result(agent, browser, human, live, runtime):
    chrome = browser({"search_issues": never})
    stranger = seed(runtime)
    headers = {"authorization": f"Bearer {stranger.human_token}"}
    task_id = await agent.create_task()
    async with httpx.AsyncClient(base_url=live.url, headers=headers, timeout=30) as http:
        intruder = Human(http, human.workspace_id)
        own = intruder.on(stranger.workspace_id)
        async with calling(agent, taskId=task_id, site=GITHUB, tool="create_issue", arguments={"title": "x"}) as ask:
            [pending] = await human.wait_for_pending()
            assert (await intruder.decide(pending["id"], "allow_once")).status_code == 404
            assert (await own.decide(pending["id"], "allow_once")).status_code == 404
            listed = await http.get(f"/api/workspaces/{human.workspace_id}/site-calls")
            assert listed.status_code == 404
            assert await own.calls() == []
            assert [c["status"] for c in await human.calls()] == ["pending"]
            assert (await human.decide(pending["id"], "deny")).status_code == 200
        assert ask["is_error"] and "denied" in ask["text"]

        args = {"query": "mine"}
        async with calling(agent, taskId=task_id, site=GITHUB, tool="search_issues", arguments=args) as run:
            [seen] = await until(lambda: list(chrome.seen), bool, "the browser's call")
            forged = await http.post(f"/api/bridge/calls/{seen['id']}/result", json={"result": "forged"})
            assert forged.status_code == 404, forged.text
            polled = await http.get("/api/bridge/calls", params={"wait": 0})
            assert polled.json() == {"calls": []}
            assert chrome.post(seen["id"], {"result": "genuine"}).status_code == 200
    assert ok_result(run["text"], run["is_error"])["result"] == "genuine"


async def test_an_agent_token_is_rejected_on_the_bridge_and_the_decision_routes(agent, browser, human, live, seeded):
    browser(polling=False)
    headers = {"authorization": f"Bearer {seeded.agent_token}"}
    base = f"{live.url}/api/workspaces/{seeded.workspace_id}/site-calls"
    with httpx.Client(base_url=live.url, headers=headers, timeout=30) as http:
        for response in (
            http.put("/api/bridge/sites", json={"sites": []}),
            http.get("/api/bridge/calls", params={"wait": 0}),
            http.post("/api/bridge/calls/0kGogHmaqvZ/result", json={"result": 1}),
            http.get(base),
            http.post(f"{base}/0kGogHmaqvZ/decision", json={"decision": "deny"}),
        ):
            assert response.status_code == 403, (response.request.url, response.text)
    assert await agent.ok("search") == LISTED  # the agent's attempt to report replaced nothing
    anonymous = httpx.get(f"{live.url}/api/bridge/calls", params={"wait": 0})
    assert anonymous.status_code == 401


# -- concurrency -------------------------------------------------------------------------------


async def test_two_polls_at_once_hand_each_queued_call_to_exactly_one_of_them(agent, browser, human):
    first, second = browser(polling=False), browser(polling=False)
    task_id = await agent.create_task()
    cities = ["Oslo", "Lima", "Pune"]
    outcomes: list[tuple[str, bool]] = []

    async def ask(city: str) -> None:
        outcomes.append(await agent("call", taskId=task_id, site=WEATHER, tool="forecast", arguments={"city": city}))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            for city in cities:
                group.start_soon(ask, city)
            queued = await until(lambda: human.calls("queued"), lambda calls: len(calls) == 3, "three queued calls")
            barrier = threading.Barrier(2)
            handed: dict[int, list[dict]] = {}

            def poll(which: int, opened: Browser) -> None:
                barrier.wait(timeout=10)
                handed[which] = opened.poll(wait=1)

            async with anyio.create_task_group() as polls:
                polls.start_soon(anyio.to_thread.run_sync, poll, 1, first)
                polls.start_soon(anyio.to_thread.run_sync, poll, 2, second)
            ids = [call["id"] for calls in handed.values() for call in calls]
            assert sorted(ids) == sorted(call["id"] for call in queued)  # each once, none twice
            assert await human.calls("queued") == []
            assert second.poll(wait=0) == [] and first.poll(wait=0) == []
            for which, opened in ((1, first), (2, second)):
                for call in handed[which]:
                    assert opened.post(call["id"], {"result": call["arguments"]["city"]}).status_code == 200
    assert sorted(ok_result(*outcome)["result"] for outcome in outcomes) == sorted(cities)


# -- the bridge's long-poll ----------------------------------------------------------------------


async def test_a_poll_with_nothing_to_run_answers_empty_after_the_servers_cap(browser, runtime):
    """The server's cap shortens every poll, whatever `wait` the browser asks for; the browser polls again."""
    runtime.settings = runtime.settings.model_copy(update={"bridge_poll_seconds": 1})
    chrome = browser(polling=False)
    started = time.monotonic()
    assert chrome.poll(wait=25) == []
    assert 1 <= time.monotonic() - started < 3
    started = time.monotonic()
    assert chrome.poll(wait=0.2) == []  # a shorter wait of the browser's own still holds
    assert time.monotonic() - started < 1


async def test_a_poll_with_a_call_queued_answers_at_once(agent, browser, runtime, seeded):
    chrome = browser(polling=False)
    task_id = await agent.create_task()
    payload = {"taskId": task_id, "site": GITHUB, "tool": "list_repos", "arguments": {}}
    parked = await park(runtime, seeded, payload)
    started = time.monotonic()
    [handed] = chrome.poll(wait=25)
    assert handed["id"] == parked["callId"] and time.monotonic() - started < 2


# -- the bridge's input ------------------------------------------------------------------------


def site_with(**changes) -> dict:
    return {"sites": [{**SITES[1], **changes}]}


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (site_with(origin="https://weather.example/today"), "sites[0].origin"),
        (site_with(origin="ftp://weather.example"), "sites[0].origin"),
        (site_with(origin="javascript:alert(1)"), "sites[0].origin"),
        (site_with(origin="https://weather.example?x=1"), "sites[0].origin"),
        (
            site_with(tools=[{"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": 5}}}}]),
            "sites[0].tools[0].inputSchema",
        ),
        (site_with(tools=[{"name": "forecast", "inputSchema": {"type": "thing"}}]), "sites[0].tools[0].inputSchema"),
        (site_with(tools=[{"name": "forecast"}, {"name": "now"}, {"name": "forecast"}]), "sites[0].tools[2].name"),
        (site_with(tools=[{"name": "has space"}]), "sites[0].tools[0].name"),
        (site_with(tools=[{"name": "t", "description": "d" * 2001}]), "sites[0].tools[0].description"),
        ({"sites": [SITES[1], {**SITES[1], "origin": "https://Weather.example/"}]}, "sites[1].origin"),
    ],
)
async def test_an_invalid_report_is_refused_422_naming_where(live, seeded, browser, agent, body, named):
    browser(polling=False)
    response = httpx.put(
        f"{live.url}/api/bridge/sites", json=body, headers={"authorization": f"Bearer {seeded.human_token}"}
    )
    assert response.status_code == 422, response.text
    assert named in response.json()["detail"], response.text
    assert await agent.ok("search") == LISTED  # the earlier report stands


async def test_a_new_report_replaces_the_shared_sites(agent, browser):
    browser(polling=False)
    browser(sites=[SITES[1]], polling=False)
    assert [site["site"] for site in (await agent.ok("search"))["sites"]] == [WEATHER]
    text, is_error = await agent("getDefinition", site=GITHUB, tool="list_repos")
    assert is_error and f"no shared site {GITHUB}" in text


async def test_a_result_body_must_carry_exactly_one_of_result_or_error(browser):
    chrome = browser(polling=False)
    for body in ({}, {"result": 1, "error": "x"}, {"outcome": 1}):
        response = chrome.post("0kGogHmaqvZ", body)
        assert response.status_code == 422, (body, response.text)
    assert chrome.post("0kGogHmaqvZ", {"result": None}).status_code == 404  # a null result is a result


# -- found by these tests, fixed: malformed origins, stale calls and results, numbers DynamoDB cannot hold --


@pytest.mark.parametrize("origin", ["https://github.com:abc", "https://github.com:99999", "https://[::1"])
async def test_an_origin_with_a_malformed_port_or_host_is_refused_422(live, seeded, origin):
    response = httpx.put(
        f"{live.url}/api/bridge/sites",
        json={"sites": [{"origin": origin, "tools": []}]},
        headers={"authorization": f"Bearer {seeded.human_token}"},
    )
    assert response.status_code == 422, response.text
    assert "sites[0].origin" in response.json()["detail"]


async def test_a_call_past_its_deadline_is_never_handed_to_the_browser(agent, browser, runtime, seeded, clock):
    chrome = browser(polling=False)
    task_id = await agent.create_task()
    payload = {"taskId": task_id, "site": GITHUB, "tool": "list_repos", "arguments": {}}
    assert (await park(runtime, seeded, payload))["waitingFor"] == "the site's answer"
    clock.advance(seconds=120)
    chrome.report()  # Chrome comes back two minutes later
    assert chrome.poll(wait=0) == []


async def test_a_result_posted_after_the_deadline_is_refused_even_when_no_agent_waits(
    agent, browser, runtime, seeded, clock
):
    chrome = browser(polling=False)
    task_id = await agent.create_task()
    payload = {"taskId": task_id, "site": GITHUB, "tool": "list_repos", "arguments": {}}
    pending = await park(runtime, seeded, payload)
    [handed] = chrome.poll(wait=1)
    assert handed["id"] == pending["callId"]
    clock.advance(seconds=61)
    late = chrome.post(handed["id"], {"result": "late"})
    assert late.status_code == 409, late.text


@pytest.mark.parametrize("number", [1e-200, 1e300, 10**40])
async def test_a_result_with_numbers_dynamodb_cannot_hold_never_answers_500(agent, browser, clock, number):
    chrome = browser(polling=False)  # polled by hand: a 500 resets the connection, which a polling thread would see
    task_id = await agent.create_task()
    async with calling(agent, taskId=task_id, site=GITHUB, tool="list_repos") as call:
        [handed] = await anyio.to_thread.run_sync(chrome.poll, 2)
        posted = await anyio.to_thread.run_sync(chrome.post, handed["id"], {"result": {"n": number}})
        status = posted.status_code
        if status not in (200, 422):
            clock.advance(seconds=61)  # the call was left running: end the server's wait before failing
    assert status in (200, 422), posted.text
    if status == 200:
        assert ok_result(call["text"], call["is_error"])["result"] == {"n": number}
    else:
        assert call["is_error"] and "internal error" not in call["text"], call


async def test_arguments_with_numbers_dynamodb_cannot_hold_are_not_an_internal_error(agent, browser):
    browser()
    task_id = await agent.create_task()
    with anyio.fail_after(15):
        text, is_error = await agent(
            "call", taskId=task_id, site=GITHUB, tool="search_issues", arguments={"query": "x", "limit": 10**40}
        )
    assert "internal error" not in text, text


# -- issue 15: schemas that refer outside, catastrophic patterns, and a search bounded as a whole ----------------


@pytest.fixture
def reach(tmp_path, monkeypatch):
    with outbound(tmp_path, monkeypatch) as reached:
        yield reached


def city_refers_to(ref: str) -> dict:
    return {"type": "object", "properties": {"city": {"$ref": ref}}, "required": ["city"]}


def lookup_site(schema: dict) -> dict:
    tool = {"name": "lookup", "description": "Look a city up", "inputSchema": schema, "annotations": READ_ONLY}
    return {"origin": WEATHER, "title": "Weather", "tools": [tool]}


@pytest.mark.parametrize("form_of_ref", ["http", "https", "never answers", "file", "data", "relative"])
async def test_a_reported_tool_whose_schema_refers_outside_is_refused_422_naming_it_and_nothing_is_read(
    live, seeded, browser, agent, reach, form_of_ref
):
    browser(polling=False)
    body = {"sites": [lookup_site(city_refers_to(reach.refs()[form_of_ref]))]}
    response = httpx.put(
        f"{live.url}/api/bridge/sites", json=body, headers={"authorization": f"Bearer {seeded.human_token}"}, timeout=10
    )
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    assert detail.startswith("sites[0].tools[0].inputSchema.properties.city.$ref must refer within the schema"), detail
    assert reach.touched == 0
    assert await agent.ok("search") == LISTED  # the earlier report stands


@pytest.mark.parametrize("form_of_ref", ["http", "never answers", "file", "data"])
async def test_a_tool_stored_with_an_outside_reference_fails_the_call_naming_it_and_reads_nothing(
    agent, runtime, seeded, reach, form_of_ref
):
    schema = city_refers_to(reach.refs()[form_of_ref])
    stored = Site(WEATHER, "Weather", (SiteTool("lookup", "Look a city up", schema, READ_ONLY),), "")
    runtime.site_tools.replace_sites(seeded.account_id, [stored], iso(runtime.clock()))  # as stored before the checks
    task_id = await agent.create_task()
    with anyio.fail_after(10):
        text, is_error = await agent("call", taskId=task_id, site=WEATHER, tool="lookup", arguments={"city": "Oslo"})
    assert is_error, text
    assert text.startswith("siteTools call: inputSchema.properties.city.$ref must refer within the schema"), text
    assert SECRET not in text and reach.touched == 0


async def test_a_tool_whose_schema_loops_is_refused_when_reported_and_when_called(
    live, seeded, browser, runtime, agent
):
    browser(polling=False)
    looping = {"type": "object", "properties": {"city": {"type": "string"}}, "allOf": [{"$ref": "#"}]}
    response = httpx.put(
        f"{live.url}/api/bridge/sites",
        json={"sites": [lookup_site(looping)]},
        headers={"authorization": f"Bearer {seeded.human_token}"},
    )
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    assert detail.startswith("sites[0].tools[0].inputSchema.allOf[0].$ref refers back"), detail
    stored = Site(WEATHER, "Weather", (SiteTool("lookup", "", looping, READ_ONLY),), "")
    runtime.site_tools.replace_sites(seeded.account_id, [stored], iso(runtime.clock()))
    task_id = await agent.create_task()
    text, is_error = await agent("call", taskId=task_id, site=WEATHER, tool="lookup", arguments={"city": "Oslo"})
    assert is_error and text.startswith("siteTools call: inputSchema.allOf[0].$ref refers back"), text


async def test_a_catastrophic_pattern_in_a_tool_s_schema_fails_the_call_within_seconds_naming_the_argument(
    agent, browser
):
    browser(sites=[lookup_site({"type": "object", "properties": {"city": {"type": "string", "pattern": "^(a|aa)+$"}}})])
    task_id = await agent.create_task()
    started = time.process_time()
    arguments = {"city": "a" * 40 + "!"}
    text, is_error = await agent("call", taskId=task_id, site=WEATHER, tool="lookup", arguments=arguments)
    assert time.process_time() - started < 3  # Python's `re` takes minutes
    assert is_error, text
    assert text.startswith("siteTools call: arguments.city: the pattern '^(a|aa)+$' takes too long to evaluate"), text


def many_sites(description: str) -> list[dict]:
    """10 sites of 100 tools: the most tools a search may have to read a pattern over, times five."""
    return [
        {
            "origin": f"https://site{i}.example",
            "title": f"Site {i}",
            "tools": [{"name": f"tool_{j}", "description": description} for j in range(100)],
        }
        for i in range(10)
    ]


async def test_one_deadline_bounds_a_pattern_search_over_every_tool_not_each_tool(runtime, seeded):
    site_tools_service.report_sites(runtime, seeded.account_id, many_sites("Looks something up"))
    reads: list[int] = []

    def clock() -> int:  # in ms: read as the search starts, then before each evaluation, each taking 10 ms
        reads.append(len(reads) * 10)
        return reads[-1]

    with pytest.raises(PayloadError) as refused:
        site_tools_service.search(runtime, seeded.account_id, None, "tool", deadline=Deadline(500, clock=clock))
    assert refused.value.message == "pattern takes too long to evaluate; use a simpler one"
    assert refused.value.field == "pattern"
    assert len(reads) == 51  # the start, 49 evaluations, and the 50th finding 500 ms gone: not 1,000 evaluations
    found = site_tools_service.search(runtime, seeded.account_id, None, "^tool_7\\n")  # a real clock: time enough
    assert [tool["name"] for site in found["sites"] for tool in site["tools"]] == ["tool_7"] * 10


async def test_a_pattern_slow_on_every_tool_answers_within_seconds_not_seconds_per_tool(agent, browser):
    browser(sites=many_sites("a" * 22 + "!"), polling=False)  # ~30 ms per tool: under one evaluation's limit
    started = time.process_time()
    text, is_error = await agent("search", pattern="(a|aa)+$")
    assert time.process_time() - started < 3  # 1,000 tools of 30 ms each took 30 s
    assert is_error and text == "siteTools search: pattern takes too long to evaluate; use a simpler one", text


async def test_a_search_pattern_that_would_take_gigabytes_to_compile_is_refused(agent, browser):
    browser(polling=False)
    text, is_error = await agent("search", pattern="(?:a{9999}){999}")  # 16 characters; 2.7 GB in `regex`
    assert is_error, text
    assert text.startswith("siteTools search: pattern is too large once its repeats are unrolled"), text


# -- what the extension's popup reads: shared sites, pending calls, sign-out -------------------


async def test_a_poll_that_outlives_a_sign_out_does_not_bring_the_browser_back_online(browser, human, runtime):
    chrome = browser(polling=False)
    async with anyio.create_task_group() as group:
        group.start_soon(anyio.to_thread.run_sync, chrome.poll, 2)
        await anyio.sleep(0.5)  # the poll has started and marked the browser seen
        assert (await human.http.delete("/api/bridge/online")).status_code == 204
    assert (await human.http.get("/api/bridge/sites")).json()["online"] is False


async def test_the_shared_sites_show_each_tool_read_only_or_not_and_the_online_state(browser, human, clock):
    browser(polling=False)
    response = await human.http.get("/api/bridge/sites")
    assert response.status_code == 200, response.text
    state = response.json()
    assert state["online"] is True and state["lastSeenAt"]
    assert [(s["origin"], s["title"], [(t["name"], t["readOnly"]) for t in s["tools"]]) for s in state["sites"]] == [
        (GITHUB, "GitHub", [("create_issue", False), ("search_issues", True), ("list_repos", True)]),
        (WEATHER, "Weather", [("forecast", True)]),
    ]
    clock.advance(seconds=46)
    later = (await human.http.get("/api/bridge/sites")).json()
    assert later["online"] is False and later["sites"] == state["sites"]  # the last ones seen, offline


async def test_signing_out_makes_the_browser_offline_at_once_and_a_new_call_is_refused(agent, browser, human):
    chrome = browser()
    task_id = await agent.create_task()
    chrome.stop()
    gone = await human.http.delete("/api/bridge/online")
    assert gone.status_code == 204, gone.text
    assert (await human.http.get("/api/bridge/sites")).json()["online"] is False
    assert (await agent.ok("search"))["online"] is False
    text, is_error = await agent("call", taskId=task_id, site=GITHUB, tool="list_repos")
    assert is_error and text == (
        "siteTools call: the human's Chrome is not connected, so site tools cannot run now; try again later"
    ), text
    chrome.report()  # the browser signs in again: online at once
    assert (await human.http.get("/api/bridge/sites")).json()["online"] is True


async def test_pending_lists_the_calls_waiting_for_a_decision_across_the_accounts_workspaces(
    agent, browser, human, live, runtime, seeded
):
    browser()
    other, other_agent_token = accounts.create_workspace(runtime.accounts, seeded.account_id, "Other", "")
    task_id = await agent.create_task()
    async with (
        support.mcp_client(live.url, other_agent_token.token) as other_client,
        calling(agent, taskId=task_id, site=GITHUB, tool="create_issue", arguments={"title": "A"}),
    ):
        other_agent = Agent(other_client)
        other_task = await other_agent.create_task()
        async with calling(other_agent, taskId=other_task, site=GITHUB, tool="create_issue", arguments={"title": "B"}):
            listed = await until(
                lambda: human.http.get("/api/bridge/pending"),
                lambda response: len(response.json()["calls"]) == 2,
                "two pending calls",
            )
            calls = listed.json()["calls"]
            assert [(c["workspaceId"], c["taskId"], c["arguments"], c["status"]) for c in calls] == [
                (seeded.workspace_id, task_id, {"title": "A"}, "pending"),
                (other.id, other_task, {"title": "B"}, "pending"),
            ]
            for call in calls:
                decided = await human.on(call["workspaceId"]).decide(call["id"], "deny")
                assert decided.status_code == 200, decided.text
    assert (await human.http.get("/api/bridge/pending")).json() == {"calls": []}  # decided: no longer listed


async def test_pending_expires_a_call_past_the_approval_window_instead_of_listing_it(agent, browser, human, clock):
    browser()
    task_id = await agent.create_task()
    async with calling(agent, taskId=task_id, site=GITHUB, tool="create_issue", arguments={"title": "x"}) as call:
        await human.wait_for_pending()
        clock.advance(seconds=601)
        assert (await human.http.get("/api/bridge/pending")).json() == {"calls": []}
    assert call["is_error"] and "did not decide in time" in call["text"], call
    assert len(await human.calls("expired")) == 1


async def test_a_shorter_site_timeout_setting_sets_the_deadline_and_the_error(agent, browser, human, runtime, clock):
    runtime.settings = runtime.settings.model_copy(update={"site_timeout_seconds": 5})
    chrome = browser({"search_issues": never})
    task_id = await agent.create_task()
    payload = {"taskId": task_id, "site": GITHUB, "tool": "search_issues", "arguments": {"query": "slow"}}
    async with calling(agent, **payload) as call:
        [seen] = await until(lambda: list(chrome.seen), bool, "the browser's call")
        handed, deadline = clock(), datetime.fromisoformat(seen["deadline"].replace("Z", "+00:00"))
        assert 4 <= (deadline - handed).total_seconds() <= 5
        clock.advance(seconds=6)
    assert call["text"] == "siteTools call: the site did not answer within 5 seconds", call


@pytest.mark.parametrize("path", ["/api/bridge/sites", "/api/bridge/pending", "/api/bridge/calls?wait=0"])
async def test_an_extension_origin_may_call_the_rest_api_but_not_mcp(live, seeded, path):
    headers = {"authorization": f"Bearer {seeded.human_token}", "origin": "chrome-extension://abcdefghijklmnop"}
    async with httpx.AsyncClient(base_url=live.url, headers=headers, timeout=30) as http:
        assert (await http.get(path)).status_code == 200
        web_page = await http.get(path, headers={"origin": "https://evil.example"})
        assert web_page.status_code == 403, web_page.text
        mcp = await http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"accept": "application/json, text/event-stream"},
        )
        assert mcp.status_code == 403, mcp.text
