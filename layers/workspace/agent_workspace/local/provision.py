"""Creates the table, bucket and queues of template.yaml against any endpoint (moto here)."""

import json
from dataclasses import dataclass
from typing import Any

from agent_workspace.local.template import load_template, resource_properties
from agent_workspace.store.clients import AwsClients

TABLE = "WorkspaceTable"
BUCKET = "AttachmentsBucket"
QUEUE = "EventsQueue"
DEAD_LETTER_QUEUE = "EventsDeadLetterQueue"


@dataclass(frozen=True)
class Provisioned:
    table_name: str
    bucket_name: str
    queue_url: str


def provision(
    clients: AwsClients, table_name: str, bucket_name: str, template: dict[str, Any] | None = None
) -> Provisioned:
    template = template or load_template()
    _create_table(clients.dynamodb, table_name, resource_properties(template, TABLE))
    clients.s3.create_bucket(Bucket=bucket_name)
    queue_url = _create_queues(clients.sqs, table_name, template)
    return Provisioned(table_name, bucket_name, queue_url)


def _create_table(dynamodb: Any, name: str, props: dict[str, Any]) -> None:
    request: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": props["AttributeDefinitions"],
        "KeySchema": props["KeySchema"],
        "BillingMode": props.get("BillingMode", "PAY_PER_REQUEST"),
    }
    if props.get("GlobalSecondaryIndexes"):
        request["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
    dynamodb.create_table(**request)
    ttl = props.get("TimeToLiveSpecification")
    if ttl:
        dynamodb.update_time_to_live(TableName=name, TimeToLiveSpecification=ttl)


def _create_queues(sqs: Any, prefix: str, template: dict[str, Any]) -> str:
    dlq_url = sqs.create_queue(QueueName=f"{prefix}-events-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    props = resource_properties(template, QUEUE)
    redrive = {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": props["RedrivePolicy"]["maxReceiveCount"]}
    attributes = {"VisibilityTimeout": str(props["VisibilityTimeout"]), "RedrivePolicy": json.dumps(redrive)}
    return sqs.create_queue(QueueName=f"{prefix}-events", Attributes=attributes)["QueueUrl"]
