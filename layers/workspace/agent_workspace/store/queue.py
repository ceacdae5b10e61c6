"""The SQS queue that carries published events to the fan-out consumer."""

import json
from typing import Any

from agent_workspace.store.dynamo import translating_errors


class EventQueue:
    def __init__(self, sqs: Any, queue_url: str) -> None:
        self._sqs = sqs
        self._url = queue_url

    def send(self, message: dict[str, Any], delay_seconds: int = 0) -> None:
        """One message, delivered after `delay_seconds` (SQS: at most 900); botocore retries throttling, and what
        still fails is `Unavailable` to the caller."""
        body = json.dumps(message, separators=(",", ":"))
        with translating_errors(service="event queue"):
            self._sqs.send_message(QueueUrl=self._url, MessageBody=body, DelaySeconds=min(max(delay_seconds, 0), 900))
