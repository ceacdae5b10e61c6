"""The web console end to end: Debian's Chromium driven by Playwright, the agent on the real MCP client.

The agent's calls block (elicit waits for the answer, a site-tool call for the human's decision), so
each runs with `anyio.run` in its own thread while the page is driven from the test's thread
(Playwright's sync API cannot run inside an event loop, hence plain sync tests). The human's Chrome
extension is simulated by a thread that speaks only the bridge protocol over REST.
"""

import base64
import json
import re

import httpx
from playwright.sync_api import expect

from tests.e2e.console_page import (
    SHIP_SCHEMA,
    TRACKER,
    WAIT_MS,
    Browser,
    agent,
    agent_once,
    ask,
    created_task,
    human,
    sign_in,
)

# -- the flows ----------------------------------------------------------------------------------


def test_a_new_workspace_s_agent_asks_and_the_human_answers_in_the_page(live, seeded, console, artifacts):
    page = console
    sign_in(page, live, seeded.human_token)

    page.get_by_text("New workspace", exact=True).click()
    page.get_by_label("Workspace title").fill("Release train")
    page.get_by_label("Mission").fill("Ship every week.")
    page.get_by_role("button", name="Create workspace").click()

    token_field = page.get_by_label("Agent token", exact=True)
    expect(token_field).to_have_value(re.compile(r"^aw_agent_\S+$"))
    agent_token = token_field.input_value()
    snippet = json.loads(page.get_by_label(".mcp.json").input_value())
    assert snippet == {
        "mcpServers": {
            "agent-workspace": {
                "type": "http",
                "url": f"{live.url}/mcp",
                "headers": {"Authorization": f"Bearer {agent_token}"},
            }
        }
    }
    expect(page.get_by_role("combobox", name="Workspace", exact=True)).to_have_value(re.compile(r"\S+"))
    workspace_id = page.get_by_role("combobox", name="Workspace", exact=True).input_value()
    assert workspace_id != seeded.workspace_id
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live.url)
    page.get_by_role("button", name="Copy agent token").click()
    expect(page.get_by_role("status")).to_have_text("The agent token was copied to the clipboard.")
    assert page.evaluate("navigator.clipboard.readText()") == agent_token
    page.get_by_role("button", name="Copy .mcp.json").click()
    expect(page.get_by_role("status")).to_have_text("The .mcp.json snippet was copied to the clipboard.")
    assert json.loads(page.evaluate("navigator.clipboard.readText()")) == snippet
    page.get_by_role("button", name="I have saved it").click()
    expect(token_field).to_be_hidden()
    assert token_field.input_value() == ""  # shown once: gone from the page

    asking = ask(
        live.url,
        agent_token,
        "Ship the release",
        message="How should we ship?",
        mode="form",
        requestedSchema=SHIP_SCHEMA,
    )
    question = page.get_by_role("article", name="How should we ship?")
    expect(question).to_be_visible(timeout=WAIT_MS)  # no reload: the page polls
    expect(question.get_by_role("button", name="Ship the release")).to_be_visible(timeout=WAIT_MS)
    channel = question.get_by_label("channel")
    expect(channel).to_have_attribute("required", "")
    expect(question.get_by_label("Replicas")).to_have_attribute("required", "")
    expect(question.get_by_text("Where the release goes")).to_be_visible()
    channel.select_option(label="beta")
    question.get_by_label("Replicas").fill("3")
    question.get_by_label("Notify the team").check()
    question.get_by_role("button", name="Submit answer").click()

    task_id, answer = asking.result()
    assert answer == {"action": "accept", "content": {"channel": "beta", "replicas": 3, "notify": True}}
    expect(question).to_have_count(0)
    expect(page.get_by_text("No question is waiting for you.")).to_be_visible()

    page.get_by_role("list", name="Tasks").get_by_role("button", name="Ship the release").click()
    detail = page.locator("#task-detail")
    expect(page.get_by_role("heading", name="Ship the release", level=2)).to_be_visible()
    expect(detail.get_by_text("About Ship the release")).to_be_visible()
    conversation = page.get_by_role("list", name="Conversation")
    items = conversation.locator(":scope > li")
    expect(items).to_have_count(2, timeout=WAIT_MS)
    expect(items.nth(0)).to_have_attribute("data-kind", "question")
    expect(items.nth(0)).to_contain_text("Question")
    expect(items.nth(0)).to_contain_text("How should we ship?")
    expect(items.nth(1)).to_have_attribute("data-kind", "answer")
    expect(items.nth(1)).to_contain_text("Answer")
    expect(items.nth(1)).to_contain_text('"channel": "beta"')
    expect(page.locator("#task-facts")).to_contain_text("human")  # assignee
    expect(page.locator("#task-facts")).to_contain_text("agent")  # created by

    shot = artifacts / "task-view.png"
    shot.unlink(missing_ok=True)
    page.screenshot(path=str(shot), full_page=True)
    assert shot.exists() and shot.stat().st_size > 0
    with human(live, seeded) as http:
        task = http.get(f"/api/workspaces/{workspace_id}/tasks/{task_id}").json()
    assert (task["title"], task["assignee"], task["createdBy"]) == ("Ship the release", "human", "agent")


def test_a_question_s_pattern_is_checked_by_the_server_not_by_the_page(live, seeded, console):
    """The agent's pattern never reaches the page's regex engine, which has no time limit (a catastrophic pattern
    would freeze the tab at each keystroke): the server checks it in its bounded engine, and the alert names the
    field."""
    page = console
    sign_in(page, live, seeded.human_token)
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "title": "Code", "pattern": "^(a|aa)+$"}},
        "required": ["code"],
    }
    asking = ask(
        live.url, seeded.agent_token, "Enter the code", message="Which code?", mode="form", requestedSchema=schema
    )
    question = page.get_by_role("article", name="Which code?")
    expect(question).to_be_visible(timeout=WAIT_MS)
    code = question.get_by_role("textbox", name="Code")
    expect(code).not_to_have_attribute("pattern", re.compile(".*"))
    code.fill("a" * 40 + "!")
    question.get_by_role("button", name="Submit answer").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("content.code: the pattern '^(a|aa)+$' takes too long to evaluate")
    expect(alert).to_contain_text("422")
    code.fill("aaaa")
    question.get_by_role("button", name="Submit answer").click()
    _, answer = asking.result()
    assert answer == {"action": "accept", "content": {"code": "aaaa"}}


def test_a_site_tool_call_waits_for_allow_once_in_the_page(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    browser = Browser(live.url, seeded.human_token)
    try:

        async def steps(act):
            task_id = await created_task(act, "Triage the flaky test", assignee="agent")
            return await act(
                "siteTools",
                "call",
                taskId=task_id,
                site=TRACKER,
                tool="create_issue",
                arguments={"title": "Flaky test", "labels": ["ci"]},
            )

        calling = agent(live.url, seeded.agent_token, steps)
        card = page.get_by_role("article", name=f"create_issue on {TRACKER}")
        expect(card).to_be_visible(timeout=WAIT_MS)
        expect(card).to_contain_text('"title": "Flaky test"')
        expect(card.get_by_role("button", name="Triage the flaky test")).to_be_visible(timeout=WAIT_MS)
        for name in ("Allow once", "Always allow", "Deny"):
            expect(card.get_by_role("button", name=name)).to_be_enabled()
        assert browser.ran == []  # nothing runs before the human decides
        card.get_by_role("button", name="Allow once").click()

        text, is_error = calling.result()
        assert not is_error, text
        outcome = json.loads(text)
        assert (outcome["site"], outcome["tool"]) == (TRACKER, "create_issue")
        assert outcome["result"] == {"opened": {"title": "Flaky test", "labels": ["ci"]}}
        assert [call["tool"] for call in browser.ran] == ["create_issue"]
        expect(card).to_have_count(0)
        expect(page.get_by_text("No site-tool call is waiting for you.")).to_be_visible()

        # The call and the decision are in the task's conversation.
        page.get_by_role("list", name="Tasks").get_by_role("button", name="Triage the flaky test").click()
        items = page.get_by_role("list", name="Conversation").locator(":scope > li")
        expect(items).to_have_count(2, timeout=WAIT_MS)
        expect(items.nth(0)).to_have_attribute("data-kind", "siteCall")
        expect(items.nth(0)).to_contain_text("Site-tool call")
        expect(items.nth(1)).to_contain_text("Decision")
    finally:
        browser.close()


def test_decline_reply_with_a_file_change_status_and_a_refusal_in_the_alert(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)

    asking = ask(
        live.url,
        seeded.agent_token,
        "Approve the deploy",
        message="May I deploy?",
        mode="url",
        url="https://example.com/approve",
    )
    question = page.get_by_role("article", name="May I deploy?")
    expect(question).to_be_visible(timeout=WAIT_MS)
    link = question.get_by_role("link", name="Open https://example.com/approve")
    expect(link).to_have_attribute("href", "https://example.com/approve")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(question.get_by_role("button", name="Accept (done)")).to_be_visible()
    question.get_by_role("button", name="Decline").click()
    task_id, answer = asking.result()
    assert answer == {"action": "decline"}
    expect(question).to_have_count(0)

    # Reply with a file; the agent sees it through MCP.
    page.get_by_role("list", name="Tasks").get_by_role("button", name="Approve the deploy").click()
    expect(page.get_by_role("heading", name="Approve the deploy", level=2)).to_be_visible()
    conversation = page.get_by_role("list", name="Conversation")
    expect(conversation.locator(":scope > li")).to_have_count(2, timeout=WAIT_MS)
    expect(conversation).to_contain_text("Answered: decline")
    page.get_by_label("Reply").fill("Here are the logs.")
    content = b"line 1\nline 2 <b>not html</b>\n"
    page.get_by_label("Attach files").set_input_files(
        files=[{"name": "deploy.log", "mimeType": "text/plain", "buffer": content}]
    )
    page.get_by_role("button", name="Send reply").click()
    expect(conversation.locator(":scope > li")).to_have_count(3, timeout=WAIT_MS)
    reply = conversation.locator(":scope > li").nth(2)
    expect(reply).to_contain_text("Here are the logs.")
    expect(page.get_by_label("Reply")).to_have_value("")

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

    # Change the status.
    page.get_by_label("Change status").select_option(label="Completed")
    page.get_by_role("button", name="Set status").click()
    expect(page.locator("#task-facts")).to_contain_text("Completed", timeout=WAIT_MS)
    with human(live, seeded) as http:
        assert http.get(f"/api/workspaces/{seeded.workspace_id}/tasks/{task_id}").json()["status"] == "completed"
    page.get_by_role("group", name="Filter tasks by status").get_by_role("button", name="Completed").click()
    expect(page.get_by_role("list", name="Tasks").get_by_role("button", name="Approve the deploy")).to_be_visible(
        timeout=WAIT_MS
    )
    page.get_by_role("group", name="Filter tasks by status").get_by_role("button", name="Ongoing").click()
    expect(page.get_by_role("list", name="Tasks").get_by_role("button")).to_have_count(0, timeout=WAIT_MS)

    # The API's refusal is shown, with its detail.
    page.get_by_label("Task title").fill("")
    page.get_by_label("Task body").fill("Something")
    page.get_by_role("button", name="Create task").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("title must not be empty")
    expect(alert).to_contain_text("422")
    # A valid one goes through and clears the alert.
    page.get_by_label("Task title").fill("Write the changelog")
    page.get_by_role("button", name="Create task").click()
    expect(alert).to_be_hidden()  # nothing to say: no alert shown
    with human(live, seeded) as http:
        tasks = http.get(f"/api/workspaces/{seeded.workspace_id}/tasks", params={"assignee": "agent"}).json()["tasks"]
    assert [(t["title"], t["body"], t["createdBy"]) for t in tasks] == [("Write the changelog", "Something", "human")]


def test_narrow_screen_and_keyboard_only_sign_in(live, seeded, console):
    page = console
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(f"{live.url}/")
    expect(page.get_by_label("Human token")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 360

    # Keyboard only: Tab to the token field, type, Enter.
    page.evaluate("document.activeElement && document.activeElement.blur()")
    for _ in range(5):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "token-input":
            break
    expect(page.get_by_label("Human token")).to_be_focused()
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"  # visible focus
    page.keyboard.type(seeded.human_token)
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    expect(page.get_by_role("heading", name="Questions")).to_be_visible()
    expect(page.get_by_role("heading", name="Tasks", exact=True)).to_be_visible()

    # Signed in, still one column and no horizontal scroll.
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    box = page.get_by_role("button", name="Create task").bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= 360
    sides = page.evaluate("[...document.querySelectorAll('.side, .content')].map(e => e.getBoundingClientRect().left)")
    assert sides[0] == sides[1]  # stacked, not side by side


def test_the_token_stays_in_session_storage_and_sign_out_clears_it(live, seeded, console):
    page = console
    page.clock.install()  # the page's timers move only when the test says: polling is observable
    page.goto(f"{live.url}/")

    page.get_by_label("Human token").fill("aw_human_not_a_real_token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("unknown or revoked token")
    expect(page.get_by_role("alert")).to_contain_text("401")
    page.get_by_label("Human token").fill(seeded.agent_token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("needs a human token")
    assert page.evaluate("sessionStorage.length") == 0

    page.get_by_label("Human token").fill(seeded.human_token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    expect(page.get_by_role("alert")).to_be_hidden()
    stored = page.evaluate("JSON.stringify(Object.assign({}, sessionStorage))")
    assert seeded.human_token in stored
    assert seeded.human_token not in page.evaluate("JSON.stringify(Object.assign({}, localStorage))")
    assert page.context.cookies() == []

    page.reload()  # the tab keeps it
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()

    # Polling goes on by itself, one round after another, every ~3 s of the page's clock...
    rounds = page.locator("body")
    expect(rounds).to_have_attribute("data-rounds", re.compile(r"^[1-9]"))
    done = int(rounds.get_attribute("data-rounds"))
    page.clock.run_for(3_100)
    expect(rounds).to_have_attribute("data-rounds", str(done + 1))

    # ...and stops with signing out, which forgets the token.
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Human token")).to_be_visible()
    expect(page.get_by_label("Human token")).to_be_focused()
    expect(page.get_by_role("button", name="Sign out")).to_be_hidden()
    assert seeded.human_token not in page.evaluate("JSON.stringify(Object.assign({}, sessionStorage))")
    assert seeded.human_token not in page.evaluate("JSON.stringify(Object.assign({}, localStorage))")
    api_calls: list[str] = []
    page.on("request", lambda request: api_calls.append(request.url) if "/api/" in request.url else None)
    done = rounds.get_attribute("data-rounds")
    page.clock.run_for(30_000)
    assert rounds.get_attribute("data-rounds") == done and api_calls == []
    page.reload()
    expect(page.get_by_label("Human token")).to_be_visible()
    expect(page.get_by_role("button", name="Sign out")).to_be_hidden()
