"""Memories and their last revisions, in the workspace's partition.

The current text is `MEM#<name>`; each save also writes `MEMREV#<name>#<revision>` and drops the
one that falls out of the kept window, in the same transaction, conditional on the revision read.
"""

from typing import Any

from agent_workspace.domain.memory import REVISIONS_KEPT, Memory
from agent_workspace.store import keys
from agent_workspace.store.cursor import cursor_after
from agent_workspace.store.dynamo import from_item, key, query_prefix, query_prefix_page, to_item, translating_errors
from agent_workspace.store.expressions import EXISTS, NEW_ITEM, only_if, revision_is


class MemoryStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    def get(self, workspace_id: str, name: str, consistent: bool = False) -> Memory | None:
        with translating_errors():
            item = self._db.get_item(
                TableName=self._table,
                Key=key(keys.workspace_pk(workspace_id), keys.memory_sk(name)),
                ConsistentRead=consistent,
            ).get("Item")
        return _memory(from_item(item)) if item else None

    def get_revision(self, workspace_id: str, name: str, revision: int) -> Memory | None:
        with translating_errors():
            item = self._db.get_item(
                TableName=self._table,
                Key=key(keys.workspace_pk(workspace_id), keys.memory_revision_sk(name, revision)),
            ).get("Item")
        return _memory(from_item(item)) if item else None

    def put(self, workspace_id: str, memory: Memory, previous_revision: int) -> None:
        """Write revision `memory.revision` only if the memory is still at `previous_revision` (0: none).

        A lost race is `Conflict`: the caller decides whether to re-read (plain save) or refuse
        (a save with expectedRevision).
        """
        pk = keys.workspace_pk(workspace_id)
        values = {
            "name": memory.name,
            "content": memory.content,
            "revision": memory.revision,
            "updatedAt": memory.updated_at,
            "updatedBy": memory.updated_by,
        }
        current: dict[str, Any] = {
            "Put": {
                "TableName": self._table,
                "Item": to_item({keys.PK: pk, keys.SK: keys.memory_sk(memory.name), **values}),
                **only_if(NEW_ITEM if previous_revision == 0 else revision_is(previous_revision)),
            }
        }
        items = [
            current,
            {
                "Put": {
                    "TableName": self._table,
                    "Item": to_item(
                        {keys.PK: pk, keys.SK: keys.memory_revision_sk(memory.name, memory.revision), **values}
                    ),
                }
            },
        ]
        dropped = memory.revision - REVISIONS_KEPT
        if dropped >= 1:
            items.append(
                {
                    "Delete": {
                        "TableName": self._table,
                        "Key": key(pk, keys.memory_revision_sk(memory.name, dropped)),
                    }
                }
            )
        with translating_errors(f"{memory.name} changed meanwhile"):
            self._db.transact_write_items(TransactItems=items)

    def delete(self, workspace_id: str, name: str) -> bool:
        """Remove the memory and its kept revisions; False if there was nothing to remove."""
        pk = keys.workspace_pk(workspace_id)
        with translating_errors():
            revisions = self._db.query(
                TableName=self._table,
                KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
                ExpressionAttributeValues=to_item({":pk": pk, ":prefix": keys.memory_revision_prefix(name)}),
                ProjectionExpression="SK",
            ).get("Items", [])
            deletes = [
                {"Delete": {"TableName": self._table, "Key": {"PK": {"S": pk}, "SK": r["SK"]}}} for r in revisions
            ]
            try:
                self._db.transact_write_items(
                    TransactItems=[
                        {
                            "Delete": {
                                "TableName": self._table,
                                "Key": key(pk, keys.memory_sk(name)),
                                **only_if(EXISTS),
                            }
                        },
                        *deletes[:99],  # at most REVISIONS_KEPT are ever kept
                    ]
                )
            except self._db.exceptions.TransactionCanceledException as error:
                reasons = [r.get("Code") for r in error.response.get("CancellationReasons", [])]
                if reasons and reasons[0] == "ConditionalCheckFailed":
                    return False
                raise
        return True

    def list_page(self, workspace_id: str, limit: int, cursor: str | None) -> tuple[list[Memory], str | None]:
        """At most `limit` of the workspace's memories (MEMORY.md among them), by name, after `cursor`: one Query."""
        pk = keys.workspace_pk(workspace_id)
        items, after = query_prefix_page(self._db, self._table, pk, keys.MEMORY_SK_PREFIX, limit, cursor)
        return [_memory(item) for item in items], after

    def listing_cursor(self, workspace_id: str, name: str) -> str:
        """The cursor that resumes `list_page` right after the memory `name`."""
        return cursor_after(key(keys.workspace_pk(workspace_id), keys.memory_sk(name)))

    def list_all(self, workspace_id: str) -> list[Memory]:
        items = query_prefix(self._db, self._table, keys.workspace_pk(workspace_id), keys.MEMORY_SK_PREFIX)
        return [_memory(item) for item in items]


def _memory(values: dict[str, Any]) -> Memory:
    return Memory(
        name=values["name"],
        content=values["content"],
        revision=int(values["revision"]),
        updated_at=values["updatedAt"],
        updated_by=values.get("updatedBy"),
    )
