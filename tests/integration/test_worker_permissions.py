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

        client.meta.events.register("before-call", note)
        return client

    monkeypatch.setattr(AwsClients, "_client", recording)
    return calls


def required(calls: set[tuple[str, str, bool]]) -> dict[str, set[str]]:
    needed: dict[str, set[str]] = {}
    for service, operation, on_index in calls:
        resource, actions = ACTIONS[(service, operation)]
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
