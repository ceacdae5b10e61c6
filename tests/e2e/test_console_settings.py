"""The console's Settings page (workspace, agent tokens, policy, cycles, projects and epics) and its document
views (Memory, Skills, Pano), in Chromium. What the human does is checked against the REST API, as the human."""

import json
import re

import httpx
from playwright.sync_api import Page, expect

from agent_workspace.services import accounts
from tests.e2e.console_page import WAIT_MS, agent_once, human, sign_in
from tests.support import bearer

HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'
SECTIONS = (
    "Workspace",
    "Connect an agent",
    "Connected apps",
    "Chrome extension",
    "Notifications",
    "How agents work here",
    "Cycles",
    "Projects & epics",
)
WITHOUT_A_WORKSPACE = ("Workspace", "Chrome extension", "Notifications")


def go(page: Page, view: str) -> None:
    """A view, from the navigation (the rail on a wide screen)."""
    page.get_by_role("navigation", name="Views").get_by_role("link", name=view, exact=True).click()


def section(page: Page, name: str):
    return page.get_by_role("region", name=name, exact=True)


def secret_on_page(page: Page, secret: str) -> bool:
    """Whether any field or text of the page still holds `secret` (a field's value is not in its markup)."""
    return page.evaluate(
        "s => document.body.innerText.includes(s) || [...document.querySelectorAll('input, textarea')]"
        ".some(f => f.value.includes(s))",
        secret,
    )


# -- Settings -------------------------------------------------------------------------------------


def test_without_a_workspace_settings_offers_one_and_shows_its_agent_token_once(live, runtime, console):
    page = console
    _, issued = accounts.create_account(runtime.accounts, "New account")
    sign_in(page, live, issued.token)
    go(page, "Settings")

    # Only what works without a workspace, the new-workspace form open: it is what the account needs first.
    toc = page.get_by_role("navigation", name="Settings sections")
    expect(toc.get_by_role("link")).to_have_text(list(WITHOUT_A_WORKSPACE))
    for name in SECTIONS:
        if name in WITHOUT_A_WORKSPACE:
            expect(section(page, name)).to_be_visible()
        else:
            expect(section(page, name)).to_be_hidden()
    expect(page.get_by_text("This account has no workspace yet: create one below.")).to_be_visible()
    expect(page.get_by_role("combobox", name="Workspace", exact=True)).to_be_hidden()

    page.get_by_label("Workspace title").fill("Release train")
    page.get_by_label("Mission").fill("Ship every week.")
    page.get_by_role("button", name="Create workspace").click()

    token_field = page.get_by_label("Agent token", exact=True)
    expect(token_field).to_have_value(re.compile(r"^aw_agent_\S+$"))
    agent_token = token_field.input_value()
    snippet = json.loads(page.get_by_label(".mcp.json", exact=True).input_value())
    assert snippet == {
        "mcpServers": {
            "agent-workspace": {
                "type": "http",
                "url": f"{live.url}/mcp",
                "headers": {"Authorization": f"Bearer {agent_token}"},
            }
        }
    }
    expect(page.get_by_role("heading", name="Connect an agent to Release train")).to_be_focused()

    # The new workspace is the one chosen in the top bar, and every section is there for it.
    with httpx.Client(base_url=live.url, headers=bearer(issued.token)) as http:
        made = http.get("/api/workspaces").json()
    assert [(w["title"], w["mission"]) for w in made] == [("Release train", "Ship every week.")]
    switcher = page.get_by_role("combobox", name="Workspace", exact=True)
    expect(switcher).to_have_value(made[0]["id"])
    expect(switcher.locator("option:checked")).to_have_text("Release train")
    expect(toc.get_by_role("link")).to_have_text(list(SECTIONS))
    expect(section(page, "Workspace")).to_contain_text("Ship every week.")
    expect(section(page, "Workspace")).to_contain_text(made[0]["id"])
    tokens = section(page, "Connect an agent").get_by_role("list", name=re.compile(r"^Agent tokens"))
    expect(tokens.get_by_role("listitem")).to_have_count(1, timeout=WAIT_MS)

    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live.url)
    page.get_by_role("button", name="Copy agent token").click()
    expect(page.get_by_role("status")).to_have_text("The agent token was copied to the clipboard.")
    assert page.evaluate("navigator.clipboard.readText()") == agent_token
    page.get_by_role("button", name="Copy .mcp.json").click()
    expect(page.get_by_role("status")).to_have_text("The .mcp.json snippet was copied to the clipboard.")
    assert json.loads(page.evaluate("navigator.clipboard.readText()")) == snippet

    # Shown once: "Done" takes it off the page.
    page.get_by_role("button", name="Done, I have saved it").click()
    expect(token_field).to_have_count(0)
    assert not secret_on_page(page, agent_token)
    # The token works: the agent saves a memory in the new workspace.
    agent_once(live.url, agent_token, "memory", "save", content="# Release train\n")

    # A second one, then another view: leaving the page is leaving the token.
    section(page, "Workspace").get_by_text("New workspace", exact=True).click()
    page.get_by_label("Workspace title").fill("Second")
    page.get_by_role("button", name="Create workspace").click()
    expect(token_field).to_have_value(re.compile(r"^aw_agent_\S+$"))
    second_token = token_field.input_value()
    expect(switcher.locator("option:checked")).to_have_text("Second")
    go(page, "Board")
    go(page, "Settings")
    expect(section(page, "Workspace")).to_contain_text("Second")
    expect(token_field).to_have_count(0)
    assert not secret_on_page(page, second_token)


def test_the_policy_switches_change_the_boards_policy_and_a_change_elsewhere_shows(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    go(page, "Settings")
    toc = page.get_by_role("navigation", name="Settings sections")
    link = toc.get_by_role("link", name="How agents work here")
    link.click()
    expect(page).to_have_url(re.compile(r"#/settings/policy$"))
    expect(section(page, "How agents work here").get_by_role("heading", level=2)).to_be_focused()
    expect(link).to_have_attribute("aria-current", "location")

    supervised = page.get_by_role("checkbox", name="Supervised")
    sign_off = page.get_by_role("checkbox", name="Sign-off")
    expect(supervised).to_be_enabled(timeout=WAIT_MS)  # enabled once the policy is read
    expect(supervised).not_to_be_checked()
    expect(sign_off).not_to_be_checked()
    board = f"/api/workspaces/{seeded.workspace_id}/board"
    with human(live, seeded) as http:
        supervised.check()
        expect(page.get_by_role("status")).to_contain_text("Supervised on")
        assert http.get(board).json()["policy"] == {"supervised": True, "signOff": False}
        sign_off.check()
        expect(page.get_by_role("status")).to_contain_text("Sign-off on")
        assert http.get(board).json()["policy"] == {"supervised": True, "signOff": True}
        supervised.uncheck()
        expect(page.get_by_role("status")).to_contain_text("Supervised off")
        assert http.get(board).json()["policy"] == {"supervised": False, "signOff": True}

        # Changed elsewhere (another tab, a script): the page follows within a few rounds.
        assert http.put(f"{board}/policy", json={"signOff": False}).status_code == 200
        expect(sign_off).not_to_be_checked(timeout=WAIT_MS)
        expect(supervised).not_to_be_checked()


def test_agent_tokens_are_minted_shown_once_and_revoked_after_a_question(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    page.evaluate("location.hash = '#/settings/connect'")
    connect = section(page, "Connect an agent")
    expect(connect.get_by_role("heading", level=2)).to_be_focused()
    expect(connect).to_contain_text(f"{live.url}/mcp/agentrq")
    tokens = connect.get_by_role("list", name=re.compile(r"^Agent tokens"))
    expect(tokens.get_by_role("listitem")).to_have_count(1, timeout=WAIT_MS)
    listing = f"/api/workspaces/{seeded.workspace_id}/tokens"
    with human(live, seeded) as http:
        [first] = [t["id"] for t in http.get(listing).json()]

    connect.get_by_role("button", name="Mint an agent token").click()
    field = connect.get_by_label("New agent token", exact=True)
    expect(field).to_have_value(re.compile(r"^aw_agent_\S+$"))
    expect(connect.get_by_role("heading", name=re.compile(r"^The new agent token for “.+”$"))).to_be_visible()
    minted = field.input_value()
    assert json.loads(connect.get_by_label(".mcp.json for the new token").input_value())["mcpServers"][
        "agent-workspace"
    ]["headers"] == {"Authorization": f"Bearer {minted}"}
    expect(tokens.get_by_role("listitem")).to_have_count(2, timeout=WAIT_MS)
    agent_once(live.url, minted, "memory", "save", content="# Minted\n")  # it works
    connect.get_by_role("button", name="Done, I have saved it").click()
    expect(field).to_have_count(0)
    assert not secret_on_page(page, minted)

    with human(live, seeded) as http:
        [new] = [t["id"] for t in http.get(listing).json() if t["id"] != first]
    name = f"Agent token ·{new[-4:]}"
    item = tokens.get_by_role("listitem").filter(has_text=new)
    item.get_by_role("button", name=f"Revoke {name}").click()
    expect(page.get_by_role("group", name=re.compile(rf"^Revoke {re.escape(name)}\?"))).to_be_visible()
    page.get_by_role("button", name="Cancel").click()
    expect(item.get_by_role("button", name=f"Revoke {name}")).to_be_focused()
    item.get_by_role("button", name=f"Revoke {name}").click()
    page.get_by_role("button", name="Revoke token").click()
    expect(page.get_by_role("status")).to_contain_text(f"{name} is revoked.")
    expect(tokens.get_by_role("listitem")).to_have_count(1)
    with human(live, seeded) as http:
        assert [t["id"] for t in http.get(listing).json()] == [first]
    expect(tokens).to_contain_text(first)


def test_cycles_are_made_and_chosen_and_projects_and_epics_renamed_or_deleted(live, seeded, console):
    page = console
    base = f"/api/workspaces/{seeded.workspace_id}"
    with human(live, seeded) as http:
        project = http.post(f"{base}/projects", json={"title": "Payments"}).json()
        assert http.post(f"{base}/epics", json={"title": "Refunds"}).status_code == 201
    sign_in(page, live, seeded.human_token)
    page.evaluate("location.hash = '#/settings/cycles'")

    cycles = section(page, "Cycles")
    expect(cycles.get_by_text("No cycle is active.")).to_be_visible(timeout=WAIT_MS)
    cycles.get_by_text("New cycle", exact=True).click()
    cycles.get_by_label("Cycle title").fill("Sprint 7")
    cycles.get_by_label("Goal").fill("Docs")
    cycles.get_by_label("Make it the active cycle").check()
    cycles.get_by_role("button", name="Create cycle").click()
    expect(page.get_by_role("status")).to_contain_text("Cycle Sprint 7 created, and it is the active one.")
    expect(cycles.get_by_text("Active cycle: Sprint 7 (Docs)")).to_be_visible(timeout=WAIT_MS)
    expect(cycles.get_by_label("Active cycle", exact=True).locator("option:checked")).to_have_text("Sprint 7")
    cycles.get_by_label("Active cycle", exact=True).select_option(label="None")
    cycles.get_by_role("button", name="Set active cycle").click()
    expect(cycles.get_by_text("No cycle is active.")).to_be_visible(timeout=WAIT_MS)

    headings = section(page, "Projects & epics")
    chooser = headings.get_by_label("Project or epic")
    expect(chooser.locator("option")).to_have_text(
        ["Choose one", "Project: Payments", "Epic: Refunds"], timeout=WAIT_MS
    )
    chooser.select_option(label="Project: Payments")
    headings.get_by_label("New title").fill("Payments v2")
    headings.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("status")).to_contain_text("Renamed to Payments v2.")
    expect(chooser.locator("option")).to_have_text(
        ["Choose one", "Project: Payments v2", "Epic: Refunds"], timeout=WAIT_MS
    )

    chooser.select_option(label="Epic: Refunds")
    headings.get_by_role("button", name="Delete", exact=True).click()
    question = page.get_by_role("group", name=re.compile(r"^Delete Epic: Refunds\?"))
    expect(question).to_be_visible()
    question.get_by_role("button", name="Delete Epic: Refunds").click()
    expect(page.get_by_role("status")).to_contain_text("Epic: Refunds deleted.")
    expect(chooser.locator("option")).to_have_text(["Choose one", "Project: Payments v2"], timeout=WAIT_MS)
    with human(live, seeded) as http:
        board = http.get(f"{base}/board").json()
        assert [(p["id"], p["title"]) for p in board["projects"]] == [(project["id"], "Payments v2")]
        assert board["epics"] == [] and board["activeCycle"] is None
        assert [c["title"] for c in http.get(f"{base}/board/cycles").json()] == ["Sprint 7"]


# -- Memory, Skills, Pano ---------------------------------------------------------------------------


def test_memory_skills_and_pano_are_readable_and_agent_text_stays_text(live, seeded, console):
    page = console
    agent_once(live.url, seeded.agent_token, "memory", "save", content=f"# Index\n{HOSTILE}")
    skill = f"---\ndescription: Deploy safely {HOSTILE}\n---\n# Deploy\nRun the checks first.\n"
    agent_once(live.url, seeded.agent_token, "skills", "save", uri="skill://deploy/SKILL.md", content=skill)
    agent_once(live.url, seeded.agent_token, "skills", "save", uri="skill://deploy/checks.md", content="- lint\n")
    agent_once(live.url, seeded.agent_token, "pano", "save", title="Release notes", markdown=f"# Notes\n{HOSTILE}")

    sign_in(page, live, seeded.human_token)
    go(page, "Memory")
    page.get_by_role("list", name="Memories").get_by_role("link", name="MEMORY.md").click()
    expect(page).to_have_url(re.compile(r"#/memory/MEMORY\.md$"))
    memory = page.get_by_role("article", name="MEMORY.md")
    expect(memory.get_by_role("heading", name="MEMORY.md")).to_be_focused()
    expect(memory.get_by_role("heading", name="Index")).to_be_visible()
    expect(memory).to_contain_text(HOSTILE)  # agent-written HTML stays text
    link = page.get_by_role("list", name="Memories").get_by_role("link", name="MEMORY.md")
    expect(link).to_have_attribute("aria-current", "page")

    go(page, "Skills")
    page.get_by_role("list", name="Skills").get_by_role("link", name="deploy").click()
    skill_doc = page.get_by_role("article", name="deploy")
    expect(skill_doc.get_by_role("heading", name="deploy", exact=True)).to_be_visible()
    expect(skill_doc.get_by_role("heading", name="Deploy", exact=True)).to_be_visible()
    expect(skill_doc).to_contain_text("Run the checks first.")
    expect(skill_doc).to_contain_text(f"Deploy safely {HOSTILE}")
    skill_doc.get_by_role("button", name="checks.md").click()
    expect(skill_doc.get_by_role("heading", name="checks.md")).to_be_focused()
    expect(skill_doc.get_by_role("region", name="checks.md").get_by_role("listitem")).to_have_text(["lint"])

    go(page, "Pano")
    page.get_by_role("list", name="Pano docs").get_by_role("link", name="Release notes").click()
    doc = page.get_by_role("article", name="Release notes")
    expect(doc.get_by_role("heading", name="Release notes")).to_be_visible()
    expect(doc.get_by_role("heading", name="Notes", exact=True)).to_be_visible()
    expect(doc).to_contain_text(HOSTILE)
    expect(doc).to_contain_text("by Local workspace")  # the writing workspace, by its title
    page.get_by_label("Your comment").fill("Looks good <b>to me</b>")
    page.get_by_role("button", name="Add comment").click()
    expect(page.get_by_role("list", name="Comments")).to_contain_text("Looks good <b>to me</b>")
    expect(page.get_by_role("list", name="Pano docs")).to_contain_text("1 comment", timeout=WAIT_MS)

    assert page.locator("img").count() == 0 and page.locator("main script").count() == 0
    assert page.title() == "Agent Workspace"


def test_a_memory_is_rendered_as_markdown_and_its_html_shown_as_text(live, seeded, console):
    page = console
    text = (
        "# Runbook\n\nBefore a release:\n\n- run the **checks**\n- tag it\n\n"
        "See [the guide](https://example.com/guide) or [this](javascript:alert(1)).\n\n"
        "<img src=x onerror=\"document.title='pwned'\">\n"
    )
    agent_once(live.url, seeded.agent_token, "memory", "save", name="runbook.md", content=text)
    sign_in(page, live, seeded.human_token)
    page.evaluate("location.hash = '#/memory/runbook.md'")  # a deep link opens it

    doc = page.get_by_role("article", name="runbook.md")
    expect(doc.get_by_role("heading", name="Runbook", exact=True, level=3)).to_be_visible(timeout=WAIT_MS)
    expect(doc.get_by_role("list").get_by_role("listitem")).to_have_text(["run the checks", "tag it"])
    expect(doc.locator("strong")).to_have_text("checks")
    guide = doc.get_by_role("link", name="the guide")
    expect(guide).to_have_attribute("href", "https://example.com/guide")
    expect(guide).to_have_attribute("rel", "noopener noreferrer")
    expect(doc.get_by_role("link", name="this")).to_have_count(0)  # only http(s) is ever a link
    expect(doc).to_contain_text("<img src=x onerror=\"document.title='pwned'\">")
    assert doc.locator("img").count() == 0
    expect(doc).to_contain_text("revision 1")

    # Saved again by the agent: the page shows the new revision without a click.
    agent_once(live.url, seeded.agent_token, "memory", "save", name="runbook.md", content="# Runbook v2\n")
    expect(doc.get_by_role("heading", name="Runbook v2", exact=True)).to_be_visible(timeout=WAIT_MS)
    expect(doc).to_contain_text("revision 2")
    assert page.title() == "Agent Workspace"
