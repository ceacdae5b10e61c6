"""The Board view (views/board.js) in Debian's Chromium: the columns on a wide screen and on a phone, what a card
says, filters that apply at once, cards left alone by refreshes, the New task dialog, the keys, no workspace.

Tasks are set up over REST as the human and over MCP as the seeded workspace's agent (the helpers of
test_console_board); the page is driven as the human drives it.
"""

import re

from playwright.sync_api import Locator, Page, expect

from agent_workspace.services import accounts
from tests.e2e.console_page import WAIT_MS, agent_calls, board_api, human, sign_in
from tests.e2e.test_console_board import card, column

QUICK_MS = 2_000  # less than one 3-s poll: what a change the human makes must take at most


def card_item(page: Page, name: str, title: str) -> Locator:
    """The card (its <li>) holding the task's button."""
    return column(page, name).locator("li.board-card", has=page.get_by_role("button", name=title, exact=True))


def rounds(page: Page) -> int:
    return int(page.evaluate("Number(document.body.dataset.rounds || 0)"))


def wait_rounds(page: Page, more: int) -> None:
    """Wait until `more` refresh rounds have finished after now."""
    target = rounds(page) + more
    page.wait_for_function("n => Number(document.body.dataset.rounds || 0) >= n", arg=target, timeout=WAIT_MS + 5_000)


def test_five_columns_fit_a_wide_screen_and_quiet_ones_fold_to_a_remembered_rail(live, seeded, console):
    page = console
    page.set_viewport_size({"width": 1440, "height": 900})
    [shipped] = agent_calls(live, seeded.agent_token, ("create_task", {"title": "Ship the release"}))
    agent_calls(
        live,
        seeded.agent_token,
        ("claim_task", {"taskId": shipped["id"]}),
        ("complete_task", {"taskId": shipped["id"], "summary": "Shipped."}),
    )
    sign_in(page, live, seeded.human_token)
    expect(page.locator("#col-count-done")).to_have_text("1", timeout=WAIT_MS)

    # Five or more full columns' headers inside the first screen, no scrolling.
    inside = page.locator("#board-columns .col-head").evaluate_all(
        """heads => heads.filter(h => { const r = h.getBoundingClientRect();
             return r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight && r.width >= 150; })
           .map(h => h.parentElement.dataset.column)"""
    )
    assert len(inside) >= 5, inside
    assert page.evaluate("document.scrollingElement.scrollTop") == 0

    # Done and Rejected are rails: narrow, with their name and count, their cards folded away.
    for name, label, count in (("done", "Done", "1"), ("rejected", "Rejected", "0")):
        rail = column(page, name)
        expect(rail).to_have_class(re.compile(r"\bcollapsed\b"))
        expect(rail.get_by_role("heading", name=f"{label} {count}")).to_be_attached()
        expect(rail.get_by_role("button", name=f"Expand {label}")).to_have_attribute("aria-expanded", "false")
        box = rail.bounding_box()
        assert box is not None and box["width"] < 60, box
    expect(card(page, "done", "Ship the release")).to_be_hidden()

    # The human folds Ready and opens Done; a reload keeps both choices.
    column(page, "ready").get_by_role("button", name="Collapse Ready").click()
    expect(column(page, "ready")).to_have_class(re.compile(r"\bcollapsed\b"))
    expect(column(page, "ready").get_by_role("button", name="Expand Ready")).to_be_focused()
    column(page, "done").get_by_role("button", name="Expand Done").click()
    expect(card(page, "done", "Ship the release")).to_be_visible()
    page.reload()
    expect(card(page, "done", "Ship the release")).to_be_visible(timeout=WAIT_MS)
    expect(column(page, "ready")).to_have_class(re.compile(r"\bcollapsed\b"))
    expect(column(page, "done")).not_to_have_class(re.compile(r"\bcollapsed\b"))
    expect(column(page, "rejected")).to_have_class(re.compile(r"\bcollapsed\b"))


def test_a_phone_shows_one_column_at_a_time_picked_or_swiped(live, seeded, console):
    page = console
    page.set_viewport_size({"width": 390, "height": 844})
    with board_api(live, seeded) as http:
        for title, where in (("Plan the offsite", "backlog"), ("Book the venue", "ready"), ("Order badges", "ready")):
            assert http.post("tasks", json={"title": title, "column": where}).status_code == 201
    sign_in(page, live, seeded.human_token)
    picker = page.get_by_role("group", name="Show column")
    expect(picker).to_be_visible()
    ready = picker.get_by_role("button", name=re.compile(r"^Ready"))
    expect(ready).to_have_text(re.compile(r"Ready\s*2"), timeout=WAIT_MS)

    # The first column with cards is the one shown (Triage is empty), and only it.
    expect(column(page, "backlog")).to_be_in_viewport(ratio=0.9, timeout=WAIT_MS)
    expect(picker.get_by_role("button", name=re.compile(r"^Backlog"))).to_have_attribute("aria-pressed", "true")
    for other in ("triage", "ready", "in_progress"):
        expect(column(page, other)).not_to_be_in_viewport()

    ready.click()
    expect(column(page, "ready")).to_be_in_viewport(ratio=0.9)
    expect(column(page, "backlog")).not_to_be_in_viewport()
    expect(ready).to_have_attribute("aria-pressed", "true")
    expect(card(page, "ready", "Order badges")).to_be_visible()
    expect(column(page, "ready").get_by_role("button", name="Collapse Ready")).to_be_hidden()  # no rails here

    # A swipe (the columns scroll sideways, snapping) moves the picker along.
    page.locator("#board-columns").evaluate("e => e.scrollBy({left: e.clientWidth, behavior: 'instant'})")
    expect(picker.get_by_role("button", name=re.compile(r"^In progress"))).to_have_attribute("aria-pressed", "true")
    expect(column(page, "in_progress")).to_be_in_viewport(ratio=0.9)

    # A folded column on the wide screen is a full column here.
    picker.get_by_role("button", name=re.compile(r"^Done")).click()
    expect(column(page, "done")).to_be_in_viewport(ratio=0.9)
    expect(column(page, "done").get_by_text("Nothing here.")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_a_card_says_who_it_is_for_its_age_comments_criteria_and_what_asks_or_blocks_it(live, seeded, console):
    page = console
    with board_api(live, seeded) as http:
        assert http.put("policy", json={"signOff": True}).status_code == 200
        mine = http.post("tasks", json={"title": "Renew the certificate", "assignee": "human", "column": "backlog"})
        assert mine.status_code == 201, mine.text
        mine = mine.json()
    delivered, blocker, waiting = agent_calls(
        live,
        seeded.agent_token,
        ("create_task", {"title": "Add the refund endpoint", "criteria": ["POST /refunds", "tests", "docs"]}),
        ("create_task", {"title": "Provision the cluster"}),
        ("create_task", {"title": "Deploy the app"}),
    )
    agent_calls(
        live,
        seeded.agent_token,
        ("claim_task", {"taskId": delivered["id"]}),
        (
            "complete_task",
            {
                "taskId": delivered["id"],
                "summary": "Refunds ship.",
                "criteria": [{"index": 0, "met": True}, {"index": 1, "met": True}, {"index": 2, "met": False}],
            },
        ),
        ("claim_task", {"taskId": blocker["id"]}),
        ("report_blocker", {"taskId": blocker["id"], "questions": ["Which region?", "How many nodes?"]}),
    )
    with board_api(live, seeded) as http:
        linked = http.post(f"tasks/{blocker['id']}/links", json={"type": "blocks", "otherTaskId": waiting["id"]})
        assert linked.status_code == 201, linked.text
        for text in ("Looks good.", "One more thing."):
            assert http.post(f"tasks/{delivered['id']}/comments", json={"text": text}).status_code == 201
        [listed] = http.get("tasks", params={"status": "in_review"}).json()["tasks"]
    assert listed["commentCount"] == 2
    sign_in(page, live, seeded.human_token)

    # Who: the human's own task, a claimed one names its agent; age: relative, exact on hover.
    own = card_item(page, "backlog", "Renew the certificate")
    expect(own).to_contain_text("You", timeout=WAIT_MS)
    expect(own.locator("time")).to_have_attribute("datetime", mine["createdAt"])
    expect(own.locator("time")).to_have_attribute("title", re.compile(r"\d"))
    expect(own.locator("time")).to_have_text(re.compile(r"now|ago"))
    expect(own.locator(".asks-you")).to_be_hidden()

    # Criteria progress, the comments, and the review that waits on the human.
    review = card_item(page, "in_review", "Add the refund endpoint")
    expect(review).to_contain_text("2/3 criteria", timeout=WAIT_MS)
    expect(review).to_contain_text("2 comments", timeout=WAIT_MS)
    expect(card_item(page, "ready", "Deploy the app")).not_to_contain_text("comment")  # none: nothing said
    expect(review.locator(".asks-you")).to_have_text("Asks you", timeout=WAIT_MS)

    # A blocked task asks the human; the task it blocks says what it waits on, by identifier.
    blocked = card_item(page, "blocked", "Provision the cluster")
    expect(blocked.locator(".asks-you")).to_be_visible(timeout=WAIT_MS)
    expect(blocked.locator(".asks-you")).to_have_attribute("title", re.compile("2 questions"))
    expect(blocked).to_contain_text(re.compile(r"Agent ·\w{4}"))
    expect(card_item(page, "ready", "Deploy the app")).to_contain_text(
        f"Waiting on {blocker['identifier']}", timeout=WAIT_MS
    )
    expect(card(page, "blocked", "Provision the cluster")).to_have_accessible_description(re.compile("Asks you"))

    # Once nothing asks any more (the human takes the task back), the marker goes.
    with board_api(live, seeded) as http:
        assert http.post(f"tasks/{blocker['id']}/release").status_code == 200
    expect(card(page, "ready", "Provision the cluster")).to_be_visible(timeout=WAIT_MS)
    expect(card(page, "blocked", "Provision the cluster")).to_have_count(0)
    expect(card_item(page, "ready", "Provision the cluster").locator(".asks-you")).to_be_hidden()


def test_a_filter_change_shows_the_narrowed_board_before_the_next_poll(live, seeded, console):
    page = console
    with board_api(live, seeded) as http:
        for title, label in (("Rotate the keys", "ops"), ("Write the docs", "docs")):
            assert http.post("tasks", json={"title": title, "labels": [label]}).status_code == 201
    sign_in(page, live, seeded.human_token)
    ready = column(page, "ready").get_by_role("list")
    expect(ready.get_by_role("button")).to_have_count(2, timeout=WAIT_MS)
    label = page.get_by_label("With label")
    expect(label.locator("option", has_text="ops")).to_have_count(1, timeout=WAIT_MS)
    wait_rounds(page, 1)  # settled: the first rounds are done

    label.select_option("ops")
    expect(ready.get_by_role("button")).to_have_text(["Rotate the keys"], timeout=QUICK_MS)
    label.select_option("")
    expect(ready.get_by_role("button")).to_have_count(2, timeout=QUICK_MS)
    page.get_by_label("Search the board").fill("docs")  # typing: applied after a short pause
    expect(ready.get_by_role("button")).to_have_text(["Write the docs"], timeout=QUICK_MS)
    expect(page.locator("#board-note")).to_have_text("Filtered: 1 task matches.")


def test_refreshes_leave_unchanged_cards_alone_so_selection_and_focus_survive(live, seeded, console):
    page = console
    with board_api(live, seeded) as http:
        assert http.post("tasks", json={"title": "Keep me as I am", "labels": ["ops"]}).status_code == 201
    sign_in(page, live, seeded.human_token)
    kept = card(page, "ready", "Keep me as I am")
    expect(kept).to_be_visible(timeout=WAIT_MS)
    kept.evaluate("b => { b.closest('li').keptMark = 'same node'; b.keptMark = 'same node'; }")
    page.locator("#board-columns .tag", has_text="ops").evaluate(
        "t => { const r = document.createRange(); r.selectNodeContents(t);"
        " getSelection().removeAllRanges(); getSelection().addRange(r); }"
    )

    # Another task arrives (so the columns were read again), then two more rounds pass.
    with board_api(live, seeded) as http:
        assert http.post("tasks", json={"title": "A newcomer", "column": "backlog"}).status_code == 201
    expect(card(page, "backlog", "A newcomer")).to_be_visible(timeout=WAIT_MS)
    wait_rounds(page, 2)
    assert kept.evaluate("b => [b.keptMark, b.closest('li').keptMark]") == ["same node", "same node"]
    assert page.evaluate("getSelection().toString()") == "ops"

    # Focus on a card survives rounds too, and a full read that finds nothing new changes no node or attribute.
    page.locator("#board-columns").evaluate(
        "e => { window.boardChanges = []; new MutationObserver(records => window.boardChanges.push("
        "...records.map(r => r.type + ' ' + (r.attributeName || '') + ' ' + r.target.nodeName)))"
        ".observe(e, {subtree: true, childList: true, attributes: true}); }"
    )
    page.get_by_label("With label").select_option("ops")  # a filter kicks a full read at once...
    expect(card(page, "backlog", "A newcomer")).to_have_count(0, timeout=WAIT_MS)
    page.get_by_label("With label").select_option("")  # ...and so does clearing it
    expect(card(page, "backlog", "A newcomer")).to_be_visible(timeout=WAIT_MS)
    kept.focus()
    page.evaluate("window.boardChanges = []")
    wait_rounds(page, 4)  # at least one full read among them (every third round)
    assert page.evaluate("window.boardChanges") == []
    expect(kept).to_be_focused()
    assert kept.evaluate("b => [b.keptMark, b.closest('li').keptMark]") == ["same node", "same node"]


def test_one_new_task_dialog_makes_board_tasks_with_files(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    expect(page.locator("#col-count-ready")).to_have_text("0", timeout=WAIT_MS)
    dialog = page.get_by_role("dialog", name="New task")

    # "c" opens it, Esc closes it and keeps the draft; a title is required.
    page.keyboard.press("c")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_label("Title")).to_be_focused()
    dialog.get_by_label("Title").fill("Write the runbook")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    page.get_by_role("button", name="New task").click()
    expect(dialog.get_by_label("Title")).to_have_value("Write the runbook")
    dialog.get_by_label("Title").fill("  ")
    dialog.get_by_role("button", name="Create task").click()
    expect(dialog.get_by_role("alert")).to_contain_text("give the task a title")

    # Everything the board knows, for the human, in the backlog, with a file: made where it belongs.
    dialog.get_by_label("Title").fill("Write the runbook")
    dialog.get_by_label("Description").fill("What to do **when** it breaks.")
    dialog.get_by_label("Column").select_option("backlog")
    dialog.get_by_label("Priority").select_option("high")
    dialog.get_by_label("For").select_option("human")
    dialog.get_by_label("Labels (comma-separated)").fill("ops, docs")
    dialog.get_by_label("Acceptance criteria (one a line)").fill("covers paging\n\ncovers restore")
    dialog.get_by_label("Files").set_input_files(
        [{"name": "notes.txt", "mimeType": "text/plain", "buffer": b"restart it"}]
    )
    dialog.get_by_role("button", name="Create task").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_role("status")).to_contain_text("Write the runbook added to Backlog")
    made = card_item(page, "backlog", "Write the runbook")
    expect(made).to_contain_text("You", timeout=WAIT_MS)
    expect(made).to_contain_text("High")
    expect(made).to_contain_text("0/2 criteria")
    expect(card(page, "backlog", "Write the runbook")).to_be_focused()
    with board_api(live, seeded) as http:
        [task] = http.get("tasks", params={"status": "backlog"}).json()["tasks"]
    assert (task["assignee"], task["priority"], task["labels"]) == ("human", "high", ["ops", "docs"])
    assert [c["text"] for c in task["criteria"]] == ["covers paging", "covers restore"]
    assert task["body"] == "What to do **when** it breaks."
    with human(live, seeded) as http:
        shown = http.get(f"/api/workspaces/{seeded.workspace_id}/tasks/{task['id']}", params={"limit": 10}).json()
    files = [a["filename"] for m in shown["conversation"]["messages"] for a in m["attachments"]]
    assert files == ["notes.txt"]

    # For an agent, ready, with a file: the file is the task's own, the board's fields set too.
    page.get_by_role("button", name="New task").click()
    expect(dialog.get_by_label("Title")).to_have_value("")
    dialog.get_by_label("Title").fill("Parse the logs")
    dialog.get_by_label("Labels (comma-separated)").fill("ops")
    dialog.get_by_label("Files").set_input_files([{"name": "app.log", "mimeType": "text/plain", "buffer": b"x"}])
    dialog.get_by_role("button", name="Create task").click()
    expect(card(page, "ready", "Parse the logs")).to_be_visible(timeout=WAIT_MS)
    with board_api(live, seeded) as http:
        [task] = http.get("tasks", params={"status": "ready"}).json()["tasks"]
    assert (task["title"], task["assignee"], task["labels"]) == ("Parse the logs", "agent", ["ops"])
    assert [a["filename"] for a in task["attachments"]] == ["app.log"]


def test_keys_search_move_between_cards_and_open_one(live, seeded, console):
    page = console
    page.set_viewport_size({"width": 1440, "height": 900})
    with board_api(live, seeded) as http:
        made = {}
        for title, where in (("First in backlog", "backlog"), ("First ready", "ready"), ("Second ready", "ready")):
            response = http.post("tasks", json={"title": title, "column": where})
            assert response.status_code == 201, response.text
            made[title] = response.json()
    sign_in(page, live, seeded.human_token)
    expect(card(page, "ready", "Second ready")).to_be_visible(timeout=WAIT_MS)

    page.keyboard.press("/")
    expect(page.get_by_label("Search the board")).to_be_focused()
    page.get_by_label("Search the board").blur()  # out of the field, keys are shortcuts again

    # j walks down a column, then on to the next one; k walks back.
    order = page.locator("#board-columns .card-open").all_text_contents()
    assert order[0] == "First in backlog" and set(order[1:]) == {"First ready", "Second ready"}, order
    page.keyboard.press("j")
    expect(card(page, "backlog", "First in backlog")).to_be_focused()
    page.keyboard.press("j")
    expect(card(page, "ready", order[1])).to_be_focused()
    page.keyboard.press("j")
    expect(card(page, "ready", order[2])).to_be_focused()
    page.keyboard.press("j")  # the last card stays
    expect(card(page, "ready", order[2])).to_be_focused()
    page.keyboard.press("k")
    expect(card(page, "ready", order[1])).to_be_focused()

    # Enter opens the focused card's task: its address, the drawer, the card marked.
    page.keyboard.press("Enter")
    task = made[order[1]]
    expect(page).to_have_url(re.compile(rf"#/task/{task['identifier']}$"))
    expect(page.locator("#drawer")).to_be_visible()
    expect(card(page, "ready", order[1])).to_have_attribute("aria-current", "true")


def test_without_a_workspace_the_board_points_to_settings(live, runtime, console):
    page = console
    _, token = accounts.create_account(runtime.accounts, "Nobody's workspace yet")
    sign_in(page, live, token.token)
    expect(page.get_by_role("heading", name="No workspace yet")).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_role("button", name="New task")).to_be_hidden()
    expect(page.get_by_role("search", name="Board filters")).to_be_hidden()
    page.get_by_role("link", name="Create one in Settings").click()
    expect(page).to_have_url(re.compile(r"#/settings$"))
