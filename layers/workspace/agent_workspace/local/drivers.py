"""Stand-ins for what AWS does between the functions: Scheduler firing schedules, Lambda polling SQS.

moto stores schedules and queues but never fires or delivers them. These drivers do, through the
same worker code the Lambda functions run (`workers.fire_schedule`, `workers.fan_out`), so
`make serve` behaves like the deployed stack: a cron template fires, a published event fans out.
"""

import json
import logging
import threading
import time
from typing import Any

from agent_workspace.runtime import Runtime
from agent_workspace.workers import fan_out, fire_schedule

_log = logging.getLogger("agent_workspace.local")
_FIRE_ATTEMPTS = 3  # Lambda's asynchronous invocation: the first try and two retries, then the DLQ


class ScheduleDriver:
    """Fires every schedule of the group whose `at()` time has come, as EventBridge Scheduler would."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
        self._failures: dict[tuple[str, str], int] = {}

    def run_due(self) -> int:
        """One pass; returns how many firings were handled."""
        fired = 0
        now = self._rt.clock()
        for armed in self._rt.schedules.list_armed():
            attempt = (armed.name, armed.fire_at.isoformat())
            if armed.fire_at > now or self._failures.get(attempt, 0) >= _FIRE_ATTEMPTS:
                continue
            try:
                fire_schedule.handle(armed.input, self._rt)
            except Exception:
                self._failures[attempt] = self._failures.get(attempt, 0) + 1
                _log.exception("firing %s failed (attempt %d)", armed.name, self._failures[attempt])
                if self._failures[attempt] >= _FIRE_ATTEMPTS:
                    self._dead_letter(armed.input)
                continue
            fired += 1
        return fired

    def _dead_letter(self, payload: dict[str, Any]) -> None:
        sqs = self._rt.clients.sqs
        url = sqs.get_queue_url(QueueName=self._rt.settings.schedule_dead_letter_arn.rsplit(":", 1)[-1])["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps(payload))


class QueueDriver:
    """Polls the events queue and hands batches to the consumer, deleting what it did not report as failed.

    Like Lambda's event source mapping, a failed message stays invisible for the queue's visibility
    timeout, then comes back; after the redrive policy's receive count it moves to the DLQ.
    """

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
        self._arn: str | None = None

    def run_once(self) -> int:
        """One batch of up to 10 messages; returns how many were delivered successfully."""
        sqs, url = self._rt.clients.sqs, self._rt.settings.events_queue_url
        # No long polling: the local moto server handles one request at a time.
        messages = sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0, AttributeNames=["All"]
        ).get("Messages", [])
        if not messages:
            return 0
        event = {"Records": [self._record(message) for message in messages]}
        result = fan_out.handle(event, None, self._rt)
        failed = {failure["itemIdentifier"] for failure in result.get("batchItemFailures", [])}
        done = [m for m in messages if m["MessageId"] not in failed]
        if done:
            sqs.delete_message_batch(
                QueueUrl=url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)],
            )
        return len(done)

    def _record(self, message: dict[str, Any]) -> dict[str, Any]:
        if self._arn is None:
            self._arn = queue_arn(self._rt)
        return sqs_record(message, self._arn, self._rt.settings.aws_region)


def queue_arn(runtime: Runtime) -> str:
    return runtime.clients.sqs.get_queue_attributes(
        QueueUrl=runtime.settings.events_queue_url, AttributeNames=["QueueArn"]
    )["Attributes"]["QueueArn"]


def sqs_record(message: dict[str, Any], arn: str, region: str) -> dict[str, Any]:
    """A received message as a record of Lambda's SQS event, the way the event source mapping hands it over."""
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        "messageAttributes": {},
        "md5OfBody": message["MD5OfBody"],
        "eventSource": "aws:sqs",
        "eventSourceARN": arn,
        "awsRegion": region,
    }


class Drivers:
    """Both drivers on one background thread until stopped: the queue drained every `queue_interval` seconds (Lambda's
    event source mapping long-polls; a push reaches its socket well inside a second), schedules every `interval`."""

    def __init__(self, runtime: Runtime, interval: float = 1.0, queue_interval: float = 0.1) -> None:
        self.schedules = ScheduleDriver(runtime)
        self.queue = QueueDriver(runtime)
        self._interval = interval
        self._queue_interval = min(queue_interval, interval)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="local-drivers", daemon=True)

    def start(self) -> "Drivers":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        schedules_due = 0.0
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                if started >= schedules_due:
                    schedules_due = started + self._interval
                    self.schedules.run_due()
                while self.queue.run_once():
                    pass
            except Exception:
                _log.exception("local drivers: pass failed; trying again")
            self._stop.wait(max(0.0, self._queue_interval - (time.monotonic() - started)))
