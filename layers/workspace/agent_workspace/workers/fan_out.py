"""The events queue's consumer: each message is one publication to turn into trigger tasks, a notification
to send (`"type": "notify"`, decision 0010), or a push to post to the sockets that hear it (`"type": "push"`).

Powertools' BatchProcessor reports the messages that failed (ReportBatchItemFailures), so a
poisoned message is retried, and finally dead-lettered, on its own while the rest of its batch
is deleted. Delivery is idempotent (`services.events.deliver`), so a retried batch is harmless.
"""

import json
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from agent_workspace.observability import logger
from agent_workspace.runtime import Runtime
from agent_workspace.services import events, notification_delivery, push


def handle(event: dict[str, Any], context: Any, runtime: Runtime) -> PartialItemFailureResponse:
    # A batch where every message fails is reported like any other, not raised: the Lambda service
    # then retries exactly those messages instead of the whole batch.
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)

    def deliver(record: SQSRecord) -> int:
        try:
            return deliver_message(runtime, json.loads(record.body))
        except Exception:
            logger.exception("event message failed", extra={"messageId": record.message_id})
            raise

    return process_partial_response(event=event, record_handler=deliver, processor=processor, context=context)


def deliver_message(runtime: Runtime, message: Any) -> int:
    """One message of the events queue, by its type; a publication's message has none (it came first)."""
    if isinstance(message, dict) and message.get("type") == "notify":
        return notification_delivery.deliver(runtime, message)
    if isinstance(message, dict) and message.get("type") == "push":
        return push.deliver(runtime, message)
    return events.deliver(runtime, message)
