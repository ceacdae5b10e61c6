"""Events across workspaces: the human wires them (REST), agents publish them (MCP), the queue's consumer fans out.

A publication is recorded and referenced by one SQS message; the consumer (`workers.fan_out`, run by
functions/events/app.py on AWS and by `local.drivers.QueueDriver` locally) turns it into one trigger
task per subscription. moto keeps the queue but never delivers it, so these tests receive the
message themselves and hand it over in the shape Lambda's SQS event source gives it.
"""

import copy
import hashlib
import json
import re
import secrets
import uuid

import httpx
import pytest

from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Actor
from agent_workspace.local.drivers import QueueDriver, queue_arn, sqs_record
from agent_workspace.local.stack import seed
from agent_workspace.services import accounts, events
from agent_workspace.store import keys
from agent_workspace.store.dynamo import key, to_item
from agent_workspace.workers import fan_out
from tests import support
from tests.support import (
    FUNCTION_NAMES,
    ROOT,
    LambdaContext,
    assert_problem,
    bearer,
    load_function,
    mcp_client,
    receive_all,
)

pytestmark = pytest.mark.anyio

SAMPLE_EVENT = ROOT / "events" / "sqs_event_published.json"
BASE62_ID = re.compile(r"^[0-9A-Za-z]{11}$")

PAYLOAD = "v0.9.20 is live on production."
FAQ = [{"q": "Which commit?", "a": "a0b8ab0"}, {"q": "Rollback plan?", "a": "Redeploy v0.9.19."}]
SUB_BODY = "Run the smoke tests against production and report anything red."


# -- REST helpers ---------------------------------------------------------------------------------


class Wiring:
    """The events routes, as one token's holder."""

    def __init__(self, live, token: str) -> None:
        self.url = live.url
        self.headers = bearer(token)

    def define(self, **body) -> httpx.Response:
        return httpx.post(f"{self.url}/api/events", json=body, headers=self.headers)

    def list_events(self) -> httpx.Response:
        return httpx.get(f"{self.url}/api/events", headers=self.headers)

    def get_event(self, event_id: str) -> httpx.Response:
        return httpx.get(f"{self.url}/api/events/{event_id}", headers=self.headers)

    def delete_event(self, event_id: str) -> httpx.Response:
        return httpx.delete(f"{self.url}/api/events/{event_id}", headers=self.headers)

    def subscribe(self, workspace_id: str, **body) -> httpx.Response:
        return httpx.post(f"{self.url}/api/workspaces/{workspace_id}/subscriptions", json=body, headers=self.headers)

    def list_subscriptions(self, workspace_id: str) -> httpx.Response:
        return httpx.get(f"{self.url}/api/workspaces/{workspace_id}/subscriptions", headers=self.headers)

    def get_subscription(self, workspace_id: str, subscription_id: str) -> httpx.Response:
        return httpx.get(
            f"{self.url}/api/workspaces/{workspace_id}/subscriptions/{subscription_id}", headers=self.headers
        )

    def unsubscribe(self, workspace_id: str, subscription_id: str) -> httpx.Response:
        return httpx.delete(
            f"{self.url}/api/workspaces/{workspace_id}/subscriptions/{subscription_id}", headers=self.headers
        )

    def publications(self, **params) -> httpx.Response:
        return httpx.get(f"{self.url}/api/published-events", params=params, headers=self.headers)

    # -- the happy paths, asserted --

    def event(self, name: str = "deploy_done", description: str = "A release reached production.") -> dict:
        response = self.define(name=name, description=description)
        assert response.status_code == 201, response.text
        return response.json()

    def subscription(self, workspace_id: str, event_id: str, title: str = "Smoke-test the deploy") -> dict:
        response = self.subscribe(workspace_id, eventId=event_id, title=title, body=SUB_BODY)
        assert response.status_code == 201, response.text
        return response.json()

    def published(self) -> list[dict]:
        response = self.publications()
        assert response.status_code == 200, response.text
        return response.json()["publications"]


@pytest.fixture
def wiring(live, seeded) -> Wiring:
    return Wiring(live, seeded.human_token)


def new_workspace(runtime, account_id: str, title: str) -> tuple[str, str]:
    """Another workspace of the account: (its id, its agent token)."""
    workspace, issued = accounts.create_workspace(runtime.accounts, account_id, title, "")
    return workspace.id, issued.token


# -- MCP helpers ----------------------------------------------------------------------------------


class Agent(support.Agent):
    """The shared agent, publishing too: `await agent("workspace", "publishEvent", name=...)` → (text, is_error)."""

    async def publish(self, **payload) -> None:
        assert await self("workspace", "publishEvent", **payload) == (f'event "{payload["name"]}" published', False)

    async def set_status(self, task_id: str, status: str) -> None:
        text, is_error = await self("task", "updateStatus", taskId=task_id, status=status)
        assert (text, is_error) == (f"task {task_id} status set to {status}", False)


@pytest.fixture
def agent_type() -> type[Agent]:
    return Agent


# -- the queue and the consumer -------------------------------------------------------------------


def queue_depth(runtime) -> tuple[int, int]:
    """(visible, in flight) messages on the events queue."""
    attributes = runtime.clients.sqs.get_queue_attributes(
        QueueUrl=runtime.settings.events_queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]), int(attributes["ApproximateNumberOfMessagesNotVisible"])


def record_of(runtime, message: dict) -> dict:
    """One received message as a record of Lambda's SQS event."""
    return sqs_record(message, queue_arn(runtime), runtime.settings.aws_region)


def poisoned_record(runtime, body: str) -> dict:
    """A record no publisher of this code sends, as if put on the queue by hand or by an old version."""
    return {
        "messageId": str(uuid.uuid4()),
        "receiptHandle": secrets.token_urlsafe(48),
        "body": body,
        "attributes": {
            "ApproximateReceiveCount": "1",
            "SentTimestamp": "1796203800000",
            "SenderId": "AIDAEXAMPLE",
            "ApproximateFirstReceiveTimestamp": "1796203800019",
        },
        "messageAttributes": {},
        "md5OfBody": hashlib.md5(body.encode()).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn(runtime),
        "awsRegion": runtime.settings.aws_region,
    }


def deliver_queued(runtime, expected_messages: int | None = None) -> list[dict]:
    """Receive what is queued, run the consumer on it as one batch (every record must succeed), delete it."""
    messages = receive_all(runtime)
    if expected_messages is not None:
        assert len(messages) == expected_messages, messages
    if messages:
        result = fan_out.handle({"Records": [record_of(runtime, m) for m in messages]}, None, runtime)
        assert result == {"batchItemFailures": []}
        runtime.clients.sqs.delete_message_batch(
            QueueUrl=runtime.settings.events_queue_url,
            Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)],
        )
    return messages


def triggers(runtime, workspace_id: str) -> list[dict]:
    """The trigger tasks of a workspace (tasks created by an event), as the API shows them."""
    tasks, _ = runtime.tasks.list_page(workspace_id, None, None, 50, None)
    return [task.public() for task in tasks if task.created_by == "event"]


def publish_directly(runtime, account_id: str, workspace_id: str, name: str, payload: str = PAYLOAD, **more):
    """A publication as the publishEvent action makes it, without the MCP round trip."""
    actor = Actor("agent", account_id, workspace_id, "test-token")
    return events.publish(runtime, actor, events.NewPublication(name=name, payload=payload, **more))


# == REST: defining events ========================================================================


def test_defining_an_event_answers_201_with_an_id_and_the_name_is_taken_after(wiring, live, runtime):
    response = wiring.define(name="deploy_done", description="A release reached production.")

    assert response.status_code == 201, response.text
    event = response.json()
    assert BASE62_ID.match(event["id"])
    assert (event["name"], event["description"], event["subscriptionCount"]) == (
        "deploy_done",
        "A release reached production.",
        0,
    )
    assert event["createdAt"].endswith("Z")

    again = wiring.define(name="deploy_done", description="Another meaning")
    assert_problem(again, 409, "deploy_done")
    assert wiring.list_events().json() == [event]
    assert wiring.get_event(event["id"]).json() == event

    # Names are unique per account, not globally.
    other_account = Wiring(live, seed(runtime).human_token)
    assert other_account.define(name="deploy_done").status_code == 201


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"name": "deploy done"}, ["name must be"]),
        ({"name": ""}, ["name must be"]),
        ({"name": "d" * 200}, ["name must be"]),
        ({"name": "-leading-dash"}, ["name must be"]),
        ({"description": "no name"}, ["missing required field 'name'"]),
        ({"name": 5}, ["field 'name'"]),
        ({"name": "ok", "colour": "red"}, ["unknown field 'colour'"]),
        ({"name": "ok", "description": "x" * 1025}, ["description is 1025 characters"]),
    ],
)
def test_a_bad_event_definition_is_422_naming_the_field_and_nothing_is_defined(wiring, body, words):
    assert_problem(wiring.define(**body), 422, *words)
    assert wiring.list_events().json() == []


def test_an_unknown_event_is_404(wiring):
    for event_id in ("0000000none", "not-an-id"):
        assert_problem(wiring.get_event(event_id), 404, f"no event {event_id}")
        assert_problem(wiring.delete_event(event_id), 404, f"no event {event_id}")


# == REST: subscriptions ==========================================================================


def test_subscribing_a_workspace_answers_201_and_the_subscription_is_listed_read_and_deleted(wiring, seeded):
    event = wiring.event()

    response = wiring.subscribe(seeded.workspace_id, eventId=event["id"], title="Smoke-test it", body=SUB_BODY)

    assert response.status_code == 201, response.text
    subscription = response.json()
    assert BASE62_ID.match(subscription["id"])
    assert {k: v for k, v in subscription.items() if k not in ("id", "createdAt")} == {
        "eventId": event["id"],
        "workspaceId": seeded.workspace_id,
        "title": "Smoke-test it",
        "body": SUB_BODY,
    }
    assert wiring.get_event(event["id"]).json()["subscriptionCount"] == 1
    assert wiring.list_subscriptions(seeded.workspace_id).json() == [subscription]
    assert wiring.get_subscription(seeded.workspace_id, subscription["id"]).json() == subscription

    deleted = wiring.unsubscribe(seeded.workspace_id, subscription["id"])
    assert (deleted.status_code, deleted.content) == (204, b"")
    assert_problem(wiring.get_subscription(seeded.workspace_id, subscription["id"]), 404, subscription["id"])
    assert_problem(wiring.unsubscribe(seeded.workspace_id, subscription["id"]), 404, subscription["id"])
    assert wiring.list_subscriptions(seeded.workspace_id).json() == []
    assert wiring.get_event(event["id"]).json()["subscriptionCount"] == 0


def test_subscribing_to_an_unknown_event_is_404_and_a_malformed_one_422(wiring, seeded):
    assert_problem(
        wiring.subscribe(seeded.workspace_id, eventId="0000000none", title="t", body=""), 404, "no event 0000000none"
    )
    assert_problem(wiring.subscribe(seeded.workspace_id, eventId="not an id", title="t", body=""), 422, "eventId")
    event = wiring.event()
    assert_problem(wiring.subscribe(seeded.workspace_id, eventId=event["id"], title=" ", body=""), 422, "title")
    assert_problem(wiring.subscribe(seeded.workspace_id, eventId=event["id"], title="t"), 422, "'body'")
    assert wiring.list_subscriptions(seeded.workspace_id).json() == []
    assert wiring.get_event(event["id"]).json()["subscriptionCount"] == 0


def test_a_subscription_is_only_found_under_its_own_workspace(wiring, runtime, seeded):
    event = wiring.event()
    other_id, _ = new_workspace(runtime, seeded.account_id, "Ops")
    subscription = wiring.subscription(seeded.workspace_id, event["id"])

    assert_problem(wiring.get_subscription(other_id, subscription["id"]), 404, subscription["id"])
    assert_problem(wiring.unsubscribe(other_id, subscription["id"]), 404, subscription["id"])
    assert wiring.list_subscriptions(other_id).json() == []
    assert wiring.get_subscription(seeded.workspace_id, subscription["id"]).status_code == 200


def test_an_event_with_subscriptions_cannot_be_deleted_until_they_are_gone(wiring, runtime, seeded):
    event = wiring.event()
    other_id, _ = new_workspace(runtime, seeded.account_id, "Ops")
    here = wiring.subscription(seeded.workspace_id, event["id"])
    there = wiring.subscription(other_id, event["id"])

    assert_problem(wiring.delete_event(event["id"]), 409, "2 subscription(s)")
    assert wiring.unsubscribe(seeded.workspace_id, here["id"]).status_code == 204
    assert_problem(wiring.delete_event(event["id"]), 409, "1 subscription(s)")
    assert wiring.get_event(event["id"]).status_code == 200
    assert wiring.unsubscribe(other_id, there["id"]).status_code == 204

    deleted = wiring.delete_event(event["id"])
    assert (deleted.status_code, deleted.content) == (204, b"")
    assert_problem(wiring.get_event(event["id"]), 404)
    assert wiring.list_events().json() == []
    assert wiring.define(name="deploy_done").status_code == 201  # the name is free again


def test_another_accounts_human_sees_none_of_it(wiring, live, runtime, seeded):
    event = wiring.event()
    subscription = wiring.subscription(seeded.workspace_id, event["id"])
    stranger_seed = seed(runtime)
    stranger = Wiring(live, stranger_seed.human_token)
    workspace = seeded.workspace_id

    assert_problem(stranger.get_event(event["id"]), 404, f"no event {event['id']}")
    assert_problem(stranger.delete_event(event["id"]), 404, f"no event {event['id']}")
    assert_problem(stranger.list_subscriptions(workspace), 404, f"no workspace {workspace}")
    assert_problem(stranger.get_subscription(workspace, subscription["id"]), 404, f"no workspace {workspace}")
    assert_problem(stranger.unsubscribe(workspace, subscription["id"]), 404, f"no workspace {workspace}")
    assert_problem(
        stranger.subscribe(workspace, eventId=event["id"], title="t", body=""), 404, f"no workspace {workspace}"
    )
    # Its own workspace cannot subscribe to another account's event either.
    assert_problem(
        stranger.subscribe(stranger_seed.workspace_id, eventId=event["id"], title="t", body=""), 404, "no event"
    )
    assert stranger.list_events().json() == []
    assert stranger.published() == []

    assert wiring.get_event(event["id"]).json()["subscriptionCount"] == 1
    assert wiring.list_subscriptions(workspace).json() == [subscription]


def test_an_agent_token_gets_403_on_every_events_route_and_no_token_401(live, seeded, wiring):
    event = wiring.event()
    subscription = wiring.subscription(seeded.workspace_id, event["id"])
    as_agent = Wiring(live, seeded.agent_token)
    workspace = seeded.workspace_id

    for response in (
        as_agent.define(name="sneaky"),
        as_agent.list_events(),
        as_agent.get_event(event["id"]),
        as_agent.delete_event(event["id"]),
        as_agent.publications(),
        as_agent.subscribe(workspace, eventId=event["id"], title="t", body=""),
        as_agent.list_subscriptions(workspace),
        as_agent.get_subscription(workspace, subscription["id"]),
        as_agent.unsubscribe(workspace, subscription["id"]),
    ):
        assert_problem(response, 403, "human token")

    anonymous = httpx.get(f"{live.url}/api/events")
    assert_problem(anonymous, 401, "missing bearer token")
    assert [e["name"] for e in wiring.list_events().json()] == ["deploy_done"]
    assert wiring.list_subscriptions(workspace).json() == [subscription]


def test_published_events_are_paged_newest_first_and_a_foreign_cursor_is_refused(wiring, runtime, seeded):
    published = [publish_directly(runtime, seeded.account_id, seeded.workspace_id, f"step_{n}") for n in range(3)]

    first = wiring.publications(limit=2)
    assert first.status_code == 200, first.text
    page = first.json()
    assert len(page["publications"]) == 2 and page["nextCursor"]
    rest = wiring.publications(limit=2, cursor=page["nextCursor"]).json()
    assert len(rest["publications"]) == 1
    seen = [p["id"] for p in page["publications"] + rest["publications"]]
    assert seen == sorted((p.id for p in published), reverse=True)

    assert_problem(wiring.publications(limit=0), 422, "limit")
    assert_problem(wiring.publications(limit=201), 422, "limit")
    assert_problem(wiring.publications(cursor="bm90IGEgY3Vyc29y"), 422, "cursor")


# == MCP: publishEvent ============================================================================


async def test_publish_event_answers_that_it_was_published_records_it_and_queues_one_message(
    agent, wiring, runtime, seeded
):
    run_id = new_id()

    text, is_error = await agent(
        "workspace", "publishEvent", name="deploy_done", taskId=run_id, payload=PAYLOAD, faq=FAQ
    )

    assert (text, is_error) == ('event "deploy_done" published', False)
    (publication,) = wiring.published()
    assert BASE62_ID.match(publication["id"])
    assert publication == {
        "id": publication["id"],
        "name": "deploy_done",
        "eventId": None,  # resolved on delivery
        "workspaceId": seeded.workspace_id,
        "taskId": run_id,
        "payload": PAYLOAD,
        "faq": FAQ,
        "publishedAt": publication["publishedAt"],
        "state": "queued",
        "triggeredTasks": 0,
        "sourceTaskId": None,  # published by an agent, not by completing a task
    }
    (message,) = receive_all(runtime)
    assert json.loads(message["Body"]) == {"accountId": seeded.account_id, "publicationId": publication["id"]}


async def test_the_old_tool_name_and_a_partly_flat_call_publish_too(agent, wiring):
    assert await agent.raw("publishEvent", {"name": "deploy_done", "payload": "old name"}) == (
        'event "deploy_done" published',
        False,
    )
    partly_flat = {
        "action": "publishEvent",
        "name": "build_done",
        "taskId": "0kGogHmaqvZ",
        "payload": {"payload": "flat beside action"},
    }
    assert await agent.raw("workspace", partly_flat) == ('event "build_done" published', False)

    shown = {p["name"]: (p["payload"], p["taskId"]) for p in wiring.published()}
    assert shown == {"deploy_done": ("old name", None), "build_done": ("flat beside action", "0kGogHmaqvZ")}


async def test_a_fully_flat_publish_event_call_is_accepted(agent, wiring):
    flat = {"action": "publishEvent", "name": "deploy_done", "payload": PAYLOAD}

    assert await agent.raw("workspace", flat) == ('event "deploy_done" published', False)
    assert [p["payload"] for p in wiring.published()] == [PAYLOAD]


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"name": "deploy done", "payload": "x"}, "name must be 1-128 letters"),
        ({"name": "", "payload": "x"}, "name must be 1-128 letters"),
        ({"name": "deploy_done"}, "missing required field 'payload'"),
        ({"name": "deploy_done", "payload": "x", "taskId": "not base62!"}, "taskId must be a base62 id"),
        (
            {"name": "deploy_done", "payload": "x", "faq": [{"q": f"q{n}", "a": "a"} for n in range(11)]},
            "faq has 11 entries; at most 10",
        ),
        (
            {"name": "deploy_done", "payload": "x", "faq": [{"q": "only a question"}]},
            "missing required field 'faq[0].a'",
        ),
        ({"name": "deploy_done", "payload": "x" * (16 * 1024 + 1)}, "payload is 16385 characters"),
        ({"name": "deploy_done", "payload": "x", "verbose": True}, "unknown field 'verbose'"),
    ],
)
async def test_bad_publish_event_input_is_a_tool_error_naming_the_field_and_publishes_nothing(
    agent, wiring, runtime, payload, expected
):
    text, is_error = await agent("workspace", "publishEvent", **payload)

    assert is_error, text
    assert text.startswith("workspace publishEvent: ") and expected in text, text
    assert wiring.published() == []
    assert queue_depth(runtime) == (0, 0)


async def test_a_name_nobody_subscribes_to_is_published_and_delivered_to_no_one(agent, wiring, runtime, seeded):
    await agent.publish(name="nobody_listens", payload=PAYLOAD)
    (queued,) = wiring.published()
    assert (queued["state"], queued["triggeredTasks"]) == ("queued", 0)

    deliver_queued(runtime, expected_messages=1)

    (delivered,) = wiring.published()
    assert (delivered["id"], delivered["name"], delivered["eventId"]) == (queued["id"], "nobody_listens", None)
    assert (delivered["state"], delivered["triggeredTasks"]) == ("delivered", 0)
    assert triggers(runtime, seeded.workspace_id) == []
    assert (await agent("task", "get"))[0] == "null"


# == fan-out ======================================================================================


async def test_one_publication_becomes_one_trigger_task_per_subscribing_workspace(agent, live, wiring, runtime, seeded):
    event = wiring.event()
    qa_id, qa_token = new_workspace(runtime, seeded.account_id, "QA")
    docs_id, docs_token = new_workspace(runtime, seeded.account_id, "Docs")
    subscriptions = {
        qa_id: wiring.subscription(qa_id, event["id"], title="Smoke-test the deploy"),
        docs_id: wiring.subscription(docs_id, event["id"], title="Update the release notes"),
        seeded.workspace_id: wiring.subscription(seeded.workspace_id, event["id"], title="Watch the error rate"),
    }
    run_id = new_id()

    await agent.publish(name="deploy_done", taskId=run_id, payload=PAYLOAD, faq=FAQ)

    (message,) = receive_all(runtime)
    (publication,) = wiring.published()
    assert json.loads(message["Body"]) == {"accountId": seeded.account_id, "publicationId": publication["id"]}
    assert triggers(runtime, qa_id) == []  # nothing happens before the consumer runs

    result = fan_out.handle({"Records": [record_of(runtime, message)]}, None, runtime)

    assert result == {"batchItemFailures": []}
    for workspace_id, subscription in subscriptions.items():
        (task,) = triggers(runtime, workspace_id)
        assert BASE62_ID.match(task["id"])
        assert (task["title"], task["status"], task["assignee"], task["createdBy"]) == (
            subscription["title"],
            "notstarted",
            "agent",
            "event",
        )
        assert task["body"].startswith(SUB_BODY)
        for part in (
            PAYLOAD,
            "Q: Which commit?\nA: a0b8ab0",
            "Q: Rollback plan?\nA: Redeploy v0.9.19.",
            f"Workflow run taskId: {run_id}",
            'event "deploy_done"',
        ):
            assert part in task["body"], (part, task["body"])
        assert task["trigger"] == {
            "eventId": event["id"],
            "eventName": "deploy_done",
            "publicationId": publication["id"],
            "publishedBy": seeded.workspace_id,
            "payload": PAYLOAD,
            "faq": FAQ,
            "taskId": run_id,
        }
    (delivered,) = wiring.published()
    assert (delivered["state"], delivered["triggeredTasks"], delivered["eventId"]) == ("delivered", 3, event["id"])

    # Each subscriber's agent gets its trigger task from its own queue, and only that one.
    for workspace_id, token in ((qa_id, qa_token), (docs_id, docs_token), (seeded.workspace_id, seeded.agent_token)):
        async with mcp_client(live.url, token) as client:
            subscriber = Agent(client)
            dequeued = await subscriber.get()
            assert dequeued["id"] == triggers(runtime, workspace_id)[0]["id"]
            assert dequeued["trigger"]["taskId"] == run_id and dequeued["body"].startswith(SUB_BODY)
            assert (await subscriber("task", "get"))[0] == "null"


def test_a_message_delivered_twice_creates_each_trigger_task_once(runtime, seeded):
    event = events.define_event(runtime, seeded.account_id, "deploy_done", "")
    qa_id, _ = new_workspace(runtime, seeded.account_id, "QA")
    docs_id, _ = new_workspace(runtime, seeded.account_id, "Docs")
    for workspace_id in (qa_id, docs_id):
        events.subscribe(runtime, seeded.account_id, workspace_id, event.id, "Follow up", SUB_BODY)
    publication = publish_directly(runtime, seeded.account_id, seeded.workspace_id, "deploy_done")
    (message,) = receive_all(runtime)
    record = record_of(runtime, message)

    # The same record twice in one batch, then once more in a later batch (SQS delivers at least once).
    assert fan_out.handle({"Records": [record, copy.deepcopy(record)]}, None, runtime) == {"batchItemFailures": []}
    first = {workspace_id: triggers(runtime, workspace_id) for workspace_id in (qa_id, docs_id)}
    assert fan_out.handle({"Records": [copy.deepcopy(record)]}, None, runtime) == {"batchItemFailures": []}

    for workspace_id in (qa_id, docs_id):
        assert len(first[workspace_id]) == 1
        assert triggers(runtime, workspace_id) == first[workspace_id]
        assert runtime.accounts.get_workspace(seeded.account_id, workspace_id).task_counts["notstarted"] == 1
    recorded = runtime.events.get_publication(seeded.account_id, publication.id)
    assert (recorded.state, recorded.triggered) == ("delivered", 2)


@pytest.mark.parametrize(
    "poison",
    [
        "this is not JSON {",
        '{"accountId": "0kGoQ1bX2aB"}',
        '{"publicationId": "0kGogHmaqvZ", "account": "0kGoQ1bX2aB"}',
        '{"accountId": "not an id", "publicationId": "neither is this"}',
        '["0kGoQ1bX2aB", "0kGogHmaqvZ"]',
    ],
)
def test_a_poisoned_message_fails_alone_and_the_good_ones_in_its_batch_deliver(runtime, seeded, poison):
    event = events.define_event(runtime, seeded.account_id, "deploy_done", "")
    qa_id, _ = new_workspace(runtime, seeded.account_id, "QA")
    events.subscribe(runtime, seeded.account_id, qa_id, event.id, "Follow up", SUB_BODY)
    for version in ("v1", "v2"):
        publish_directly(runtime, seeded.account_id, seeded.workspace_id, "deploy_done", payload=f"{version} is live")
    good = [record_of(runtime, message) for message in receive_all(runtime)]
    assert len(good) == 2
    bad = poisoned_record(runtime, poison)

    result = fan_out.handle({"Records": [good[0], bad, good[1]]}, None, runtime)

    assert result == {"batchItemFailures": [{"itemIdentifier": bad["messageId"]}]}
    bodies = sorted(task["trigger"]["payload"] for task in triggers(runtime, qa_id))
    assert bodies == ["v1 is live", "v2 is live"]


# == a task's eventId publishes on completion ====================================================


async def test_completing_a_task_with_an_event_id_publishes_once_however_often_it_is_completed(
    agent, wiring, runtime, seeded
):
    event = wiring.event(name="report_ready")
    qa_id, _ = new_workspace(runtime, seeded.account_id, "QA")
    docs_id, _ = new_workspace(runtime, seeded.account_id, "Docs")
    for workspace_id in (qa_id, docs_id):
        wiring.subscription(workspace_id, event["id"], title="Read the report")
    task_id = await agent.create(title="Write the weekly report", body="", eventId=event["id"])
    assert "eventPublicationId" not in await agent.get(taskId=task_id)

    await agent.set_status(task_id, "completed")

    (publication,) = wiring.published()
    assert (publication["eventId"], publication["name"], publication["workspaceId"]) == (
        event["id"],
        None,
        seeded.workspace_id,
    )
    assert (publication["taskId"], publication["sourceTaskId"], publication["state"]) == (task_id, task_id, "queued")
    assert "Write the weekly report" in publication["payload"]
    task = await agent.get(taskId=task_id)
    assert (task["eventId"], task["eventPublicationId"]) == (event["id"], publication["id"])

    deliver_queued(runtime, expected_messages=1)

    (delivered,) = wiring.published()
    assert (delivered["name"], delivered["state"], delivered["triggeredTasks"]) == ("report_ready", "delivered", 2)
    first = {}
    for workspace_id in (qa_id, docs_id):
        (trigger,) = triggers(runtime, workspace_id)
        assert trigger["title"] == "Read the report"
        assert trigger["trigger"]["eventName"] == "report_ready"
        assert trigger["trigger"]["publicationId"] == publication["id"]
        assert trigger["trigger"]["taskId"] == task_id
        first[workspace_id] = trigger

    await agent.set_status(task_id, "ongoing")
    await agent.set_status(task_id, "completed")

    assert [p["id"] for p in wiring.published()] == [publication["id"]]
    assert queue_depth(runtime) == (0, 0)  # delivered already: nothing is queued again
    for workspace_id in (qa_id, docs_id):
        assert triggers(runtime, workspace_id) == [first[workspace_id]]
    assert (await agent.get(taskId=task_id))["eventPublicationId"] == publication["id"]


async def test_a_completion_not_yet_delivered_is_queued_again_and_still_delivered_once(agent, wiring, runtime, seeded):
    event = wiring.event(name="report_ready")
    qa_id, _ = new_workspace(runtime, seeded.account_id, "QA")
    wiring.subscription(qa_id, event["id"], title="Read the report")
    task_id = await agent.create(title="Write the weekly report", body="", eventId=event["id"])

    await agent.set_status(task_id, "completed")
    await agent.set_status(task_id, "ongoing")
    await agent.set_status(task_id, "completed")  # the first message may have been lost: queued once more

    messages = receive_all(runtime)
    assert len(messages) == 2
    assert len({m["Body"] for m in messages}) == 1
    assert fan_out.handle({"Records": [record_of(runtime, m) for m in messages]}, None, runtime) == {
        "batchItemFailures": []
    }
    (publication,) = wiring.published()
    assert (publication["state"], publication["triggeredTasks"]) == ("delivered", 1)
    assert len(triggers(runtime, qa_id)) == 1


async def test_completing_a_trigger_task_with_an_event_id_continues_the_original_workflow_run(
    agent, live, wiring, runtime, seeded
):
    step_one = wiring.event(name="deploy_done")
    step_two = wiring.event(name="smoke_tests_passed")
    qa_id, qa_token = new_workspace(runtime, seeded.account_id, "QA")
    docs_id, _ = new_workspace(runtime, seeded.account_id, "Docs")
    wiring.subscription(qa_id, step_one["id"], title="Smoke-test the deploy")
    wiring.subscription(docs_id, step_two["id"], title="Announce the release")
    run_id = new_id()
    await agent.publish(name="deploy_done", taskId=run_id, payload=PAYLOAD)
    deliver_queued(runtime, expected_messages=1)
    (qa_trigger,) = triggers(runtime, qa_id)
    # No route sets eventId on a trigger task yet; give this one the next step's event as the store holds it.
    runtime.clients.dynamodb.update_item(
        TableName=runtime.settings.table_name,
        Key=key(keys.workspace_pk(qa_id), keys.task_sk(qa_trigger["id"])),
        UpdateExpression="SET eventId = :e",
        ExpressionAttributeValues=to_item({":e": step_two["id"]}),
    )

    async with mcp_client(live.url, qa_token) as client:
        qa_agent = Agent(client)
        assert (await qa_agent.get())["id"] == qa_trigger["id"]
        await qa_agent.set_status(qa_trigger["id"], "completed")

    second = next(p for p in wiring.published() if p["eventId"] == step_two["id"])
    assert (second["taskId"], second["sourceTaskId"]) == (run_id, qa_trigger["id"])
    deliver_queued(runtime, expected_messages=1)
    (docs_trigger,) = triggers(runtime, docs_id)
    assert docs_trigger["trigger"]["taskId"] == run_id
    assert docs_trigger["trigger"]["eventName"] == "smoke_tests_passed"
    assert f"Workflow run taskId: {run_id}" in docs_trigger["body"]


# == isolation between accounts ==================================================================


async def test_another_account_publishing_the_same_name_reaches_only_its_own_subscribers(
    agent, live, wiring, runtime, seeded
):
    mine = wiring.event()
    my_subscriber, _ = new_workspace(runtime, seeded.account_id, "QA")
    wiring.subscription(my_subscriber, mine["id"])
    other = seed(runtime)
    other_wiring = Wiring(live, other.human_token)
    theirs = other_wiring.event()  # the same name, in their account
    their_subscriber, _ = new_workspace(runtime, other.account_id, "Their QA")
    other_wiring.subscription(their_subscriber, theirs["id"])

    async with mcp_client(live.url, other.agent_token) as client:
        await Agent(client).publish(name="deploy_done", payload="their release")
    await agent.publish(name="deploy_done", payload="my release")
    deliver_queued(runtime, expected_messages=2)

    assert [t["trigger"]["payload"] for t in triggers(runtime, my_subscriber)] == ["my release"]
    assert [t["trigger"]["payload"] for t in triggers(runtime, their_subscriber)] == ["their release"]
    assert [(p["payload"], p["triggeredTasks"]) for p in wiring.published()] == [("my release", 1)]
    assert [(p["payload"], p["eventId"]) for p in other_wiring.published()] == [("their release", theirs["id"])]


async def test_an_account_without_the_event_publishing_its_name_creates_nothing_elsewhere(
    live, wiring, runtime, seeded
):
    mine = wiring.event()
    my_subscriber, _ = new_workspace(runtime, seeded.account_id, "QA")
    wiring.subscription(my_subscriber, mine["id"])
    other = seed(runtime)

    async with mcp_client(live.url, other.agent_token) as client:
        await Agent(client).publish(name="deploy_done", payload="not yours")
    deliver_queued(runtime, expected_messages=1)

    assert triggers(runtime, my_subscriber) == []
    assert wiring.published() == []
    (theirs,) = Wiring(live, other.human_token).published()
    assert (theirs["state"], theirs["eventId"], theirs["triggeredTasks"]) == ("delivered", None, 0)


# == the local queue driver =======================================================================


async def test_the_queue_driver_delivers_what_was_published_and_leaves_the_queue_empty(agent, wiring, runtime, seeded):
    event = wiring.event()
    qa_id, _ = new_workspace(runtime, seeded.account_id, "QA")
    wiring.subscription(qa_id, event["id"])
    await agent.publish(name="deploy_done", payload=PAYLOAD)
    assert queue_depth(runtime) == (1, 0)

    driver = QueueDriver(runtime)
    assert driver.run_once() == 1

    assert queue_depth(runtime) == (0, 0)
    (task,) = triggers(runtime, qa_id)
    assert task["trigger"]["payload"] == PAYLOAD
    assert [(p["state"], p["triggeredTasks"]) for p in wiring.published()] == [("delivered", 1)]
    assert driver.run_once() == 0


def test_the_queue_driver_leaves_a_poisoned_message_in_flight_and_deletes_the_good_one(runtime, seeded):
    event = events.define_event(runtime, seeded.account_id, "deploy_done", "")
    qa_id, _ = new_workspace(runtime, seeded.account_id, "QA")
    events.subscribe(runtime, seeded.account_id, qa_id, event.id, "Follow up", SUB_BODY)
    runtime.clients.sqs.send_message(QueueUrl=runtime.settings.events_queue_url, MessageBody="not JSON")
    publish_directly(runtime, seeded.account_id, seeded.workspace_id, "deploy_done")

    assert QueueDriver(runtime).run_once() == 1

    assert queue_depth(runtime) == (0, 1)  # back after the visibility timeout, then to the DLQ
    assert len(triggers(runtime, qa_id)) == 1


# == the deployed consumer: functions/events/app.py ===============================================


@pytest.fixture
def events_lambda(runtime, monkeypatch):
    """functions/events/app.py's handler, with the environment template.yaml gives it, on this test's resources."""
    module = load_function("events", runtime, monkeypatch)

    def invoke(event: dict) -> dict:
        return module.handler(event, LambdaContext(FUNCTION_NAMES["events"]))

    return invoke


def sample_event(account_id: str, publication_id: str) -> dict:
    """events/sqs_event_published.json with its body pointing at a real publication."""
    event = json.loads(SAMPLE_EVENT.read_text())
    (record,) = event["Records"]
    body = json.loads(record["body"])
    assert set(body) == {"accountId", "publicationId"}
    record["body"] = json.dumps({"accountId": account_id, "publicationId": publication_id}, separators=(",", ":"))
    record["md5OfBody"] = hashlib.md5(record["body"].encode()).hexdigest()
    return event


def test_the_sample_sqs_event_is_shaped_like_lambdas():
    event = json.loads(SAMPLE_EVENT.read_text())
    (record,) = event["Records"]
    assert record["eventSource"] == "aws:sqs"
    assert record["eventSourceARN"].startswith("arn:aws:sqs:us-east-1:")
    assert record["awsRegion"] == "us-east-1"
    assert record["messageAttributes"] == {}
    assert {"ApproximateReceiveCount", "SentTimestamp", "SenderId", "ApproximateFirstReceiveTimestamp"} <= set(
        record["attributes"]
    )
    assert record["md5OfBody"] == hashlib.md5(record["body"].encode()).hexdigest()
    assert uuid.UUID(record["messageId"])
    assert set(json.loads(record["body"])) == {"accountId", "publicationId"}


def test_the_events_lambda_delivers_the_sample_event_twice_warm_creating_the_trigger_task_once(
    events_lambda, runtime, seeded
):
    event = events.define_event(runtime, seeded.account_id, "deploy_done", "")
    qa_id, _ = new_workspace(runtime, seeded.account_id, "QA")
    events.subscribe(runtime, seeded.account_id, qa_id, event.id, "Follow up", SUB_BODY)
    publication = publish_directly(runtime, seeded.account_id, seeded.workspace_id, "deploy_done", task_id=new_id())
    sqs_event = sample_event(seeded.account_id, publication.id)

    assert events_lambda(copy.deepcopy(sqs_event)) == {"batchItemFailures": []}
    assert events_lambda(copy.deepcopy(sqs_event)) == {"batchItemFailures": []}

    (task,) = triggers(runtime, qa_id)
    assert task["trigger"]["publicationId"] == publication.id
    recorded = runtime.events.get_publication(seeded.account_id, publication.id)
    assert (recorded.state, recorded.triggered) == ("delivered", 1)


def test_the_events_lambda_reports_only_the_poisoned_record_of_a_batch(events_lambda, runtime, seeded):
    event = events.define_event(runtime, seeded.account_id, "deploy_done", "")
    qa_id, _ = new_workspace(runtime, seeded.account_id, "QA")
    events.subscribe(runtime, seeded.account_id, qa_id, event.id, "Follow up", SUB_BODY)
    publication = publish_directly(runtime, seeded.account_id, seeded.workspace_id, "deploy_done")
    sqs_event = sample_event(seeded.account_id, publication.id)
    poisoned = copy.deepcopy(sqs_event["Records"][0])
    poisoned["messageId"] = str(uuid.uuid4())
    poisoned["body"] = '{"accountId": "only"}'
    sqs_event["Records"].append(poisoned)

    assert events_lambda(sqs_event) == {"batchItemFailures": [{"itemIdentifier": poisoned["messageId"]}]}
    assert len(triggers(runtime, qa_id)) == 1


def test_a_message_for_a_publication_that_no_longer_exists_is_dropped_not_retried(events_lambda, runtime, seeded):
    sqs_event = sample_event(seeded.account_id, new_id())

    assert events_lambda(sqs_event) == {"batchItemFailures": []}
