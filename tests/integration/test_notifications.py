"""Notifications end to end (issue 21): an agent's question reaches the human by e-mail (SES, read back from
moto) and Slack (a local receiver), once, from the events queue; its answer links answer once.

The agent asks over MCP; the events function's own code (`workers.fan_out`) takes the queue's messages, as the
local stack's driver does. Time moves with the runtime's clock, never by waiting.
"""

import json
import re
import secrets
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import httpx
import pytest
from moto.backends import get_backend

from agent_workspace.domain.notifications import CONFIRMATION_SUBJECT
from agent_workspace.local.provision import LOCAL_SENDER
from agent_workspace.workers import fan_out
from tests.integration.test_elicit import create_task
from tests.support import Agent, mcp_client, ok, receive_all

pytestmark = pytest.mark.anyio

YES_NO = {"type": "object", "properties": {"ship": {"type": "boolean"}}, "required": ["ship"]}
LINK = re.compile(r"^  (Yes|No|Decline): (http://\S+/answer/\S+)$", re.M)


class SlackReceiver:
    """A local stand-in for Slack's incoming webhook: it keeps each JSON body posted to it."""

    def __init__(self, status: int = 200) -> None:
        self.posts: list[dict] = []
        self.status = status
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers["Content-Length"])
                receiver.posts.append(json.loads(self.rfile.read(length)))
                self.send_response(receiver.status)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self._server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/services/T0/B0/secret"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()


@pytest.fixture
def slack():
    receiver = SlackReceiver()
    yield receiver
    receiver.close()


@pytest.fixture
def human(live, seeded):
    with httpx.Client(base_url=live.url, headers={"authorization": f"Bearer {seeded.human_token}"}) as http:
        yield http


@pytest.fixture
def address() -> str:
    return f"human-{secrets.token_hex(4)}@example.com"  # moto's SES store is shared by the whole session


@pytest.fixture
def configured(runtime, live, human, slack, address):
    """The stack knows its URL (links point there); the human wants e-mail and Slack, and confirmed the address."""
    runtime.settings = runtime.settings.model_copy(update={"public_url": live.url, "agent_wait_seconds": 0.3})
    changed = human.patch("/api/notifications", json={"email": address, "slackWebhookUrl": slack.url})
    assert changed.status_code == 200, changed.text
    assert changed.json() | {"updatedAt": None} == {
        "email": address,
        "emailConfirmed": False,
        "slack": True,
        "triggers": ["question", "blocker", "siteCall", "toolApproval", "humanTask", "review", "failedRun"],
        "quietHours": None,
        "revision": 1,
        "updatedAt": None,
    }
    assert slack.url not in changed.text  # a secret: never shown again
    deliver_queue(runtime)  # the confirmation mail leaves from the events queue
    confirm(live, confirmation_link(address))
    assert human.get("/api/notifications").json()["emailConfirmed"] is True


@pytest.fixture
def linked(runtime, live):
    """The stack knows its URL, so confirmation and answer links can be made."""
    runtime.settings = runtime.settings.model_copy(update={"public_url": live.url, "agent_wait_seconds": 0.3})


CONFIRM_LINK = re.compile(r"(http://\S+/confirm-email/\S+)")


def confirmation_mails(address: str) -> list[Any]:
    ses = get_backend("ses")["123456789012"]["us-east-1"]
    return [
        m for m in ses.sent_messages if address in m.destinations["ToAddresses"] and m.subject == CONFIRMATION_SUBJECT
    ]


def confirmation_link(address: str) -> str:
    """The link of the latest confirmation mail to `address`."""
    [link] = CONFIRM_LINK.findall(confirmation_mails(address)[-1].body)
    return link


def confirm(live, link: str) -> httpx.Response:
    with httpx.Client() as browser:
        shown = browser.get(link)  # what a mail scanner does: nothing is confirmed
        assert shown.status_code in (200, 409, 422), shown.text
        return browser.post(link, headers={"origin": live.url})


def emails_to(address: str) -> list[Any]:
    """The notifications mailed to `address` (its confirmation mails apart)."""
    ses = get_backend("ses")["123456789012"]["us-east-1"]
    return [
        m for m in ses.sent_messages if address in m.destinations["ToAddresses"] and m.subject != CONFIRMATION_SUBJECT
    ]


def deliver_queue(runtime) -> list[dict]:
    """Every message on the events queue, through the events function's code; the messages, for redelivery."""
    bodies = [json.loads(m["Body"]) for m in receive_all(runtime)]
    for body in bodies:
        fan_out.deliver_message(runtime, body)
    return bodies


async def ask(live, seeded, runtime, schema: dict = YES_NO) -> tuple[str, str]:
    task_id = create_task(runtime, seeded)
    before = {q.id for q in runtime.elicitations.list_by_status(seeded.workspace_id, "pending")}
    async with mcp_client(live.url, seeded.agent_token) as client:
        text, is_error = await Agent(client)(
            "task", "elicit", taskId=task_id, message="Ship the release <@channel>?", requestedSchema=schema
        )
    assert not is_error and json.loads(text)["action"] == "pending", text
    [question] = [q for q in runtime.elicitations.list_by_status(seeded.workspace_id, "pending") if q.id not in before]
    return task_id, question.id


async def test_a_question_sends_one_email_and_one_slack_post_with_answer_links(
    configured, live, runtime, seeded, slack, address
):
    task_id, question_id = await ask(live, seeded, runtime)
    messages = deliver_queue(runtime)
    assert [m["kind"] for m in messages] == ["question"]

    [email] = emails_to(address)
    assert email.source == LOCAL_SENDER
    assert "Local workspace" in email.subject and "Ship the release" in email.subject
    assert f"{live.url}/#/workspaces/{seeded.workspace_id}/tasks/{task_id}" in email.body
    links = dict(LINK.findall(email.body))
    assert sorted(links) == ["Decline", "No", "Yes"]

    [post] = slack.posts
    assert "Ship the release &lt;@channel&gt;?" in post["text"]  # an agent's text cannot mention or link
    assert f"<{live.url}/#/workspaces/{seeded.workspace_id}/tasks/{task_id}|Open the task>" in post["text"]
    assert f"<{links['Yes']}|Yes>" in post["text"]

    # SQS delivers at least once: the same message again sends nothing more.
    for message in messages:
        fan_out.deliver_message(runtime, message)
    assert len(emails_to(address)) == 1 and len(slack.posts) == 1


async def test_an_answer_link_shows_then_answers_once_and_never_another_question(
    configured, live, runtime, seeded, address
):
    task_id, question_id = await ask(live, seeded, runtime)
    deliver_queue(runtime)
    links = dict(LINK.findall(emails_to(address)[0].body))
    with httpx.Client() as browser:
        shown = browser.get(links["Yes"])  # what a mail scanner does: nothing is answered
        assert shown.status_code == 200 and "Answer “Yes”" in shown.text
        assert "Ship the release &lt;@channel&gt;?" in shown.text  # the agent's text stays text
        assert runtime.elicitations.get(seeded.workspace_id, question_id).status == "pending"

        answered = browser.post(links["Yes"], headers={"origin": live.url})
        assert answered.status_code == 200 and "Answered" in answered.text, answered.text
        question = runtime.elicitations.get(seeded.workspace_id, question_id)
        assert (question.status, question.answer) == ("answered", {"action": "accept", "content": {"ship": True}})

        again = browser.post(links["Yes"], headers={"origin": live.url})
        assert again.status_code == 409 and "Already answered" in again.text
        other = browser.post(links["No"], headers={"origin": live.url})
        assert other.status_code == 409  # the question's other answers are spent too

    # A link for this question cannot be turned into one for another: the signature covers the id.
    _, second_id = await ask(live, seeded, runtime)
    body, mac = links["Yes"].rsplit("/", 1)[1].split(".")
    claims = json.loads(_unb64(body))
    forged = _b64(json.dumps({**claims, "id": second_id}, separators=(",", ":"), sort_keys=True).encode())
    with httpx.Client() as browser:
        refused = browser.post(f"{live.url}/answer/{forged}.{mac}", headers={"origin": live.url})
    assert refused.status_code == 422 and "not one the workspace made" in refused.text
    assert runtime.elicitations.get(seeded.workspace_id, second_id).status == "pending"


async def test_an_answer_link_is_refused_once_it_expires(configured, live, runtime, seeded, address, clock):
    await ask(live, seeded, runtime)
    deliver_queue(runtime)
    links = dict(LINK.findall(emails_to(address)[0].body))
    clock.advance(days=8)  # past the link's 7 days (and the question's own expiry)
    with httpx.Client() as browser:
        late = browser.post(links["Yes"], headers={"origin": live.url})
    assert late.status_code == 422 and "expired" in late.text


async def test_a_question_answered_before_the_queue_runs_sends_nothing(configured, live, runtime, seeded, address):
    _, question_id = await ask(live, seeded, runtime)
    from agent_workspace.services.elicitations import answer

    answer(runtime, seeded.workspace_id, question_id, "decline", None)
    deliver_queue(runtime)
    assert emails_to(address) == []


async def test_a_failing_slack_is_retried_later_with_a_growing_delay_and_the_email_is_not_held_up(
    configured, live, runtime, seeded, slack, address, monkeypatch
):
    slack.status = 500
    await ask(live, seeded, runtime)
    [message] = [json.loads(m["Body"]) for m in receive_all(runtime)]
    queued: list[tuple[dict, int]] = []
    monkeypatch.setattr(runtime.queue, "send", lambda body, delay=0: queued.append((body, delay)))

    assert fan_out.deliver_message(runtime, message) == 1  # the e-mail went; Slack failed
    assert len(emails_to(address)) == 1
    [(retry, delay)] = queued
    assert (retry["attempt"], delay) == (1, 30)
    assert fan_out.deliver_message(runtime, retry) == 0  # Slack fails again: later still
    assert (queued[-1][0]["attempt"], queued[-1][1]) == (2, 60)

    slack.status = 200
    assert fan_out.deliver_message(runtime, queued[-1][0]) == 1  # Slack only
    assert len(emails_to(address)) == 1 and len(slack.posts) == 3  # two failed attempts, then the one that took
    assert len(queued) == 2  # nothing more to retry


async def test_a_channel_that_keeps_failing_is_given_up_after_five_retries(
    configured, live, runtime, seeded, slack, monkeypatch
):
    slack.status = 500
    await ask(live, seeded, runtime)
    [message] = [json.loads(m["Body"]) for m in receive_all(runtime)]
    queued: list[tuple[dict, int]] = []
    monkeypatch.setattr(runtime.queue, "send", lambda body, delay=0: queued.append((body, delay)))
    fan_out.deliver_message(runtime, {**message, "attempt": 5})
    assert queued == []


async def test_quiet_hours_hold_a_notification_until_they_end(configured, live, runtime, seeded, human, address, clock):
    from datetime import UTC, datetime

    clock.set(datetime(2026, 12, 3, 23, 0, tzinfo=UTC))
    quiet = {"start": "22:00", "end": "07:00", "timeZone": "UTC"}
    assert human.patch("/api/notifications", json={"quietHours": quiet}).status_code == 200
    await ask(live, seeded, runtime)
    deliver_queue(runtime)
    assert emails_to(address) == []
    held = runtime.clients.sqs.get_queue_attributes(
        QueueUrl=runtime.settings.events_queue_url, AttributeNames=["ApproximateNumberOfMessagesDelayed"]
    )["Attributes"]["ApproximateNumberOfMessagesDelayed"]
    assert held == "1"  # back on the queue, 15 minutes at a time, until 07:00


async def test_a_muted_workspace_or_an_unwanted_trigger_sends_nothing(
    configured, live, runtime, seeded, human, address
):
    muted = human.put(f"/api/workspaces/{seeded.workspace_id}/notifications", json={"muted": True})
    assert muted.status_code == 200 and muted.json() == {"muted": True, "triggers": None}
    await ask(live, seeded, runtime)
    deliver_queue(runtime)
    assert emails_to(address) == []
    assert human.put(f"/api/workspaces/{seeded.workspace_id}/notifications", json={"muted": False}).status_code == 200
    assert human.patch("/api/notifications", json={"triggers": ["blocker"]}).json()["triggers"] == ["blocker"]
    await ask(live, seeded, runtime)
    deliver_queue(runtime)
    assert emails_to(address) == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "not an address"}, "email"),
        ({"slackWebhookUrl": "https://evil.example/services/x"}, "slackWebhookUrl"),
        ({"slackWebhookUrl": "http://169.254.169.254/latest/meta-data"}, "slackWebhookUrl"),
        ({"triggers": ["gossip"]}, "triggers"),
        ({"quietHours": {"start": "25:00", "end": "07:00", "timeZone": "UTC"}}, "quietHours.start"),
        ({"quietHours": {"start": "22:00", "end": "07:00", "timeZone": "../etc/passwd"}}, "quietHours.timeZone"),
        ({"sms": "+100"}, "sms"),
    ],
)
def test_bad_settings_are_refused_naming_the_field_and_nothing_changes(runtime, live, human, body, field):
    before = human.get("/api/notifications").json()
    refused = human.patch("/api/notifications", json=body)
    assert refused.status_code == 422, refused.text
    assert field in json.dumps(refused.json())
    assert human.get("/api/notifications").json() == before


def test_a_settings_change_that_lost_a_race_is_refused(runtime, seeded, linked):
    from agent_workspace.domain.errors import Conflict
    from agent_workspace.services import notification_settings

    notification_settings.update(runtime, seeded.account_id, {"email": "a@example.com"})
    stored = runtime.notifications.settings(seeded.account_id)
    runtime.notifications.save_settings(seeded.account_id, {"email": "b@example.com"}, stored["revision"])
    with pytest.raises(Conflict, match="changed meanwhile"):
        runtime.notifications.save_settings(seeded.account_id, {"email": "c@example.com"}, stored["revision"])
    assert runtime.notifications.settings(seeded.account_id)["email"] == "b@example.com"


def _b64(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# -- confirming the address ------------------------------------------------------------------------


async def test_an_address_gets_one_confirmation_and_nothing_else_until_its_link_is_used(
    linked, live, runtime, seeded, human, address
):
    changed = human.patch("/api/notifications", json={"email": address})
    assert changed.status_code == 200 and changed.json()["emailConfirmed"] is False, changed.text
    assert confirmation_mails(address) == []  # it leaves from the events queue, like every notification
    deliver_queue(runtime)
    [mail] = confirmation_mails(address)
    assert mail.source == LOCAL_SENDER and address in mail.body
    link = confirmation_link(address)

    await ask(live, seeded, runtime)
    deliver_queue(runtime)
    assert emails_to(address) == []  # unconfirmed: the question is not mailed

    with httpx.Client() as browser:
        shown = browser.get(link)  # a mail scanner opening the link confirms nothing
        assert shown.status_code == 200 and address in shown.text
        assert human.get("/api/notifications").json()["emailConfirmed"] is False
        confirmed = browser.post(link, headers={"origin": live.url})
        assert confirmed.status_code == 200 and "Confirmed" in confirmed.text, confirmed.text
        again = browser.post(link, headers={"origin": live.url})
        assert again.status_code == 409
    assert human.get("/api/notifications").json()["emailConfirmed"] is True
    assert len(confirmation_mails(address)) == 1

    await ask(live, seeded, runtime)
    deliver_queue(runtime)
    assert len(emails_to(address)) == 1


async def test_changing_the_address_resets_its_confirmation(configured, live, runtime, seeded, human, address, clock):
    old_link = confirmation_link(address)
    clock.advance(minutes=2)
    other = f"other-{address}"
    changed = human.patch("/api/notifications", json={"email": other})
    assert changed.status_code == 200 and changed.json()["emailConfirmed"] is False, changed.text
    deliver_queue(runtime)
    assert len(confirmation_mails(other)) == 1

    # The old address's link confirms nothing now: it names the address it was sent to.
    assert confirm(live, old_link).status_code == 409
    await ask(live, seeded, runtime)
    deliver_queue(runtime)
    assert emails_to(address) == [] and emails_to(other) == []

    # Setting the confirmed address again is no change: no mail; the new one still needs its link.
    unchanged = human.patch("/api/notifications", json={"triggers": ["question"]})
    deliver_queue(runtime)
    assert unchanged.json()["emailConfirmed"] is False and len(confirmation_mails(other)) == 1
    assert confirm(live, confirmation_link(other)).status_code == 200
    assert human.get("/api/notifications").json()["emailConfirmed"] is True


def test_confirmation_mails_to_an_address_are_at_most_one_a_minute(linked, live, runtime, human, address, clock):
    assert human.patch("/api/notifications", json={"email": address}).status_code == 200
    again = human.patch("/api/notifications", json={"email": address})
    assert again.status_code == 429 and int(again.headers["retry-after"]) > 0, again.text
    clock.advance(minutes=1, seconds=1)
    assert human.patch("/api/notifications", json={"email": address}).status_code == 200
    deliver_queue(runtime)
    assert len(confirmation_mails(address)) == 1  # the first link was spent by the second request: only its mail


async def test_a_confirmation_link_answers_nothing_and_an_answer_link_confirms_nothing(
    configured, live, runtime, seeded, address, human, clock
):
    await ask(live, seeded, runtime)
    deliver_queue(runtime)
    answer_token = dict(LINK.findall(emails_to(address)[0].body))["Yes"].rsplit("/", 1)[1]
    clock.advance(minutes=2)
    other = f"next-{address}"
    assert human.patch("/api/notifications", json={"email": other}).status_code == 200
    deliver_queue(runtime)
    confirm_token = confirmation_link(other).rsplit("/", 1)[1]
    with httpx.Client() as browser:
        as_answer = browser.post(f"{live.url}/answer/{confirm_token}", headers={"origin": live.url})
        as_confirmation = browser.post(f"{live.url}/confirm-email/{answer_token}", headers={"origin": live.url})
    assert as_answer.status_code == 422, as_answer.text
    assert as_confirmation.status_code == 422, as_confirmation.text
    assert human.get("/api/notifications").json()["emailConfirmed"] is False


# -- the other triggers ----------------------------------------------------------------------------


async def test_a_task_for_the_human_and_a_blocker_are_sent_each_once(configured, live, runtime, seeded, address, slack):
    async with mcp_client(live.url, seeded.agent_token) as client:
        agent = Agent(client)
        task_id = await agent.create(title="Sign the contract", body="Page 3 needs your signature.", assignee="human")
        own = await agent.create(title="Refactor the parser", body="")
        text, is_error = await agent("task", "updateStatus", taskId=own, status="blocked")
        assert not is_error, text
    deliver_queue(runtime)
    subjects = sorted(email.subject for email in emails_to(address))
    assert subjects == [
        "[Local workspace] A task for you: Page 3 needs your signature.",
        "[Local workspace] Blocked on you: Refactor the parser",
    ]
    [for_human] = [e for e in emails_to(address) if "A task for you" in e.subject]
    assert f"{live.url}/#/workspaces/{seeded.workspace_id}/tasks/{task_id}" in for_human.body
    assert len(slack.posts) == 2


# Masaro's report_blocker: "Notifies you immediately with specific unblocking questions".
async def test_a_reported_blocker_is_sent_with_its_questions_bounded_and_escaped(
    configured, live, runtime, seeded, address, slack
):
    long = "Which of these " + "very " * 200 + "many options?"
    questions = ["Which currency do refunds use? <!channel>", "May I\nskip the ledger?", long]
    async with mcp_client(live.url, seeded.agent_token) as client:
        agent = Agent(client)
        made = await ok(agent, "create_task", title="Add refunds", description="POST /refunds")
        await ok(agent, "claim_task", taskId=made["id"])
        await ok(agent, "report_blocker", taskId=made["id"], questions=questions, message="Stuck on policy")
    deliver_queue(runtime)
    [email] = emails_to(address)
    asked = "1. Which currency do refunds use? <!channel>"
    assert email.subject == f"[Local workspace] Blocked on you: {asked} 2. May I skip the ledger? 3. Which…"
    assert f"{asked}\n2. May I skip the ledger?\n3. Which of these very" in email.body
    [third] = [line for line in email.body.splitlines() if line.startswith("3. ")]
    assert len(third) == len("3. ") + 500 and third.endswith("…"), "each question is cut to 500 characters"
    assert "POST /refunds" not in email.body, "the questions, not the description"
    [post] = slack.posts
    assert ">1. Which currency do refunds use? &lt;!channel&gt;\n>2. May I skip the ledger?\n>3. " in post["text"]
    assert "<!channel>" not in post["text"], "an agent's question cannot mention the channel"


async def test_a_site_call_is_allowed_once_from_its_link(configured, live, runtime, seeded, address, human):
    site = {"origin": "https://shop.example", "title": "Shop", "tools": [{"name": "add_to_cart"}]}
    assert human.put("/api/bridge/sites", json={"sites": [site]}).status_code == 200
    task_id = create_task(runtime, seeded)
    async with mcp_client(live.url, seeded.agent_token) as client:
        text, is_error = await Agent(client)(
            "siteTools", "call", taskId=task_id, site="https://shop.example", tool="add_to_cart", arguments={}
        )
    assert not is_error and json.loads(text)["status"] == "pending", text
    deliver_queue(runtime)
    [email] = emails_to(address)
    assert email.subject.startswith("[Local workspace] An agent wants to run add_to_cart on https://shop.example")
    links = dict(re.findall(r"^  (Allow once|Deny): (\S+)$", email.body, re.M))
    with httpx.Client() as browser:
        assert browser.post(links["Allow once"], headers={"origin": live.url}).status_code == 200
        assert browser.post(links["Deny"], headers={"origin": live.url}).status_code == 409  # decided already
    [call] = human.get(f"/api/workspaces/{seeded.workspace_id}/site-calls").json()
    assert (call["status"], call["decision"]) == ("queued", "allow_once")


async def test_a_claude_code_permission_request_is_allowed_from_its_link(configured, live, runtime, seeded, address):
    with httpx.Client(base_url=live.url, headers={"authorization": f"Bearer {seeded.agent_token}"}) as bridge:
        asked = bridge.post(
            "/api/channel/permissions",
            json={"requestId": "abcde", "toolName": "Bash", "description": "Run the tests", "inputPreview": "make"},
        )
    assert asked.status_code == 201, asked.text
    deliver_queue(runtime)
    [email] = emails_to(address)
    assert "Claude Code asks to use Bash" in email.subject and "Run the tests" in email.body
    links = dict(re.findall(r"^  (Allow|Deny): (\S+)$", email.body, re.M))
    with httpx.Client() as browser:
        done = browser.post(links["Deny"], headers={"origin": live.url})
    assert done.status_code == 200, done.text
    assert runtime.channel.question(seeded.workspace_id, asked.json()["id"]).status == "denied"


def test_null_puts_a_field_back_to_its_default(runtime, live, human, linked):
    changed = human.patch("/api/notifications", json={"email": "me@example.com", "triggers": ["question"]})
    assert changed.status_code == 200, changed.text
    reset = human.patch("/api/notifications", json={"email": None, "triggers": None, "quietHours": None})
    assert reset.status_code == 200, reset.text
    assert (reset.json()["email"], len(reset.json()["triggers"]), reset.json()["quietHours"]) == (None, 7, None)


async def test_a_delivery_waiting_for_sign_off_is_sent_for_review(configured, live, runtime, seeded, address, human):
    assert human.put(f"/api/workspaces/{seeded.workspace_id}/board/policy", json={"signOff": True}).status_code == 200
    async with mcp_client(live.url, seeded.agent_token) as client:
        agent = Agent(client)
        created = await ok(agent, "create_task", title="Migrate the table")
        await ok(agent, "claim_task", taskId=created["id"])
        await ok(agent, "complete_task", taskId=created["id"], summary="Migrated; rollback tested.")
    deliver_queue(runtime)
    [email] = emails_to(address)
    assert email.subject == "[Local workspace] A delivery waits for your review: Migrated; rollback tested."


# -- Web Push ----------------------------------------------------------------------------------------


class PushService(SlackReceiver):
    """A browser's push service on loopback: it keeps each request's headers and encrypted body."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict, bytes]] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                service.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(201)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/push/send/abc"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()


async def test_a_web_push_is_encrypted_for_the_subscription_and_signed_with_the_stacks_key(
    configured, live, runtime, seeded, human
):
    import http_ece
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, utils

    browser_key = ec.generate_private_key(ec.SECP256R1())
    auth = secrets.token_bytes(16)
    point = browser_key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    service = PushService()
    try:
        subscribed = human.post(
            "/api/notifications/push-subscriptions",
            json={"endpoint": service.url, "expirationTime": None, "keys": {"p256dh": _b64(point), "auth": _b64(auth)}},
        )
        assert subscribed.status_code == 201, subscribed.text
        await ask(live, seeded, runtime)
        messages = deliver_queue(runtime)
        for message in messages:  # delivered twice: pushed once
            fan_out.deliver_message(runtime, message)
        [(headers, body)] = service.requests
    finally:
        service.close()
    assert headers["content-encoding"] == "aes128gcm" and headers["ttl"] == "86400"
    shown = json.loads(http_ece.decrypt(body, private_key=browser_key, auth_secret=auth, version="aes128gcm"))
    assert shown["title"].startswith("[Local workspace] An agent asks you") and "Ship the release" in shown["body"]
    assert shown["url"].startswith(f"{live.url}/#/workspaces/{seeded.workspace_id}/tasks/")

    # VAPID: a JWT for the push service's origin, signed by the key the browser subscribed with.
    scheme, _, fields = headers["authorization"].partition(" ")
    assert scheme == "vapid"
    token, key = (part.split("=", 1)[1] for part in fields.split(","))
    assert key == human.get("/api/notifications/push-key").json()["publicKey"]
    head, claims, signature = token.split(".")
    assert json.loads(_unb64(claims))["aud"] == service.url.split("/push")[0]
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), _unb64(key))
    raw = _unb64(signature)
    der = utils.encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))  # raises if forged


@pytest.mark.parametrize(
    ("endpoint", "field"),
    [
        ("https://evil.example/push", "endpoint"),
        ("http://169.254.169.254/latest", "endpoint"),
        ("https://fcm.googleapis.com.evil.example/x", "endpoint"),
    ],
)
def test_a_subscription_to_anything_but_a_push_service_is_refused(runtime, live, human, endpoint, field):
    body = {"endpoint": endpoint, "keys": {"p256dh": _b64(b"\x04" + b"x" * 64), "auth": _b64(b"a" * 16)}}
    refused = human.post("/api/notifications/push-subscriptions", json=body)
    assert refused.status_code == 422 and field in refused.text, refused.text
    assert human.get("/api/notifications/push-subscriptions").json() == []


# -- a cron run that failed ------------------------------------------------------------------------


@pytest.mark.parametrize("retry_succeeds", [False, True])
async def test_a_cron_run_that_still_failed_after_retries_is_told_once_and_one_a_retry_saved_is_not(
    configured, runtime, seeded, address, monkeypatch, retry_succeeds
):
    from agent_workspace.domain.errors import Unavailable
    from agent_workspace.services import schedules
    from agent_workspace.services.tasks import Actor, NewTask, create_task

    monkeypatch.setattr(schedules, "FAILED_RUN_NOTICE_SECONDS", 0)  # in production: 10 minutes later
    human_actor = Actor("human", seeded.account_id, seeded.workspace_id, "t")
    template = create_task(runtime, human_actor, NewTask("Nightly report", "", cron_schedule="30 * * * *"))
    event = schedules.Firing(seeded.account_id, seeded.workspace_id, template.id, template.next_fire_at).input()
    create_run = runtime.tasks.create_run

    def failing(*args, **kwargs):
        raise Unavailable("the table is throttled")

    monkeypatch.setattr(runtime.tasks, "create_run", failing)
    for _ in range(3):  # Lambda's first attempt and its two retries
        with pytest.raises(Unavailable):
            schedules.fire(runtime, event)
    if retry_succeeds:
        monkeypatch.setattr(runtime.tasks, "create_run", create_run)
        assert schedules.fire(runtime, event) == "created"
    deliver_queue(runtime)
    subjects = [email.subject for email in emails_to(address)]
    if retry_succeeds:
        assert subjects == []
    else:
        assert subjects == ["[Local workspace] A cron run failed: The run due at " + template.next_fire_at
                            + " failed after retries."]  # fmt: skip


# -- a flood becomes a digest ------------------------------------------------------------------------


async def test_more_than_three_in_a_minute_are_sent_as_one_digest(configured, live, runtime, seeded, address, clock):
    from datetime import UTC, datetime

    clock.set(datetime(2026, 12, 3, 12, 0, 10, tzinfo=UTC))
    for _ in range(5):
        await ask(live, seeded, runtime)
    messages = deliver_queue(runtime)
    assert len(messages) == 5
    for message in messages:  # SQS delivers them again: nothing more is sent or listed twice
        fan_out.deliver_message(runtime, message)
    assert len(emails_to(address)) == 3  # one by one up to three a minute
    delayed = runtime.clients.sqs.get_queue_attributes(
        QueueUrl=runtime.settings.events_queue_url, AttributeNames=["ApproximateNumberOfMessagesDelayed"]
    )["Attributes"]["ApproximateNumberOfMessagesDelayed"]
    assert delayed == "1"  # the digest, when the minute is over

    flush = {
        **messages[0],
        "kind": "digest",
        "id": "digest#2026-12-03T12:00",
        "ref": "2026-12-03T12:00",
        "taskId": None,
    }
    assert fan_out.deliver_message(runtime, flush) == 2  # e-mail and Slack
    assert fan_out.deliver_message(runtime, flush) == 0  # delivered twice: sent once
    digest = emails_to(address)[-1]
    assert digest.subject == "2 things wait for you in Agent Workspace"
    assert digest.body.count("An agent asks you") == 2 and digest.body.count(f"{live.url}/#/workspaces/") == 2


async def test_an_event_still_undelivered_after_retries_is_told_and_one_a_retry_delivered_is_not(
    configured, runtime, seeded, address, monkeypatch
):
    from agent_workspace.domain.errors import Unavailable
    from agent_workspace.domain.models import Actor
    from agent_workspace.services import events

    monkeypatch.setattr(events, "FAILED_EVENT_NOTICE_SECONDS", 0)  # in production: 15 minutes later
    event = events.define_event(runtime, seeded.account_id, "release_cut", "A release branch was cut")
    events.subscribe(runtime, seeded.account_id, seeded.workspace_id, event.id, "Smoke-test it", "")
    agent = Actor("agent", seeded.account_id, seeded.workspace_id, "t")
    for name in ("release_cut", "release_cut"):
        events.publish(runtime, agent, events.NewPublication(name, "v1.2"))
    [first, second] = [json.loads(m["Body"]) for m in receive_all(runtime)]
    original = runtime.events.mark_delivered

    def failing(*args, **kwargs):
        raise Unavailable("the table is throttled")

    monkeypatch.setattr(runtime.events, "mark_delivered", failing)
    for message in (first, second):
        with pytest.raises(Unavailable):
            fan_out.deliver_message(runtime, message)
    monkeypatch.setattr(runtime.events, "mark_delivered", original)
    fan_out.deliver_message(runtime, second)  # SQS's retry of the second works
    deliver_queue(runtime)
    [email] = emails_to(address)  # the first only
    assert email.subject.startswith("[Local workspace] An event could not be delivered: “release_cut” published at")
