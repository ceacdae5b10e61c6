"""Creates the table, bucket and queues of template.yaml against any endpoint (moto here)."""

import json
import secrets
from dataclasses import dataclass
from typing import Any

from agent_workspace.local.template import load_template, resource_properties
from agent_workspace.store.clients import AwsClients

TABLE = "WorkspaceTable"
BUCKET = "AttachmentsBucket"
QUEUE = "EventsQueue"
DEAD_LETTER_QUEUE = "EventsDeadLetterQueue"
SCHEDULE_DEAD_LETTER_QUEUE = "ScheduleDeadLetterQueue"
SCHEDULE_GROUP = "ScheduleGroup"
# Nothing is invoked through these locally (the local stack calls the handlers itself), but every
# schedule is created with them exactly as on AWS.
_LOCAL_ACCOUNT = "123456789012"
# The local stack's notification e-mails come from here, verified in moto's SES as an operator verifies theirs.
LOCAL_SENDER = "notifications@agent-workspace.local"


@dataclass(frozen=True)
class Provisioned:
    table_name: str
    bucket_name: str
    queue_url: str
    schedule_group: str
    schedule_target_arn: str
    scheduler_role_arn: str
    schedule_dead_letter_arn: str
    notification_secret_arn: str = ""

    def settings(self) -> dict[str, str]:
        """The settings a runtime needs to use these resources."""
        return {
            "notification_secret_arn": self.notification_secret_arn,
            "notification_sender": LOCAL_SENDER,
            "events_queue_url": self.queue_url,
            "schedule_group": self.schedule_group,
            "schedule_target_arn": self.schedule_target_arn,
            "scheduler_role_arn": self.scheduler_role_arn,
            "schedule_dead_letter_arn": self.schedule_dead_letter_arn,
        }


def provision(
    clients: AwsClients, table_name: str, bucket_name: str, template: dict[str, Any] | None = None
) -> Provisioned:
    template = template or load_template()
    assert template["Resources"][SCHEDULE_GROUP]["Type"] == "AWS::Scheduler::ScheduleGroup"
    assert template["Resources"][SCHEDULE_DEAD_LETTER_QUEUE]["Type"] == "AWS::SQS::Queue"
    _create_table(clients.dynamodb, table_name, resource_properties(template, TABLE))
    clients.s3.create_bucket(Bucket=bucket_name)
    queue_url = _create_queues(clients.sqs, table_name, template)
    group = f"{table_name}-tasks"
    clients.scheduler.create_schedule_group(Name=group)
    schedule_dlq = clients.sqs.create_queue(QueueName=f"{table_name}-schedule-dlq")["QueueUrl"]
    # The stack's notification secret (template: NotificationSecret, GenerateSecretString) and SES sender.
    secret_arn = clients.secretsmanager.create_secret(
        Name=f"{table_name}-notifications", SecretString=secrets.token_urlsafe(48)
    )["ARN"]
    clients.sesv2.create_email_identity(EmailIdentity=LOCAL_SENDER)
    return Provisioned(
        table_name,
        bucket_name,
        queue_url,
        schedule_group=group,
        schedule_target_arn=f"arn:aws:lambda:us-east-1:{_LOCAL_ACCOUNT}:function:{table_name}-schedule",
        scheduler_role_arn=f"arn:aws:iam::{_LOCAL_ACCOUNT}:role/{table_name}-scheduler",
        schedule_dead_letter_arn=_queue_arn(clients.sqs, schedule_dlq),
        notification_secret_arn=secret_arn,
    )


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
    dlq_arn = _queue_arn(sqs, dlq_url)
    props = resource_properties(template, QUEUE)
    redrive = {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": props["RedrivePolicy"]["maxReceiveCount"]}
    attributes = {"VisibilityTimeout": str(props["VisibilityTimeout"]), "RedrivePolicy": json.dumps(redrive)}
    return sqs.create_queue(QueueName=f"{prefix}-events", Attributes=attributes)["QueueUrl"]


def _queue_arn(sqs: Any, queue_url: str) -> str:
    return sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
