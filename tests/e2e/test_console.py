"""The web console end to end: Debian's Chromium driven by Playwright, the agent on the real MCP client.

The agent's calls block (elicit waits for the answer, a site-tool call for the human's decision), so
each runs with `anyio.run` in its own thread while the page is driven from the test's thread
(Playwright's sync API cannot run inside an event loop, hence plain sync tests). The human's Chrome
extension is simulated by a thread that speaks only the bridge protocol over REST.
"""

import re

from playwright.sync_api import expect

from tests.e2e.console_page import (
    agent_once,
    sign_in,
)

# -- the flows ----------------------------------------------------------------------------------


def test_memory_skills_and_pano_are_readable_and_agent_text_stays_text(live, seeded, console):
    page = console
    hostile = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'
    agent_once(live.url, seeded.agent_token, "memory", "save", content=f"# Index\n{hostile}")
    skill = f"---\ndescription: Deploy safely {hostile}\n---\n# Deploy\nRun the checks first.\n"
    agent_once(live.url, seeded.agent_token, "skills", "save", uri="skill://deploy/SKILL.md", content=skill)
    agent_once(live.url, seeded.agent_token, "skills", "save", uri="skill://deploy/checks.md", content="- lint\n")
    agent_once(live.url, seeded.agent_token, "pano", "save", title="Release notes", markdown=f"# Notes\n{hostile}")

    sign_in(page, live, seeded.human_token)
    page.get_by_role("button", name="Memory", exact=True).click()
    page.get_by_role("button", name="MEMORY.md").click()
    expect(page.get_by_role("heading", name="MEMORY.md")).to_be_visible()
    expect(page.locator("#memory-content")).to_have_text(f"# Index\n{hostile}")

    page.get_by_role("button", name="Skills", exact=True).click()
    page.get_by_role("list", name="Skills").get_by_role("button", name="deploy").click()
    expect(page.get_by_role("heading", name="deploy", exact=True)).to_be_visible()
    expect(page.locator("#skill-content")).to_have_text(skill)
    page.get_by_role("button", name="checks.md").click()
    expect(page.locator("#skill-file-content")).to_have_text("- lint\n")

    page.get_by_role("button", name="Pano", exact=True).click()
    page.get_by_role("list", name="Pano docs").get_by_role("button", name="Release notes").click()
    expect(page.get_by_role("heading", name="Release notes")).to_be_visible()
    expect(page.locator("#pano-markdown")).to_have_text(f"# Notes\n{hostile}")
    page.get_by_label("Your comment").fill("Looks good <b>to me</b>")
    page.get_by_role("button", name="Add comment").click()
    expect(page.get_by_role("list", name="Comments")).to_contain_text("Looks good <b>to me</b>")

    assert page.locator("img").count() == 0 and page.locator("main script").count() == 0
    assert page.title() == "Agent Workspace"


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
