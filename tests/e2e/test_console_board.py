"""The console as a board, end to end: Debian's Chromium driven by Playwright, agents on the real MCP client.

The agent's side goes through MCP by the board's tool names (create_task, claim_task, complete_task,
report_blocker, ...), the human's through the page; REST, as the human, sets up what a test only needs
to exist and checks what the page did. As in test_console, each agent call runs in its own thread
(Playwright's sync API keeps an event loop in the test's).
"""

import re

from playwright.sync_api import Locator, Page, expect

from tests.e2e.console_page import WAIT_MS, agent_calls, board_api, sign_in

COLUMNS = ("triage", "backlog", "ready", "in_progress", "blocked", "in_review", "done", "rejected")


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
    [made] = agent_calls(
        live, seeded.agent_token, ("create_task", {"title": "Refund endpoint", "description": "POST /refunds"})
    )
    [other] = agent_calls(live, seeded.agent_token, ("create_task", {"title": "Ledger entries"}))
    [found] = agent_calls(live, seeded.agent_token, ("search", {"query": "refund"}))
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
