"""The console as a board, end to end: Debian's Chromium driven by Playwright, agents on the real MCP client.

The agent's side goes through MCP by the board's tool names (create_task, claim_task, complete_task,
report_blocker, ...), the human's through the page; REST, as the human, sets up what a test only needs
to exist and checks what the page did. As in test_console, each agent call runs in its own thread
(Playwright's sync API keeps an event loop in the test's).
"""

import json
import re
from typing import Any

import anyio
import httpx
from playwright.sync_api import Locator, Page, expect

from tests.e2e.console_page import WAIT_MS, Background, sign_in
from tests.support import mcp_client, text_of

COLUMNS = ("triage", "backlog", "ready", "in_progress", "blocked", "in_review", "done", "rejected")


def agent_calls(live, seeded, *calls: tuple[str, dict[str, Any]]) -> list[dict]:
    """Each (tool, arguments) in order, as the seeded workspace's agent over MCP, asserted: the replies as JSON."""

    async def main() -> list[dict]:
        replies = []
        async with mcp_client(live.url, seeded.agent_token) as client:
            for tool, arguments in calls:
                result = await client.call_tool(tool, arguments)
                text = text_of(result)
                assert not result.is_error, text
                replies.append(json.loads(text))
        return replies

    return Background(lambda: anyio.run(main)).result()


def board_api(live, seeded) -> httpx.Client:
    """The human's REST client for the seeded workspace's board."""
    return httpx.Client(
        base_url=f"{live.url}/api/workspaces/{seeded.workspace_id}/board",
        headers={"authorization": f"Bearer {seeded.human_token}"},
        timeout=30,
    )


def column(page: Page, name: str) -> Locator:
    return page.locator(f"#board-col-{name}")


def card(page: Page, name: str, title: str) -> Locator:
    return column(page, name).get_by_role("button", name=title, exact=True)


def panel(page: Page) -> Locator:
    return page.locator("#task-detail")


def open_card(page: Page, name: str, title: str) -> None:
    card(page, name, title).click()
    expect(page.get_by_role("heading", name=title, level=2)).to_be_visible()
    expect(panel(page).locator("#task-where")).not_to_be_empty(timeout=WAIT_MS)


def column_of(live, seeded, task_id: str) -> str:
    with board_api(live, seeded) as http:
        return http.get(f"tasks/{task_id}").json()["column"]


# -- the flows ----------------------------------------------------------------------------------


def test_filters_narrow_the_board(live, seeded, console):
    page = console
    with board_api(live, seeded) as http:
        made = {}
        for title, labels in (("Rotate the keys", ["ops"]), ("Rotate the logs", []), ("Write the docs", ["docs"])):
            response = http.post("tasks", json={"title": title, **({"labels": labels} if labels else {})})
            assert response.status_code == 201, response.text
            made[title] = response.json()
        assert http.post(f"tasks/{made['Rotate the logs']['id']}/archive", json={"reason": "dup"}).status_code == 200
    sign_in(page, live, seeded.human_token)
    ready = column(page, "ready").get_by_role("list")
    expect(ready.get_by_role("button")).to_have_count(2, timeout=WAIT_MS)  # the archived one is left out

    # By label: the options are the board's labels.
    label = page.get_by_label("With label")
    expect(label.locator("option", has_text="ops")).to_have_count(1, timeout=WAIT_MS)
    label.select_option("ops")
    expect(ready.get_by_role("button")).to_have_text(["Rotate the keys"], timeout=WAIT_MS)
    expect(page.locator("#board-note")).to_have_text("Filtered: 1 task matches.")

    # By text (with the label cleared), then archived ones too.
    page.get_by_role("button", name="Clear filters").click()
    expect(ready.get_by_role("button")).to_have_count(2, timeout=WAIT_MS)
    page.get_by_label("Search the board").fill("rotate")
    page.get_by_label("Search the board").press("Enter")
    expect(ready.get_by_role("button")).to_have_text(["Rotate the keys"], timeout=WAIT_MS)
    page.get_by_label("Include archived").check()
    expect(ready.get_by_role("button")).to_have_count(2, timeout=WAIT_MS)
    expect(ready).to_contain_text("archived")

    # A cycle made and made active in the console; the filter "the active cycle" keeps its tasks.
    page.get_by_label("Include archived").uncheck()
    page.get_by_role("button", name="Clear filters").click()
    page.get_by_text("New cycle", exact=True).click()
    page.get_by_label("Cycle title").fill("Sprint 7")
    page.get_by_label("Goal").fill("Docs")
    page.get_by_label("Make it the active cycle").check()
    page.get_by_role("button", name="Create cycle").click()
    expect(page.locator("#cycle-active")).to_have_text("Active cycle: Sprint 7 (Docs)", timeout=WAIT_MS)
    with board_api(live, seeded) as http:
        [cycle] = http.get("cycles").json()
        assert (cycle["title"], cycle["active"]) == ("Sprint 7", True)
        edited = http.patch(f"tasks/{made['Write the docs']['id']}", json={"cycleId": cycle["id"]})
        assert edited.status_code == 200, edited.text
    page.get_by_label("In cycle").select_option("active")
    expect(ready.get_by_role("button")).to_have_text(["Write the docs"], timeout=WAIT_MS)

    # No cycle active: the same filter matches nothing, and the board says why.
    page.get_by_label("Active cycle", exact=True).select_option(label="None")
    page.get_by_role("button", name="Set active cycle").click()
    expect(page.locator("#cycle-active")).to_have_text("No cycle is active.", timeout=WAIT_MS)
    expect(ready.get_by_role("button")).to_have_count(0, timeout=WAIT_MS)
    expect(page.locator("#board-note")).to_contain_text("No cycle is active")
    expect(page.get_by_role("alert")).to_be_hidden()


def test_a_link_from_search_opens_the_task_panel(live, seeded, console):
    page = console
    [made] = agent_calls(live, seeded, ("create_task", {"title": "Refund endpoint", "description": "POST /refunds"}))
    [other] = agent_calls(live, seeded, ("create_task", {"title": "Ledger entries"}))
    [found] = agent_calls(live, seeded, ("search", {"query": "refund"}))
    [result] = found["results"]
    url = result["url"]
    assert url == f"{live.url}/#/workspaces/{seeded.workspace_id}/tasks/{made['id']}"

    # Opened before signing in: the link waits for the sign-in, then opens its task.
    page.goto(url)
    page.get_by_label("Human token").fill(seeded.human_token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Refund endpoint", level=2)).to_be_visible(timeout=WAIT_MS)
    expect(panel(page).get_by_text("POST /refunds")).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_role("heading", name="Refund endpoint", level=2)).to_be_focused()

    # Followed while signed in (the hash changes), by id or by identifier.
    page.goto(f"{live.url}/#/workspaces/{seeded.workspace_id}/tasks/{other['identifier']}")
    expect(page.get_by_role("heading", name="Ledger entries", level=2)).to_be_visible(timeout=WAIT_MS)
    assert page.url.endswith(f"/tasks/{other['id']}")  # the address names the open task by its id
    page.get_by_role("button", name="Close task").click()
    expect(panel(page)).to_be_hidden()
    assert "#" not in page.url
    page.goto(url)
    expect(page.get_by_role("heading", name="Refund endpoint", level=2)).to_be_visible(timeout=WAIT_MS)

    # A reload keeps the open task; a link to a workspace of someone else's is refused in the alert.
    page.reload()
    expect(page.get_by_role("heading", name="Refund endpoint", level=2)).to_be_visible(timeout=WAIT_MS)
    page.goto(f"{live.url}/#/workspaces/0kGogHmaqvZ/tasks/{made['id']}")
    expect(page.get_by_role("alert")).to_contain_text("no workspace 0kGogHmaqvZ")


def test_the_columns_sit_side_by_side_on_a_wide_screen_and_stack_on_a_narrow_one(live, seeded, console):
    page = console
    page.set_viewport_size({"width": 1400, "height": 900})
    sign_in(page, live, seeded.human_token)
    sections = page.locator("#board-columns > section")
    expect(sections).to_have_count(len(COLUMNS))
    assert sections.evaluate_all("s => s.map(e => e.dataset.column)") == list(COLUMNS)
    expect(column(page, "triage")).to_be_visible()

    def boxes() -> list[dict]:
        return sections.evaluate_all(
            "s => s.map(e => { const r = e.getBoundingClientRect();"
            " return {x: r.left, y: r.top, w: r.width, h: r.height}; })"
        )

    wide = boxes()
    assert len({round(b["y"]) for b in wide}) == 1, wide  # one row
    assert all(a["x"] + a["w"] <= b["x"] for a, b in zip(wide, wide[1:], strict=False)), wide  # left to right
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400  # the board scrolls, not the page

    page.set_viewport_size({"width": 400, "height": 900})
    expect(page.get_by_role("heading", name="Board", exact=True)).to_be_visible()
    narrow = boxes()
    assert len({round(b["x"]) for b in narrow}) == 1, narrow  # one column
    assert all(a["y"] + a["h"] <= b["y"] for a, b in zip(narrow, narrow[1:], strict=False)), narrow  # top to bottom
    assert page.evaluate("document.documentElement.scrollWidth") <= 400


def test_a_comment_shows_and_an_agent_s_suggestion_is_accepted(live, seeded, console):
    page = console
    with board_api(live, seeded) as http:
        made = http.post("tasks", json={"title": "Cache the pricing page", "column": "backlog"}).json()
    agent_calls(
        live,
        seeded,
        (
            "task",
            {
                "action": "suggest",
                "payload": {
                    "taskId": made["id"],
                    "summary": "Edge cache, 5 min TTL.",
                    "criteria": ["TTL is 5 min", "purge on publish"],
                },
            },
        ),
    )
    sign_in(page, live, seeded.human_token)
    open_card(page, "backlog", "Cache the pricing page")

    suggestion = page.get_by_role("region", name=re.compile("^From the agent"))
    expect(suggestion).to_contain_text("Edge cache, 5 min TTL.", timeout=WAIT_MS)
    suggestion.get_by_role("button", name="Accept suggestion").click()
    expect(suggestion).to_have_count(0)
    criteria = page.get_by_role("list", name="Acceptance criteria")
    expect(criteria.get_by_role("listitem")).to_have_count(2, timeout=WAIT_MS)
    expect(criteria).to_contain_text("purge on publish")
    expect(page.locator("#task-summary")).to_have_text("Edge cache, 5 min TTL.")

    hostile = "Looks right <img src=x onerror=\"document.title='pwned'\">"
    panel(page).get_by_label("Comment", exact=True).fill(hostile)
    panel(page).get_by_role("button", name="Post comment").click()
    comments = page.get_by_role("list", name="Comments on the task")
    expect(comments.get_by_role("listitem")).to_have_count(1, timeout=WAIT_MS)
    expect(comments).to_contain_text(hostile)
    expect(panel(page).get_by_label("Comment", exact=True)).to_have_value("")
    assert page.locator("img").count() == 0 and page.title() == "Agent Workspace"
    with board_api(live, seeded) as http:
        shown = http.get(f"tasks/{made['id']}").json()
    assert [(c["by"], c["text"]) for c in shown["comments"]] == [("human", hostile)]
