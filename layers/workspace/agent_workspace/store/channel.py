"""The channel of a workspace (issue 19): events for its agent (`EVT#<id>`, time-ordered, expiring), permission
questions (`PERM#<id>`) and the tools the human always allows (`PERMRULE#<tool>`), in `CHANNEL#<workspaceId>`."""

from typing import Any

from boto3.dynamodb.conditions import Attr
from pydantic import TypeAdapter

from agent_workspace.domain.channel import ChannelEvent, PermissionQuestion
from agent_workspace.store import keys
from agent_workspace.store.dynamo import from_item, get_item, key, query_prefix, to_item, translating_errors
from agent_workspace.store.expressions import NEW_ITEM, Update, only_if

_EVENT: TypeAdapter[ChannelEvent] = TypeAdapter(ChannelEvent)
_QUESTION: TypeAdapter[PermissionQuestion] = TypeAdapter(PermissionQuestion)


class ChannelStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    def push(self, workspace_id: str, event: ChannelEvent, expires_at: int) -> None:
        values = _EVENT.dump_python(event, by_alias=True, exclude_none=True)
        item = {**values, keys.PK: keys.channel_pk(workspace_id), keys.SK: keys.channel_event_sk(event.id),
                keys.TTL_ATTRIBUTE: expires_at}  # fmt: skip
        with translating_errors():
            self._db.put_item(TableName=self._table, Item=to_item(item), **only_if(NEW_ITEM))

    def events_after(self, workspace_id: str, after_id: str, limit: int) -> list[ChannelEvent]:
        """The oldest `limit` events after `after_id` (ids sort by time): one Query."""
        request = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk AND SK BETWEEN :after AND :end",
            "ExpressionAttributeValues": to_item(
                {
                    ":pk": keys.channel_pk(workspace_id),
                    ":after": keys.channel_event_sk(after_id + "0"),
                    ":end": keys.channel_event_sk("~"),
                }  # fmt: skip
            ),
            "Limit": limit,
            "ConsistentRead": True,
        }
        with translating_errors():
            page = self._db.query(**request)
        return [_EVENT.validate_python(from_item(item)) for item in page.get("Items", [])]

    def ask(self, workspace_id: str, question: PermissionQuestion, expires_at: int) -> None:
        """The question, and its request id held for its token until decided or closed (else `Conflict`): one
        transaction, so two questions of one token never share a request id while one is pending."""
        pk = keys.channel_pk(workspace_id)
        values = _QUESTION.dump_python(question, by_alias=True, exclude_none=True)
        item = {**values, keys.PK: pk, keys.SK: keys.permission_sk(question.id), keys.TTL_ATTRIBUTE: expires_at}
        items: list[dict[str, Any]] = [{"Put": {"TableName": self._table, "Item": to_item(item), **only_if(NEW_ITEM)}}]
        if question.token_id is not None:
            held = {keys.PK: pk, keys.SK: keys.permission_request_sk(question.token_id, question.request_id),
                    "questionId": question.id, "closesAt": question.closes_at,
                    keys.TTL_ATTRIBUTE: expires_at}  # fmt: skip
            free = NEW_ITEM | Attr("closesAt").lte(question.created_at)  # none, or its question closed unanswered
            items.append({"Put": {"TableName": self._table, "Item": to_item(held), **only_if(free)}})
        with translating_errors(f"requestId {question.request_id} is already pending for this token; its verdict "
                                "comes as a permission event"):  # fmt: skip
            self._db.transact_write_items(TransactItems=items)

    def question(self, workspace_id: str, question_id: str) -> PermissionQuestion | None:
        item = get_item(self._db, self._table, keys.channel_pk(workspace_id), keys.permission_sk(question_id), True)
        return _QUESTION.validate_python(item) if item else None

    def questions(self, workspace_id: str) -> list[PermissionQuestion]:
        """Every question not yet expired by TTL: they live 10 minutes, so a handful."""
        found = query_prefix(self._db, self._table, keys.channel_pk(workspace_id), keys.PERMISSION_PREFIX)
        return [_QUESTION.validate_python(item) for item in found]

    def decide(
        self, workspace_id: str, question: PermissionQuestion, status: str, at: str, event: ChannelEvent,
        rule: str | None, expires_at: int,
    ) -> None:  # fmt: skip
        """The verdict on a pending question (else `Conflict`), its event for the bridge and any always-allow
        rule, in one transaction."""
        pk = keys.channel_pk(workspace_id)
        update = Update().set("status", status).set("decidedAt", at).only_if(Attr("status").eq("pending"))
        values = _EVENT.dump_python(event, by_alias=True, exclude_none=True)
        items: list[dict[str, Any]] = [
            {"Update": {"TableName": self._table, "Key": key(pk, keys.permission_sk(question.id)), **update.params()}},
            {"Put": {"TableName": self._table, "Item": to_item(
                {**values, keys.PK: pk, keys.SK: keys.channel_event_sk(event.id), keys.TTL_ATTRIBUTE: expires_at})}},
        ]  # fmt: skip
        if rule is not None:
            items.append({"Put": {"TableName": self._table, "Item": to_item(
                {keys.PK: pk, keys.SK: keys.permission_rule_sk(rule), "tool": rule, "createdAt": at})}})  # fmt: skip
        if question.token_id is not None:  # the request id is free again; held by a newer question, this one closed
            held = key(pk, keys.permission_request_sk(question.token_id, question.request_id))
            mine = Attr(keys.PK).not_exists() | Attr("questionId").eq(question.id)
            items.append({"Delete": {"TableName": self._table, "Key": held, **only_if(mine)}})
        with translating_errors(f"question {question.id} was answered meanwhile"):
            self._db.transact_write_items(TransactItems=items)

    def rule(self, workspace_id: str, tool: str) -> dict[str, Any] | None:
        return get_item(self._db, self._table, keys.channel_pk(workspace_id), keys.permission_rule_sk(tool), False)

    def rules(self, workspace_id: str) -> list[dict[str, Any]]:
        found = query_prefix(self._db, self._table, keys.channel_pk(workspace_id), keys.PERMISSION_RULE_PREFIX)
        return [{"tool": item["tool"], "createdAt": item["createdAt"]} for item in found]

    def drop_rule(self, workspace_id: str, tool: str) -> bool:
        with translating_errors():
            answer = self._db.delete_item(
                TableName=self._table,
                Key=key(keys.channel_pk(workspace_id), keys.permission_rule_sk(tool)),
                ReturnValues="ALL_OLD",
            )
        return "Attributes" in answer
