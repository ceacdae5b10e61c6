"""Questions to the human, in the workspace's partition, listed by status on GSI2."""

from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase

from agent_workspace.domain.elicitations import Elicitation
from agent_workspace.domain.errors import Conflict, NotFound
from agent_workspace.domain.tasks import Message
from agent_workspace.store import keys
from agent_workspace.store.dynamo import from_item, key, query_all, to_item, translating_errors
from agent_workspace.store.expressions import NEW_ITEM, Update, only_if, status_is
from agent_workspace.store.tasks import message_item, touch_task

_PENDING = status_is("pending")  # not answered or expired yet


def _open_at(now: str) -> ConditionBase:
    """Still waiting for its answer at `now`: pending, and not past its wait."""
    return _PENDING & Attr("waitUntil").gt(now)


class ElicitationStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    def create(self, elicitation: Elicitation, question: Message) -> None:
        """The question and its line in the task's conversation, only if the task exists."""
        workspace_id, task_id = elicitation.workspace_id, elicitation.task_id
        item = {
            keys.PK: keys.workspace_pk(workspace_id),
            keys.SK: keys.elicitation_sk(elicitation.id),
            keys.GSI2_PK: keys.elicitation_list_pk(workspace_id),
            keys.GSI2_SK: keys.listing_sk("pending", elicitation.created_at, elicitation.id),
            "id": elicitation.id,
            "workspaceId": workspace_id,
            "taskId": task_id,
            "message": elicitation.message,
            "mode": elicitation.mode,
            "requestedSchema": elicitation.requested_schema,
            "url": elicitation.url,
            "status": "pending",
            "createdAt": elicitation.created_at,
            # Not "expiresAt": that name is the table's TTL attribute, which holds epoch seconds.
            "waitUntil": elicitation.expires_at,
        }
        try:
            with translating_errors():
                self._db.transact_write_items(
                    TransactItems=[
                        touch_task(self._table, workspace_id, task_id, elicitation.created_at),
                        {
                            "Put": {
                                "TableName": self._table,
                                "Item": to_item(item),
                                **only_if(NEW_ITEM),
                            }
                        },
                        {
                            "Put": {
                                "TableName": self._table,
                                "Item": to_item(message_item(workspace_id, task_id, question)),
                            }
                        },
                    ]
                )
        except Conflict:
            raise NotFound(f"no task {task_id} in this workspace") from None

    def get(self, workspace_id: str, elicitation_id: str) -> Elicitation | None:
        with translating_errors():
            item = self._db.get_item(
                TableName=self._table,
                Key=key(keys.workspace_pk(workspace_id), keys.elicitation_sk(elicitation_id)),
                ConsistentRead=True,  # the waiting agent must see an answer as soon as it is written
            ).get("Item")
        return _elicitation(from_item(item)) if item else None

    def answer(self, elicitation: Elicitation, answer: dict[str, Any], now: str, line: Message) -> None:
        """Record the answer once, and only while the question is open; the conversation gets a line too."""
        workspace_id = elicitation.workspace_id
        with translating_errors("this question was already answered or has expired"):
            self._db.transact_write_items(
                TransactItems=[
                    {
                        "Update": {
                            "TableName": self._table,
                            "Key": key(keys.workspace_pk(workspace_id), keys.elicitation_sk(elicitation.id)),
                            **_moved_to(elicitation, "answered")
                            .set("answer", answer)
                            .set("answeredAt", now)
                            .only_if(_open_at(now))
                            .params(),
                        }
                    },
                    {
                        "Put": {
                            "TableName": self._table,
                            "Item": to_item(message_item(workspace_id, elicitation.task_id, line)),
                        }
                    },
                ]
            )

    def expire(self, elicitation: Elicitation) -> bool:
        """Mark an open question expired; False if it was answered meanwhile."""
        try:
            with translating_errors():
                self._db.update_item(
                    TableName=self._table,
                    Key=key(keys.workspace_pk(elicitation.workspace_id), keys.elicitation_sk(elicitation.id)),
                    **_moved_to(elicitation, "expired").only_if(_PENDING).params(),
                )
        except Conflict:
            return False
        return True

    def list_by_status(self, workspace_id: str, status: str | None) -> list[Elicitation]:
        condition, values = keys.listing_condition(keys.elicitation_list_pk(workspace_id), status)
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": keys.GSI2,
            "KeyConditionExpression": condition,
            "ExpressionAttributeValues": to_item(values),
        }
        return [_elicitation(item) for item in query_all(self._db, request)]


def _moved_to(elicitation: Elicitation, status: str) -> Update:
    """The question's new status, and its place in the listing by status (GSI2) with it."""
    return (
        Update()
        .set("status", status)
        .set(keys.GSI2_SK, keys.listing_sk(status, elicitation.created_at, elicitation.id))
    )


def _elicitation(values: dict[str, Any]) -> Elicitation:
    return Elicitation(
        id=values["id"],
        workspace_id=values["workspaceId"],
        task_id=values["taskId"],
        message=values["message"],
        mode=values["mode"],
        status=values["status"],
        created_at=values["createdAt"],
        expires_at=values["waitUntil"],
        requested_schema=values.get("requestedSchema"),
        url=values.get("url"),
        answer=values.get("answer"),
    )
