"""Cron templates end to end: MCP and REST creation, the schedule on moto, firing runs, deleting templates.

EventBridge Scheduler never fires on moto, so the tests deliver a schedule's Input themselves, the way
Scheduler would: to `workers.fire_schedule.handle`, the local `ScheduleDriver`, or the deployed Lambda
handler in functions/schedule/app.py.
"""

import base64
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from botocore.exceptions import ClientError

from agent_workspace.domain.clock import iso, parse_iso
from agent_workspace.domain.errors import PayloadError, Unavailable
from agent_workspace.domain.models import Actor
from agent_workspace.local.drivers import Drivers, ScheduleDriver
from agent_workspace.local.stack import seed
from agent_workspace.services import events, schedules, tasks
from agent_workspace.services.tasks import NewTask, create_task
from agent_workspace.store import tasks as store_tasks
from agent_workspace.store.blobs import EXPIRING_PREFIX
from agent_workspace.store.schedules import schedule_name
from agent_workspace.tools.task import AttachmentIn
from agent_workspace.workers import fire_schedule
from tests.support import FUNCTION_NAMES, ROOT, Clock, LambdaContext, TasksApi, assert_problem, b64, load_function

SAMPLE_EVENT = ROOT / "events" / "schedule_fired.json"
CONTENT = bytes(range(256)) * 2  # every byte value: a copy must be byte-exact
START = datetime(2026, 12, 2, 14, 0, tzinfo=UTC)


# -- helpers ------------------------------------------------------------------------------------


@pytest.fixture
def clock(clock: Clock) -> Clock:
    """conftest's clock, standing still at START."""
    clock.set(START)
    return clock


def human(seeded) -> Actor:
    return Actor("human", seeded.account_id, seeded.workspace_id, "tok-human")


def template(runtime, seeded, expression: str = "30 * * * *", **fields):
    fields.setdefault("title", f"cron {expression}")
    fields.setdefault("body", "Run the report.")
    return create_task(runtime, human(seeded), NewTask(cron_schedule=expression, **fields))


def armed_input(runtime, seeded, template_id: str) -> dict:
    armed = runtime.schedules.get(schedule_name(seeded.workspace_id, template_id))
    assert armed is not None, f"template {template_id} has no schedule"
    return armed.input


def fire_now(runtime, seeded, template_id: str) -> tuple[str, dict]:
    """Deliver the schedule's current Input with the clock at its fire time, as Scheduler would on time."""
    payload = armed_input(runtime, seeded, template_id)
    runtime.clock = Clock(parse_iso(payload["fireAt"]))
    return fire_schedule.handle(payload, runtime)["outcome"], payload


def runs_of(runtime, seeded, template_id: str) -> list:
    runs, cursor = runtime.tasks.list_runs(seeded.workspace_id, template_id, 50, None)
    assert cursor is None
    return runs


def stored(runtime, seeded, task_id: str):
    return runtime.tasks.get(seeded.workspace_id, task_id, consistent=True)


def task_counts(runtime, seeded) -> dict[str, int]:
    return runtime.accounts.get_workspace(seeded.account_id, seeded.workspace_id).task_counts


def schedule_missing(runtime, seeded, template_id: str) -> bool:
    try:
        runtime.clients.scheduler.get_schedule(
            Name=schedule_name(seeded.workspace_id, template_id), GroupName=runtime.settings.schedule_group
        )
    except ClientError as error:
        assert error.response["Error"]["Code"] == "ResourceNotFoundException"
        return True
    return False


# -- creating through MCP -----------------------------------------------------------------------


@pytest.mark.anyio
async def test_task_create_with_a_cron_schedule_arms_a_schedule_with_the_configured_target(
    agent, runtime, seeded, clock
):
    template_id = await agent.create(title="Hourly report", body="Summarise", cronSchedule="30 * * * *")

    settings = runtime.settings
    found = runtime.clients.scheduler.get_schedule(
        Name=schedule_name(seeded.workspace_id, template_id), GroupName=settings.schedule_group
    )
    assert found["Name"] == f"task-{seeded.workspace_id}-{template_id}"
    assert found["GroupName"] == settings.schedule_group
    assert (found["ScheduleExpression"], found["ScheduleExpressionTimezone"]) == ("at(2026-12-02T14:30:00)", "UTC")
    assert found["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert found["ActionAfterCompletion"] == "NONE"
    assert found["State"] == "ENABLED"
    target = found["Target"]
    assert target["Arn"] == settings.schedule_target_arn
    assert target["RoleArn"] == settings.scheduler_role_arn
    assert target["DeadLetterConfig"] == {"Arn": settings.schedule_dead_letter_arn}
    assert target["RetryPolicy"]["MaximumRetryAttempts"] > 0
    assert target["RetryPolicy"]["MaximumEventAgeInSeconds"] > 0
    assert json.loads(target["Input"]) == {
        "accountId": seeded.account_id,
        "workspaceId": seeded.workspace_id,
        "templateId": template_id,
        "fireAt": "2026-12-02T14:30:00.000Z",
    }

    shown = await agent.get(taskId=template_id)
    assert (shown["cronSchedule"], shown["runCount"], shown["nextRunAt"]) == (
        "30 * * * *",
        0,
        "2026-12-02T14:30:00.000Z",
    )
    assert "templateId" not in shown and "scheduledFor" not in shown
    text, is_error = await agent("task", "get")
    assert (text, is_error) == ("null", False), "a template must never be dequeued"


@pytest.mark.anyio
async def test_a_run_copies_the_template_and_is_dequeued_by_the_agent(agent, runtime, seeded, clock):
    event_id = events.define_event(runtime, seeded.account_id, "import_done", "The nightly import finished.").id
    files = [
        {"id": "data", "filename": "dump.bin", "mimeType": "application/octet-stream", "data": b64(CONTENT)},
        {"id": "notes", "filename": "notes.txt", "mimeType": "text/plain", "data": b64(b"read me first\n")},
    ]
    template_id = await agent.create(
        title="Nightly import",
        body="Import the dump.",
        cronSchedule="0 3 * * *",
        timezone="Europe/Berlin",
        eventId=event_id,
        clearContext=True,
        attachments=files,
    )
    assert (await agent("task", "get"))[0] == "null"

    outcome, payload = fire_now(runtime, seeded, template_id)
    assert outcome == "created"
    assert payload["fireAt"] == "2026-12-03T02:00:00.000Z"  # 03:00 in Berlin (CET)

    run = await agent.get()  # dequeued: the run is the agent's, not started
    assert run["id"] != template_id
    assert (run["title"], run["body"], run["assignee"], run["status"]) == (
        "Nightly import",
        "Import the dump.",
        "agent",
        "notstarted",
    )
    assert run["clearContext"] is True
    assert run["eventId"] == event_id
    assert (run["templateId"], run["scheduledFor"]) == (template_id, "2026-12-03T02:00:00.000Z")
    assert "cronSchedule" not in run and "runCount" not in run and "nextRunAt" not in run
    assert [(a["id"], a["filename"], a["mimeType"], a["size"]) for a in run["attachments"]] == [
        ("data", "dump.bin", "application/octet-stream", len(CONTENT)),
        ("notes", "notes.txt", "text/plain", 14),
    ]
    for sent in files:
        text, is_error = await agent(
            "task", "getAttachment", taskId=run["id"], attachmentId=sent["id"], format="base64"
        )
        assert not is_error, text
        assert base64.b64decode(json.loads(text)["data"]) == base64.b64decode(sent["data"])
    # The run's files are its own objects, which age from the firing like any task's.
    ref = runtime.tasks.get_attachment(seeded.workspace_id, run["id"], "data")
    assert ref.key.startswith(EXPIRING_PREFIX) and run["id"] in ref.key
    assert ref.created_at == "2026-12-03T02:00:00.000Z"

    shown = await agent.get(taskId=template_id)
    assert (shown["runCount"], shown["nextRunAt"], shown["status"]) == (1, "2026-12-04T02:00:00.000Z", "notstarted")


def test_a_run_of_a_human_template_keeps_the_assignee_and_stays_out_of_the_agents_queue(runtime, seeded, clock):
    created = template(runtime, seeded, "30 * * * *", assignee="human")

    assert fire_now(runtime, seeded, created.id)[0] == "created"

    (run,) = runs_of(runtime, seeded, created.id)
    assert (run.assignee, run.created_by) == ("human", "human")
    agent = Actor("agent", seeded.account_id, seeded.workspace_id, "tok-agent")
    assert tasks.dequeue(runtime, agent) is None


def test_run_attachments_read_back_byte_identical_through_the_service(runtime, seeded, clock):
    created = template(
        runtime,
        seeded,
        attachments=(
            AttachmentIn(id="blob", filename="blob.bin", mimeType="application/octet-stream", data=b64(CONTENT)),
        ),
    )

    fire_now(runtime, seeded, created.id)
    fire_now(runtime, seeded, created.id)

    runs = runs_of(runtime, seeded, created.id)
    assert len(runs) == 2
    for run in runs:
        got = tasks.attachment(runtime, seeded.workspace_id, run.id, "blob", as_base64=True)
        assert base64.b64decode(got["data"]) == CONTENT
    original = tasks.attachment(runtime, seeded.workspace_id, created.id, "blob", as_base64=True)
    assert base64.b64decode(original["data"]) == CONTENT


# -- one-time schedules ---------------------------------------------------------------------------


def test_a_one_time_schedule_fires_once_then_the_template_is_completed_and_unscheduled(runtime, seeded, clock):
    created = template(runtime, seeded, "30 14 25 4 *")
    assert created.next_fire_at == "2027-04-25T14:30:00.000Z"

    outcome, payload = fire_now(runtime, seeded, created.id)

    assert outcome == "created"
    (run,) = runs_of(runtime, seeded, created.id)
    assert run.fire_at == "2027-04-25T14:30:00.000Z"
    after = stored(runtime, seeded, created.id)
    assert after.status == "completed" and after.run_count == 1
    shown = after.public()
    assert "nextRunAt" not in shown and shown["runCount"] == 1
    assert after.history[-1] == {"status": "completed", "at": "2027-04-25T14:30:00.000Z", "by": "schedule"}
    assert schedule_missing(runtime, seeded, created.id)
    assert task_counts(runtime, seeded) == {"notstarted": 1, "ongoing": 0, "blocked": 0, "completed": 1, "rejected": 0}

    # The same Input again (a retry, or a schedule that outlived its run): nothing more.
    assert fire_schedule.handle(payload, runtime) == {"outcome": "duplicate"}
    assert [r.id for r in runs_of(runtime, seeded, created.id)] == [run.id]
    assert stored(runtime, seeded, created.id).run_count == 1
    assert schedule_missing(runtime, seeded, created.id)
    assert task_counts(runtime, seeded)["notstarted"] == 1


# -- duplicated and late firings ----------------------------------------------------------------


def test_a_duplicated_firing_creates_one_run(runtime, seeded, clock):
    created = template(runtime, seeded)
    payload = armed_input(runtime, seeded, created.id)
    clock.set(parse_iso(payload["fireAt"]))

    first = fire_schedule.handle(payload, runtime)
    second = fire_schedule.handle(dict(payload), runtime)

    assert (first, second) == ({"outcome": "created"}, {"outcome": "duplicate"})
    (run,) = runs_of(runtime, seeded, created.id)
    assert run.fire_at == payload["fireAt"]
    after = stored(runtime, seeded, created.id)
    assert after.run_count == 1
    assert after.next_fire_at == "2026-12-02T15:30:00.000Z"
    assert armed_input(runtime, seeded, created.id)["fireAt"] == "2026-12-02T15:30:00.000Z"
    assert task_counts(runtime, seeded)["notstarted"] == 2  # the template and its one run


def test_a_firing_delivered_twice_at_once_creates_one_run(runtime, seeded, clock):
    created = template(
        runtime,
        seeded,
        attachments=(AttachmentIn(id="a", filename="a.txt", mimeType="text/plain", data=b64(b"payload")),),
    )
    payload = armed_input(runtime, seeded, created.id)
    clock.set(parse_iso(payload["fireAt"]))
    barrier = threading.Barrier(2, timeout=10)

    def deliver() -> str:
        barrier.wait()
        return fire_schedule.handle(dict(payload), runtime)["outcome"]

    _ = runtime.tasks, runtime.schedules, runtime.blobs  # built before the threads race for them
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = [future.result(timeout=30) for future in [pool.submit(deliver) for _ in range(2)]]

    assert sorted(outcomes) == ["created", "duplicate"]
    (run,) = runs_of(runtime, seeded, created.id)
    assert run.fire_at == payload["fireAt"]
    assert stored(runtime, seeded, created.id).run_count == 1
    assert base64.b64decode(tasks.attachment(runtime, seeded.workspace_id, run.id, "a", True)["data"]) == b"payload"
    assert armed_input(runtime, seeded, created.id)["fireAt"] == "2026-12-02T15:30:00.000Z"
    assert task_counts(runtime, seeded)["notstarted"] == 2


def test_a_late_firing_creates_its_one_run_and_skips_the_missed_fire_times(runtime, seeded, clock):
    created = template(runtime, seeded, "30 * * * *")
    payload = armed_input(runtime, seeded, created.id)
    assert payload["fireAt"] == "2026-12-02T14:30:00.000Z"

    clock.set(parse_iso(payload["fireAt"]) + timedelta(hours=3))  # 17:30: 15:30 and 16:30 were missed
    assert fire_schedule.handle(payload, runtime) == {"outcome": "created"}

    assert [r.fire_at for r in runs_of(runtime, seeded, created.id)] == ["2026-12-02T14:30:00.000Z"]
    assert stored(runtime, seeded, created.id).next_fire_at == "2026-12-02T18:30:00.000Z"
    armed = runtime.schedules.get(schedule_name(seeded.workspace_id, created.id))
    assert armed.fire_at == datetime(2026, 12, 2, 18, 30, tzinfo=UTC)
    assert armed.fire_at > clock.now, "re-armed for a time already past: Scheduler would burst"

    assert fire_now(runtime, seeded, created.id)[0] == "created"
    assert [r.fire_at for r in runs_of(runtime, seeded, created.id)] == [
        "2026-12-02T18:30:00.000Z",
        "2026-12-02T14:30:00.000Z",
    ]


# -- gone templates -------------------------------------------------------------------------------


def test_a_firing_for_a_deleted_template_is_gone_and_disarms_its_schedule(runtime, seeded, clock):
    created = template(runtime, seeded)
    payload = armed_input(runtime, seeded, created.id)
    schedules.delete_template(runtime, seeded.account_id, seeded.workspace_id, created.id)
    assert schedule_missing(runtime, seeded, created.id)
    # A schedule that outlived its template (the delivery was already under way, say).
    name = schedule_name(seeded.workspace_id, created.id)
    runtime.schedules.arm(name, parse_iso(payload["fireAt"]), payload)
    assert not schedule_missing(runtime, seeded, created.id)

    clock.set(parse_iso(payload["fireAt"]))
    assert fire_schedule.handle(payload, runtime) == {"outcome": "gone"}

    assert schedule_missing(runtime, seeded, created.id)
    assert runtime.tasks.list_runs(seeded.workspace_id, created.id, 50, None) == ([], None)
    assert stored(runtime, seeded, created.id) is None


def test_a_firing_naming_a_task_that_is_not_a_template_creates_nothing(runtime, seeded, clock):
    plain = create_task(runtime, human(seeded), NewTask(title="plain", body=""))
    payload = {
        "accountId": seeded.account_id,
        "workspaceId": seeded.workspace_id,
        "templateId": plain.id,
        "fireAt": "2026-12-02T14:30:00.000Z",
    }

    assert fire_schedule.handle(payload, runtime) == {"outcome": "gone"}

    after = stored(runtime, seeded, plain.id)
    assert (after.status, after.run_count, after.next_fire_at) == ("notstarted", 0, None)
    assert task_counts(runtime, seeded)["notstarted"] == 1


# -- REST, as the human ---------------------------------------------------------------------------


@pytest.fixture
def api(live, seeded) -> TasksApi:
    return TasksApi(live, seeded.workspace_id, seeded.human_token)


def test_rest_creates_a_template_lists_its_runs_newest_first_and_deletes_it(api, runtime, seeded, clock):
    response = api.create(
        title="Standup notes",
        body="Collect them",
        cronSchedule="30 * * * *",
        timezone="Europe/Berlin",
        attachments=[{"id": "f", "filename": "f.bin", "mimeType": "application/octet-stream", "data": b64(CONTENT)}],
    )
    assert response.status_code == 201, response.text
    created = response.json()
    template_id = created["id"]
    assert (created["cronSchedule"], created["timezone"], created["runCount"], created["nextRunAt"]) == (
        "30 * * * *",
        "Europe/Berlin",
        0,
        "2026-12-02T14:30:00.000Z",
    )
    assert created["createdBy"] == "human" and created["assignee"] == "agent"
    assert not schedule_missing(runtime, seeded, template_id)

    fired = [fire_now(runtime, seeded, template_id)[1]["fireAt"] for _ in range(3)]
    assert fired == ["2026-12-02T14:30:00.000Z", "2026-12-02T15:30:00.000Z", "2026-12-02T16:30:00.000Z"]

    listing = api.runs(template_id)
    assert listing.status_code == 200, listing.text
    page = listing.json()
    assert page["nextCursor"] is None
    assert [r["scheduledFor"] for r in page["runs"]] == list(reversed(fired))
    assert {r["templateId"] for r in page["runs"]} == {template_id}
    run_ids = [r["id"] for r in page["runs"]]
    assert len(set(run_ids)) == 3

    paged, cursor = [], None
    for _ in range(5):
        response = api.runs(template_id, limit=1, **({"cursor": cursor} if cursor else {}))
        assert response.status_code == 200, response.text
        body = response.json()
        assert len(body["runs"]) <= 1
        paged += [r["id"] for r in body["runs"]]
        cursor = body["nextCursor"]
        if cursor is None:
            break
    assert cursor is None and paged == run_ids

    template_shown = api.get(template_id).json()
    assert (template_shown["runCount"], template_shown["nextRunAt"]) == (3, "2026-12-02T17:30:00.000Z")

    deleted = api.delete(template_id)
    assert deleted.status_code == 204 and deleted.content == b""
    assert schedule_missing(runtime, seeded, template_id)
    assert_problem(api.get(template_id), 404, template_id)
    assert_problem(api.runs(template_id), 404)
    for run_id in run_ids:  # the runs stay, still naming their template, their files intact
        run = api.get(run_id)
        assert run.status_code == 200, run.text
        assert run.json()["templateId"] == template_id
        got = tasks.attachment(runtime, seeded.workspace_id, run_id, "f", as_base64=True)
        assert base64.b64decode(got["data"]) == CONTENT
    assert task_counts(runtime, seeded)["notstarted"] == 3
    assert_problem(api.delete(template_id), 404)


def test_a_template_deleted_before_its_cleanup_failed_has_no_schedule_left(runtime, seeded, clock, monkeypatch):
    created = template(runtime, seeded)

    def busy(*args, **kwargs):
        raise Unavailable("the store is busy; template links remain")

    monkeypatch.setattr(store_tasks, "batch_delete", busy)  # the run-link cleanup, after the delete committed
    # The delete itself committed: it succeeds, and the failed housekeeping is only logged.
    schedules.delete_template(runtime, seeded.account_id, seeded.workspace_id, created.id)

    assert stored(runtime, seeded, created.id) is None  # the template is gone ...
    assert schedule_missing(runtime, seeded, created.id)  # ... so its schedule must be too


def test_rest_delete_of_a_task_that_is_not_a_template_is_a_409(api, runtime, seeded, clock):
    plain = api.create(title="Plain", body="")
    assert plain.status_code == 201, plain.text
    task_id = plain.json()["id"]

    assert_problem(api.delete(task_id), 409, "not a cron template")
    assert api.get(task_id).status_code == 200


def test_rest_runs_of_a_task_that_is_not_a_template_are_refused(api, clock):
    task_id = api.create(title="Plain", body="").json()["id"]

    assert_problem(api.runs(task_id), 422, "not a cron template")


def test_rest_refuses_a_timezone_without_a_cron_schedule(api, runtime, seeded, clock):
    assert_problem(api.create(title="t", body="", timezone="Europe/Berlin"), 422, "timezone")
    assert runtime.tasks.list_page(seeded.workspace_id, None, None, 50, None) == ([], None)


def test_another_accounts_human_can_neither_list_runs_of_nor_delete_a_template(api, live, runtime, seeded, clock):
    template_id = api.create(title="Mine", body="", cronSchedule="30 * * * *").json()["id"]
    fire_now(runtime, seeded, template_id)
    stranger = TasksApi(live, seeded.workspace_id, seed(runtime).human_token)

    assert_problem(stranger.delete(template_id), 404)
    assert_problem(stranger.runs(template_id), 404)
    assert_problem(stranger.get(template_id), 404)
    assert not schedule_missing(runtime, seeded, template_id)
    assert stored(runtime, seeded, template_id) is not None
    assert len(api.runs(template_id).json()["runs"]) == 1


# -- the local stand-in for Scheduler ------------------------------------------------------------


def test_the_local_schedule_driver_fires_what_is_due_and_moves_the_schedule_on(runtime, seeded, clock):
    due = template(runtime, seeded, "30 * * * *")
    later = template(runtime, seeded, "0 9 * * *")  # tomorrow 09:00: not due
    driver = Drivers(runtime).schedules
    assert isinstance(driver, ScheduleDriver)

    clock.set(datetime(2026, 12, 2, 14, 29, 59, tzinfo=UTC))
    assert driver.run_due() == 0
    clock.set(datetime(2026, 12, 2, 14, 31, tzinfo=UTC))
    assert driver.run_due() == 1

    (run,) = runs_of(runtime, seeded, due.id)
    assert run.fire_at == "2026-12-02T14:30:00.000Z"
    assert armed_input(runtime, seeded, due.id)["fireAt"] == "2026-12-02T15:30:00.000Z"
    assert runs_of(runtime, seeded, later.id) == []
    assert armed_input(runtime, seeded, later.id)["fireAt"] == "2026-12-03T09:00:00.000Z"

    assert driver.run_due() == 0  # nothing more due at 14:31
    assert len(runs_of(runtime, seeded, due.id)) == 1


def test_the_local_schedule_driver_dead_letters_a_firing_after_three_failed_attempts(
    runtime, seeded, clock, monkeypatch
):
    created = template(runtime, seeded, "30 * * * *")
    payload = armed_input(runtime, seeded, created.id)
    attempts = []

    def failing_create_run(*args, **kwargs):
        attempts.append(args)
        raise Unavailable("the store is busy; retry shortly")

    monkeypatch.setattr(runtime.tasks, "create_run", failing_create_run)
    driver = ScheduleDriver(runtime)
    clock.set(parse_iso(payload["fireAt"]))

    assert [driver.run_due() for _ in range(4)] == [0, 0, 0, 0]

    assert len(attempts) == 3  # Lambda's first try and two retries; the fourth pass leaves it alone
    sqs = runtime.clients.sqs
    url = sqs.get_queue_url(QueueName=runtime.settings.schedule_dead_letter_arn.rsplit(":", 1)[-1])["QueueUrl"]
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
    assert [json.loads(m["Body"]) for m in messages] == [payload]
    assert runs_of(runtime, seeded, created.id) == []


# -- the deployed Lambda handler ----------------------------------------------------------------


@pytest.fixture
def schedule_lambda(runtime, monkeypatch):
    """functions/schedule/app.py's handler, loaded under the environment template.yaml gives it."""
    return load_function("schedule", runtime, monkeypatch).handler


def schedule_context(request_id: str) -> LambdaContext:
    return LambdaContext(FUNCTION_NAMES["schedule"], request_id, remaining_ms=60_000)


def test_the_sample_event_is_exactly_the_input_a_schedule_is_armed_with(runtime, seeded, clock):
    sample = json.loads(SAMPLE_EVENT.read_text())
    created = template(runtime, seeded, "30 14 * * *")

    armed = armed_input(runtime, seeded, created.id)
    assert set(sample) == set(armed)
    assert sample["fireAt"] == armed["fireAt"] == "2026-12-02T14:30:00.000Z"
    parsed = schedules.Firing.parse(sample)
    assert parsed.input() == sample


def test_the_warm_lambda_handler_creates_the_run_once_for_a_twice_delivered_event(
    schedule_lambda, runtime, seeded, clock
):
    created = template(runtime, seeded, "30 14 * * *")  # next fire: the sample's 2026-12-02T14:30
    event = json.loads(SAMPLE_EVENT.read_text())
    event.update(accountId=seeded.account_id, workspaceId=seeded.workspace_id, templateId=created.id)

    first = schedule_lambda(dict(event), schedule_context("7f1c2d3e-0000-4000-8000-000000000001"))
    second = schedule_lambda(dict(event), schedule_context("7f1c2d3e-0000-4000-8000-000000000002"))

    assert (first, second) == ({"outcome": "created"}, {"outcome": "duplicate"})
    (run,) = runs_of(runtime, seeded, created.id)
    assert (run.template_id, run.fire_at) == (created.id, event["fireAt"])
    after = stored(runtime, seeded, created.id)
    assert after.run_count == 1
    # The function's own clock is the real one: it re-arms for the first 14:30 after the fire time and now.
    armed = runtime.schedules.get(schedule_name(seeded.workspace_id, created.id))
    assert armed.fire_at > parse_iso(event["fireAt"])
    assert (armed.fire_at.hour, armed.fire_at.minute) == (14, 30)
    assert iso(armed.fire_at) == after.next_fire_at == armed.input["fireAt"]


def test_the_lambda_handler_refuses_an_event_that_is_not_a_schedules_input(schedule_lambda, runtime, seeded):
    event = json.loads(SAMPLE_EVENT.read_text())
    event["templateId"] = "not an id"

    with pytest.raises(PayloadError, match="base62"):
        schedule_lambda(event, schedule_context("7f1c2d3e-0000-4000-8000-000000000003"))


def test_each_run_gets_its_own_identifier_and_a_created_entry(runtime, seeded, clock):
    made = template(runtime, seeded)
    assert fire_now(runtime, seeded, made.id)[0] == "created"
    [run] = runs_of(runtime, seeded, made.id)
    assert made.number is not None and run.number == made.number + 1
    assert runtime.tasks.task_id_of(seeded.workspace_id, run.number) == run.id
    [created] = runtime.tasks.feed(seeded.workspace_id, run.id, 10)
    assert (created.what, created.by) == ("created", "schedule")
