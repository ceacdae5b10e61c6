"""The task drawer end to end: Debian's Chromium driven by Playwright, the agent on the real MCP client.

A task opens in a drawer beside the board (a full-screen sheet on a phone), the decision first: what the task
asks of the human, answered in place with the inbox's answer component, then the description, one timeline
(conversation, comments, activity) with the composer under it, then the details. `#/task/WS-12` links to it;
Esc closes it. As in the other console tests, each agent call runs in its own thread (console_page.agent).
"""

import base64
import json
import re

import httpx
from playwright.sync_api import Locator, Page, expect

from tests.e2e.console_page import (
    SHIP_SCHEMA,
    WAIT_MS,
    Background,
    agent,
    agent_once,
    ask,
    created_task,
    human,
    sign_in,
)

# -- the page's parts ------------------------------------------------------------------------------


def drawer(page: Page) -> Locator:
    return page.locator("#drawer")


def timeline(page: Page) -> Locator:
    return drawer(page).get_by_role("list", name="Timeline")


def entries(page: Page) -> Locator:
    return timeline(page).locator(":scope > li")


def card(page: Page, title: str) -> Locator:
    """A task's card on the board: the button that opens it."""
    return page.locator("#view-board").get_by_role("button", name=title, exact=True)


def open_card(page: Page, title: str) -> None:
    card(page, title).click(timeout=WAIT_MS)
    expect(drawer(page).get_by_role("heading", name=title, level=2)).to_be_visible()
    expect(drawer(page).locator(".task-ident")).not_to_be_empty(timeout=WAIT_MS)  # read from the server


def asked_at_1440(page: Page, live, seeded, title: str, /, **question) -> Background:
    """Signed in at 1440 px, the agent asks `question` in a new task `title` (running: result() is its answer)."""
    page.set_viewport_size({"width": 1440, "height": 900})
    sign_in(page, live, seeded.human_token)
    return ask(live.url, seeded.agent_token, title, **question)


def sign_in_at(page: Page, live, token: str, address: str) -> None:
    """Sign in on a page opened at `address` (a deep link such as #/task/WS-3)."""
    page.goto(f"{live.url}/{address}")
    page.get_by_label("Human token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def board_api(live, seeded) -> httpx.Client:
    return httpx.Client(
        base_url=f"{live.url}/api/workspaces/{seeded.workspace_id}",
        headers={"authorization": f"Bearer {seeded.human_token}"},
        timeout=30,
    )


def rounds(page: Page) -> int:
    return int(page.evaluate("document.body.dataset.rounds || '0'"))


def wait_rounds(page: Page, n: int) -> None:
    """Wait until `n` more refresh rounds have finished (the page counts them in body[data-rounds])."""
    target = rounds(page) + n
    page.wait_for_function("target => Number(document.body.dataset.rounds || 0) >= target", arg=target, timeout=WAIT_MS)


def inside_viewport(page: Page, locator: Locator) -> None:
    box = locator.bounding_box()
    size = page.viewport_size
    assert box is not None, "not rendered"
    assert box["x"] >= 0 and box["y"] >= 0, box
    assert box["x"] + box["width"] <= size["width"] + 0.5, box
    assert box["y"] + box["height"] <= size["height"] + 0.5, box


# -- the flows ------------------------------------------------------------------------------------


def test_decline_reply_with_a_file_change_status_and_a_refusal_in_the_alert(live, seeded, console):
    page = console
    asking = asked_at_1440(
        page, live, seeded, "Approve the deploy", message="May I deploy?", mode="url", url="https://example.com/approve"
    )
    # The question waits in the task's drawer, first; it is declined there.
    open_card(page, "Approve the deploy")
    question = drawer(page).get_by_role("article", name="May I deploy?")
    expect(question).to_be_visible(timeout=WAIT_MS)
    link = question.get_by_role("link", name="Open https://example.com/approve")
    expect(link).to_have_attribute("href", "https://example.com/approve")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(question.get_by_role("button", name="Done")).to_be_visible()
    question.get_by_role("button", name="Decline").click()
    task_id, answer = asking.result()
    assert answer == {"action": "decline"}
    expect(question).to_have_count(0)

    # The question and its answer are in the timeline; reply with a file, the agent sees it through MCP.
    expect(entries(page).filter(has_text="May I deploy?")).to_have_attribute("data-type", "question")
    answered = entries(page).filter(has_text="Answered: decline")
    expect(answered).to_have_attribute("data-type", "answer", timeout=WAIT_MS)
    before = entries(page).count()
    drawer(page).get_by_label("Reply", exact=True).fill("Here are the logs.")
    content = b"line 1\nline 2 <b>not html</b>\n"
    drawer(page).get_by_label("Attach files").set_input_files(
        files=[{"name": "deploy.log", "mimeType": "text/plain", "buffer": content}]
    )
    drawer(page).get_by_role("button", name="Send reply").click()
    expect(entries(page)).to_have_count(before + 1, timeout=WAIT_MS)
    reply = entries(page).last
    expect(reply).to_contain_text("Here are the logs.")
    expect(reply).to_have_attribute("data-type", "message")
    expect(drawer(page).get_by_label("Reply", exact=True)).to_have_value("")

    seen = json.loads(agent_once(live.url, seeded.agent_token, "task", "get", taskId=task_id, includeConversation=True))
    messages = seen["conversation"]["messages"]
    assert messages[-1]["text"] == "Here are the logs." and messages[-1]["from"] == "human"
    [attachment] = messages[-1]["attachments"]
    assert (attachment["filename"], attachment["mimeType"], attachment["size"]) == (
        "deploy.log",
        "text/plain",
        len(content),
    )
    fetched = json.loads(
        agent_once(
            live.url,
            seeded.agent_token,
            "task",
            "getAttachment",
            taskId=task_id,
            attachmentId=attachment["id"],
            format="base64",
        )
    )
    assert base64.b64decode(fetched["data"]) == content

    # The download button fetches a fresh link and opens it; the link it leaves serves the file.
    with page.context.expect_page() as opened:
        reply.get_by_role("button", name="Download deploy.log").click()
    opened.value.close()
    fallback = reply.get_by_role("link", name="Open deploy.log")
    expect(fallback).to_have_attribute("href", re.compile(r"^https?://"))
    assert httpx.get(fallback.get_attribute("href"), timeout=10).content == content

    # Change the status (AgentRQ's side).
    drawer(page).get_by_label("Status", exact=True).select_option(label="Completed")
    drawer(page).get_by_role("button", name="Set status").click()
    facts = drawer(page).get_by_role("region", name="Details")
    expect(facts).to_contain_text("Completed", timeout=WAIT_MS)
    with human(live, seeded) as http:
        assert http.get(f"/api/workspaces/{seeded.workspace_id}/tasks/{task_id}").json()["status"] == "completed"

    # The API's refusal is shown where the human is looking, with its detail.
    drawer(page).get_by_text("Link to another task").click()
    drawer(page).get_by_label("Other task (WS-number or id)").fill("WS-999")
    drawer(page).get_by_role("button", name="Add link").click()
    alert = drawer(page).get_by_role("alert")
    expect(alert).to_contain_text("Linking the tasks failed")
    expect(alert).to_contain_text("404")
    # A valid one goes through and clears the alert.
    with board_api(live, seeded) as http:
        other = http.post("/board/tasks", json={"title": "Write the changelog", "column": "backlog"}).json()
    drawer(page).get_by_label("Other task (WS-number or id)").fill(other["identifier"])
    drawer(page).get_by_role("button", name="Add link").click()
    expect(alert).to_be_hidden()
    links = drawer(page).get_by_role("list", name="Links")
    expect(links).to_contain_text(f"Blocks {other['identifier']} Write the changelog", timeout=WAIT_MS)
    with board_api(live, seeded) as http:
        shown = http.get(f"/board/tasks/{task_id}").json()
    assert shown["links"] == [{"type": "blocks", "taskId": other["id"]}]


def test_a_comment_shows_and_an_agent_s_suggestion_is_accepted(live, seeded, console):
    page = console
    with board_api(live, seeded) as http:
        made = http.post("/board/tasks", json={"title": "Cache the pricing page", "column": "backlog"}).json()
    agent_once(
        live.url,
        seeded.agent_token,
        "task",
        "suggest",
        taskId=made["id"],
        summary="Edge cache, 5 min TTL.",
        criteria=["TTL is 5 min", "purge on publish"],
    )
    sign_in(page, live, seeded.human_token)
    open_card(page, "Cache the pricing page")

    suggestion = drawer(page).get_by_role("region", name=re.compile("^From the agent"))
    expect(suggestion).to_contain_text("Edge cache, 5 min TTL.", timeout=WAIT_MS)
    suggestion.get_by_role("button", name="Accept suggestion").click()
    expect(suggestion).to_have_count(0)
    criteria = drawer(page).get_by_role("list", name="Acceptance criteria")
    expect(criteria.get_by_role("listitem")).to_have_count(2, timeout=WAIT_MS)
    expect(criteria).to_contain_text("purge on publish")
    expect(criteria).to_contain_text("not checked yet")
    summary = drawer(page).get_by_role("region", name="Summary")
    expect(summary).to_have_text(re.compile(r"Summary\s*Edge cache, 5 min TTL\."))

    hostile = "Looks right <img src=x onerror=\"document.title='pwned'\">"
    drawer(page).get_by_label("Comment on the task").check()
    drawer(page).get_by_label("Comment", exact=True).fill(hostile)
    drawer(page).get_by_role("button", name="Post comment").click()
    comment = timeline(page).locator(":scope > li[data-type=comment]")
    expect(comment).to_have_count(1, timeout=WAIT_MS)
    expect(comment).to_contain_text(hostile)
    expect(drawer(page).get_by_label("Comment", exact=True)).to_have_value("")
    assert page.locator("img").count() == 0 and page.title() == "Agent Workspace"
    with board_api(live, seeded) as http:
        shown = http.get(f"/board/tasks/{made['id']}").json()
    assert [(c["by"], c["text"]) for c in shown["comments"]] == [("human", hostile)]


def test_a_card_click_at_1440_shows_title_decision_and_description_without_scrolling(live, seeded, console):
    page = console
    asking = asked_at_1440(
        page, live, seeded, "Ship the release", message="How should we ship?", requestedSchema=SHIP_SCHEMA
    )
    expect(page.locator("#inbox-count")).to_have_text("1", timeout=WAIT_MS)
    open_card(page, "Ship the release")

    title = drawer(page).get_by_role("heading", name="Ship the release", level=2)
    decision = drawer(page).get_by_role("article", name="How should we ship?")
    description = drawer(page).get_by_role("region", name="Description").get_by_text("About Ship the release")
    expect(decision).to_be_visible(timeout=WAIT_MS)
    expect(description).to_be_visible()
    for part in (title, decision.get_by_role("heading", name="How should we ship?"), description):
        inside_viewport(page, part)
    assert drawer(page).locator(".drawer-body").evaluate("node => node.scrollTop") == 0
    # The drawer sits beside the board, on the right.
    box = drawer(page).bounding_box()
    assert box["x"] > 700 and box["x"] + box["width"] == 1440
    expect(title).to_be_focused()

    decision.get_by_role("button", name="Decline").click()
    assert asking.result()[1] == {"action": "decline"}


def test_a_deep_link_opens_the_task_after_sign_in_and_esc_closes_it(live, seeded, console):
    page = console
    page.set_viewport_size({"width": 1440, "height": 900})
    with board_api(live, seeded) as http:
        made = http.post("/board/tasks", json={"title": "Rotate the keys", "column": "ready"}).json()
    ident = made["identifier"]

    sign_in_at(page, live, seeded.human_token, f"#/task/{ident}")
    title = drawer(page).get_by_role("heading", name="Rotate the keys", level=2)
    expect(title).to_be_visible(timeout=WAIT_MS)
    expect(title).to_be_focused()
    expect(drawer(page).locator(".task-ident")).to_have_text(ident)
    assert page.evaluate("location.hash") == f"#/task/{ident}"

    # "r" goes to the reply box; Esc there is the field's, not the drawer's.
    expect(card(page, "Rotate the keys")).to_be_visible(timeout=WAIT_MS)
    page.keyboard.press("r")
    expect(drawer(page).get_by_label("Reply", exact=True)).to_be_focused()
    page.keyboard.press("Escape")
    expect(drawer(page)).to_be_visible()
    title.focus()
    page.keyboard.press("Escape")
    expect(drawer(page)).to_be_hidden()
    expect(page).to_have_url(re.compile(r"#/board$"))
    expect(card(page, "Rotate the keys")).to_be_focused()

    # A link by the task's id opens it too, and the address names it by its identifier.
    page.evaluate(f"location.hash = '#/task/{made['id']}'")
    expect(title).to_be_visible(timeout=WAIT_MS)
    expect(page).to_have_url(re.compile(f"#/task/{ident}$"), timeout=WAIT_MS)
    # Back closes it: focus returns to the card that had it when the link opened the task.
    page.go_back()
    expect(drawer(page)).to_be_hidden()
    expect(page).to_have_url(re.compile(r"#/board$"))
    expect(card(page, "Rotate the keys")).to_be_focused()

    # A task that does not exist: the drawer closes and says why.
    page.evaluate("location.hash = '#/task/WS-999'")
    expect(page.get_by_role("alert").filter(has_text="Opening the task failed")).to_be_visible(timeout=WAIT_MS)
    expect(drawer(page)).to_be_hidden()
    expect(page).to_have_url(re.compile(r"#/board$"))
    # Nor can ".." be one: no request is sent to the folder above, and the page says why.
    page.evaluate("location.hash = '#/task/..'")
    expect(page.get_by_role("alert").filter(has_text="'..' cannot be named in a URL")).to_be_visible(timeout=WAIT_MS)
    expect(drawer(page)).to_be_hidden()
    expect(page).to_have_url(re.compile(r"#/board$"))


def test_on_a_phone_the_drawer_covers_the_screen(live, seeded, console):
    page = console
    page.set_viewport_size({"width": 390, "height": 844})
    with board_api(live, seeded) as http:
        made = http.post(
            "/board/tasks",
            json={"title": "Fix the login page", "description": "The **button** is off screen.", "column": "ready"},
        ).json()
    sign_in_at(page, live, seeded.human_token, f"#/task/{made['identifier']}")
    expect(drawer(page).get_by_role("heading", name="Fix the login page", level=2)).to_be_visible(timeout=WAIT_MS)
    expect(drawer(page).get_by_role("region", name="Description").locator("strong")).to_have_text("button")
    box = drawer(page).bounding_box()
    assert box == {"x": 0, "y": 0, "width": 390, "height": 844}
    inside_viewport(page, drawer(page).get_by_role("button", name="Close the task"))
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone

    drawer(page).get_by_role("button", name="Close the task").click()
    expect(drawer(page)).to_be_hidden()
    expect(page).to_have_url(re.compile(r"#/board$"))


def test_on_a_phone_the_open_drawer_is_modal(live, seeded, console):
    """The sheet covers the board: its cards (and the views' navigation) cannot be reached by Tab or j/k under it,
    and they can again once it is closed, or once the screen is wide enough for the drawer to sit beside them."""
    page = console
    page.set_viewport_size({"width": 390, "height": 844})
    with board_api(live, seeded) as http:
        made = http.post("/board/tasks", json={"title": "Water the plants", "column": "ready"}).json()
    sign_in(page, live, seeded.human_token)
    expect(card(page, "Water the plants")).to_be_visible(timeout=WAIT_MS)
    focusable = "node => { node.focus(); return document.activeElement === node; }"
    assert card(page, "Water the plants").evaluate(focusable)

    card(page, "Water the plants").click()
    title = drawer(page).get_by_role("heading", name="Water the plants", level=2)
    expect(title).to_be_focused()
    on_board = page.locator("#view-board").locator(f"[data-key='{made['id']}'] button.card-open")
    expect(on_board).to_have_count(1)
    under = page.locator("#view")
    expect(under).to_have_attribute("inert", "")
    assert not on_board.evaluate(focusable)  # inert under the sheet
    assert not page.get_by_role("navigation", name="Views").locator("a").first.evaluate(focusable)
    page.keyboard.press("j")
    expect(title).to_be_focused()  # the board's j does not reach under the sheet
    expect(drawer(page)).to_be_visible()

    # The media query's change event comes after the resize: wait for it before trying the focus.
    page.set_viewport_size({"width": 1440, "height": 900})  # the drawer beside the board: not modal
    expect(under).not_to_have_attribute("inert", "")
    assert on_board.evaluate(focusable)
    page.set_viewport_size({"width": 390, "height": 844})
    expect(under).to_have_attribute("inert", "")
    assert not on_board.evaluate(focusable)

    drawer(page).get_by_role("button", name="Close the task").click()
    expect(drawer(page)).to_be_hidden()
    expect(card(page, "Water the plants")).to_be_focused()  # back where the human was, reachable again


def test_the_timeline_merges_messages_comments_and_activity_in_time_order(live, seeded, console, clock):
    page = console
    with board_api(live, seeded) as http:
        made = http.post("/board/tasks", json={"title": "Tidy the docs", "column": "backlog"}).json()
        clock.advance(seconds=1)
        http.post(f"/tasks/{made['id']}/messages", json={"text": "Start with the README."})
        clock.advance(seconds=1)
        http.post(f"/board/tasks/{made['id']}/comments", json={"text": "Keep the old links working."})
        clock.advance(seconds=1)
        http.patch(f"/board/tasks/{made['id']}", json={"column": "ready"})
    sign_in_at(page, live, seeded.human_token, f"#/task/{made['identifier']}")

    expect(entries(page)).to_have_count(4, timeout=WAIT_MS)
    types = entries(page).evaluate_all("items => items.map(item => item.dataset.type)")
    assert types == ["activity", "message", "comment", "activity"]
    expect(entries(page).nth(0)).to_contain_text("You created it (Backlog)")
    expect(entries(page).nth(1)).to_contain_text("Start with the README.")
    expect(entries(page).nth(2)).to_contain_text("Keep the old links working.")
    expect(entries(page).nth(3)).to_contain_text("You edited it")
    times = entries(page).locator("time").evaluate_all("nodes => nodes.map(node => node.dateTime)")
    assert times == sorted(times) and len(times) == 4

    # The agent answers: its message joins at the bottom, next to the composer.
    clock.advance(seconds=1)
    agent_once(live.url, seeded.agent_token, "task", "reply", taskId=made["id"], text="On it.")
    expect(entries(page)).to_have_count(5, timeout=WAIT_MS)
    expect(entries(page).last).to_contain_text("On it.")
    expect(entries(page).last).to_have_attribute("data-type", "message")


def test_a_reply_being_typed_survives_refresh_rounds(live, seeded, console):
    page = console
    with board_api(live, seeded) as http:
        made = http.post("/board/tasks", json={"title": "Plan the launch", "column": "ready"}).json()
        http.post(f"/tasks/{made['id']}/messages", json={"text": "Which date works?"})
    sign_in_at(page, live, seeded.human_token, f"#/task/{made['identifier']}")
    expect(entries(page)).to_have_count(2, timeout=WAIT_MS)
    first = entries(page).first
    first.evaluate("node => { node.marked = true; }")

    box = drawer(page).get_by_label("Reply", exact=True)
    box.fill("Friday, after the review")
    box.evaluate("node => node.setSelectionRange(0, 6)")
    agent_once(live.url, seeded.agent_token, "task", "reply", taskId=made["id"], text="Thursday is booked.")
    expect(entries(page)).to_have_count(3, timeout=WAIT_MS)
    wait_rounds(page, 2)

    expect(box).to_have_value("Friday, after the review")
    expect(box).to_be_focused()
    assert box.evaluate("node => [node.selectionStart, node.selectionEnd]") == [0, 6]
    assert first.evaluate("node => node.marked === true")  # the same element: nothing was rebuilt
    assert entries(page).first.evaluate("node => node.marked === true")


def test_two_quick_ctrl_enter_send_one_reply(live, seeded, console):
    """Ctrl+Enter submits the form itself, which a disabled Send button does not stop: a second press while the
    first reply is on its way must not send it again."""
    page = console
    with board_api(live, seeded) as http:
        made = http.post("/board/tasks", json={"title": "Book the venue", "column": "ready"}).json()
    sign_in_at(page, live, seeded.human_token, f"#/task/{made['identifier']}")
    expect(entries(page)).to_have_count(1, timeout=WAIT_MS)

    box = drawer(page).get_by_label("Reply", exact=True)
    box.fill("The hall on the 12th.")
    box.press("Control+Enter")
    box.press("Control+Enter")
    expect(page.get_by_role("status")).to_have_text("Reply sent.", timeout=WAIT_MS)
    expect(box).to_have_value("")
    wait_rounds(page, 2)
    expect(entries(page).filter(has_text="The hall on the 12th.")).to_have_count(1)
    with board_api(live, seeded) as http:
        messages = http.get(f"/tasks/{made['id']}").json()["conversation"]["messages"]
    assert [m["text"] for m in messages] == ["The hall on the 12th."]


def test_a_question_is_answered_inside_the_drawer(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)

    async def steps(act):
        task_id = await created_task(act, "Pick the channel")
        text, is_error = await act(
            "task",
            "elicit",
            taskId=task_id,
            timeoutSeconds=60,
            message="Which channel?",
            requestedSchema={
                "type": "object",
                "properties": {"channel": {"type": "string", "enum": ["stable", "beta"]}},
            },
        )
        assert not is_error, text
        return task_id, json.loads(text)

    asking = agent(live.url, seeded.agent_token, steps)
    open_card(page, "Pick the channel")
    question = drawer(page).get_by_role("article", name="Which channel?")
    expect(question).to_be_visible(timeout=WAIT_MS)
    # The decision is inside the drawer: one click answers.
    question.get_by_role("button", name="beta").click()
    task_id, answer = asking.result()
    assert answer == {"action": "accept", "content": {"channel": "beta"}}
    expect(question).to_have_count(0)
    expect(page.locator("#inbox-count")).to_have_text("", timeout=WAIT_MS)
    expect(entries(page).filter(has_text="Answered: accept")).to_have_attribute("data-type", "answer", timeout=WAIT_MS)
    expect(drawer(page).get_by_role("heading", name="Pick the channel", level=2)).to_be_focused()
    with human(live, seeded) as http:
        assert http.get(f"/api/workspaces/{seeded.workspace_id}/tasks/{task_id}").json()["title"] == "Pick the channel"


def test_switching_workspace_closes_the_task_and_its_address(live, seeded, console):
    page = console
    with board_api(live, seeded) as http:
        made = http.post("/board/tasks", json={"title": "Renew the certificate", "column": "ready"}).json()
    with human(live, seeded) as http:
        other = http.post("/api/workspaces", json={"title": "Side project"}).json()
    sign_in_at(page, live, seeded.human_token, f"#/task/{made['identifier']}")
    expect(drawer(page).get_by_role("heading", name="Renew the certificate", level=2)).to_be_visible(timeout=WAIT_MS)
    drawer(page).get_by_label("Reply", exact=True).fill("Half a thought")

    page.get_by_role("combobox", name="Workspace", exact=True).select_option(other["id"])
    expect(drawer(page)).to_be_hidden()
    expect(page).to_have_url(re.compile(r"#/board$"))
    # Back in the first workspace the task opens empty-handed: nothing typed for it leaks across a switch.
    page.get_by_role("combobox", name="Workspace", exact=True).select_option(seeded.workspace_id)
    page.evaluate(f"location.hash = '#/task/{made['identifier']}'")
    expect(drawer(page).get_by_role("heading", name="Renew the certificate", level=2)).to_be_visible(timeout=WAIT_MS)
    expect(drawer(page).get_by_label("Reply", exact=True)).to_have_value("")
