"""Settings › Chrome extension: the browser's online state, its shared sites, the install steps.

The browser's side is its REST protocol with the human's token (`PUT /api/bridge/sites`, `DELETE
/api/bridge/online`), as the extension speaks it (tests/e2e/test_extension.py drives the real extension).
"""

import httpx
from playwright.sync_api import expect

from tests.e2e.console_page import WAIT_MS, sign_in

SITES = {
    "sites": [
        {
            "origin": "https://shop.example",
            "title": "Shop <b>now</b>",
            "tools": [
                {"name": "find_item", "annotations": {"readOnlyHint": True}},
                {"name": "add_to_cart"},
            ],
        }
    ]
}


def test_the_card_shows_install_steps_then_the_connected_browser_and_its_sites(live, seeded, console):
    page = console
    sign_in(page, live, seeded.human_token)
    page.evaluate("location.hash = '#/settings/extension'")
    card = page.get_by_role("region", name="Chrome extension")
    expect(card.get_by_role("heading", name="Chrome extension")).to_be_focused()
    state = card.locator(".browser-state")  # not a live region: it changes with every read of the browser
    expect(state).to_have_text("Not connected", timeout=WAIT_MS)
    expect(card.get_by_text("No site is shared yet.")).to_be_visible()
    # The install steps are closed on load (they no longer push the page down); the human opens them, with
    # this server's URL to paste into the extension.
    steps = card.get_by_text("Load unpacked", exact=False)
    expect(steps).to_be_hidden()
    card.get_by_text("Install the extension", exact=True).click()
    expect(steps).to_be_visible()
    expect(card.get_by_label("Server URL")).to_have_value(live.url)

    with httpx.Client(base_url=live.url, headers={"authorization": f"Bearer {seeded.human_token}"}) as http:
        assert http.put("/api/bridge/sites", json=SITES).status_code == 200
        expect(state).to_contain_text("Connected · last seen", timeout=WAIT_MS)
        expect(steps).to_be_hidden(timeout=WAIT_MS)  # connected: the guide has done its job and closes
        sites = card.get_by_role("list", name="Shared sites")
        expect(sites.get_by_role("listitem")).to_have_count(1)
        expect(sites).to_contain_text("Shop <b>now</b>")  # a page's title stays text
        expect(sites).to_contain_text("https://shop.example")
        expect(sites).to_contain_text("2 tools, 1 asking you before each call")

        assert http.delete("/api/bridge/online").status_code == 204
        expect(state).to_have_text("Not connected", timeout=WAIT_MS)  # signed out: offline at once
        expect(steps).to_be_hidden()  # and the guide stays closed: opening it is the human's call
