"""The schedule and events functions, run through their deployed handlers, make no AWS call their roles lack.

tests/contract/test_iam.py proves no role grants more than the code calls; this proves the other way for
the two workers, whose roles are narrower than the API's: every request their own clients send while they
fire a cron template with a file, expire a pano doc with files, and fan an event out is recorded and
checked against the role template.yaml gives them. A call missing from a role would be an AccessDenied on
AWS that moto never raises.
"""

import json
from datetime import timedelta

import pytest
from botocore import xform_name

from agent_workspace.domain.clock import parse_iso
from agent_workspace.domain.models import Actor
from agent_workspace.services import events, pano
from agent_workspace.services.tasks import NewTask, create_task
from agent_workspace.store.clients import AwsClients
from agent_workspace.store.schedules import schedule_name
from agent_workspace.tools.task import AttachmentIn
from tests.contract.test_iam import ACTIONS, PASSES_ROLE, grants
from tests.support import FUNCTION_NAMES, ROOT, Clock, LambdaContext, b64, load_function


@pytest.fixture
def recorded(monkeypatch) -> set[tuple[str, str, bool]]:
    """(service, operation, on an index) of every request sent by clients made from here on."""
    calls: set[tuple[str, str, bool]] = set()
    make = AwsClients._client

    def recording(self, service, *args):
        client = make(self, service, *args)

        def note(model, params, **_):
            calls.add((service, xform_name(model.name), "IndexName" in params))

        def note_items(model, params, **_):  # the call's own parameters, before they are serialised
            for item in params.get("TransactItems", []) if model.name == "TransactWriteItems" else ():
                (kind,) = item  # each item is authorized as its own Put, Update, Delete or ConditionCheck
                calls.add((service, f"transact:{kind}", False))

        client.meta.events.register("before-call", note)
        client.meta.events.register("before-parameter-build", note_items)
        return client

    monkeypatch.setattr(AwsClients, "_client", recording)
    return calls


# A transaction's items, as IAM authorizes them (the recorded kinds stand for the transaction itself).
TRANSACT_ITEMS = {
    "transact:Put": {"dynamodb:PutItem"},
    "transact:Update": {"dynamodb:UpdateItem"},
    "transact:Delete": {"dynamodb:DeleteItem"},
    "transact:ConditionCheck": {"dynamodb:ConditionCheckItem"},
}


def required(calls: set[tuple[str, str, bool]]) -> dict[str, set[str]]:
    needed: dict[str, set[str]] = {}
    for service, operation, on_index in calls:
        if operation == "transact_write_items":
            continue
        resource, actions = (
            ("table", TRANSACT_ITEMS[operation]) if operation in TRANSACT_ITEMS else ACTIONS[(service, operation)]
        )
        needed.setdefault("index" if on_index else resource, set()).update(actions)
        if (service, operation) in PASSES_ROLE:
            needed.setdefault("scheduler-role", set()).add("iam:PassRole")
    return needed


def assert_granted(role: str, calls: set[tuple[str, str, bool]]) -> None:
    granted = grants(role)
    for resource, actions in required(calls).items():
        assert actions <= granted.get(resource, set()), (role, resource, actions - granted.get(resource, set()))


def human(seeded) -> Actor:
    return Actor("human", seeded.account_id, seeded.workspace_id, "tok-human")


def test_firing_a_cron_template_with_a_file_needs_nothing_the_schedule_role_lacks(
    runtime, seeded, monkeypatch, recorded
):
    function = load_function("schedule", runtime, monkeypatch)
    attachment = AttachmentIn(id="a", filename="a.txt", mimeType="text/plain", data=b64(b"payload"))
    template = create_task(
        runtime, human(seeded), NewTask(title="t", body="b", cron_schedule="30 * * * *", attachments=(attachment,))
    )
    fired = runtime.schedules.get(schedule_name(seeded.workspace_id, template.id)).input
    function._runtime.clock = Clock(parse_iso(fired["fireAt"]))
    recorded.clear()  # only what the function sends from here on

    result = function.handler(fired, LambdaContext(FUNCTION_NAMES["schedule"], remaining_ms=60_000))

    assert result == {"outcome": "created"}
    assert {("s3", "copy_object"), ("scheduler", "update_schedule")} <= {(s, o) for s, o, _ in recorded}
    assert_granted("ScheduleFunctionRole", recorded)


def test_expiring_a_pano_doc_with_files_needs_nothing_the_schedule_role_lacks(runtime, seeded, monkeypatch, recorded):
    function = load_function("schedule", runtime, monkeypatch)
    actor = Actor("agent", seeded.account_id, seeded.workspace_id, "tok")
    files = [AttachmentIn(id="f", filename="f.txt", mimeType="text/plain", data=b64(b"file"))]
    doc = pano.save(runtime, actor, None, "Doc", "[f](f.txt)", None, 1, files)
    fired = json.loads(
        runtime.clients.scheduler.get_schedule(
            Name=f"pano-{seeded.account_id}-{doc.id}", GroupName=runtime.settings.schedule_group
        )["Target"]["Input"]
    )
    function._runtime.clock = Clock(parse_iso(doc.expires_at) + timedelta(seconds=1))
    recorded.clear()

    result = function.handler(fired, LambdaContext(FUNCTION_NAMES["schedule"], remaining_ms=60_000))

    assert result == {"outcome": "expired"}
    assert ("s3", "delete_objects", False) in recorded
    assert_granted("ScheduleFunctionRole", recorded)


def test_fanning_an_event_out_needs_nothing_the_events_role_lacks(runtime, seeded, monkeypatch, recorded):
    function = load_function("events", runtime, monkeypatch)
    event = events.define_event(runtime, seeded.account_id, "deploy_done", "")
    events.subscribe(runtime, seeded.account_id, seeded.workspace_id, event.id, "Follow up", "Check the deploy.")
    actor = Actor("agent", seeded.account_id, seeded.workspace_id, "tok")
    publication = events.publish(runtime, actor, events.NewPublication(name="deploy_done", payload="{}"))
    sqs_event = json.loads((ROOT / "events" / "sqs_event_published.json").read_text())
    sqs_event["Records"][0]["body"] = json.dumps({"accountId": seeded.account_id, "publicationId": publication.id})
    recorded.clear()

    result = function.handler(sqs_event, LambdaContext(FUNCTION_NAMES["events"], remaining_ms=60_000))

    assert result == {"batchItemFailures": []}
    assert ("dynamodb", "transact_write_items", False) in recorded
    assert_granted("EventsFunctionRole", recorded)


def _pushing(runtime):
    """The test's runtime as the template configures the stack: with a WebSocket API, so tickets can be minted."""
    from tests.support import PUSH_URL

    runtime.settings = runtime.settings.model_copy(update={"push_url": PUSH_URL})
    return runtime


def _ticket(runtime, token: str, topic: str, workspace_id: str | None = None) -> str:
    from agent_workspace.domain.tokens import hash_token
    from agent_workspace.services import push

    principal = runtime.accounts.resolve_token(hash_token(token))
    return push.mint_ticket(runtime, principal, hash_token(token), topic, workspace_id)["ticket"]


def test_opening_pinging_and_closing_a_socket_needs_nothing_the_push_role_lacks(runtime, seeded, monkeypatch, recorded):
    runtime = _pushing(runtime)
    function = load_function("push", runtime, monkeypatch)
    ticket = _ticket(runtime, seeded.human_token, "console", seeded.workspace_id)
    context = LambdaContext(FUNCTION_NAMES["push"], remaining_ms=10_000)
    connect = json.loads((ROOT / "events" / "push_connect.json").read_text())
    connect["queryStringParameters"]["ticket"] = ticket
    recorded.clear()

    assert function.handler(connect, context) == {"statusCode": 200}
    assert function.handler(json.loads((ROOT / "events" / "push_ping.json").read_text()), context)["statusCode"] == 200
    assert function.handler(json.loads((ROOT / "events" / "push_disconnect.json").read_text()), context) == {
        "statusCode": 200
    }

    assert {(s, o) for s, o, _ in recorded} == {
        ("dynamodb", "delete_item"), ("dynamodb", "get_item"), ("dynamodb", "transact_write_items"),
        ("dynamodb", "transact:Put"),  # the connection and its listener item: puts only
    }  # fmt: skip
    assert_granted("PushFunctionRole", recorded)


def test_posting_a_push_to_a_socket_needs_nothing_the_events_role_lacks(runtime, seeded, monkeypatch, recorded):
    from agent_workspace.services import push

    runtime = _pushing(runtime)
    function = load_function("events", runtime, monkeypatch)
    push.connect(runtime, "Kp3YtcLxIAMCJBQ=", _ticket(runtime, seeded.human_token, "bridge"))
    sqs_event = json.loads((ROOT / "events" / "sqs_event_push.json").read_text())
    body = {"type": "push", "topic": "bridge", "scope": seeded.account_id,
            "message": {"type": "siteCall", "id": "0kGogHmaqvZ", "status": "queued"}}  # fmt: skip
    sqs_event["Records"][0]["body"] = json.dumps(body)
    recorded.clear()

    result = function.handler(sqs_event, LambdaContext(FUNCTION_NAMES["events"], remaining_ms=60_000))

    assert result == {"batchItemFailures": []}
    assert ("apigatewaymanagementapi", "post_to_connection", False) in recorded
    assert_granted("EventsFunctionRole", recorded)
