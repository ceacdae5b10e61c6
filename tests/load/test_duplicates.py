"""At-least-once delivery at volume: SQS redelivering every publication, Scheduler retrying every firing,
several copies at once from several threads. Each must still make exactly one task."""

import json
import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from agent_workspace.domain.clock import parse_iso
from agent_workspace.domain.models import Actor
from agent_workspace.local.drivers import queue_arn, sqs_record
from agent_workspace.services import accounts, events
from agent_workspace.services.tasks import NewTask, create_task
from agent_workspace.store.schedules import schedule_name
from agent_workspace.workers import fan_out, fire_schedule
from tests.load import scale
from tests.support import receive_all

COPIES = 3  # deliveries of each message or firing
THREADS = 8
SUBSCRIBERS = 3


def all_tasks(runtime, workspace_id: str) -> list:
    found, cursor = [], None
    while True:
        page, cursor = runtime.tasks.list_page(workspace_id, None, None, 100, cursor)
        found += page
        if cursor is None:
            return found


def warm(runtime) -> None:
    """Build the runtime's clients before threads race to build them."""
    _ = runtime.tasks, runtime.events, runtime.schedules, runtime.queue, runtime.blobs, runtime.accounts


def test_every_publication_delivered_three_times_at_once_makes_one_trigger_task_per_subscriber(runtime, seeded, report):
    account_id = seeded.account_id
    event = events.define_event(runtime, account_id, "deploy_done", "")
    subscribers = []
    for n in range(SUBSCRIBERS):
        workspace, _ = accounts.create_workspace(runtime.accounts, account_id, f"Subscriber {n}", "")
        events.subscribe(runtime, account_id, workspace.id, event.id, "Follow up", "Check it.")
        subscribers.append(workspace.id)
    publisher = Actor("agent", account_id, seeded.workspace_id, "test-token")
    published = {
        events.publish(runtime, publisher, events.NewPublication(name="deploy_done", payload=f"release {n}")).id
        for n in range(scale.DUPLICATES)
    }
    messages = receive_all(runtime)
    assert len(messages) == scale.DUPLICATES
    records = [sqs_record(m, queue_arn(runtime), runtime.settings.aws_region) for m in messages] * COPIES
    random.Random(1).shuffle(records)
    batches = [records[i : i + 10] for i in range(0, len(records), 10)]

    warm(runtime)
    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(lambda batch: fan_out.handle({"Records": batch}, None, runtime), batches))

    assert all(result == {"batchItemFailures": []} for result in results)
    for workspace_id in subscribers:
        triggered = all_tasks(runtime, workspace_id)
        assert len(triggered) == scale.DUPLICATES
        assert sorted(t.body for t in triggered) == sorted({t.body for t in triggered})  # one per release
        counts = runtime.accounts.get_workspace(account_id, workspace_id).task_counts
        assert counts["notstarted"] == scale.DUPLICATES
    for publication_id in published:
        recorded = runtime.events.get_publication(account_id, publication_id)
        assert (recorded.state, recorded.triggered) == ("delivered", SUBSCRIBERS)
    report(
        f"SQS redelivery: {scale.DUPLICATES} publications x {COPIES} copies in {len(batches)} batches on "
        f"{THREADS} threads -> {scale.DUPLICATES * SUBSCRIBERS} trigger tasks, one per publication and subscriber"
    )


def test_every_cron_firing_delivered_three_times_at_once_makes_one_run(runtime, seeded, report, clock):
    clock.set(datetime(2026, 12, 2, 14, 0, tzinfo=UTC))
    human = Actor("human", seeded.account_id, seeded.workspace_id, "tok-human")
    templates = [
        create_task(runtime, human, NewTask(title=f"report {n}", body="", cron_schedule="30 * * * *")).id
        for n in range(scale.DUPLICATES)
    ]
    warm(runtime)
    outcomes: Counter = Counter()

    for firing in range(2):  # two fire times: the re-armed schedule is duplicated as well
        inputs = [
            runtime.schedules.get(schedule_name(seeded.workspace_id, template_id)).input for template_id in templates
        ]
        (fire_at,) = {payload["fireAt"] for payload in inputs}
        clock.set(parse_iso(fire_at))  # Scheduler delivers on time
        deliveries = [json.loads(json.dumps(payload)) for payload in inputs for _ in range(COPIES)]
        random.Random(firing).shuffle(deliveries)
        with ThreadPoolExecutor(THREADS) as pool:
            outcomes.update(pool.map(lambda p: fire_schedule.handle(p, runtime)["outcome"], deliveries))

    assert outcomes == {"created": 2 * scale.DUPLICATES, "duplicate": 2 * (COPIES - 1) * scale.DUPLICATES}
    for template_id in templates:
        runs, _ = runtime.tasks.list_runs(seeded.workspace_id, template_id, 50, None)
        assert sorted(run.fire_at for run in runs) == ["2026-12-02T14:30:00.000Z", "2026-12-02T15:30:00.000Z"]
        template = runtime.tasks.get(seeded.workspace_id, template_id, consistent=True)
        assert (template.run_count, template.next_fire_at) == (2, "2026-12-02T16:30:00.000Z")
    counts = runtime.accounts.get_workspace(seeded.account_id, seeded.workspace_id).task_counts
    assert counts["notstarted"] == 3 * scale.DUPLICATES  # the templates and two runs each
    report(
        f"Scheduler retries: {scale.DUPLICATES} cron templates x 2 fire times x {COPIES} deliveries on {THREADS} "
        f"threads -> {2 * scale.DUPLICATES} runs, one per template and fire time"
    )
