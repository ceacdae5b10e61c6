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


def test_supervised_proposals_wait_in_triage_and_the_human_accepts_or_declines(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    supervised = page.get_by_role("checkbox", name="Supervised")
    expect(supervised).not_to_be_checked(timeout=WAIT_MS)
    supervised.check()
    expect(page.get_by_role("status")).to_contain_text("Supervised on")
    with board_api(live, seeded) as http:
        assert http.get(str(http.base_url).rstrip("/")).json()["policy"] == {"supervised": True, "signOff": False}

    kept, dropped = agent_calls(
        live,
        seeded,
        ("create_task", {"title": "Nightly backups", "criteria": ["a backup a night"], "priority": "high"}),
        ("create_task", {"title": "Rewrite it in Rust"}),
    )
    assert (kept["column"], dropped["column"]) == ("triage", "triage")

    # Both show in the triage column and in the "needs you" list, which opens the panel.
    expect(card(page, "triage", "Nightly backups")).to_be_visible(timeout=WAIT_MS)
    expect(card(page, "triage", "Rewrite it in Rust")).to_be_visible()
    expect(column(page, "triage")).to_contain_text(kept["identifier"])
    expect(column(page, "triage")).to_contain_text("High")
    to_triage = page.get_by_role("list", name="Proposals to triage")
    expect(to_triage.get_by_role("button")).to_have_count(2, timeout=WAIT_MS)
    to_triage.get_by_role("button", name="Nightly backups").click()
    expect(page.get_by_role("heading", name="Nightly backups", level=2)).to_be_visible()
    expect(page.get_by_role("list", name="Acceptance criteria")).to_contain_text("a backup a night", timeout=WAIT_MS)

    panel(page).get_by_role("button", name="Accept to backlog").click()
    expect(page.get_by_role("status")).to_contain_text("Accepted into the backlog")
    expect(card(page, "backlog", "Nightly backups")).to_be_visible(timeout=WAIT_MS)
    expect(card(page, "triage", "Nightly backups")).to_have_count(0)
    expect(to_triage.get_by_role("button", name="Nightly backups")).to_have_count(0)
    assert column_of(live, seeded, kept["id"]) == "backlog"

    # Declined from the board's own card, with a comment that lands on the activity feed.
    open_card(page, "triage", "Rewrite it in Rust")
    panel(page).get_by_label("Decision comment").fill("Not this year.")
    panel(page).get_by_role("button", name="Decline", exact=True).click()
    expect(card(page, "rejected", "Rewrite it in Rust")).to_be_visible(timeout=WAIT_MS)
    expect(card(page, "triage", "Rewrite it in Rust")).to_have_count(0)
    expect(page.get_by_text("No proposal to triage.")).to_be_visible()
    expect(page.get_by_role("list", name="Activity")).to_contain_text("Not this year.", timeout=WAIT_MS)
    assert column_of(live, seeded, dropped["id"]) == "rejected"


def test_a_delivery_under_sign_off_is_sent_back_with_a_comment_or_approved(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    page.get_by_role("checkbox", name="Sign-off").check()
    expect(page.get_by_role("status")).to_contain_text("Sign-off on")

    one, two = agent_calls(
        live, seeded, ("create_task", {"title": "Add the refund endpoint"}), ("create_task", {"title": "Add metrics"})
    )
    agent_calls(
        live,
        seeded,
        ("claim_task", {"taskId": one["id"]}),
        ("complete_task", {"taskId": one["id"], "summary": "POST /refunds is live."}),
        ("claim_task", {"taskId": two["id"]}),
        ("complete_task", {"taskId": two["id"], "summary": "Counters exported."}),
    )
    expect(card(page, "in_review", "Add the refund endpoint")).to_be_visible(timeout=WAIT_MS)
    reviews = page.get_by_role("list", name="Deliveries to review")
    expect(reviews).to_contain_text("POST /refunds is live.", timeout=WAIT_MS)

    # Send back needs a comment: without one the page says so and the task stays in review.
    reviews.get_by_role("button", name="Add the refund endpoint").click()
    expect(page.get_by_role("heading", name="Add the refund endpoint", level=2)).to_be_visible()
    expect(page.locator("#task-delivery")).to_have_text("POST /refunds is live.", timeout=WAIT_MS)
    panel(page).get_by_role("button", name="Send back").click()
    expect(page.get_by_role("alert")).to_contain_text("decision comment")
    expect(panel(page).get_by_label("Decision comment")).to_be_focused()
    assert column_of(live, seeded, one["id"]) == "in_review"
    panel(page).get_by_label("Decision comment").fill("Tests are missing.")
    panel(page).get_by_role("button", name="Send back").click()
    expect(page.get_by_role("alert")).to_be_hidden()
    expect(card(page, "ready", "Add the refund endpoint")).to_be_visible(timeout=WAIT_MS)
    expect(card(page, "in_review", "Add the refund endpoint")).to_have_count(0)
    expect(page.get_by_role("list", name="Activity")).to_contain_text("Tests are missing.", timeout=WAIT_MS)
    assert column_of(live, seeded, one["id"]) == "ready"

    open_card(page, "in_review", "Add metrics")
    panel(page).get_by_role("button", name="Approve").click()
    expect(card(page, "done", "Add metrics")).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_text("No delivery to review.")).to_be_visible(timeout=WAIT_MS)
    assert column_of(live, seeded, two["id"]) == "done"


def test_a_blocker_s_questions_head_the_needs_you_list_and_the_task_panel(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    [task] = agent_calls(live, seeded, ("create_task", {"title": "Provision the cluster"}))
    agent_calls(
        live,
        seeded,
        ("claim_task", {"taskId": task["id"]}),
        ("report_blocker", {"taskId": task["id"], "questions": ["Which region?", "How many <b>nodes</b>?"]}),
    )

    blocked = page.get_by_role("list", name="Blocked on you")
    expect(blocked).to_contain_text("Which region?", timeout=WAIT_MS)
    expect(blocked).to_contain_text("How many <b>nodes</b>?")  # the agent's text stays text
    expect(column(page, "blocked")).to_contain_text("2 questions for you", timeout=WAIT_MS)
    blocked.get_by_role("button", name="Provision the cluster").click()

    asks = page.get_by_role("region", name="The agent is blocked and asks you")
    expect(asks).to_be_visible(timeout=WAIT_MS)
    expect(asks.get_by_role("listitem")).to_have_text(["Which region?", "How many <b>nodes</b>?"])
    expect(panel(page).get_by_role("button", name="Release")).to_be_visible()

    asks.get_by_role("button", name="Answer in a comment").click()
    expect(panel(page).get_by_label("Comment", exact=True)).to_be_focused()
    page.keyboard.type("eu-west-1, three nodes.")
    panel(page).get_by_role("button", name="Post comment").click()
    expect(page.get_by_role("list", name="Comments on the task")).to_contain_text("eu-west-1, three nodes.")
    [shown] = agent_calls(live, seeded, ("get_task", {"taskId": task["id"]}))
    assert [c["text"] for c in shown["comments"]] == ["eu-west-1, three nodes."]

    # The human takes the task back: it is ready again, and nothing is blocked on them.
    panel(page).get_by_role("button", name="Release").click()
    expect(card(page, "ready", "Provision the cluster")).to_be_visible(timeout=WAIT_MS)
    expect(asks).to_be_hidden()
    expect(page.get_by_text("No task is blocked on you.")).to_be_visible(timeout=WAIT_MS)


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
    expect(page.locator("#board-note")).to_be_hidden()
    page.get_by_label("Search the board").fill("rotate")
    page.get_by_label("Search the board").press("Enter")
    expect(ready.get_by_role("button")).to_have_text(["Rotate the keys"], timeout=WAIT_MS)
    page.get_by_label("Include archived").check()
    expect(ready.get_by_role("button")).to_have_count(2, timeout=WAIT_MS)
    expect(ready).to_contain_text("archived")

    # A cycle made active (Settings makes cycles; here REST does): "the active cycle" keeps its tasks, and the
    # board's bar names the cycle.
    page.get_by_label("Include archived").uncheck()
    page.get_by_role("button", name="Clear filters").click()
    with board_api(live, seeded) as http:
        created = http.post("cycles", json={"title": "Sprint 7", "goal": "Docs", "active": True})
        assert created.status_code == 201, created.text
        cycle = created.json()
        edited = http.patch(f"tasks/{made['Write the docs']['id']}", json={"cycleId": cycle["id"]})
        assert edited.status_code == 200, edited.text
    cycles = page.get_by_label("In cycle")
    expect(cycles.locator("option", has_text="Sprint 7")).to_have_count(1, timeout=WAIT_MS)
    expect(page.locator("#board-cycle")).to_have_text("Active cycle: Sprint 7 (Docs)")
    cycles.select_option("active")
    expect(ready.get_by_role("button")).to_have_text(["Write the docs"], timeout=WAIT_MS)
    cycles.select_option(label="Sprint 7")
    expect(ready.get_by_role("button")).to_have_text(["Write the docs"], timeout=WAIT_MS)
    cycles.select_option("active")

    # No cycle active: the same filter matches nothing, and the board says why (no error).
    with board_api(live, seeded) as http:
        assert http.put("cycles/active", json={"cycleId": None}).status_code == 200
    expect(page.locator("#board-cycle")).to_have_text("No cycle is active.", timeout=WAIT_MS)
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
    drawer = page.locator("#drawer")

    def opens(task: dict) -> None:
        """The task's drawer is open, the address names the task, and its card on the board is marked."""
        expect(drawer).to_be_visible(timeout=WAIT_MS)
        expect(page).to_have_url(re.compile(rf"#/task/({task['id']}|{task['identifier']})$"))
        expect(card(page, "ready", task["title"])).to_have_attribute("aria-current", "true", timeout=WAIT_MS)
        expect(column(page, "ready").locator("[aria-current]")).to_have_count(1)

    # Opened before signing in: the link waits for the sign-in, then opens its task.
    page.goto(url)
    page.get_by_label("Human token").fill(seeded.human_token)
    page.get_by_role("button", name="Sign in").click()
    opens(made)

    # Followed while signed in (the hash changes), by id or by identifier.
    page.goto(f"{live.url}/#/workspaces/{seeded.workspace_id}/tasks/{other['identifier']}")
    opens(other)
    page.get_by_role("navigation", name="Views").get_by_role("link", name="Board").click()
    expect(drawer).to_be_hidden()
    expect(page).to_have_url(re.compile(r"#/board$"))
    expect(column(page, "ready").locator("[aria-current]")).to_have_count(0)
    page.goto(url)
    opens(made)

    # A reload keeps the open task; a link to a workspace of someone else's is refused in the alert.
    page.reload()
    opens(made)
    page.goto(f"{live.url}/#/workspaces/0kGogHmaqvZ/tasks/{made['id']}")
    expect(page.get_by_role("alert")).to_contain_text("no workspace 0kGogHmaqvZ")
    expect(drawer).to_be_hidden()


def test_the_columns_sit_side_by_side_on_a_wide_screen_and_stack_on_a_narrow_one(live, seeded, console):
    """Wide: one row, left to right, scrolling inside the board; narrow (a phone): one column at a time, the
    others beside it off screen (swiped or picked), never a page wider than the screen."""
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
    frame = page.locator("#board-columns").bounding_box()
    assert frame is not None and frame["width"] <= 400
    narrow = boxes()
    assert all(abs(b["w"] - frame["width"]) <= 2 for b in narrow), narrow  # each column as wide as the board
    assert all(a["x"] + a["w"] <= b["x"] + 1 for a, b in zip(narrow, narrow[1:], strict=False)), narrow
    left, right = frame["x"], frame["x"] + frame["width"]
    on_screen = [b for b in narrow if b["x"] < right - 1 and b["x"] + b["w"] > left + 1]
    assert len(on_screen) == 1, narrow  # one column at a time
    assert page.evaluate("document.documentElement.scrollWidth") <= 400
