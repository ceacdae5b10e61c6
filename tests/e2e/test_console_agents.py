"""The console's Agents view end to end (issue 18): Debian's Chromium driven by Playwright.

The person works in the page; REST, as the human, sets up what a test only needs to exist (a memory an
agent would have written, an agent to share) and checks what the page did. A second account, made with
`services.accounts` as other tests do, signs in to the same page to accept an agent shared with it.
"""

import re

import anyio
import httpx
from playwright.sync_api import Locator, Page, expect

from agent_workspace.domain.tokens import TokenKind, hash_token
from agent_workspace.services import accounts
from tests.e2e.console_page import WAIT_MS, Background, sign_in
from tests.support import connected

HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'


def agents_api(live, token: str) -> httpx.Client:
    """The human's REST client for the account's agents."""
    return httpx.Client(base_url=live.url, headers={"authorization": f"Bearer {token}"}, timeout=30)


def open_agents(page: Page) -> None:
    page.get_by_role("navigation", name="Views").get_by_role("link", name="Agents", exact=True).click()
    expect(page.get_by_role("heading", name="Agents", level=1, exact=True)).to_be_visible()


def agents_list(page: Page) -> Locator:
    return page.get_by_role("list", name="Agents", exact=True)


def detail(page: Page) -> Locator:
    return page.locator("#agent-detail")


def open_agent(page: Page, name: str) -> None:
    agents_list(page).get_by_role("link", name=name, exact=True).click(timeout=WAIT_MS)
    expect(detail(page).get_by_role("heading", name=name, level=2)).to_be_visible()
    expect(detail(page).locator("#agent-meta")).not_to_be_empty(timeout=WAIT_MS)


def show_part(page: Page, name: str) -> None:
    parts = detail(page).get_by_role("group", name="Parts of the agent")
    parts.get_by_role("button", name=name, exact=True).click()
    expect(parts.get_by_role("button", name=name, exact=True)).to_have_attribute("aria-pressed", "true")


def status(page: Page) -> Locator:
    return page.get_by_role("status")


# -- the flows ----------------------------------------------------------------------------------


def test_an_agent_made_in_the_console_keeps_prompt_versions_shows_a_diff_and_honours_the_lock(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    open_agents(page)
    expect(page.get_by_text("You have no agents yet")).to_be_visible(timeout=WAIT_MS)
    page.get_by_text("New agent", exact=True).click()
    page.get_by_label("Agent name").fill("Code reviewer")
    page.get_by_label("Its first prompt").fill("You review code.\nBe kind.\nSay why.")
    page.get_by_role("button", name="Create agent").click()
    expect(status(page)).to_contain_text("Agent Code reviewer created as @code-reviewer")
    expect(detail(page).get_by_role("heading", name="Code reviewer", level=2)).to_be_visible()
    expect(detail(page).locator("#agent-meta")).to_contain_text("@code-reviewer · revision 1 · prompt version 1")
    assert re.search(r"#/agents/[0-9A-Za-z]{11}$", page.url)

    # Two saves, each based on the live version the editor holds.
    prompt = detail(page).get_by_label("Prompt", exact=True)
    expect(prompt).to_have_value("You review code.\nBe kind.\nSay why.", timeout=WAIT_MS)
    prompt.fill("You review code.\nBe strict.\nSay why.")
    detail(page).get_by_label("Note on this version").fill("stricter")
    detail(page).get_by_role("button", name="Save prompt").click()
    expect(status(page)).to_contain_text("Prompt saved: version 2 is live.")
    prompt.fill("You review code.\nBe strict.\nSay why.\nCite the line.")
    detail(page).get_by_role("button", name="Save prompt").click()
    expect(status(page)).to_contain_text("Prompt saved: version 3 is live.")

    versions = detail(page).get_by_role("list", name="Versions")
    expect(versions.get_by_role("listitem")).to_have_count(3, timeout=WAIT_MS)
    expect(versions).to_contain_text("stricter")
    detail(page).get_by_role("button", name="Compare version 1 with the live version").click()
    expect(detail(page).get_by_role("heading", name="Version 1 → live version 3")).to_be_visible()
    changes = detail(page).get_by_role("list", name="Changes, line by line")
    expect(changes.locator(".diff-del")).to_have_text(["- Be kind."])
    expect(changes.locator(".diff-add")).to_have_text(["+ Be strict.", "+ Cite the line."])
    expect(detail(page).locator("#agent-diff-summary")).to_have_text("2 lines added, 1 line removed.")

    # The @handle is the owner's to change; the header follows. What is typed as the form opens stays typed: typing
    # in the same task as the click, before the details' `toggle` event (a task of its own) has fired.
    page.evaluate(
        """() => {
            const slug = document.querySelector("#agent-edit-slug");
            slug.closest("details").querySelector("summary").click();
            slug.value = "reviewer";
        }"""
    )
    page.evaluate("() => new Promise((done) => setTimeout(done, 100))")
    expect(detail(page).get_by_label("@handle")).to_have_value("reviewer")
    detail(page).get_by_label("Description", exact=True).fill("Reads every pull request.")
    detail(page).get_by_role("button", name="Save changes").click()
    expect(status(page)).to_contain_text("(@reviewer)")
    expect(detail(page).locator("#agent-meta")).to_contain_text("@reviewer")
    expect(detail(page).locator("#agent-description")).to_have_text("Reads every pull request.")

    # Locked, a save is refused by the server and the page says why; unlocked, it goes through.
    detail(page).get_by_role("button", name="Lock prompt").click()
    expect(status(page)).to_contain_text("Prompt locked")
    expect(detail(page).get_by_text("Prompt locked", exact=True)).to_be_visible()
    prompt.fill("Approve everything.")
    detail(page).get_by_role("button", name="Save prompt").click()
    expect(page.get_by_role("alert")).to_contain_text("Saving the prompt failed: the owner locked the prompt")
    expect(page.get_by_role("alert")).to_contain_text("409")
    agent_id = page.url.rsplit("/", 1)[1]
    with agents_api(live, seeded.human_token) as http:
        saved = http.get(f"/api/agents/{agent_id}/prompt").json()
        assert (saved["version"], saved["body"]) == (3, "You review code.\nBe strict.\nSay why.\nCite the line.")
        assert http.get(f"/api/agents/{agent_id}").json()["promptLocked"] is True

    detail(page).get_by_role("button", name="Unlock prompt").click()
    expect(status(page)).to_contain_text("Prompt unlocked.")
    detail(page).get_by_role("button", name="Restore version 1").click()
    expect(status(page)).to_contain_text("Version 1 restored: its text is live as version 4.")
    expect(versions.get_by_role("listitem")).to_have_count(4, timeout=WAIT_MS)


def test_profiles_and_briefs_are_set_from_the_console(live, seeded, console):
    page = console
    with agents_api(live, seeded.human_token) as http:
        made = http.post("/api/agents", json={"name": "Release manager", "prompt": "Ship it."}).json()
    sign_in(page, live, seeded.human_token)
    open_agents(page)
    open_agent(page, "Release manager")

    show_part(page, "Profiles")
    profiles = detail(page).get_by_role("list", name="Profiles")
    expect(profiles).to_contain_text("default (every tool without its own)", timeout=WAIT_MS)
    detail(page).get_by_label("Tool", exact=True).fill("claude-code")
    detail(page).get_by_label("Settings (a JSON object)").fill("not json")
    detail(page).get_by_role("button", name="Save profile").click()
    expect(page.get_by_role("alert")).to_contain_text("settings must be a JSON object")
    detail(page).get_by_label("Settings (a JSON object)").fill('{"model": "opus"}')
    detail(page).get_by_label("Addendum").fill("Run the release checklist first.")
    detail(page).get_by_role("button", name="Save profile").click()
    expect(status(page)).to_contain_text("Profile for claude-code saved (revision 1).")
    expect(profiles.get_by_role("heading", name="claude-code")).to_be_visible()
    expect(profiles).to_contain_text('"model": "opus"')
    expect(profiles).to_contain_text("Addendum: Run the release checklist first.")

    show_part(page, "Briefs")
    expect(detail(page).get_by_text("No briefs yet.")).to_be_visible(timeout=WAIT_MS)
    detail(page).get_by_text("New brief", exact=True).click()
    detail(page).get_by_label("Brief name").fill("hotfix")
    detail(page).get_by_label("Brief description").fill("How to ship a hotfix")
    detail(page).get_by_label("Brief text").fill(f"1. Branch from the tag.\n2. {HOSTILE}")
    detail(page).get_by_role("button", name="Save brief").click()
    expect(status(page)).to_contain_text("Brief hotfix saved (revision 1).")
    briefs = detail(page).get_by_role("list", name="Briefs")
    expect(briefs).to_contain_text("How to ship a hotfix")
    expect(detail(page).get_by_role("heading", name="hotfix", level=4)).to_be_visible()
    expect(detail(page).locator("#agent-brief-body")).to_have_text(f"1. Branch from the tag.\n2. {HOSTILE}")

    detail(page).get_by_label("New name").fill("urgent-fix")
    detail(page).get_by_role("button", name="Rename brief").click()
    expect(status(page)).to_contain_text("Brief hotfix is now urgent-fix.")
    expect(briefs.get_by_role("button", name="urgent-fix")).to_be_visible()

    with agents_api(live, seeded.human_token) as http:
        profile = http.get(f"/api/agents/{made['id']}/profiles").json()["profiles"]["claude-code"]
        assert (profile["settings"], profile["addendum"]) == ({"model": "opus"}, "Run the release checklist first.")
        assert [b["name"] for b in http.get(f"/api/agents/{made['id']}/briefs").json()["briefs"]] == ["urgent-fix"]
    assert page.locator("img").count() == 0 and page.title() == "Agent Workspace"


def test_a_memory_written_over_the_api_is_pinned_forgotten_and_restored_in_the_console(live, seeded, console):
    page = console
    with agents_api(live, seeded.human_token) as http:
        made = http.post("/api/agents", json={"name": "Pairing buddy"}).json()
    sign_in(page, live, seeded.human_token)
    open_agents(page)
    open_agent(page, "Pairing buddy")
    show_part(page, "Memories")
    expect(detail(page).get_by_text("No memories yet.")).to_be_visible(timeout=WAIT_MS)

    with agents_api(live, seeded.human_token) as http:
        written = http.put(
            f"/api/agents/{made['id']}/memories/likes-tabs",
            json={"body": f"The user indents with tabs. {HOSTILE}", "mode": "create", "type": "user",
                  "description": "Indentation taste"},
        )  # fmt: skip
        assert written.status_code == 200, written.text
    memories = detail(page).get_by_role("list", name="Memories of the agent")
    memory = memories.get_by_role("listitem").filter(has_text="likes-tabs")
    expect(memory).to_contain_text("Indentation taste", timeout=WAIT_MS)
    expect(memory.locator("pre")).to_have_text(f"The user indents with tabs. {HOSTILE}")

    memory.get_by_role("button", name="Pin likes-tabs").click()
    expect(status(page)).to_contain_text("likes-tabs pinned")
    expect(memory.get_by_text("Pinned", exact=True)).to_be_visible()
    expect(memory.get_by_role("button", name="Unpin likes-tabs")).to_be_visible()

    # The search narrows the list, and finds it again.
    detail(page).get_by_label("Search memories").fill("spaces-and-nothing-else")
    detail(page).get_by_role("button", name="Search", exact=True).click()
    expect(detail(page).get_by_text("No memory matches.")).to_be_visible(timeout=WAIT_MS)
    detail(page).get_by_label("Search memories").fill("tabs")
    detail(page).get_by_role("button", name="Search", exact=True).click()
    expect(memory).to_be_visible(timeout=WAIT_MS)

    memory.get_by_role("button", name="Forget likes-tabs").click()
    expect(page.get_by_role("alert")).to_contain_text("say why likes-tabs should be forgotten")
    memory.get_by_label("Reason to forget likes-tabs").fill("They switched to spaces.")
    memory.get_by_role("button", name="Forget likes-tabs").click()
    expect(status(page)).to_contain_text("likes-tabs forgotten; it can be restored until")
    expect(memories.get_by_role("listitem")).to_have_count(0)
    forgotten = detail(page).get_by_role("list", name="Forgotten")
    expect(forgotten).to_contain_text("They switched to spaces.")

    forgotten.get_by_role("button", name="Restore likes-tabs").click()
    expect(status(page)).to_contain_text("likes-tabs restored.")
    expect(memory).to_be_visible()
    expect(detail(page).get_by_text("Nothing forgotten.")).to_be_visible()
    with agents_api(live, seeded.human_token) as http:
        (found,) = http.get(f"/api/agents/{made['id']}/memories").json()["memories"]
    assert (found["name"], found["pinned"]) == ("likes-tabs", True)
    assert page.locator("img").count() == 0 and page.title() == "Agent Workspace"


def test_an_agent_shared_with_another_account_is_accepted_there(live, seeded, runtime, console):
    page = console
    friend_account, friend = accounts.create_account(runtime.accounts, "Friend")
    with agents_api(live, seeded.human_token) as http:
        made = http.post("/api/agents", json={"name": "Triager", "prompt": "Sort the inbox."}).json()

    sign_in(page, live, seeded.human_token)
    open_agents(page)
    open_agent(page, "Triager")
    show_part(page, "Sharing")
    expect(detail(page).get_by_text("Not shared with anyone.")).to_be_visible(timeout=WAIT_MS)
    detail(page).get_by_label("Account id").fill(friend_account)
    detail(page).get_by_label("Access").select_option("edit")
    detail(page).get_by_label("Share its memories too").check()
    detail(page).get_by_role("button", name="Share agent").click()
    expect(status(page)).to_contain_text(f"Shared with {friend_account}; it waits for them to accept.")
    shares = detail(page).get_by_role("list", name="Accounts it is shared with")
    expect(shares).to_contain_text("waiting for them to accept")
    expect(shares).to_contain_text("read and edit")

    # The other account, in the same tab: the agent waits under "Shared with me" until it accepts.
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, live, friend.token)
    open_agents(page)
    page.get_by_role("button", name="Shared with me").click()
    listed = agents_list(page)
    expect(listed).to_contain_text("Waiting for you to accept", timeout=WAIT_MS)
    open_agent(page, "Triager")
    expect(detail(page).get_by_role("heading", name="Shared with you: accept it first")).to_be_visible()
    expect(detail(page).get_by_role("button", name="Delete agent")).to_be_hidden()
    detail(page).get_by_label("Follow new versions of its prompt").check()
    detail(page).get_by_role("button", name="Accept agent").click()
    expect(status(page)).to_contain_text("Accepted: you run version 1 and follow new ones.")
    expect(detail(page).get_by_role("heading", name="Shared with you: accept it first")).to_be_hidden()
    expect(detail(page).get_by_label("Prompt", exact=True)).to_have_value("Sort the inbox.", timeout=WAIT_MS)
    expect(listed).not_to_contain_text("Waiting for you to accept", timeout=WAIT_MS)

    with agents_api(live, seeded.human_token) as http:
        (share,) = http.get(f"/api/agents/{made['id']}/shares").json()["shares"]
    assert (share["account"], share["accepted"], share["follow"], share["access"]) == (
        friend_account, True, True, "edit",
    )  # fmt: skip


def test_a_credential_minted_in_the_console_loads_the_agent_over_mcp(live, seeded, runtime, console):
    page = console
    with agents_api(live, seeded.human_token) as http:
        made = http.post("/api/agents", json={"name": "Runner", "prompt": "Run the checks."}).json()
    sign_in(page, live, seeded.human_token)
    open_agents(page)
    open_agent(page, "Runner")

    credential = detail(page).get_by_role("region", name="Credential", exact=True)
    expect(credential.get_by_label("Workspace for the token")).to_have_value(seeded.workspace_id, timeout=WAIT_MS)
    credential.get_by_label("Tool to run it in").select_option("codex")
    credential.get_by_role("button", name="Mint credential").click()
    expect(status(page)).to_contain_text("Credential minted in")
    expect(credential.get_by_role("heading", name="Credential for Codex in")).to_be_focused()
    expect(credential.get_by_text("Shown once: store it now; revoke it under the workspace's tokens.")).to_be_visible()
    token_field = credential.get_by_label("Credential token")
    expect(token_field).to_have_value(re.compile(r"^aw_agent_\S+$"))
    token = token_field.input_value()
    expect(credential.locator("#agent-credential-connect")).to_contain_text(f"{live.url}/mcp")
    expect(credential.locator("#agent-credential-connect")).not_to_contain_text(token)
    expect(credential.locator("#agent-credential-load")).to_contain_text(made["id"])

    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live.url)
    credential.get_by_role("button", name="Copy credential token").click()
    expect(status(page)).to_have_text("The credential token was copied to the clipboard.")
    assert page.evaluate("navigator.clipboard.readText()") == token

    # The token is an agent token of that workspace, and loads the agent over MCP.
    principal = runtime.accounts.resolve_token(hash_token(token))
    assert principal is not None
    assert (principal.kind, principal.account_id, principal.workspace_id) == (
        TokenKind.AGENT, seeded.account_id, seeded.workspace_id,
    )  # fmt: skip

    async def load() -> tuple[str, bool]:
        async with connected(live.url, token) as runner:
            return await runner.raw("load_agent", {"agent": made["id"], "harness": "codex"})

    text, is_error = Background(lambda: anyio.run(load)).result()
    assert not is_error and "Run the checks." in text, text

    # Stored: it leaves the page.
    credential.get_by_role("button", name="I have stored it").click()
    expect(status(page)).to_have_text("The credential token is no longer shown.")
    expect(token_field).to_be_hidden()
    expect(token_field).to_have_value("")


def test_an_agent_offered_by_another_account_is_accepted_or_declined_there(live, seeded, runtime, console):
    """Issue 32: a transfer is an offer the receiving person accepts in the console (or declines)."""
    page = console
    friend_account, friend = accounts.create_account(runtime.accounts, "Friend")
    with agents_api(live, seeded.human_token) as http:
        for name in ("Handover", "Kept back"):
            made = http.post("/api/agents", json={"name": name, "prompt": "p"}).json()
            offered = http.post(f"/api/agents/{made['id']}/transfer", json={"account": friend_account})
            assert offered.status_code == 200, offered.text

    sign_in(page, live, friend.token)
    open_agents(page)
    offers = page.get_by_role("list", name="Agents offered to you")
    expect(offers).to_contain_text("Handover", timeout=WAIT_MS)
    expect(offers).to_contain_text("Kept back")
    expect(page.get_by_text("You have no agents yet")).to_be_visible(timeout=WAIT_MS)  # an offer grants nothing
    offers.get_by_role("button", name="Decline transfer of Kept back").click()
    expect(status(page)).to_contain_text("Declined the transfer of Kept back.")
    offers.get_by_role("button", name="Accept transfer of Handover").click()
    expect(status(page)).to_contain_text("Handover is yours now")
    expect(agents_list(page).get_by_role("link", name="Handover")).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_role("heading", name="Offered to you")).to_be_hidden()

    with agents_api(live, seeded.human_token) as http:
        assert [a["name"] for a in http.get("/api/agents").json()["agents"]] == ["Kept back"]
    with agents_api(live, friend.token) as http:
        assert [a["name"] for a in http.get("/api/agents").json()["agents"]] == ["Handover"]


def test_an_agent_opens_from_its_deep_link_and_back_returns_to_the_list(live, seeded, console):
    """Issue 35: `#/agents/<id>` is an address. Followed after sign-in it opens the agent beside the list, Back
    returns to the list (focus on the agent it left), Forward and a reload open it again; followed signed out, it
    opens once the person signs in; an agent that is not there sends the person back to the list, saying so."""
    page = console
    with agents_api(live, seeded.human_token) as http:
        made = http.post("/api/agents", json={"name": "Deep linked", "prompt": "Follow the link."}).json()
        assert http.post("/api/agents", json={"name": "Bystander"}).status_code == 201
    sign_in(page, live, seeded.human_token)
    open_agents(page)
    link = agents_list(page).get_by_role("link", name="Deep linked", exact=True)
    expect(link).to_be_visible(timeout=WAIT_MS)
    expect(detail(page)).to_be_hidden()

    page.goto(f"{live.url}/#/agents/{made['id']}")
    expect(detail(page).get_by_role("heading", name="Deep linked", level=2)).to_be_visible(timeout=WAIT_MS)
    expect(detail(page).get_by_label("Prompt", exact=True)).to_have_value("Follow the link.", timeout=WAIT_MS)
    expect(link).to_have_attribute("aria-current", "true")

    page.go_back()
    expect(page).to_have_url(re.compile(r"#/agents$"))
    expect(detail(page)).to_be_hidden()
    expect(link).not_to_have_attribute("aria-current", "true")
    expect(link).to_be_focused()

    page.go_forward()
    expect(detail(page).get_by_role("heading", name="Deep linked", level=2)).to_be_visible()
    page.reload()  # the tab keeps its token: the address opens the agent again
    expect(detail(page).get_by_role("heading", name="Deep linked", level=2)).to_be_visible(timeout=WAIT_MS)
    expect(detail(page).locator("#agent-meta")).to_contain_text("@deep-linked", timeout=WAIT_MS)

    page.get_by_role("button", name="Sign out").click()
    page.goto(f"{live.url}/#/agents/{made['id']}")
    page.get_by_label("Human token").fill(seeded.human_token)
    page.get_by_role("button", name="Sign in").click()
    expect(detail(page).get_by_role("heading", name="Deep linked", level=2)).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_role("link", name="Agents", exact=True)).to_have_attribute("aria-current", "page")

    page.goto(f"{live.url}/#/agents/@no-such-agent")
    expect(page.get_by_role("alert")).to_contain_text("Opening the agent failed", timeout=WAIT_MS)
    expect(page).to_have_url(re.compile(r"#/agents$"))
    expect(detail(page)).to_be_hidden()
