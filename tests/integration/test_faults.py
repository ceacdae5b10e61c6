"""Fault injection: AWS failing in the middle of a multi-step action.

Each case makes one AWS operation fail while an action is half done (a task's second upload, the
transaction after its uploads, the queue after the record, the second trigger task of a fan-out ...)
and checks three things: the caller gets a clear retryable error (the MCP tool error "...; retry
shortly", the REST 503 problem with Retry-After); nothing is left half-written (the whole table, the
bucket, the schedule group and the queue are as they were); and, the fault gone, the same call works.

How faults are injected: a handler on the client's `before-send.<service>.<Operation>` event returns a
fake HTTP response in the service's own wire format, so botocore parses it and its standard retry
handler (`needs-retry`, which runs after `before-send`) sees it exactly as it would see AWS's answer.
(`before-call` would short-circuit the call above the retry loop: no retries, no backoff; not used.)
Every wire attempt passes the handler, so `Injection.attempts` counts them, retries included. A
`committed` injection sends the request on to moto first and answers the fault afterwards: a 5xx
after the write was applied, which DynamoDB documents as possible ("may or may not have succeeded").

Observed with `Config(retries={"mode": "standard", "max_attempts": 3})` (store/clients.py): botocore
reads a client config's `max_attempts` as *retries*, so an operation that keeps failing with
throttling or 5xx is tried 4 times in all, then raises; backoff is jittered exponential, capped at
1, 2, 4 s for throttling and 0.025/0.05 x 1, 2, 4 s for DynamoDB/other 5xx. A cancelled transaction
(TransactionCanceledException, e.g. with a ThrottlingError reason) and TransactionConflict are not
retried by botocore at all. botocore's sleep is recorded instead of slept (the `backoff` fixture),
except in the one test that measures the real time a permanent failure takes.

The module has clients of its own, so a handler it registers and the retry quota its faults drain
never reach another module's tests.
"""

import base64
import copy
import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import botocore.endpoint
import httpx
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ConnectionClosedError, ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError

from agent_workspace.domain.errors import Unavailable
from agent_workspace.domain.models import Actor
from agent_workspace.local.drivers import queue_arn, sqs_record
from agent_workspace.mcp_server.dispatch import ToolOutcome
from agent_workspace.runtime import Runtime
from agent_workspace.services import accounts, events
from agent_workspace.store.clients import AwsClients
from agent_workspace.store.dynamo import from_item
from agent_workspace.workers import fan_out
from tests.integration.test_auth_and_api import workspace_get
from tests.support import LiveServer, bearer, call, free_port

pytestmark = pytest.mark.anyio

ATTEMPTS = 4  # 1 + the 3 retries of `max_attempts: 3`
PROBLEM = "application/problem+json"
STORE_BUSY = "the store is busy; retry shortly"
NOT_STORED = "the attachment could not be stored; retry shortly"


# -- faults in each service's wire format ----------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """One error response as the service sends it: botocore parses it like any other."""

    status: int
    headers: dict[str, str]
    body: bytes


def dynamodb_fault(code: str, status: int = 400, **fields: Any) -> Fault:
    body = {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": f"injected {code}", **fields}
    return Fault(status, {"Content-Type": "application/x-amz-json-1.0"}, json.dumps(body).encode())


def s3_fault(code: str, status: int) -> Fault:
    body = f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>injected</Message></Error>'
    return Fault(status, {"Content-Type": "application/xml"}, body.encode())


def sqs_fault(code: str, status: int) -> Fault:
    body = {"__type": f"com.amazonaws.sqs#{code}", "message": f"injected {code}"}
    headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-query-error": f"{code};Receiver"}
    return Fault(status, headers, json.dumps(body).encode())


def scheduler_fault(code: str, status: int) -> Fault:
    headers = {"Content-Type": "application/json", "x-amzn-ErrorType": code}
    return Fault(status, headers, json.dumps({"Message": f"injected {code}"}).encode())


THROTTLED = dynamodb_fault("ProvisionedThroughputExceededException")
DYNAMODB_500 = dynamodb_fault("InternalServerError", 500)
# What DynamoDB answers when one item of a transaction is throttled: not retried by botocore.
TRANSACTION_THROTTLED = dynamodb_fault(
    "TransactionCanceledException",
    CancellationReasons=[{"Code": "None"}, {"Code": "ThrottlingError", "Message": "Throughput exceeds capacity"}],
)
TRANSACTION_CONFLICT = dynamodb_fault("TransactionConflictException")
S3_SLOW_DOWN = s3_fault("SlowDown", 503)
S3_500 = s3_fault("InternalError", 500)
SQS_500 = sqs_fault("InternalError", 500)
SCHEDULER_THROTTLED = scheduler_fault("ThrottlingException", 429)
SCHEDULER_500 = scheduler_fault("InternalServerException", 500)


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


@dataclass
class Injection:
    """One operation of one client failing: the first `skip` attempts pass, then `times` fail (None: all)."""

    client: Any
    operation: str
    fault: Fault
    skip: int = 0
    times: int | None = None
    committed: bool = False
    attempts: int = 0  # every attempt on the wire, passed or failed
    failed: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def event(self) -> str:
        return f"before-send.{self.client.meta.service_model.service_id.hyphenize()}.{self.operation}"

    def __call__(self, request: Any, **_: Any) -> AWSResponse | None:
        with self._lock:
            self.attempts += 1
            if self.attempts <= self.skip or (self.times is not None and self.failed >= self.times):
                return None  # this attempt goes to moto
            self.failed += 1
        if self.committed:
            self.client._endpoint.http_session.send(request)  # applied; only its answer is lost
        return AWSResponse(request.url, self.fault.status, self.fault.headers, _Raw(self.fault.body))


@contextmanager
def failing(
    client: Any, operation: str, fault: Fault, *, skip: int = 0, times: int | None = None, committed: bool = False
) -> Iterator[Injection]:
    injection = Injection(client, operation, fault, skip, times, committed)
    client.meta.events.register(injection.event, injection)
    try:
        yield injection
    finally:
        client.meta.events.unregister(injection.event, injection)


class Backoff:
    """Stands in for botocore.endpoint's `time`: records each retry's backoff instead of sleeping it."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.delays.append(seconds)


# -- fixtures ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def aws_clients(moto_endpoint: str) -> AwsClients:
    """Overrides conftest's: this module's own clients (conftest's `runtime` takes them), so the faults injected
    into them reach no other module's tests."""
    return AwsClients("us-east-1", moto_endpoint)


@pytest.fixture(autouse=True)
def backoff(monkeypatch: pytest.MonkeyPatch) -> Backoff:
    recorder = Backoff()
    monkeypatch.setattr(botocore.endpoint, "time", recorder)
    return recorder


@pytest.fixture
def free_port_url() -> str:
    """An endpoint nothing listens on: every connection to it is refused."""
    return f"http://127.0.0.1:{free_port()}"


# -- what is stored ----------------------------------------------------------------------------------


def stored(rt: Runtime) -> dict[str, Any]:
    """Everything the runtime's resources hold: every item, object, schedule and queued message.

    A token's request counter (rateCount, rateWindow) is left out: every REST request counts itself. So is the
    workspace's identifier counter (taskNumbers): like a database sequence, a failed create spends its number.
    """
    clients = rt.clients
    items = []
    for page in clients.dynamodb.get_paginator("scan").paginate(TableName=rt.settings.table_name, ConsistentRead=True):
        for raw in page.get("Items", []):
            item = from_item(raw)
            item.pop("rateCount", None)
            item.pop("rateWindow", None)
            item.pop("taskNumbers", None)
            items.append(item)
    objects = {}
    for page in clients.s3.get_paginator("list_objects_v2").paginate(Bucket=rt.settings.attachments_bucket):
        for entry in page.get("Contents", []):
            objects[entry["Key"]] = entry["ETag"]
    queue = clients.sqs.get_queue_attributes(
        QueueUrl=rt.settings.events_queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return {
        "items": sorted(items, key=lambda item: (item["PK"], item["SK"])),
        "objects": objects,
        "schedules": sorted(rt.schedules.list_armed(), key=lambda armed: armed.name),
        "queued": (int(queue["ApproximateNumberOfMessages"]), int(queue["ApproximateNumberOfMessagesNotVisible"])),
    }


def object_keys(rt: Runtime) -> list[str]:
    return sorted(stored(rt)["objects"])


def content(rt: Runtime, key: str) -> bytes:
    return rt.clients.s3.get_object(Bucket=rt.settings.attachments_bucket, Key=key)["Body"].read()


def schedule_exists(rt: Runtime, name: str) -> bool:
    try:
        rt.clients.scheduler.get_schedule(Name=name, GroupName=rt.settings.schedule_group)
    except rt.clients.scheduler.exceptions.ResourceNotFoundException:
        return False
    return True


def retryable(where: str, message: str) -> ToolOutcome:
    return ToolOutcome(f"{where}: {message}", is_error=True)


def text_answer(text: str) -> ToolOutcome:
    """A successful text answer: the text, and the same as its structured content."""
    return ToolOutcome(text, structured={"text": text})


def assert_503(response: httpx.Response, detail: str) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["content-type"] == PROBLEM
    assert response.headers["retry-after"] == "2"
    assert response.json() == {"type": "about:blank", "title": "Service Unavailable", "status": 503, "detail": detail}


def file(ident: str, data: bytes, filename: str, mime_type: str = "text/plain") -> dict[str, str]:
    return {"id": ident, "filename": filename, "mimeType": mime_type, "data": base64.b64encode(data).decode()}


FILES = [file("plan", b"step one\nstep two\n", "plan.txt"), file("dump", bytes(range(256)) * 4, "dump.bin")]


def create_args(**more: Any) -> dict[str, Any]:
    payload = {"title": "Ship it", "body": "With the files.", "attachments": FILES, **more}
    return {"action": "create", "payload": payload}


def created_id(outcome: ToolOutcome) -> str:
    assert not outcome.is_error, outcome.text
    assert outcome.text.startswith("task created with id="), outcome.text
    return outcome.text.removeprefix("task created with id=")


# == task create with attachments ======================================================================


async def test_task_create_whose_second_upload_fails_leaves_nothing_and_succeeds_afterwards(runtime, seeded):
    before = stored(runtime)

    with failing(runtime.clients.s3, "PutObject", S3_SLOW_DOWN, skip=1) as injected:
        outcome = await call(runtime, seeded.agent_token, "task", create_args())

    assert outcome == retryable("task create", NOT_STORED)
    assert (injected.attempts, injected.failed) == (1 + ATTEMPTS, ATTEMPTS)  # the first file, then 4 tries
    assert stored(runtime) == before  # the first file's object is deleted again; no task, no records, same counts

    task_id = created_id(await call(runtime, seeded.agent_token, "task", create_args()))
    task = runtime.tasks.get(seeded.workspace_id, task_id)
    assert [ref.filename for ref in task.attachments] == ["plan.txt", "dump.bin"]
    assert [content(runtime, ref.key) for ref in task.attachments] == [b"step one\nstep two\n", bytes(range(256)) * 4]
    assert object_keys(runtime) == sorted(ref.key for ref in task.attachments)
    assert runtime.accounts.get_workspace(seeded.account_id, seeded.workspace_id).task_counts["notstarted"] == 1


@pytest.mark.parametrize(
    ("fault", "attempts"),
    [(THROTTLED, ATTEMPTS), (TRANSACTION_THROTTLED, 1)],
    ids=["throttled", "transaction cancelled by throttling"],
)
async def test_task_create_whose_transaction_fails_after_the_uploads_deletes_them_again(
    runtime, seeded, fault, attempts
):
    before = stored(runtime)

    with (
        failing(runtime.clients.dynamodb, "TransactWriteItems", fault) as injected,
        failing(runtime.clients.s3, "PutObject", S3_500, times=0) as uploads,  # counts, fails nothing
    ):
        outcome = await call(runtime, seeded.agent_token, "task", create_args())

    assert outcome == retryable("task create", STORE_BUSY)
    assert injected.attempts == attempts
    assert uploads.attempts == 2  # both files were stored before the transaction ...
    assert stored(runtime) == before  # ... and taken back after it failed

    task_id = created_id(await call(runtime, seeded.agent_token, "task", create_args()))
    assert len(runtime.tasks.get(seeded.workspace_id, task_id).attachments) == 2
    assert len(object_keys(runtime)) == 2


async def test_task_create_over_rest_is_a_503_with_retry_after_and_leaves_nothing(runtime, seeded, live):
    url = f"{live.url}/api/workspaces/{seeded.workspace_id}/tasks"
    headers = {"authorization": f"Bearer {seeded.human_token}"}
    body = {"title": "Ship it", "body": "With the files.", "attachments": FILES}
    before = stored(runtime)

    with failing(runtime.clients.s3, "PutObject", S3_SLOW_DOWN, skip=1):
        assert_503(httpx.post(url, json=body, headers=headers), NOT_STORED)
    assert stored(runtime) == before
    with failing(runtime.clients.dynamodb, "TransactWriteItems", THROTTLED):
        assert_503(httpx.post(url, json=body, headers=headers), STORE_BUSY)
    assert stored(runtime) == before

    response = httpx.post(url, json=body, headers=headers)
    assert response.status_code == 201, response.text
    assert [a["filename"] for a in response.json()["attachments"]] == ["plan.txt", "dump.bin"]
    assert len(object_keys(runtime)) == 2


# == task reply with attachments =======================================================================


@pytest.mark.parametrize(
    ("operation", "fault", "message"),
    [
        ("PutObject", S3_SLOW_DOWN, NOT_STORED),
        ("TransactWriteItems", THROTTLED, STORE_BUSY),
    ],
    ids=["second upload fails", "transaction throttled"],
)
async def test_a_reply_whose_upload_or_transaction_fails_leaves_nothing_and_succeeds_afterwards(
    runtime, seeded, operation, fault, message
):
    task_id = created_id(
        await call(
            runtime,
            seeded.agent_token,
            "task",
            {"action": "create", "payload": {"title": "Review", "body": "Have a look."}},
        )
    )
    reply = {"action": "reply", "payload": {"taskId": task_id, "text": "Here they are.", "attachments": FILES}}
    before = stored(runtime)

    client = runtime.clients.s3 if operation == "PutObject" else runtime.clients.dynamodb
    with failing(client, operation, fault, skip=1 if operation == "PutObject" else 0):
        outcome = await call(runtime, seeded.agent_token, "task", reply)

    assert outcome == retryable("task reply", message)
    assert stored(runtime) == before  # no message, no attachment records, no objects, the task untouched

    outcome = await call(runtime, seeded.agent_token, "task", reply)
    assert not outcome.is_error and outcome.text.startswith(f"reply posted to task {task_id} with id="), outcome.text
    _, messages, _ = runtime.tasks.get_with_conversation(seeded.workspace_id, task_id, 10, None)
    assert [[ref.filename for ref in m.attachments] for m in messages] == [["plan.txt", "dump.bin"]]
    assert object_keys(runtime) == sorted(ref.key for ref in messages[0].attachments)


# == pano save with files ==============================================================================

PANO_FILES = [file("a", b"alpha", "a.txt"), file("b", b"beta", "b.txt")]
PANO_MARKDOWN = "# Plan\n\n[a](a.txt) and [b](b.txt)"


def pano_save(**payload: Any) -> dict[str, Any]:
    return {"action": "save", "payload": {"title": "Plan", "markdown": PANO_MARKDOWN, "files": PANO_FILES, **payload}}


def saved(outcome: ToolOutcome) -> dict[str, Any]:
    assert not outcome.is_error, outcome.text
    return json.loads(outcome.text)


@pytest.mark.parametrize(
    ("service", "operation", "fault", "message"),
    [
        ("scheduler", "CreateSchedule", SCHEDULER_THROTTLED, "the scheduler is busy; retry shortly"),
        ("dynamodb", "PutItem", DYNAMODB_500, STORE_BUSY),
    ],
    ids=["expiry schedule throttled", "doc write 500"],
)
async def test_creating_a_doc_whose_schedule_or_write_fails_leaves_nothing(
    runtime, seeded, service, operation, fault, message
):
    before = stored(runtime)

    with failing(getattr(runtime.clients, service), operation, fault) as injected:
        outcome = await call(runtime, seeded.agent_token, "pano", pano_save())

    assert outcome == retryable("pano save", message)
    assert injected.attempts == ATTEMPTS
    assert stored(runtime) == before  # no doc, no files, no expiry schedule

    doc = saved(await call(runtime, seeded.agent_token, "pano", pano_save()))
    assert doc["linkedFiles"] == ["a.txt", "b.txt"]
    assert len(object_keys(runtime)) == 2
    assert schedule_exists(runtime, f"pano-{seeded.account_id}-{doc['id']}")


async def test_creating_a_doc_whose_second_upload_fails_leaves_no_doc_and_no_files(runtime, seeded):
    before = stored(runtime)

    with failing(runtime.clients.s3, "PutObject", S3_SLOW_DOWN, skip=1) as injected:
        outcome = await call(runtime, seeded.agent_token, "pano", pano_save())

    assert outcome == retryable("pano save", NOT_STORED)
    assert injected.attempts == 1 + ATTEMPTS
    now = stored(runtime)
    assert (now["items"], now["objects"], now["queued"]) == (before["items"], before["objects"], before["queued"])

    doc = saved(await call(runtime, seeded.agent_token, "pano", pano_save()))
    assert doc["linkedFiles"] == ["a.txt", "b.txt"]


async def test_creating_a_doc_whose_second_upload_fails_leaves_no_expiry_schedule(runtime, seeded):
    before = stored(runtime)

    with failing(runtime.clients.s3, "PutObject", S3_SLOW_DOWN, skip=1):
        outcome = await call(runtime, seeded.agent_token, "pano", pano_save())

    assert outcome == retryable("pano save", NOT_STORED)
    assert stored(runtime)["schedules"] == before["schedules"]


def replacement_of(doc_id: str) -> dict[str, Any]:
    return pano_save(
        id=doc_id,
        title="Plan v2",
        markdown="# Plan v2\n\n[b](b.txt) and [c](c.txt)",
        files=[file("b", b"beta v2", "b.txt"), file("c", b"gamma", "c.txt")],
    )


async def assert_replaced_afterwards(runtime: Runtime, seeded: Any, doc_id: str) -> None:
    replaced = saved(await call(runtime, seeded.agent_token, "pano", replacement_of(doc_id)))
    assert (replaced["title"], replaced["linkedFiles"]) == ("Plan v2", ["b.txt", "c.txt"])
    current = runtime.pano.get(seeded.account_id, doc_id)
    assert [content(runtime, f.ref.key) for f in current.files] == [b"beta v2", b"gamma"]


async def test_replacing_a_doc_whose_second_upload_fails_leaves_it_unchanged(runtime, seeded):
    doc = saved(await call(runtime, seeded.agent_token, "pano", pano_save()))
    before = stored(runtime)

    with failing(runtime.clients.s3, "PutObject", S3_SLOW_DOWN, skip=1) as injected:
        outcome = await call(runtime, seeded.agent_token, "pano", replacement_of(doc["id"]))

    assert outcome == retryable("pano save", NOT_STORED)
    assert injected.attempts == 1 + ATTEMPTS
    assert stored(runtime) == before  # same doc, same files and objects, same expiry schedule

    await assert_replaced_afterwards(runtime, seeded, doc["id"])
    current = runtime.pano.get(seeded.account_id, doc["id"])
    assert object_keys(runtime) == sorted(f.ref.key for f in current.files)  # a.txt and the old b.txt are gone


async def test_replacing_a_doc_whose_write_fails_leaves_the_doc_and_its_schedule_unchanged(runtime, seeded):
    doc = saved(await call(runtime, seeded.agent_token, "pano", pano_save()))
    before = stored(runtime)

    with failing(runtime.clients.dynamodb, "UpdateItem", THROTTLED) as injected:
        outcome = await call(runtime, seeded.agent_token, "pano", replacement_of(doc["id"]))

    assert outcome == retryable("pano save", STORE_BUSY)
    assert injected.attempts == ATTEMPTS
    after = stored(runtime)
    assert (after["items"], after["schedules"]) == (before["items"], before["schedules"])

    await assert_replaced_afterwards(runtime, seeded, doc["id"])


@pytest.mark.parametrize("action", ["save", "attach"])
async def test_a_doc_write_that_fails_takes_back_the_files_it_uploaded(runtime, seeded, action):
    doc = saved(await call(runtime, seeded.agent_token, "pano", pano_save()))
    arguments = (
        replacement_of(doc["id"])
        if action == "save"
        else {"action": "attach", "payload": {"id": doc["id"], "files": [file("z", b"zeta", "z.txt")]}}
    )
    before = stored(runtime)

    with failing(runtime.clients.dynamodb, "UpdateItem", DYNAMODB_500):
        outcome = await call(runtime, seeded.agent_token, "pano", arguments)

    assert outcome == retryable(f"pano {action}", STORE_BUSY)
    assert stored(runtime) == before


async def test_replacing_a_doc_whose_expiry_schedule_cannot_be_moved_is_all_or_nothing(runtime, seeded):
    doc = saved(await call(runtime, seeded.agent_token, "pano", pano_save()))
    before = stored(runtime)

    with failing(runtime.clients.scheduler, "UpdateSchedule", SCHEDULER_THROTTLED) as injected:
        outcome = await call(runtime, seeded.agent_token, "pano", replacement_of(doc["id"]))

    assert injected.attempts == ATTEMPTS
    current = runtime.pano.get(seeded.account_id, doc["id"])
    if outcome.is_error:  # refused: nothing changed
        assert outcome == retryable("pano save", "the scheduler is busy; retry shortly")
        assert stored(runtime) == before
    else:  # saved: only the new doc's files are left
        assert current.title == "Plan v2"
        assert object_keys(runtime) == sorted(f.ref.key for f in current.files)


# == cron templates ====================================================================================

CRON = {"cronSchedule": "0 9 * * 1", "attachments": [FILES[0]]}


async def test_a_cron_template_whose_schedule_cannot_be_created_is_not_created(runtime, seeded):
    before = stored(runtime)

    with failing(runtime.clients.scheduler, "CreateSchedule", SCHEDULER_THROTTLED) as injected:
        outcome = await call(runtime, seeded.agent_token, "task", create_args(**CRON))

    assert outcome == retryable("task create", "the scheduler is busy; retry shortly")
    assert injected.attempts == ATTEMPTS
    assert stored(runtime) == before  # no template, its file taken back, no schedule

    template_id = created_id(await call(runtime, seeded.agent_token, "task", create_args(**CRON)))
    assert schedule_exists(runtime, f"task-{seeded.workspace_id}-{template_id}")


async def test_a_cron_template_whose_transaction_fails_after_its_schedule_deletes_the_schedule(runtime, seeded):
    before = stored(runtime)

    with (
        failing(runtime.clients.dynamodb, "TransactWriteItems", THROTTLED),
        failing(runtime.clients.scheduler, "CreateSchedule", SCHEDULER_500, times=0) as created,
        failing(runtime.clients.scheduler, "DeleteSchedule", SCHEDULER_500, times=0) as deleted,
    ):
        outcome = await call(runtime, seeded.agent_token, "task", create_args(**CRON))

    assert outcome == retryable("task create", STORE_BUSY)
    assert (created.attempts, deleted.attempts) == (1, 1)  # it was armed, then disarmed again
    assert stored(runtime) == before
    assert runtime.clients.scheduler.list_schedules(GroupName=runtime.settings.schedule_group)["Schedules"] == []

    template_id = created_id(await call(runtime, seeded.agent_token, "task", create_args(**CRON)))
    assert runtime.tasks.get(seeded.workspace_id, template_id).is_template
    assert schedule_exists(runtime, f"task-{seeded.workspace_id}-{template_id}")


# == publishEvent =====================================================================================

PUBLISH = {"action": "publishEvent", "payload": {"name": "deploy_done", "payload": "v1 is live"}}


async def test_publish_whose_message_cannot_be_queued_records_nothing_and_succeeds_afterwards(runtime, seeded, live):
    before = stored(runtime)

    with failing(runtime.clients.sqs, "SendMessage", SQS_500) as injected:
        outcome = await call(runtime, seeded.agent_token, "workspace", PUBLISH)

    assert outcome == retryable("workspace publishEvent", "the event queue is busy; retry shortly")
    assert injected.attempts == ATTEMPTS
    assert stored(runtime) == before  # the record taken back, nothing queued
    published = f"{live.url}/api/published-events"
    headers = {"authorization": f"Bearer {seeded.human_token}"}
    assert httpx.get(published, headers=headers).json()["publications"] == []

    assert await call(runtime, seeded.agent_token, "workspace", PUBLISH) == text_answer('event "deploy_done" published')
    assert [p["payload"] for p in httpx.get(published, headers=headers).json()["publications"]] == ["v1 is live"]
    assert stored(runtime)["queued"] == (1, 0)


async def test_publish_whose_record_cannot_be_written_queues_nothing(runtime, seeded):
    before = stored(runtime)

    with failing(runtime.clients.dynamodb, "PutItem", THROTTLED) as injected:
        outcome = await call(runtime, seeded.agent_token, "workspace", PUBLISH)

    assert outcome == retryable("workspace publishEvent", STORE_BUSY)
    assert injected.attempts == ATTEMPTS
    assert stored(runtime) == before


# == fan-out ==========================================================================================


def receive_one(rt: Runtime) -> dict[str, Any]:
    messages = rt.clients.sqs.receive_message(
        QueueUrl=rt.settings.events_queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0, AttributeNames=["All"]
    ).get("Messages", [])
    assert len(messages) == 1, messages
    return messages[0]


def record_of(rt: Runtime, message: dict[str, Any]) -> dict[str, Any]:
    """One received message as a record of Lambda's SQS event."""
    return sqs_record(message, queue_arn(rt), rt.settings.aws_region)


def trigger_tasks(rt: Runtime, workspace_id: str) -> list[Any]:
    tasks, _ = rt.tasks.list_page(workspace_id, None, None, 50, None)
    return [task for task in tasks if task.created_by == "event"]


@pytest.mark.parametrize(
    ("fault", "attempts"),
    [(THROTTLED, ATTEMPTS), (TRANSACTION_THROTTLED, 1)],
    ids=["throttled", "cancelled by throttling"],
)
def test_a_fan_out_throttled_at_its_second_trigger_is_retried_and_creates_each_trigger_task_once(
    runtime, seeded, fault, attempts
):
    event = events.define_event(runtime, seeded.account_id, "deploy_done", "")
    subscribers = []
    for title in ("QA", "Docs", "Ops"):
        workspace, _ = accounts.create_workspace(runtime.accounts, seeded.account_id, title, "")
        events.subscribe(runtime, seeded.account_id, workspace.id, event.id, "Follow up", "Check it.")
        subscribers.append(workspace.id)
    actor = Actor("agent", seeded.account_id, seeded.workspace_id, "test-token")
    publication = events.publish(runtime, actor, events.NewPublication(name="deploy_done", payload="v1 is live"))
    record = record_of(runtime, receive_one(runtime))

    with failing(runtime.clients.dynamodb, "TransactWriteItems", fault, skip=1) as injected:
        result = fan_out.handle({"Records": [copy.deepcopy(record)]}, None, runtime)

    assert result == {"batchItemFailures": [{"itemIdentifier": record["messageId"]}]}
    assert injected.attempts == 1 + attempts  # the first trigger, then the second's tries; the third never tried
    assert sum(len(trigger_tasks(runtime, w)) for w in subscribers) == 1
    assert runtime.events.get_publication(seeded.account_id, publication.id).state == "queued"

    # SQS redelivers the failed record; then a duplicate delivery on top.
    assert fan_out.handle({"Records": [copy.deepcopy(record)]}, None, runtime) == {"batchItemFailures": []}
    assert fan_out.handle({"Records": [copy.deepcopy(record)]}, None, runtime) == {"batchItemFailures": []}

    for workspace_id in subscribers:
        (task,) = trigger_tasks(runtime, workspace_id)
        assert task.trigger["payload"] == "v1 is live"
        assert runtime.accounts.get_workspace(seeded.account_id, workspace_id).task_counts["notstarted"] == 1
    recorded = runtime.events.get_publication(seeded.account_id, publication.id)
    assert (recorded.state, recorded.triggered) == ("delivered", 3)


# == dequeue ==========================================================================================

GET = {"action": "get", "payload": {}}


async def test_a_dequeue_whose_claim_is_throttled_errs_and_the_task_is_handed_out_once_afterwards(runtime, seeded):
    task_id = created_id(
        await call(runtime, seeded.agent_token, "task", {"action": "create", "payload": {"title": "Do it", "body": ""}})
    )
    before = stored(runtime)

    with failing(runtime.clients.dynamodb, "UpdateItem", THROTTLED) as injected:
        outcome = await call(runtime, seeded.agent_token, "task", GET)

    assert outcome == retryable("task get", STORE_BUSY)
    assert injected.attempts == ATTEMPTS  # not multiplied by the claim loop's rounds
    assert stored(runtime) == before  # not claimed

    got = await call(runtime, seeded.agent_token, "task", GET)
    assert not got.is_error and json.loads(got.text)["id"] == task_id
    assert await call(runtime, seeded.agent_token, "task", GET) == text_answer("null")


async def test_a_claim_applied_but_answered_500_is_not_lost_nor_handed_out_twice(runtime, seeded, clock):
    task_id = created_id(
        await call(runtime, seeded.agent_token, "task", {"action": "create", "payload": {"title": "Do it", "body": ""}})
    )

    with failing(runtime.clients.dynamodb, "UpdateItem", DYNAMODB_500, times=1, committed=True):
        first = await call(runtime, seeded.agent_token, "task", GET)
    second = await call(runtime, seeded.agent_token, "task", GET)

    handed_out = [json.loads(o.text)["id"] for o in (first, second) if not o.is_error and o.text != "null"]
    assert handed_out in ([], [task_id])  # never twice
    if not handed_out:  # held by the lost claim's lease: back in the queue when it runs out
        clock.advance(seconds=runtime.settings.claim_lease_seconds + 1)
        got = await call(runtime, seeded.agent_token, "task", GET)
        assert json.loads(got.text)["id"] == task_id
        assert await call(runtime, seeded.agent_token, "task", GET) == text_answer("null")


async def test_a_claim_applied_but_answered_500_hands_the_task_out_or_says_retry(runtime, seeded):
    task_id = created_id(
        await call(runtime, seeded.agent_token, "task", {"action": "create", "payload": {"title": "Do it", "body": ""}})
    )

    with failing(runtime.clients.dynamodb, "UpdateItem", DYNAMODB_500, times=1, committed=True):
        first = await call(runtime, seeded.agent_token, "task", GET)

    if first.is_error:
        assert first == retryable("task get", STORE_BUSY)
    else:
        assert (json.loads(first.text) or {}).get("id") == task_id, first.text


# == memory ===========================================================================================


@pytest.mark.parametrize(
    ("fault", "attempts", "message"),
    [
        (THROTTLED, ATTEMPTS, STORE_BUSY),
        (TRANSACTION_THROTTLED, 1, STORE_BUSY),
        (TRANSACTION_CONFLICT, 6, "memory://notes.md is being saved by others; retry shortly"),
    ],
    ids=["throttled", "cancelled by throttling", "transaction conflict"],
)
async def test_a_memory_save_whose_transaction_fails_keeps_the_old_content(runtime, seeded, fault, attempts, message):
    def save(text: str) -> dict[str, Any]:
        return {"action": "save", "payload": {"name": "notes.md", "content": text}}

    load = {"action": "load", "payload": {"name": "notes.md"}}
    assert await call(runtime, seeded.agent_token, "memory", save("old")) == text_answer(
        "memory://notes.md saved (revision 1)"
    )
    before = stored(runtime)

    with failing(runtime.clients.dynamodb, "TransactWriteItems", fault) as injected:
        outcome = await call(runtime, seeded.agent_token, "memory", save("new"))

    assert outcome == retryable("memory save", message)
    assert injected.attempts == attempts  # bounded: a conflict is retried by the save's own 6 rounds only
    assert stored(runtime) == before
    assert json.loads((await call(runtime, seeded.agent_token, "memory", load)).text)["content"] == "old"

    assert await call(runtime, seeded.agent_token, "memory", save("new")) == text_answer(
        "memory://notes.md saved (revision 2)"
    )
    assert json.loads((await call(runtime, seeded.agent_token, "memory", load)).text)["content"] == "new"


# == retries are bounded ===============================================================================


def _upload(rt: Runtime) -> None:
    rt.blobs.put("workspaces/x/tasks/y/z", b"x", "text/plain")


def _send(rt: Runtime) -> None:
    rt.queue.send({"accountId": "0000000none", "publicationId": "0000000none"})


def _arm(rt: Runtime) -> None:
    rt.schedules.create("bounded", datetime(2031, 1, 1, tzinfo=UTC), {})


def _read(rt: Runtime) -> None:
    rt.memory.get("0000000none", "notes")


@pytest.mark.parametrize(
    ("service", "operation", "fault", "action", "scale"),
    [
        ("dynamodb", "GetItem", THROTTLED, _read, 1.0),
        ("dynamodb", "GetItem", DYNAMODB_500, _read, 0.025),
        ("s3", "PutObject", S3_SLOW_DOWN, _upload, 1.0),
        ("s3", "PutObject", S3_500, _upload, 0.05),
        ("sqs", "SendMessage", SQS_500, _send, 0.05),
        ("scheduler", "CreateSchedule", SCHEDULER_THROTTLED, _arm, 1.0),
    ],
    ids=["dynamodb throttled", "dynamodb 500", "s3 SlowDown", "s3 500", "sqs 500", "scheduler throttled"],
)
def test_a_permanent_fault_is_tried_four_times_with_capped_exponential_backoff_then_raised_as_unavailable(
    runtime, backoff, service, operation, fault, action, scale
):
    with failing(getattr(runtime.clients, service), operation, fault) as injected, pytest.raises(Unavailable) as raised:
        action(runtime)

    assert "retry shortly" in raised.value.message
    assert (injected.attempts, injected.failed) == (ATTEMPTS, ATTEMPTS)
    assert len(backoff.delays) == ATTEMPTS - 1
    for attempt, delay in enumerate(backoff.delays):
        assert 0 <= delay <= scale * 2**attempt  # jittered, under a cap that doubles per retry
    assert sum(backoff.delays) <= 7 * scale


async def test_a_permanent_5xx_gives_up_within_a_bounded_time_really_sleeping(runtime, seeded, monkeypatch):
    monkeypatch.setattr(botocore.endpoint, "time", time)  # real backoff this once
    started = time.monotonic()

    with failing(runtime.clients.dynamodb, "TransactWriteItems", DYNAMODB_500) as injected:
        outcome = await call(
            runtime,
            seeded.agent_token,
            "memory",
            {"action": "save", "payload": {"name": "notes.md", "content": "text"}},
        )

    elapsed = time.monotonic() - started
    assert outcome == retryable("memory save", STORE_BUSY)
    assert injected.attempts == ATTEMPTS
    assert elapsed < 2.0  # 3 backoffs of at most 0.025, 0.05 and 0.1 s, plus a few local requests


def test_a_permanently_throttled_fan_out_fails_its_record_after_bounded_attempts(runtime, seeded):
    event = events.define_event(runtime, seeded.account_id, "deploy_done", "")
    events.subscribe(runtime, seeded.account_id, seeded.workspace_id, event.id, "Follow up", "")
    actor = Actor("agent", seeded.account_id, seeded.workspace_id, "test-token")
    events.publish(runtime, actor, events.NewPublication(name="deploy_done", payload="v1"))
    record = record_of(runtime, receive_one(runtime))
    before = stored(runtime)

    with failing(runtime.clients.dynamodb, "TransactWriteItems", THROTTLED) as injected:
        result = fan_out.handle({"Records": [record]}, None, runtime)

    assert result == {"batchItemFailures": [{"itemIdentifier": record["messageId"]}]}
    assert injected.attempts == ATTEMPTS
    assert stored(runtime) == before


# == a 5xx after the write was applied ==================================================================


async def test_publish_whose_record_is_applied_but_answered_500_leaves_no_record_or_is_queued(runtime, seeded):
    before = stored(runtime)

    with failing(runtime.clients.dynamodb, "PutItem", DYNAMODB_500, times=1, committed=True):
        outcome = await call(runtime, seeded.agent_token, "workspace", PUBLISH)

    after = stored(runtime)
    if outcome.is_error:
        assert outcome == retryable("workspace publishEvent", STORE_BUSY)
        assert after == before
    else:
        assert after["queued"] == (1, 0)


async def test_a_doc_whose_write_is_applied_but_answered_500_keeps_its_files(runtime, seeded):
    with failing(runtime.clients.dynamodb, "PutItem", DYNAMODB_500, times=1, committed=True):
        outcome = await call(runtime, seeded.agent_token, "pano", pano_save())

    docs = runtime.pano.list_docs(seeded.account_id)
    for doc in docs:  # whatever doc exists has its files and its expiry schedule
        assert sorted(f.ref.key for f in runtime.pano.get(seeded.account_id, doc.id).files) == object_keys(runtime)
        assert schedule_exists(runtime, f"pano-{seeded.account_id}-{doc.id}")
    if outcome.is_error:
        assert outcome == retryable("pano save", STORE_BUSY)


def test_injections_are_removed_when_their_block_ends(runtime):
    """The harness itself: a handler left registered would fail every later test's calls."""
    with failing(runtime.clients.dynamodb, "GetItem", THROTTLED):
        pass
    assert runtime.memory.get("0000000none", "notes") is None
    key = f"check/{uuid.uuid4()}"
    with failing(runtime.clients.s3, "PutObject", S3_500, times=0) as counted:
        runtime.blobs.put(key, b"x", "text/plain")
    assert counted.attempts == 1 and content(runtime, key) == b"x"


# == the network failing while a token is checked ======================================================

UNREACHABLE = "the store could not be reached; retry shortly"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}


def unreachable_problem(response: httpx.Response) -> None:
    """The one answer to a store outage, on /api and /mcp alike: 503 problem JSON with Retry-After."""
    assert_503(response, UNREACHABLE)


def test_a_dead_store_endpoint_answers_503_with_retry_after_on_api_and_mcp(runtime, seeded, free_port_url):
    dead = Runtime(settings=runtime.settings, clients=AwsClients("us-east-1", free_port_url))
    with LiveServer(dead) as server:
        api = httpx.get(f"{server.url}/api/workspaces", headers=bearer(seeded.human_token), timeout=30)
        mcp = httpx.post(f"{server.url}/mcp", json=INITIALIZE, headers=bearer(seeded.agent_token), timeout=30)
    unreachable_problem(api)
    unreachable_problem(mcp)


@pytest.mark.parametrize(
    "error",
    [
        EndpointConnectionError(endpoint_url="https://dynamodb"),
        ConnectTimeoutError(endpoint_url="https://dynamodb"),
        ReadTimeoutError(endpoint_url="https://dynamodb"),
        ConnectionClosedError(endpoint_url="https://dynamodb"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_the_network_failing_while_a_known_token_is_counted_answers_503_not_500(runtime, seeded, live, error):
    """A token this instance has seen is checked by the counting UpdateItem alone: its failure is an outage too."""
    assert httpx.get(f"{live.url}/api/workspaces", headers=bearer(seeded.human_token), timeout=30).status_code == 200
    assert workspace_get(live, seeded.agent_token).status_code == 200

    def cut(**_: Any) -> None:
        raise error

    events = runtime.clients.dynamodb.meta.events
    events.register("before-send.dynamodb.UpdateItem", cut)
    try:
        api = httpx.get(f"{live.url}/api/workspaces", headers=bearer(seeded.human_token), timeout=30)
        mcp = httpx.post(f"{live.url}/mcp", json=INITIALIZE, headers=bearer(seeded.agent_token), timeout=30)
    finally:
        events.unregister("before-send.dynamodb.UpdateItem", cut)
    unreachable_problem(api)
    unreachable_problem(mcp)
