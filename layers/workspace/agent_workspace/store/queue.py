"""The SQS queue that carries published events to the fan-out consumer."""

import json
from typing import Any

from agent_workspace.store.dynamo import translating_errors


class EventQueue:
    def __init__(self, sqs: Any, queue_url: str) -> None:
        self._sqs = sqs
        self._url = queue_url

    def send(self, message: dict[str, Any]) -> None:
        """One message; botocore retries throttling, and what still fails is `Unavailable` to the caller."""
        with translating_errors(service="event queue"):
            self._sqs.send_message(QueueUrl=self._url, MessageBody=json.dumps(message, separators=(",", ":")))
