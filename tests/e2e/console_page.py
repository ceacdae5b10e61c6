"""What the console's browser tests share: running an agent (and the human's browser extension) beside the
page, signing in, and the bounded wait for what the page shows.

The agent's calls block (elicit waits for the answer, a site-tool call for the human's decision), so each
runs with `anyio.run` in its own thread while the page is driven from the test's thread (Playwright's sync
API cannot run inside an event loop). The human's Chrome extension is simulated by a thread that speaks only
the bridge protocol over REST.
"""

import json
import re
import threading
from collections.abc import Callable
from typing import Any

import anyio
import httpx
from playwright.sync_api import Page, expect

from tests.support import mcp_client, text_of

WAIT_MS = 15_000  # bounded waits for what the page shows after polling (every ~3 s)
CREATED = re.compile(r"^task created with id=([0-9A-Za-z]{11})$")

SHIP_SCHEMA = {
    "type": "object",
    "properties": {
        "channel": {"type": "string", "enum": ["stable", "beta"], "description": "Where the release goes"},
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1},
        "notify": {"type": "boolean", "title": "Notify the team"},
        "note": {"type": "string", "title": "Note"},
    },
    "required": ["channel", "replicas"],
}

TRACKER = "https://tracker.example"
SITES = [
    {
        "origin": TRACKER,
        "title": "Tracker",
        "tools": [
            {
                "name": "create_issue",
                "description": "Open a new issue",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string"},
                        "labels": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["title"],
                },
                "annotations": {"destructiveHint": False},
            }
        ],
    }
]


# -- running the agent (and the browser) beside the page ---------------------------------------


class Background:
    """A blocking call in its own thread; `result()` joins it within a bounded time."""

    def __init__(self, run: Callable[[], Any]) -> None:
        self._box: dict[str, Any] = {}
        self._thread = threading.Thread(target=self._run, args=(run,), daemon=True)
        self._thread.start()

    def _run(self, run: Callable[[], Any]) -> None:
        try:
            self._box["value"] = run()
        except BaseException as error:  # handed to the test's thread by result()
            self._box["error"] = error

    def result(self, timeout: float = 30) -> Any:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the agent's call did not return in time"
        if "error" in self._box:
            raise self._box["error"]
        return self._box["value"]


def agent(url: str, token: str, steps: Callable, /) -> Background:
    """`steps(act)` in a thread, where `await act(tool, action, **payload)` is one MCP tool call → (text, is_error)."""

    async def main() -> Any:
        async with mcp_client(url, token) as client:

            async def act(tool_name: str, action: str, /, **payload: Any) -> tuple[str, bool]:
                result = await client.call_tool(tool_name, {"action": action, "payload": payload})
                return text_of(result), result.is_error

            return await steps(act)

    return Background(lambda: anyio.run(main))


async def created_task(act, title: str, assignee: str = "human") -> str:
    text, is_error = await act("task", "create", title=title, body=f"About {title}", assignee=assignee)
    match = CREATED.match(text)
    assert match and not is_error, text
    return match.group(1)


def ask(url: str, token: str, title: str, /, **question: Any) -> Background:
    """The agent creates a task for the human, then elicits in it; returns (task id, answer it received)."""

    async def steps(act):
        task_id = await created_task(act, title)
        text, is_error = await act("task", "elicit", taskId=task_id, timeoutSeconds=60, **question)
        assert not is_error, text
        return task_id, json.loads(text)

    return agent(url, token, steps)


def agent_once(url: str, token: str, tool_name: str, action: str, /, **payload: Any) -> Any:
    async def steps(act):
        text, is_error = await act(tool_name, action, **payload)
        assert not is_error, text
        return text

    return agent(url, token, steps).result()


def agent_calls(live, token: str, *calls: tuple[str, dict[str, Any]]) -> list[dict]:
    """Each (tool, arguments) in order, as an agent of the workspace over MCP, asserted: the replies as JSON.

    For the tools named by their arguments alone (the board's create_task, claim_task, ...), not action + payload.
    """

    async def main() -> list[dict]:
        replies = []
        async with mcp_client(live.url, token) as client:
            for tool, arguments in calls:
                result = await client.call_tool(tool, arguments)
                text = text_of(result)
                assert not result.is_error, text
                replies.append(json.loads(text))
        return replies

    return Background(lambda: anyio.run(main)).result()


class Browser:
    """The human's Chrome over the bridge: shares SITES, long-polls for calls, answers each with an echo."""

    def __init__(self, url: str, token: str) -> None:
        self.http = httpx.Client(base_url=url, headers={"authorization": f"Bearer {token}"}, timeout=30)
        self.ran: list[dict] = []
        self.problems: list[str] = []
        self._stop = threading.Event()
        response = self.http.put("/api/bridge/sites", json={"sites": SITES})
        assert response.status_code == 200, response.text
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                response = self.http.get("/api/bridge/calls", params={"wait": 0.5})
                if response.status_code != 200:
                    self.problems.append(f"poll: {response.status_code} {response.text}")
                    self._stop.wait(0.2)
                    continue
                for call in response.json()["calls"]:
                    self.ran.append(call)
                    outcome = {"result": {"opened": call["arguments"]}}
                    posted = self.http.post(f"/api/bridge/calls/{call['id']}/result", json=outcome)
                    if posted.status_code != 200:
                        self.problems.append(f"result: {posted.status_code} {posted.text}")
            except Exception as error:  # reported at teardown, never lost
                self.problems.append(repr(error))
                self._stop.wait(0.2)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.http.close()
        assert not self._thread.is_alive(), "the simulated browser did not stop"
        assert self.problems == [], self.problems


# -- the page -----------------------------------------------------------------------------------


def sign_in(page: Page, live, token: str) -> None:
    page.goto(f"{live.url}/")
    page.get_by_label("Human token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def human(live, seeded) -> httpx.Client:
    return httpx.Client(base_url=live.url, headers={"authorization": f"Bearer {seeded.human_token}"}, timeout=30)


def board_api(live, seeded) -> httpx.Client:
    """The human's REST client for the seeded workspace's board."""
    return httpx.Client(
        base_url=f"{live.url}/api/workspaces/{seeded.workspace_id}/board",
        headers={"authorization": f"Bearer {seeded.human_token}"},
        timeout=30,
    )
