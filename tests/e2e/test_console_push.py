"""The console on push (issue 36), end to end: Debian's Chromium on the local stack as `make serve` runs it (the
local WebSocket gateway in front, published changes delivered), the agent on the real MCP client.

The page's clock is paused once it is signed in (Playwright's fake timers), so its refresh timer never fires: a
change the page shows can only have come over the WebSocket (`body[data-pushes]` counts the pushes it acted on).
Without push (the ticket answered 503), the page polls as before.
"""

import re
import time
from datetime import UTC, datetime, timedelta

from playwright.sync_api import Locator, Page, expect

from tests.e2e.console_page import WAIT_MS, agent, ask, created_task, human, sign_in

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def card(page: Page, title: str) -> Locator:
    return page.locator("#view-board").get_by_role("button", name=title, exact=True)


def drawer(page: Page) -> Locator:
    return page.locator("#drawer")


def pushes(page: Page) -> int:
    return int(page.locator("body").get_attribute("data-pushes") or 0)


def pushed_since(page: Page, before: int) -> None:
    """Wait until the page has acted on a push after the `before`-th."""
    expect(page.locator("body")).to_have_attribute("data-pushes", re.compile(r"^\d+$"), timeout=WAIT_MS)
    expect(page.locator("body")).not_to_have_attribute("data-pushes", str(before) if before else "", timeout=WAIT_MS)


def settled(page: Page) -> None:
    """Wait until no refresh round runs (the page marks one in body[data-refreshing]); with the page's clock
    paused, none starts again but for a push (or the test moving the clock)."""
    body = page.locator("body")
    expect(body).to_have_attribute("data-rounds", re.compile(r"^[1-9]"), timeout=WAIT_MS)
    expect(body).not_to_have_attribute("data-refreshing", "true", timeout=WAIT_MS)


def signed_in_live(page: Page, server, seeded) -> None:
    """Signed in with the page's timers frozen: the socket opens (no timer needed: a fetch, then its events)."""
    page.clock.install(time=T0)
    page.clock.pause_at(T0 + timedelta(seconds=1))
    sign_in(page, server, seeded.human_token)
    expect(page.locator("#live")).to_be_visible(timeout=WAIT_MS)
    settled(page)  # the catch-up round that follows every (re)connect


def agent_creates(server, seeded, title: str) -> str:
    async def steps(act):
        return await created_task(act, title, assignee="agent")

    return agent(server.url, seeded.agent_token, steps).result()


def test_an_agents_task_and_question_and_an_answer_elsewhere_reach_the_page_over_the_websocket(
    pushing, seeded, console
):
    page = console
    server = pushing
    signed_in_live(page, server, seeded)

    # A task created by an agent appears on the board.
    before = pushes(page)
    agent_creates(server, seeded, "Pushed onto the board")
    expect(card(page, "Pushed onto the board")).to_be_visible(timeout=WAIT_MS)
    assert pushes(page) > before

    # A question asked by an agent appears in the inbox (the count, the list).
    schema = {"type": "object", "properties": {"colour": {"type": "string"}}}
    asking = ask(
        server.url, seeded.agent_token, "Which colour", message="Which colour should it be?", mode="form",
        requestedSchema=schema,
    )  # fmt: skip
    expect(page.locator("#inbox-count")).to_have_text("1", timeout=WAIT_MS)
    page.get_by_role("link", name=re.compile("^Inbox")).first.click()
    question = page.get_by_role("list", name="Waiting on you").get_by_role("article", name="Which colour should it be?")
    expect(question).to_be_visible(timeout=WAIT_MS)

    # Answered elsewhere (another tab, the API): the page drops it.
    with human(server, seeded) as http:
        needs = http.get(f"/api/workspaces/{seeded.workspace_id}/board/needs-you").json()
        [waiting] = needs["questions"]
        answered = http.post(
            f"/api/workspaces/{seeded.workspace_id}/elicitations/{waiting['id']}/answer",
            json={"action": "accept", "content": {"colour": "teal"}},
        )
        assert answered.status_code == 200, answered.text
    expect(question).to_have_count(0, timeout=WAIT_MS)
    expect(page.locator("#inbox-count")).to_have_text("", timeout=WAIT_MS)
    task_id, answer = asking.result()
    assert answer["action"] == "accept" and answer["content"] == {"colour": "teal"}

    # A decision made elsewhere on the open task (a comment over REST) shows in its drawer.
    page.get_by_role("link", name=re.compile("^Board")).first.click()
    card(page, "Which colour").click(timeout=WAIT_MS)
    expect(drawer(page).locator(".task-ident")).not_to_be_empty(timeout=WAIT_MS)
    settled(page)
    with human(server, seeded) as http:
        commented = http.post(
            f"/api/workspaces/{seeded.workspace_id}/board/tasks/{task_id}/comments", json={"text": "Teal it is."}
        )
        assert commented.status_code == 201, commented.text
    timeline = drawer(page).get_by_role("list", name="Timeline")
    expect(timeline.locator(":scope > li[data-type=comment]")).to_contain_text("Teal it is.", timeout=WAIT_MS)


def test_a_socket_cut_by_the_server_loses_nothing(pushing, seeded, console):
    page = console
    server = pushing
    signed_in_live(page, server, seeded)
    agent_creates(server, seeded, "Before the cut")
    expect(card(page, "Before the cut")).to_be_visible(timeout=WAIT_MS)

    assert server.gateway.close() == 1  # the server cuts the page's socket, as API Gateway does after 2 hours
    expect(page.locator("#live")).to_be_hidden(timeout=WAIT_MS)
    page.clock.run_for(1)  # the page reads everything at once when its socket goes (the pushes it may miss)
    settled(page)

    agent_creates(server, seeded, "During the cut")  # its push reaches no socket of the page
    expect(card(page, "During the cut")).to_have_count(0)

    # The reconnect (a backoff of at most a second, well before the next poll at 3 s) catches up over REST.
    page.clock.run_for(1_000)
    expect(page.locator("#live")).to_be_visible(timeout=WAIT_MS)
    expect(card(page, "During the cut")).to_be_visible(timeout=WAIT_MS)

    # And the new socket hears what comes next.
    settled(page)
    agent_creates(server, seeded, "After the cut")
    expect(card(page, "After the cut")).to_be_visible(timeout=WAIT_MS)


def test_without_push_the_page_polls_and_shows_no_live_sign(live, seeded, console):
    page = console
    tickets: list[int] = []
    page.on("response", lambda r: tickets.append(r.status) if r.url.endswith("/api/push/tickets") else None)
    sign_in(page, live, seeded.human_token)
    expect(page.locator("body")).to_have_attribute("data-rounds", re.compile(r"^[1-9]"), timeout=WAIT_MS)

    agent_creates(live, seeded, "Found by polling")

    expect(card(page, "Found by polling")).to_be_visible(timeout=WAIT_MS)
    assert tickets == [503]  # asked once; tried again only after the hour the server's Retry-After says
    expect(page.locator("#live")).to_be_hidden()
    assert page.locator("body").get_attribute("data-pushes") is None


def sockets_become(server, count: int) -> None:
    """Wait (bounded) until the gateway holds `count` sockets: a page's close reaches it a moment later."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while len(server.gateway.connection_ids) != count:
        assert time.monotonic() < deadline, f"{len(server.gateway.connection_ids)} sockets open, not {count}"
        time.sleep(0.05)


def test_a_workspace_switch_opens_a_socket_for_the_new_workspace_and_signing_out_closes_it(pushing, seeded, console):
    page = console
    server = pushing
    with human(server, seeded) as http:
        made = http.post("/api/workspaces", json={"title": "Second", "mission": "Elsewhere."})
        assert made.status_code == 201, made.text
    second, second_agent = made.json()["id"], made.json()["agentToken"]
    signed_in_live(page, server, seeded)
    sockets_become(server, 1)

    page.locator("#workspace-select").select_option(second)
    expect(page.locator("#live")).to_be_visible(timeout=WAIT_MS)
    settled(page)
    sockets_become(server, 1)  # the first workspace's socket is closed, the second's open

    async def steps(act):
        return await created_task(act, "In the second workspace", assignee="agent")

    agent(server.url, second_agent, steps).result()
    expect(card(page, "In the second workspace")).to_be_visible(timeout=WAIT_MS)

    page.get_by_role("button", name="Sign out").click()
    expect(page.locator("#live")).to_be_hidden()
    sockets_become(server, 0)
