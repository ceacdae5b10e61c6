"""The console's screenshots in docs/images (1440, 1024 and 390 px wide), taken from a running `make serve`.

Seeds a workspace the way a new user tries the console (17 tasks across the board, two open questions, a
blocker, a delivery waiting for sign-off, a proposal in triage), then drives Debian's Chromium with Playwright.

    make serve   # in another terminal; it prints the tokens
    .venv/bin/python scripts/console_screenshots.py http://127.0.0.1:8000 <human token> <agent token>
"""

import sys
import threading
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import sync_playwright

OUT = Path(__file__).resolve().parents[1] / "docs" / "images"
CHROMIUM = "/usr/bin/chromium"

TASKS = [  # title, column, priority, labels
    ("Rotate the staging database credentials", "backlog", "low", ["ops"]),
    ("Write the migration guide for v2", "backlog", "medium", ["docs"]),
    ("Drop the legacy export endpoint", "backlog", "none", []),
    ("Cache the pricing table per region", "ready", "high", ["perf"]),
    ("Add retries to the webhook sender", "ready", "medium", ["reliability"]),
    ("Translate the onboarding e-mails", "ready", "low", ["i18n"]),
    ("Fix the flaky checkout test", "ready", "urgent", ["ci", "checkout"]),
    ("Split the invoice PDF renderer", "ready", "medium", []),
    ("Move receipts to the new bucket", "ready", "none", ["ops"]),
]
AGENT_WORK = [  # title, what the agent does with it
    ("Upgrade the payment SDK", "progress"),
    ("Audit the admin role's permissions", "progress"),
    ("Ship the EU data residency switch", "blocker"),
    ("Rewrite the search ranking", "deliver"),
    ("Archive stale feature flags", "done"),
    ("Tidy the README badges", "done"),
]


CHOICE = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["Option A", "Option B"]}}}


class Agent:
    """An agent over MCP's JSON-RPC (stateless, JSON answers), by the board's tool names on /mcp/masaro."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.headers = {"authorization": f"Bearer {token}", "accept": "application/json, text/event-stream"}

    def call(self, name: str, path: str = "/mcp/masaro", timeout: float = 30, **arguments: Any) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        response = httpx.post(f"{self.url}{path}", json=body, headers=self.headers, timeout=timeout)
        response.raise_for_status()
        result = response.json()["result"]
        assert not result.get("isError"), result
        return result


def seed(url: str, human_token: str, agent_token: str) -> str:
    human = httpx.Client(base_url=url, headers={"authorization": f"Bearer {human_token}"}, timeout=30)
    workspace = human.get("/api/workspaces").json()[0]["id"]
    base = f"/api/workspaces/{workspace}"
    human.put(f"{base}/board/policy", json={"signOff": True}).raise_for_status()
    for title, column, priority, labels in TASKS:
        body = {"title": title, "description": f"{title}.", "column": column, "priority": priority, "labels": labels}
        human.post(f"{base}/board/tasks", json=body).raise_for_status()
    agent = Agent(url, agent_token)
    for title, what in AGENT_WORK:
        criteria = ["Tests pass", "Docs updated", "Rollout plan written"]
        task = agent.call("create_task", title=title, assignee="agent", criteria=criteria, priority="high")
        task_id = task["structuredContent"]["id"]
        agent.call("claim_task", taskId=task_id)
        agent.call("update_progress", taskId=task_id, message="Started: reading the code paths involved.")
        if what == "blocker":
            agent.call(
                "report_blocker",
                taskId=task_id,
                questions=[
                    "Which region holds EU customers' backups: eu-west-1 or eu-central-1?",
                    "May the switch go live before the DPA is countersigned?",
                ],
            )
        elif what in ("deliver", "done"):
            agent.call("complete_task", taskId=task_id, summary="Done: see the linked PR.")
            if what == "done":
                human.post(f"{base}/board/tasks/{task_id}/review", json={"decision": "approve"}).raise_for_status()
        human.post(f"{base}/board/tasks/{task_id}/comments", json={"text": "Thanks, keep me posted."})
    human.put(f"{base}/board/policy", json={"supervised": True}).raise_for_status()
    agent.call("create_task", title="Proposal: add a status page", assignee="agent")
    human.put(f"{base}/board/policy", json={"supervised": False, "signOff": True}).raise_for_status()
    for title, message in [
        ("Pick the launch date", "Which launch date suits marketing?"),
        ("Choose the plan names", "Which names should the paid plans get?"),
    ]:
        task = agent.call(
            "task", path="/mcp", action="create", payload={"title": title, "body": message, "assignee": "human"}
        )
        task_id = task["content"][0]["text"].removeprefix("task created with id=")
        threading.Thread(  # the agent waits for the answer: leave it waiting while the pictures are taken
            target=lambda t=task_id, m=message: agent.call(
                "task",
                path="/mcp",
                timeout=120,
                action="elicit",
                payload={"taskId": t, "message": m, "mode": "form", "requestedSchema": CHOICE, "timeoutSeconds": 110},
            ),
            daemon=True,
        ).start()
    return workspace


def shoot(url: str, human_token: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for width, height, where, name in [
            (1440, 900, "#/board", "console-1440-board.png"),
            (1440, 900, "#/task/WS-12", "console-1440.png"),
            (1024, 768, "#/inbox", "console-1024.png"),
            (390, 844, "#/board", "console-390.png"),
        ]:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(f"{url}/")
            page.fill("#token-input", human_token)
            page.click("#signin-form button")
            page.wait_for_selector("#app:not([hidden])")
            page.evaluate(f"location.hash = {where!r}")
            body = page.locator("body")
            for _ in range(3):  # three refresh rounds: the board, the inbox and the open task read
                page.wait_for_selector("body[data-rounds]", state="attached", timeout=30_000)
                seen = body.get_attribute("data-rounds")
                page.wait_for_selector(f"body:not([data-rounds='{seen}'])", state="attached", timeout=30_000)
            page.screenshot(path=str(OUT / name))
            print(OUT / name, page.title())
        browser.close()


if __name__ == "__main__":
    target, human_token, agent_token = sys.argv[1:4]
    seed(target, human_token, agent_token)
    shoot(target, human_token)
