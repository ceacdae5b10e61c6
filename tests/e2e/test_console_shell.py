"""The console's app shell end to end: signing in and out, the top bar (workspace switcher, inbox count, offline
sign), the navigation (a rail on a wide screen, a bottom bar on a phone), the tab title, shortcuts, and the core
modules as the page loads them (markdown, routes). Debian's Chromium driven by Playwright."""

import re

import httpx
from playwright.sync_api import Page, expect

from tests.e2e.console_page import WAIT_MS, Background, ask, human, sign_in

TITLE = "Agent Workspace"


def settled(page: Page, rounds: int = 1) -> None:
    """Wait until the refresh loop has finished `rounds` more rounds than now."""
    body = page.locator("body")
    expect(body).to_have_attribute("data-rounds", re.compile(r"^[1-9]"), timeout=WAIT_MS)
    for _ in range(rounds):  # no page-side polling function: the page's CSP refuses eval
        expect(body).not_to_have_attribute("data-rounds", body.get_attribute("data-rounds") or "", timeout=WAIT_MS)


def ask_for(live, seeded, title: str, message: str, field: str) -> Background:
    """The agent asks the human for one text `field` in a new task `title` (running: result() is the answer)."""
    schema = {"type": "object", "properties": {field: {"type": "string"}}}
    return ask(live.url, seeded.agent_token, title, message=message, mode="form", requestedSchema=schema)


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

    # Signed in on a phone: the board is the first screen, the views are one tap away in a bottom bar, and
    # nothing scrolls sideways.
    nav = page.get_by_role("navigation", name="Views")
    board = nav.get_by_role("link", name="Board")
    expect(board).to_have_attribute("aria-current", "page")
    bar = nav.bounding_box()
    assert bar and bar["y"] + bar["height"] <= 740 and bar["y"] >= 740 - 80  # at the bottom, on screen
    assert page.evaluate("document.documentElement.scrollWidth") <= 360


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


def test_a_wide_screen_has_a_thin_top_bar_a_rail_and_the_board_first(live, seeded, console):
    page = console
    page.set_viewport_size({"width": 1440, "height": 900})
    sign_in(page, live, seeded.human_token)

    nav = page.get_by_role("navigation", name="Views")
    for name in ("Board", "Inbox", "Memory", "Skills", "Pano", "Agents", "Settings"):
        expect(nav.get_by_role("link", name=name)).to_be_visible()
    expect(nav.get_by_role("link", name="Board")).to_have_attribute("aria-current", "page")
    rail = nav.bounding_box()
    assert rail and rail["x"] == 0 and rail["width"] < 200  # a rail on the left
    bar = page.locator(".topbar").bounding_box()
    assert bar and bar["y"] == 0 and bar["height"] <= 56  # thin
    expect(page.get_by_role("combobox", name="Workspace", exact=True)).to_have_value(seeded.workspace_id)
    expect(page.locator("#view-board")).to_be_visible()

    # Each view is one click away and named in the address.
    nav.get_by_role("link", name="Settings").click()
    expect(page).to_have_url(re.compile(r"#/settings$"))
    expect(page.locator("#view-settings")).to_be_visible()
    expect(page.locator("#view-board")).to_be_hidden()
    page.go_back()
    expect(page.locator("#view-board")).to_be_visible()


def test_the_tab_title_and_the_inbox_button_count_what_needs_the_human(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    expect(page).to_have_title(TITLE)

    asking = ask_for(live, seeded, "Pick a colour", "Which colour?", "colour")
    inbox = page.locator("#inbox-button")
    expect(page).to_have_title(f"(1) {TITLE}", timeout=WAIT_MS)
    expect(inbox).to_have_accessible_name("Inbox, 1 waiting on you")

    with human(live, seeded) as api:
        pending = api.get(f"/api/workspaces/{seeded.workspace_id}/elicitations", params={"status": "pending"}).json()
        answered = api.post(
            f"/api/workspaces/{seeded.workspace_id}/elicitations/{pending[0]['id']}/answer",
            json={"action": "accept", "content": {"colour": "teal"}},
        )
        assert answered.status_code == 200, answered.text
    expect(page).to_have_title(TITLE, timeout=WAIT_MS)
    expect(inbox).to_have_accessible_name("Inbox, nothing waiting")
    _, answer = asking.result()
    assert answer["content"] == {"colour": "teal"}


def test_switching_workspace_clears_the_old_counts_at_once(live, seeded, console):
    page = console
    with human(live, seeded) as api:
        other = api.post("/api/workspaces", json={"title": "Quiet one", "mission": ""}).json()
    asking = ask_for(live, seeded, "Pick a size", "Which size?", "size")
    sign_in(page, live, seeded.human_token)
    expect(page).to_have_title(f"(1) {TITLE}", timeout=WAIT_MS)

    page.get_by_role("combobox", name="Workspace", exact=True).select_option(other["id"])
    # Cleared by the switch itself, not by the next poll (which would take up to 3 s).
    expect(page).to_have_title(TITLE, timeout=500)
    expect(page.locator("#inbox-count")).to_have_text("", timeout=500)

    page.get_by_role("combobox", name="Workspace", exact=True).select_option(seeded.workspace_id)
    expect(page).to_have_title(f"(1) {TITLE}", timeout=WAIT_MS)
    with human(live, seeded) as api:
        pending = api.get(f"/api/workspaces/{seeded.workspace_id}/elicitations", params={"status": "pending"}).json()
        api.post(
            f"/api/workspaces/{seeded.workspace_id}/elicitations/{pending[0]['id']}/answer", json={"action": "decline"}
        )
    asking.result()


def test_an_unreachable_server_shows_the_offline_sign_until_it_answers_again(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    offline = page.get_by_text("Offline: showing what was last read")
    settled(page)
    expect(offline).to_be_hidden()

    page.route("**/api/**", lambda route: route.abort("internetdisconnected"))
    expect(offline).to_be_visible(timeout=WAIT_MS)
    page.unroute("**/api/**")
    expect(offline).to_be_hidden(timeout=WAIT_MS)


def test_shortcuts_are_listed_under_question_mark_and_move_between_views(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    page.locator("#view").focus()
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Go to the inbox")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    page.keyboard.press("g")
    page.keyboard.press("i")
    expect(page).to_have_url(re.compile(r"#/inbox$"))
    expect(page.locator("#view-inbox")).to_be_visible()
    page.keyboard.press("g")
    page.keyboard.press("b")
    expect(page).to_have_url(re.compile(r"#/board$"))

    # Typing in a field is typing, not a shortcut.
    page.get_by_role("combobox", name="Workspace", exact=True).focus()
    page.keyboard.press("?")
    expect(dialog).to_be_hidden()


def test_on_a_phone_the_board_is_one_tap_from_any_view(live, seeded, console):
    page = console
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live.url}/#/settings")
    page.get_by_label("Human token").fill(seeded.human_token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#view-settings")).to_be_visible()
    board = page.get_by_role("navigation", name="Views").get_by_role("link", name="Board")
    box = board.bounding_box()
    assert box and box["y"] >= 0 and box["y"] + box["height"] <= 844  # on the first screen, no scrolling
    board.click()
    expect(page.locator("#view-board")).to_be_visible()
    expect(page.locator("#view-settings")).to_be_hidden()


def test_skip_to_content_moves_the_focus_and_stays_on_the_view(live, seeded, console):
    """The skip link targets #view: it moves the focus there, and no fragment outside the routes ("#/…") takes the
    human back to the board."""
    page = console
    sign_in(page, live, seeded.human_token)
    page.get_by_role("navigation", name="Views").get_by_role("link", name="Inbox").click()
    expect(page).to_have_url(re.compile(r"#/inbox$"))
    inbox = page.locator("#view-inbox")
    expect(inbox).to_be_visible()

    skip = page.get_by_role("link", name="Skip to content")
    skip.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#view")).to_be_focused()
    expect(page).to_have_url(re.compile(r"#/inbox$"))
    expect(inbox).to_be_visible()
    expect(page.locator("#view-board")).to_be_hidden()

    page.evaluate("location.hash = '#view'")  # an in-page fragment, however it comes: no route change
    settled(page)
    expect(inbox).to_be_visible()
    expect(page.locator("#view-board")).to_be_hidden()
    expect(page.get_by_role("navigation", name="Views").get_by_role("link", name="Inbox")).to_have_attribute(
        "aria-current", "page"
    )


def test_markdown_from_agents_renders_safely_and_stays_linear(live, seeded, console):
    page = console
    page.goto(f"{live.url}/")
    hostile = (
        "# Plan\n\n- one **bold**\n- two [site](https://example.com/x)\n\n"
        '<img src=x onerror="window.hit=1"> [bad](javascript:alert(1)) `<b>code</b>`\n\n'
        "```\n<script>window.hit=2</script>\n```"
    )
    html = page.evaluate(
        "async (text) => (await import('/console/core/markdown.js')).markdown(text).innerHTML", hostile
    )
    assert "<h3>Plan</h3>" in html  # an agent's h1 sits under the page's own headings
    assert "<strong>bold</strong>" in html
    assert '<a href="https://example.com/x" target="_blank" rel="noopener noreferrer">site</a>' in html
    assert "<img" not in html and "<script" not in html and "javascript:" not in html.split("[bad]")[0]
    assert "&lt;img src=x" in html and "&lt;script&gt;" in html and "<code>&lt;b&gt;code&lt;/b&gt;</code>" in html
    assert page.evaluate("window.hit") is None

    # 100,000 characters of unclosed markers render (as text) without hanging the tab.
    rendered = page.evaluate(
        "async () => (await import('/console/core/markdown.js')).markdown('['.repeat(50000) + '](('.repeat(10000))"
        ".textContent.length"
    )
    assert rendered == 50000 + 3 * 10000


def test_addresses_name_a_view_a_task_or_an_old_task_link(live, console):
    page = console
    page.goto(f"{live.url}/")
    parse = "async (hash) => (await import('/console/core/router.js')).parse(hash)"
    assert page.evaluate(parse, "#/inbox") == {"view": "inbox"}
    assert page.evaluate(parse, "#/task/WS-12") == {"view": "task", "id": "WS-12"}
    assert page.evaluate(parse, "#/memory/notes%2Fplan") == {"view": "memory", "id": "notes/plan"}
    assert page.evaluate(parse, "#/workspaces/W1/tasks/abc") == {"view": "task", "id": "abc", "workspaceId": "W1"}
    assert page.evaluate(parse, "#/nowhere") == {"view": "board"}
    assert page.evaluate(parse, "") == {"view": "board"}


def test_a_list_reconciled_with_a_key_twice_leaves_no_ghost(live, console):
    """core/dom.js reconcile, as the page loads it: a key listed twice shows once (the first item), and the next
    reconcile, without the duplicate, leaves exactly its items (no node left behind from the duplicate)."""
    page = console
    page.goto(f"{live.url}/")
    shown = page.evaluate(
        """async () => {
          const { el, reconcile } = await import('/console/core/dom.js');
          const list = el('ul');
          const render = (items) => {
            const create = (i) => el('li', { text: i.text });
            reconcile(list, items, (i) => i.id, create, (li, i) => { li.textContent = i.text; });
            return Array.from(list.children).map((li) => `${li.dataset.key}:${li.textContent}`);
          };
          const once = render([{ id: 'a', text: 'first' }, { id: 'a', text: 'second' }, { id: 'b', text: 'b' }]);
          const after = render([{ id: 'b', text: 'b' }, { id: 'a', text: 'again' }]);
          // Children that repeat a key (as an older page could leave them): the repeat goes.
          list.append(el('li', { dataset: { key: 'a' }, text: 'ghost' }));
          const cleaned = render([{ id: 'a', text: 'a' }]);
          return { once, after, cleaned };
        }"""
    )
    assert shown == {"once": ["a:first", "b:b"], "after": ["b:b", "a:again"], "cleaned": ["a:a"]}


def test_console_modules_are_served_from_their_folders_and_nothing_else_is(live):
    with httpx.Client(base_url=live.url) as client:
        for path in ("/console/app.js", "/console/core/api.js", "/console/css/base.css", "/console/views/board.js"):
            response = client.get(path)
            assert response.status_code == 200, path
            assert "script-src 'self'" in response.headers["content-security-policy"]
        for path in (
            "/console/core/",
            "/console/core/.hidden.js",
            "/console/core/api.py",
            "/console/a/b/c/d.js",
            "/console/%2e%2e/api/console.py",
            "/console/core/..%2f..%2fapi%2fconsole.py",
        ):
            assert client.get(path).status_code == 404, path


def _luminance(rgb: str) -> float:
    channels = [int(c) / 255 for c in re.findall(r"\d+", rgb)[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: str, two: str) -> float:
    high, low = sorted((_luminance(one), _luminance(two)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_focus_ring_and_muted_text_meet_wcag_aa(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    link = page.get_by_role("navigation", name="Views").get_by_role("link", name="Inbox")
    link.focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")  # focused by keyboard: :focus-visible
    ring = link.evaluate("e => getComputedStyle(e).outlineColor")
    behind = page.locator(".views-nav").evaluate("e => getComputedStyle(e).backgroundColor")
    assert link.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"
    assert contrast(ring, behind) >= 3, (ring, behind)  # WCAG 1.4.11: 3:1 for focus indicators
    assert contrast(ring, "rgb(255, 255, 255)") >= 3 and contrast(ring, "rgb(245, 246, 248)") >= 3
    muted = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--muted')").strip()
    rgb = f"rgb({int(muted[1:3], 16)}, {int(muted[3:5], 16)}, {int(muted[5:7], 16)})"
    assert contrast(rgb, "rgb(255, 255, 255)") >= 4.5 and contrast(rgb, "rgb(245, 246, 248)") >= 4.5


def test_a_link_into_a_workspace_of_another_account_is_refused_once_at_sign_in(live, seeded, console):
    page = console
    page.goto(f"{live.url}/#/workspaces/W0000000000/tasks/T0000000000")
    page.get_by_label("Human token").fill(seeded.human_token)
    page.get_by_role("button", name="Sign in").click()
    refusal = page.get_by_role("alert").filter(has_text="Opening the link failed")
    expect(refusal).to_have_count(1)
    expect(refusal).to_contain_text("this account has no workspace W0000000000")
    expect(page.locator("#view-board")).to_be_visible()
    expect(page).to_have_url(re.compile(r"#/board$"))
    expect(page.locator("#drawer")).to_be_hidden()
