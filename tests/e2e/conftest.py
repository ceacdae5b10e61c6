"""The console in Debian's headless Chromium, driven by Playwright (no browser download: `CHROMIUM`)."""

import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
EXTENSION = Path(__file__).resolve().parents[2] / "extension"
# Headless as root in a closed network: no sandbox, and none of Chromium's background connections.
_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def chromium():
    """Module-scoped on purpose: Playwright's sync API keeps an event loop running in this thread while it
    lives, which would break every anyio test collected after this folder."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"the console tests need Chromium at {CHROMIUM}: apt-get install chromium (make test does)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def extension_context(tmp_path_factory):
    """Chromium with the unpacked extension (extension/) in a profile of its own: (context, the extension's id).

    A persistent context, since Chromium loads extensions only into a profile. Module-scoped like `chromium`."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"the extension tests need Chromium at {CHROMIUM}: apt-get install chromium (make test does)")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chrome-profile")),
            executable_path=CHROMIUM,
            headless=True,
            args=[*_ARGS, f"--disable-extensions-except={EXTENSION}", f"--load-extension={EXTENSION}"],
            viewport={"width": 1280, "height": 900},
        )
        worker = context.service_workers[0] if context.service_workers else context.wait_for_event("serviceworker")
        yield context, urlsplit(worker.url).hostname
        context.close()


@pytest.fixture
def page(chromium):
    """A fresh browser context (its own sessionStorage) per test, narrow or wide as the test sets it."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def console(page):
    """The page, failing the test on any script error or CSP violation it logs."""
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))

    def on_console(message) -> None:
        # A refused request (401, 422, ...) is logged by Chromium itself; the page shows those in its alert.
        if message.type == "error" and "Failed to load resource" not in message.text:
            problems.append(f"console: {message.text}")

    page.on("console", on_console)
    yield page
    assert problems == [], problems


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
