"""Settings › Notifications (issue 21): the human sets e-mail, Slack, what to hear about and quiet
hours, mutes a workspace, and sees a refusal name the field. REST, as the human, checks what the page saved."""

import httpx
from playwright.sync_api import expect

from tests.e2e.console_page import WAIT_MS, sign_in

SLACK = "http://127.0.0.1:9/services/T0/B0/secret"  # loopback: the local stack may post there


def test_the_human_sets_where_and_when_to_hear_and_mutes_a_workspace(live, runtime, seeded, console):
    runtime.settings = runtime.settings.model_copy(update={"public_url": live.url})  # the confirmation mail's link
    page = console
    sign_in(page, live, seeded.human_token)
    page.get_by_role("navigation", name="Views").get_by_role("link", name="Settings", exact=True).click()
    link = page.get_by_role("navigation", name="Settings sections").get_by_role("link", name="Notifications")
    link.click()
    expect(link).to_have_attribute("aria-current", "location")
    form = page.get_by_role("region", name="Notifications")
    expect(form.get_by_role("heading", name="Notifications")).to_be_focused()
    expect(form.get_by_text("No Slack webhook is set.")).to_be_visible(timeout=WAIT_MS)

    form.get_by_label("E-mail address").fill("not an address")
    form.get_by_role("button", name="Save notification settings").click()
    expect(form.get_by_role("alert")).to_contain_text("email must be an e-mail address", timeout=WAIT_MS)

    form.get_by_label("E-mail address").fill("me@example.com")
    form.get_by_label("Slack webhook URL").fill(SLACK)
    form.get_by_label("A cron run or event failed").uncheck()
    form.get_by_label("Quiet hours").check()
    form.get_by_label("From").fill("22:30")
    form.get_by_label("Until").fill("06:45")
    form.get_by_label("Time zone").fill("Europe/Istanbul")
    form.get_by_role("button", name="Save notification settings").click()
    expect(page.get_by_role("status")).to_contain_text("The notification settings are saved.", timeout=WAIT_MS)
    expect(form.get_by_text("A Slack webhook is set.")).to_be_visible()
    expect(form.get_by_label("Slack webhook URL")).to_have_value("")  # a secret: never shown again
    expect(form.get_by_text("Unconfirmed — check your mail")).to_be_visible()

    headers = {"authorization": f"Bearer {seeded.human_token}"}
    with httpx.Client(base_url=live.url, headers=headers) as http:
        saved = http.get("/api/notifications").json()
        assert saved | {"updatedAt": None} == {
            "email": "me@example.com",
            "emailConfirmed": False,
            "slack": True,
            "triggers": ["question", "blocker", "siteCall", "toolApproval", "humanTask", "review"],
            "quietHours": {"start": "22:30", "end": "06:45", "timeZone": "Europe/Istanbul"},
            "revision": 1,
            "updatedAt": None,
        }
        # The workspace's own triggers, set over the API, survive muting and unmuting from the console.
        override = f"/api/workspaces/{seeded.workspace_id}/notifications"
        assert http.put(override, json={"muted": False, "triggers": ["question"]}).status_code == 200
        form.get_by_label("Mute this workspace").check()
        expect(page.get_by_role("status")).to_contain_text("This workspace is muted.", timeout=WAIT_MS)
        assert http.get(override).json() == {"muted": True, "triggers": ["question"]}
        form.get_by_label("Mute this workspace").uncheck()
        expect(page.get_by_role("status")).to_contain_text("This workspace notifies you again.", timeout=WAIT_MS)
        assert http.get(override).json() == {"muted": False, "triggers": ["question"]}

        form.get_by_role("button", name="Remove the Slack webhook").click()
        expect(form.get_by_text("No Slack webhook is set.")).to_be_visible(timeout=WAIT_MS)
        assert http.get("/api/notifications").json()["slack"] is False


def test_the_console_offers_browser_notifications_and_its_worker_loads_under_the_pages_policy(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    page.evaluate("location.hash = '#/settings/notifications'")
    expect(page.get_by_role("button", name="Show notifications in this browser")).to_be_visible(timeout=WAIT_MS)
    # What the button registers: the worker that shows pushes, served from the root (its scope is the console).
    scope = page.evaluate(
        "navigator.serviceWorker.register('/sw.js').then(r => navigator.serviceWorker.ready.then(() => r.scope))"
    )
    assert scope == f"{live.url}/"
    served = httpx.get(f"{live.url}/sw.js")
    assert served.status_code == 200 and served.headers["content-type"].startswith("text/javascript")
    assert 'addEventListener("push"' in served.text
