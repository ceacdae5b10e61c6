"""The console's Inbox end to end: Debian's Chromium driven by Playwright, the agent on the real MCP client.

Everything that waits on the human (tool approvals, questions, blockers, site-tool calls, proposals to triage,
deliveries to review) is one list in `#/inbox`, each item decided in place with the one answer component. The
agent's side goes through MCP (its blocking calls in a thread: console_page.agent), REST as the human sets up
what a test only needs to exist (a workspace, the board's policy) and checks what the page did.
"""

import json
import re

from playwright.sync_api import Locator, Page, expect

from tests.e2e.console_page import (
    SHIP_SCHEMA,
    TRACKER,
    WAIT_MS,
    Browser,
    agent,
    agent_calls,
    ask,
    board_api,
    created_task,
    human,
    sign_in,
)


def set_policy(live, seeded, **policy: bool) -> None:
    with board_api(live, seeded) as http:
        response = http.put("policy", json={"supervised": False, "signOff": False, **policy})
        assert response.status_code == 200, response.text


def board_task(live, seeded, task_id: str) -> dict:
    with board_api(live, seeded) as http:
        response = http.get(f"tasks/{task_id}")
        assert response.status_code == 200, response.text
        return response.json()


def blocked_task(live, seeded, title: str, questions: list[str]) -> dict:
    """A task the agent created, claimed and is blocked on, asking the human `questions`: the task as created."""
    [task] = agent_calls(live, seeded.agent_token, ("create_task", {"title": title}))
    agent_calls(
        live,
        seeded.agent_token,
        ("claim_task", {"taskId": task["id"]}),
        ("report_blocker", {"taskId": task["id"], "questions": questions}),
    )
    return task


def open_inbox(page: Page, live, seeded) -> Locator:
    """Signed in, on the inbox: its list."""
    sign_in(page, live, seeded.human_token)
    page.get_by_role("link", name=re.compile("^Inbox")).first.click()
    expect(page).to_have_url(re.compile(r"#/inbox$"))
    return inbox_list(page)


def inbox_list(page: Page) -> Locator:
    return page.get_by_role("list", name="Waiting on you")


def item(page: Page, name: str) -> Locator:
    """An item of the inbox, by its heading (a question's message, a call's tool and site, a task's title)."""
    return inbox_list(page).get_by_role("article", name=name, exact=True)


# -- questions --------------------------------------------------------------------------------------


def test_a_new_workspace_s_agent_asks_and_the_human_answers_in_the_inbox(live, seeded, console):
    page = console
    with human(live, seeded) as http:
        made = http.post("/api/workspaces", json={"title": "Release train", "mission": "Ship every week."})
        assert made.status_code == 201, made.text
    workspace_id, agent_token = made.json()["id"], made.json()["agentToken"]
    open_inbox(page, live, seeded)
    page.get_by_role("combobox", name="Workspace", exact=True).select_option(workspace_id)
    expect(page.get_by_text("Nothing needs you.")).to_be_visible(timeout=WAIT_MS)

    asking = ask(live.url, agent_token, "Ship the release", message="How should we ship?", requestedSchema=SHIP_SCHEMA)
    question = item(page, "How should we ship?")
    expect(question).to_be_visible(timeout=WAIT_MS)  # no reload: the page polls
    task_link = question.get_by_role("link", name=re.compile("Ship the release$"))
    expect(task_link).to_have_attribute("href", re.compile(r"^#/task/"), timeout=WAIT_MS)
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
    expect(page.get_by_role("status").filter(has_text="Answer sent")).to_contain_text("How should we ship?")
    expect(page.get_by_text("Nothing needs you.")).to_be_visible()
    with human(live, seeded) as http:
        task = http.get(f"/api/workspaces/{workspace_id}/tasks/{task_id}").json()
    assert (task["title"], task["assignee"], task["createdBy"]) == ("Ship the release", "human", "agent")
    kinds = [(m["kind"], m["from"]) for m in task["conversation"]["messages"]]
    assert kinds == [("question", "agent"), ("answer", "human")]


def test_a_question_s_pattern_is_checked_by_the_server_not_by_the_page(live, seeded, console):
    """The agent's pattern never reaches the page's regex engine, which has no time limit (a catastrophic pattern
    would freeze the tab at each keystroke): the server checks it in its bounded engine, and the card's alert names
    the field."""
    page = console
    open_inbox(page, live, seeded)
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "title": "Code", "pattern": "^(a|aa)+$"}},
        "required": ["code"],
    }
    asking = ask(live.url, seeded.agent_token, "Enter the code", message="Which code?", requestedSchema=schema)
    question = item(page, "Which code?")
    expect(question).to_be_visible(timeout=WAIT_MS)
    code = question.get_by_role("textbox", name="Code")
    expect(code).not_to_have_attribute("pattern", re.compile(".*"))
    code.fill("a" * 40 + "!")
    question.get_by_role("button", name="Submit answer").click()
    alert = question.get_by_role("alert")  # inside the card, where the human is looking
    expect(alert).to_contain_text("content.code: the pattern '^(a|aa)+$' takes too long to evaluate")
    expect(alert).to_contain_text("422")
    expect(code).to_be_focused()  # the field the server named
    expect(code).to_have_value("a" * 40 + "!")  # the refreshes since left the answer being fixed alone
    code.fill("aaaa")
    question.get_by_role("button", name="Submit answer").click()
    _, answer = asking.result()
    assert answer == {"action": "accept", "content": {"code": "aaaa"}}
    expect(question).to_have_count(0)


def test_a_question_whose_fields_are_named_like_the_form_s_methods_is_answered(live, seeded, console):
    """The agent names the schema's properties: one called like a method of the page's <form> (`addEventListener`,
    `reportValidity`) must not shadow it, which froze the whole inbox (its list, the count, the tab title)."""
    page = console
    open_inbox(page, live, seeded)
    schema = {
        "type": "object",
        "properties": {
            "addEventListener": {"type": "string", "title": "Listener"},
            "reportValidity": {"type": "string", "title": "Validity"},
        },
        "required": ["addEventListener"],
    }
    asking = ask(live.url, seeded.agent_token, "Name the hooks", message="Which hooks?", requestedSchema=schema)
    question = item(page, "Which hooks?")
    expect(question).to_be_visible(timeout=WAIT_MS)
    expect(page).to_have_title("(1) Agent Workspace")
    expect(page.locator("#inbox-count")).to_have_text("1")
    submit = question.get_by_role("button", name="Submit answer")
    submit.click()  # the browser's own check still runs: the required field is said, nothing is sent
    expect(question.get_by_role("textbox", name="Listener")).to_be_focused()
    question.get_by_role("textbox", name="Listener").fill("on-click")
    question.get_by_role("textbox", name="Validity").fill("strict")
    submit.click()

    _, answer = asking.result()
    assert answer == {"action": "accept", "content": {"addEventListener": "on-click", "reportValidity": "strict"}}
    expect(question).to_have_count(0)
    expect(page).to_have_title("Agent Workspace")
    expect(page.locator("#inbox-count")).to_have_text("")


def test_a_single_choice_is_one_click_and_the_keyboard_gets_there(live, seeded, console):
    page = console
    open_inbox(page, live, seeded)
    schema = {
        "type": "object",
        "properties": {"channel": {"type": "string", "title": "Channel", "enum": ["stable", "beta"]}},
        "required": ["channel"],
    }
    asking = ask(live.url, seeded.agent_token, "Pick the channel", message="Which channel?", requestedSchema=schema)
    question = item(page, "Which channel?")
    expect(question).to_be_visible(timeout=WAIT_MS)
    choices = question.get_by_role("group", name="Channel")
    expect(choices.get_by_role("button")).to_have_text(["stable", "beta"])
    expect(question.get_by_role("button", name="Submit answer")).to_have_count(0)  # nothing to fill in

    # j moves to the item, a to its first button; Enter answers with that choice.
    page.locator("body").press("j")
    expect(question).to_be_focused()
    page.keyboard.press("a")
    expect(choices.get_by_role("button", name="stable")).to_be_focused()
    page.keyboard.press("Tab")
    expect(choices.get_by_role("button", name="beta")).to_be_focused()
    page.keyboard.press("Enter")
    _, answer = asking.result()
    assert answer == {"action": "accept", "content": {"channel": "beta"}}
    expect(question).to_have_count(0)
    expect(page.get_by_role("heading", name="Inbox", level=1)).to_be_focused()  # focus is not lost with the item


def test_the_inbox_count_and_the_tab_title_drop_when_one_is_answered(live, seeded, console):
    page = console
    open_inbox(page, live, seeded)
    expect(page).to_have_title("Agent Workspace")
    expect(page.locator("#inbox-count")).to_have_text("")
    first = ask(live.url, seeded.agent_token, "Rotate the keys", message="Rotate now?", requestedSchema=SHIP_SCHEMA)
    second = ask(live.url, seeded.agent_token, "Sign the build", message="Open the signer", url="https://example.com/s")

    expect(page).to_have_title("(2) Agent Workspace", timeout=WAIT_MS)
    expect(page.locator("#inbox-count")).to_have_text("2")
    expect(page.get_by_role("link", name="Inbox, 2 waiting on you")).to_be_visible()
    expect(page.get_by_role("group", name="Show").get_by_role("button", name="Questions 2")).to_be_visible()
    link_question = item(page, "Open the signer")
    expect(link_question.get_by_role("link", name="Open https://example.com/s")).to_have_attribute(
        "rel", "noopener noreferrer"
    )
    link_question.get_by_role("button", name="Done").click()
    _, answer = second.result()
    assert answer == {"action": "accept"}
    expect(page).to_have_title("(1) Agent Workspace")  # at once, not at the next poll
    expect(page.locator("#inbox-count")).to_have_text("1")

    item(page, "Rotate now?").get_by_role("button", name="Decline").click()
    _, answer = first.result()
    assert answer == {"action": "decline"}
    expect(page).to_have_title("Agent Workspace")
    expect(page.locator("#inbox-count")).to_have_text("")
    expect(page.get_by_role("link", name="Inbox, nothing waiting")).to_be_visible()


# -- site-tool calls ----------------------------------------------------------------------------------


def test_a_site_tool_call_waits_for_allow_once_in_the_inbox(live, seeded, console):
    page = console
    open_inbox(page, live, seeded)
    browser = Browser(live.url, seeded.human_token)
    try:

        async def steps(act):
            task_id = await created_task(act, "Triage the flaky test", assignee="agent")
            text, is_error = await act(
                "siteTools",
                "call",
                taskId=task_id,
                site=TRACKER,
                tool="create_issue",
                arguments={"title": "Flaky test", "labels": ["ci"]},
            )
            return task_id, text, is_error

        calling = agent(live.url, seeded.agent_token, steps)
        card = item(page, f"create_issue on {TRACKER}")
        expect(card).to_be_visible(timeout=WAIT_MS)
        expect(card.locator("pre")).to_contain_text('"title": "Flaky test"')
        expect(card.get_by_role("link", name=re.compile("Triage the flaky test$"))).to_be_visible(timeout=WAIT_MS)
        for name in ("Allow once", "Always allow", "Deny"):
            expect(card.get_by_role("button", name=name)).to_be_enabled()
        assert browser.ran == []  # nothing runs before the human decides
        card.get_by_role("button", name="Allow once").click()

        task_id, text, is_error = calling.result()
        assert not is_error, text
        outcome = json.loads(text)
        assert (outcome["site"], outcome["tool"]) == (TRACKER, "create_issue")
        assert outcome["result"] == {"opened": {"title": "Flaky test", "labels": ["ci"]}}
        assert [call["tool"] for call in browser.ran] == ["create_issue"]
        expect(card).to_have_count(0)
        expect(page.get_by_text("Nothing needs you.")).to_be_visible()

        # The call and the decision are in the task's conversation.
        with human(live, seeded) as http:
            task = http.get(f"/api/workspaces/{seeded.workspace_id}/tasks/{task_id}").json()
        assert [m["kind"] for m in task["conversation"]["messages"]] == ["siteCall", "siteCallDecision"]
    finally:
        browser.close()


# -- the board's asks: triage, review, blockers ---------------------------------------------------------


def test_supervised_proposals_wait_in_triage_and_the_human_accepts_or_declines(live, seeded, console):
    page = console
    set_policy(live, seeded, supervised=True)
    open_inbox(page, live, seeded)
    kept, dropped = agent_calls(
        live,
        seeded.agent_token,
        ("create_task", {"title": "Nightly backups", "criteria": ["a backup a night"], "priority": "high"}),
        ("create_task", {"title": "Rewrite it in Rust", "description": "All of it, **now**."}),
    )
    assert (kept["column"], dropped["column"]) == ("triage", "triage")

    chips = page.get_by_role("group", name="Show")
    expect(chips.get_by_role("button", name="Triage 2")).to_be_visible(timeout=WAIT_MS)
    proposal = item(page, "Nightly backups")
    expect(proposal).to_contain_text(kept["identifier"])
    expect(proposal).to_contain_text("High")
    expect(proposal).to_contain_text("proposed by the agent")
    expect(proposal.get_by_role("list", name="Acceptance criteria")).to_have_text("a backup a night")
    expect(item(page, "Rewrite it in Rust").locator("strong")).to_have_text("now")  # markdown, rendered safely

    proposal.get_by_role("button", name="Accept to backlog").click()
    expect(page.get_by_role("status")).to_contain_text("accepted into the backlog")
    expect(proposal).to_have_count(0)
    assert board_task(live, seeded, kept["id"])["column"] == "backlog"

    # Declined with a comment, which lands on the task's activity feed.
    other = item(page, "Rewrite it in Rust")
    other.get_by_label("Decision comment").fill("Not this year.")
    other.get_by_role("button", name="Decline", exact=True).click()
    expect(other).to_have_count(0)
    expect(page.get_by_text("Nothing needs you.")).to_be_visible()
    shown = board_task(live, seeded, dropped["id"])
    assert shown["column"] == "rejected"
    assert "Not this year." in json.dumps(shown["activity"])


def test_a_delivery_under_sign_off_is_sent_back_with_a_comment_or_approved(live, seeded, console):
    page = console
    set_policy(live, seeded, signOff=True)
    open_inbox(page, live, seeded)
    one, two = agent_calls(
        live,
        seeded.agent_token,
        ("create_task", {"title": "Add the refund endpoint", "criteria": ["refunds are tested"]}),
        ("create_task", {"title": "Add metrics"}),
    )
    agent_calls(
        live,
        seeded.agent_token,
        ("claim_task", {"taskId": one["id"]}),
        ("complete_task", {"taskId": one["id"], "summary": "POST /refunds is live."}),
        ("claim_task", {"taskId": two["id"]}),
        ("complete_task", {"taskId": two["id"], "summary": "Counters exported."}),
    )
    delivery = item(page, "Add the refund endpoint")
    expect(delivery).to_contain_text("POST /refunds is live.", timeout=WAIT_MS)
    expect(delivery.get_by_role("list", name="Criteria verdicts")).to_contain_text("refunds are tested")

    # Send back needs a comment: without one the card says so and the task stays in review.
    delivery.get_by_role("button", name="Send back").click()
    expect(delivery.get_by_role("alert")).to_contain_text("decision comment")
    expect(delivery.get_by_label("Decision comment")).to_be_focused()
    assert board_task(live, seeded, one["id"])["column"] == "in_review"
    page.keyboard.type("Tests are missing.")
    delivery.get_by_role("button", name="Send back").click()
    expect(delivery).to_have_count(0)
    expect(page.get_by_role("status")).to_contain_text("sent back")
    shown = board_task(live, seeded, one["id"])
    assert shown["column"] == "ready"
    assert "Tests are missing." in json.dumps(shown["activity"])

    item(page, "Add metrics").get_by_role("button", name="Approve").click()
    expect(item(page, "Add metrics")).to_have_count(0)
    expect(page.get_by_text("Nothing needs you.")).to_be_visible()
    assert board_task(live, seeded, two["id"])["column"] == "done"


def test_a_blocker_s_questions_come_after_what_holds_an_agent_now_and_open_the_task(live, seeded, console):
    page = console
    task = blocked_task(live, seeded, "Provision the cluster", ["Which region?", "How many <b>nodes</b>?"])
    set_policy(live, seeded, supervised=True)
    [proposed] = agent_calls(live, seeded.agent_token, ("create_task", {"title": "Nightly backups"}))
    open_inbox(page, live, seeded)
    asking = ask(live.url, seeded.agent_token, "Pick the channel", message="Which channel?", url="https://example.com")

    # Most urgent first: a question holds an agent now, then the blocker, then the proposal.
    titles = inbox_list(page).locator(":scope > li:visible .answer-title")
    expect(titles).to_have_text(["Which channel?", "Provision the cluster", "Nightly backups"], timeout=WAIT_MS)
    blocker = item(page, "Provision the cluster")
    asks = blocker.get_by_role("list", name=f"Asked in {task['identifier']}")
    expect(asks.get_by_role("listitem")).to_have_text(["Which region?", "How many <b>nodes</b>?"])  # text stays text
    expect(blocker.get_by_label("How many <b>nodes</b>?")).to_be_editable()
    expect(blocker).to_contain_text("2 questions for you")

    # A filter narrows the list without losing what is typed in the hidden items.
    blocker.get_by_label("Which region?").fill("eu-west-1")
    page.get_by_role("group", name="Show").get_by_role("button", name="Triage 1").click()
    expect(titles).to_have_text(["Nightly backups"])
    page.get_by_role("group", name="Show").get_by_role("button", name=re.compile("^All")).click()
    expect(blocker.get_by_label("Which region?")).to_have_value("eu-west-1")

    # The blocker's title opens the task.
    blocker.get_by_role("link", name="Provision the cluster").click()
    expect(page).to_have_url(re.compile(rf"#/task/{task['identifier']}$"))
    expect(page.locator("#drawer")).to_be_visible()
    assert board_task(live, seeded, proposed["id"])["column"] == "triage"
    item(page, "Which channel?").get_by_role("button", name="Cancel").click()
    assert asking.result()[1] == {"action": "cancel"}


def test_send_answers_and_unblock_gives_the_agent_its_answers_and_the_task_back(live, seeded, console):
    page = console
    task = blocked_task(live, seeded, "Provision the cluster", ["Which region?", "How many nodes?"])
    open_inbox(page, live, seeded)
    blocker = item(page, "Provision the cluster")
    expect(blocker).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_role("group", name="Show").get_by_role("button", name="Blockers 1")).to_be_visible()

    # Nothing answered and nothing said: the card asks for something, and nothing is sent.
    blocker.get_by_role("button", name="Send answers & unblock").click()
    expect(blocker.get_by_role("alert")).to_contain_text("answer at least one question")
    expect(blocker.get_by_label("Which region?")).to_be_focused()
    assert board_task(live, seeded, task["id"])["column"] == "blocked"

    # One answered, one left empty (the agent reads "(no answer)"), and a comment.
    page.keyboard.type("eu-west-1")
    blocker.get_by_label("Anything else (optional)").fill("Keep it small.")
    blocker.get_by_role("button", name="Send answers & unblock").click()
    expect(blocker).to_have_count(0)
    expect(page.get_by_role("status")).to_contain_text("unblocked")
    expect(page).to_have_title("Agent Workspace")
    expect(page.get_by_text("Nothing needs you.")).to_be_visible()
    assert board_task(live, seeded, task["id"])["column"] == "in_progress"

    # The agent reads the questions with their answers on its task, and is on it again.
    [shown] = agent_calls(live, seeded.agent_token, ("get_task", {"taskId": task["id"]}))
    assert shown["column"] == "in_progress"
    said = "\n".join(c["text"] for c in shown["comments"])
    for text in ("Which region?", "eu-west-1", "How many nodes?", "(no answer)", "Keep it small."):
        assert text in said, said
    assert said.index("Which region?") < said.index("eu-west-1") < said.index("How many nodes?"), said
