"""Claude Code's tool permission requests in the console, end to end: Debian's Chromium driven by Playwright.

The bridge's side is its REST protocol with the workspace's agent token (`POST /api/channel/permissions` asks,
`GET /api/channel/events` hears the verdict); the human's side is the page: a request waiting is an item at the
head of the inbox, decided there; the requests answered last and the tools always allowed are under the list,
in "Tool approvals: recent and always allowed". REST, as the human, checks what the page did.
"""

import re
import time
from typing import Any

import httpx
from playwright.sync_api import Locator, Page, expect

from tests.e2e.console_page import WAIT_MS, sign_in


def bridge(live, seeded) -> httpx.Client:
    """The Claude Code bridge of the seeded workspace: its agent token on the channel protocol."""
    return httpx.Client(
        base_url=f"{live.url}/api/channel",
        headers={"authorization": f"Bearer {seeded.agent_token}"},
        timeout=30,
    )


def human_api(live, seeded) -> httpx.Client:
    return httpx.Client(
        base_url=f"{live.url}/api/workspaces/{seeded.workspace_id}",
        headers={"authorization": f"Bearer {seeded.human_token}"},
        timeout=30,
    )


def ask(live, seeded, request_id: str, tool: str = "Bash", **more: Any) -> httpx.Response:
    body = {"requestId": request_id, "toolName": tool, "description": "Run the tests", "inputPreview": "make test"}
    body["taskId"] = None
    body.update(more)
    with bridge(live, seeded) as http:
        return http.post("/permissions", json=body)


def asked(live, seeded, request_id: str, tool: str = "Bash", **more: Any) -> str:
    """A question for the human, asserted pending: its id."""
    response = ask(live, seeded, request_id, tool, **more)
    assert response.status_code == 201, response.text
    assert response.json()["status"] == "pending"
    return response.json()["id"]


def verdict(live, seeded, request_id: str, cursor: str | None = None) -> str:
    """The behavior the bridge hears for `request_id`, long-polled within a bounded time."""
    give_up = time.monotonic() + WAIT_MS / 1000
    with bridge(live, seeded) as http:
        while time.monotonic() < give_up:
            params = {"wait": 2, **({"cursor": cursor} if cursor else {})}
            response = http.get("/events", params=params)
            assert response.status_code == 200, response.text
            page = response.json()
            for event in page["events"]:
                if event["kind"] == "permission" and event["meta"]["request_id"] == request_id:
                    return event["meta"]["behavior"]
            cursor = page["cursor"]
    raise AssertionError(f"no permission verdict for {request_id} reached the bridge")


def panel(page: Page) -> Locator:
    """The tools approved last and always allowed, under the inbox's list."""
    return page.get_by_role("region", name=re.compile(r"^Tool approvals"))


def request_card(page: Page, tool: str) -> Locator:
    """A request waiting, in the inbox's list."""
    return page.get_by_role("list", name="Waiting on you").get_by_role("article", name=tool, exact=True)


def open_inbox(page: Page, live, seeded) -> None:
    sign_in(page, live, seeded.human_token)
    page.goto(f"{live.url}/#/inbox")
    expect(page.get_by_role("heading", name="Inbox", level=1)).to_be_visible()


def rules(live, seeded) -> list[str]:
    with human_api(live, seeded) as http:
        response = http.get("/permission-rules")
        assert response.status_code == 200, response.text
        return [rule["tool"] for rule in response.json()["rules"]]


# -- the flows ----------------------------------------------------------------------------------


def test_the_human_allows_once_then_always_and_revokes_the_rule(live, seeded, console):
    page = console
    open_inbox(page, live, seeded)
    expect(page.get_by_text("Nothing needs you.")).to_be_visible(timeout=WAIT_MS)

    # Allowed once: the request shows within a poll, with what Claude Code wants to run; the bridge hears allow.
    asked(live, seeded, "abcde")
    card = request_card(page, "Bash")
    expect(card).to_be_visible(timeout=WAIT_MS)
    expect(card).to_contain_text("Run the tests")
    expect(card.locator("pre")).to_have_text("make test")
    expect(page.locator("#inbox-count")).to_have_text("1")
    expect(page).to_have_title("(1) Agent Workspace")
    expect(page.get_by_role("group", name="Show").get_by_role("button", name="Approvals 1")).to_be_visible()
    card.get_by_role("button", name="Allow", exact=True).click()
    expect(card).to_have_count(0)
    expect(page.get_by_role("status")).to_contain_text("Allowed: Bash")
    assert verdict(live, seeded, "abcde") == "allow"
    recent = panel(page).get_by_role("list", name="Recently answered")
    expect(recent).to_contain_text("Allowed", timeout=WAIT_MS)
    expect(page.get_by_text("Nothing needs you.")).to_be_visible()
    expect(page.locator("#inbox-count")).to_have_text("")

    # Always allowed, from a request made in a task: the card links to the task, which opens its drawer.
    with human_api(live, seeded) as http:
        task = http.post("/board/tasks", json={"title": "Run the suite"})
        assert task.status_code == 201, task.text
        identifier = task.json()["identifier"]
    asked(live, seeded, "fghij", description="Run the suite", inputPreview="pytest -q", taskId=task.json()["id"])
    card = request_card(page, "Bash")
    expect(card).to_be_visible(timeout=WAIT_MS)
    link = card.get_by_role("link", name=re.compile("Run the suite$"))
    expect(link).to_have_attribute("href", f"#/task/{identifier}", timeout=WAIT_MS)
    link.click()
    expect(page).to_have_url(re.compile(f"#/task/{identifier}$"))
    expect(page.locator("#drawer")).to_be_visible()
    card.get_by_role("button", name="Always allow").click()
    expect(card).to_have_count(0)
    assert verdict(live, seeded, "fghij") == "allow"
    always = panel(page).get_by_role("list", name="Always allowed here")
    expect(always.get_by_role("listitem")).to_have_count(1, timeout=WAIT_MS)
    expect(always).to_contain_text("Bash")
    assert rules(live, seeded) == ["Bash"]

    # The rule answers the next request at once: nothing waits for the human.
    third = ask(live, seeded, "klmno")
    assert third.status_code == 200, third.text
    assert third.json() | {"id": None} == {"id": None, "status": "allowed", "behavior": "allow", "rule": "always"}

    # Revoked in the console: gone over REST, and Claude Code asks again.
    always.get_by_role("button", name="Revoke always allow for Bash").click()
    expect(always.get_by_role("listitem")).to_have_count(0)
    expect(panel(page).get_by_text("No tool is always allowed")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("no longer always allowed")
    assert rules(live, seeded) == []
    asked(live, seeded, "pqrst")
    expect(request_card(page, "Bash")).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_role("alert")).to_be_hidden()


def test_a_denied_request_keeps_its_text_as_text(live, seeded, console):
    page = console
    open_inbox(page, live, seeded)
    hostile = "<img src=x onerror=\"document.title='pwned'\">"
    asked(live, seeded, "deny1", "Write", description=f"Edit {hostile}", inputPreview=hostile)
    card = request_card(page, "Write")
    expect(card).to_be_visible(timeout=WAIT_MS)
    expect(card.locator("pre")).to_have_text(hostile)  # the agent's text stays text
    expect(card).to_contain_text(f"Edit {hostile}")
    assert page.locator("img").count() == 0 and page.title() == "(1) Agent Workspace"  # the count, not "pwned"
    card.get_by_role("button", name="Deny").dblclick()  # one decision: the buttons wait while it is sent
    expect(card).to_have_count(0)
    assert verdict(live, seeded, "deny1") == "deny"
    expect(page.get_by_role("alert")).to_have_count(0)  # no second call refused as already answered
    expect(panel(page).get_by_role("list", name="Recently answered")).to_contain_text("Denied", timeout=WAIT_MS)
    assert page.locator("img").count() == 0 and page.title() == "Agent Workspace"


def test_a_request_answered_elsewhere_is_refused_in_a_toast_and_leaves_the_list(live, seeded, console):
    page = console
    page.clock.install()  # the page's polling moves only when the test says: the stale card stays until the click
    open_inbox(page, live, seeded)
    question_id = asked(live, seeded, "late1", "Read")
    page.clock.run_for(3_100)
    card = request_card(page, "Read")
    expect(card).to_be_visible(timeout=WAIT_MS)
    with human_api(live, seeded) as http:
        answered = http.post(f"/permissions/{question_id}", json={"decision": "deny"})
        assert answered.status_code == 200, answered.text

    card.get_by_role("button", name="Allow", exact=True).click()
    # The card leaves with the refresh the refusal starts: the reason is in a toast, which outlives it.
    expect(page.get_by_role("alert")).to_contain_text("already answered or has expired")
    expect(page.get_by_role("alert")).to_contain_text("409")
    expect(card).to_have_count(0, timeout=WAIT_MS)  # the refusal refreshes the list at once
    expect(panel(page).get_by_role("list", name="Recently answered")).to_contain_text("Denied")
    assert verdict(live, seeded, "late1") == "deny"
