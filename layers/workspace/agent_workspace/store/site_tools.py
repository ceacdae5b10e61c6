"""The browser bridge's state and the site-tool calls, in the account's partition.

`BRIDGE` records when the human's browser last reported or polled; `SITE#<origin>` each shared
site with its tools; `SITECALL#<id>` each call. A call waiting for the browser carries GSI1
(`BRIDGECALLS#<accountId>`), which the browser's poll reads and claims with a conditional write;
every call carries GSI2 (`SITECALLS#<workspaceId>`, `<status>#<createdAt>#<id>`) for the human's
list. `SITEALLOW#<workspaceId>#<origin>#<tool>` remembers an "Always allow".
"""

import json
from typing import Any

from agent_workspace.domain.errors import Conflict
from agent_workspace.domain.site_tools import PENDING, QUEUED, Site, SiteCall, SiteTool
from agent_workspace.store import keys
from agent_workspace.store.dynamo import (
    batch_delete,
    batch_write,
    from_item,
    get_item,
    key,
    query_all,
    query_prefix,
    to_item,
    translating_errors,
)
from agent_workspace.store.expressions import NEW_ITEM, only_if, status_is
from agent_workspace.store.tasks import message_item, touch_task


class SiteToolStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    # -- the browser's report ------------------------------------------------------------------

    def replace_sites(self, account_id: str, sites: list[Site], now: str) -> None:
        """The shared sites become exactly `sites`; the bridge is seen now."""
        pk = keys.account_pk(account_id)
        reported = {keys.site_sk(site.origin) for site in sites}
        existing = query_prefix(self._db, self._table, pk, keys.SITE_SK_PREFIX)
        puts = [{"PutRequest": {"Item": to_item(_site_item(pk, site, now))}} for site in sites]
        batch_write(self._db, self._table, puts, "retry to save the sites")
        gone = [key(pk, item[keys.SK]) for item in existing if item[keys.SK] not in reported]
        batch_delete(self._db, self._table, gone, "the sites were saved; retry to drop the unshared ones")
        self.seen(account_id, now)

    def seen(self, account_id: str, now: str) -> None:
        with translating_errors():
            self._db.put_item(
                TableName=self._table,
                Item=to_item({keys.PK: keys.account_pk(account_id), keys.SK: keys.BRIDGE_SK, "lastSeenAt": now}),
            )

    def seen_again(self, account_id: str, now: str) -> None:
        """`seen`, unless the browser signed out meanwhile (the item is gone): then nothing changes."""
        try:
            with translating_errors():
                self._db.update_item(
                    TableName=self._table,
                    Key=key(keys.account_pk(account_id), keys.BRIDGE_SK),
                    UpdateExpression="SET lastSeenAt = :now",
                    ConditionExpression="attribute_exists(PK)",
                    ExpressionAttributeValues=to_item({":now": now}),
                )
        except Conflict:
            pass  # signed out while this poll waited

    def gone(self, account_id: str) -> None:
        """The browser said it disconnects: it counts as offline at once, until it polls or reports again."""
        with translating_errors():
            self._db.delete_item(TableName=self._table, Key=key(keys.account_pk(account_id), keys.BRIDGE_SK))

    def last_seen(self, account_id: str) -> str | None:
        item = self._get(keys.account_pk(account_id), keys.BRIDGE_SK)
        return item["lastSeenAt"] if item else None

    def sites(self, account_id: str) -> list[Site]:
        return [
            _site(item)
            for item in query_prefix(self._db, self._table, keys.account_pk(account_id), keys.SITE_SK_PREFIX)
        ]

    def site(self, account_id: str, origin: str) -> Site | None:
        item = self._get(keys.account_pk(account_id), keys.site_sk(origin))
        return _site(item) if item else None

    # -- always allow --------------------------------------------------------------------------

    def always_allowed(self, account_id: str, workspace_id: str, origin: str, tool: str) -> bool:
        return self._get(keys.account_pk(account_id), keys.site_allow_sk(workspace_id, origin, tool)) is not None

    # -- calls ---------------------------------------------------------------------------------

    def create_call(self, call: SiteCall, conversation_line: Any | None) -> None:
        """The call; with a line for the task's conversation (a question to the human) in the same transaction."""
        items: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": to_item(_call_item(call)),
                    **only_if(NEW_ITEM),
                }
            }
        ]
        if conversation_line is not None:
            items += [
                touch_task(self._table, call.workspace_id, call.task_id, call.created_at),
                {
                    "Put": {
                        "TableName": self._table,
                        "Item": to_item(message_item(call.workspace_id, call.task_id, conversation_line)),
                        **only_if(NEW_ITEM),
                    }
                },
            ]
        with translating_errors(f"call {call.id} already exists"):
            self._db.transact_write_items(TransactItems=items)

    def get_call(self, account_id: str, call_id: str) -> SiteCall | None:
        item = self._get(keys.account_pk(account_id), keys.site_call_sk(call_id))
        return _call(item) if item else None

    def move(self, call: SiteCall, to: SiteCall, extra: list[dict[str, Any]] | None = None) -> bool:
        """Move a call from the status it was read in to `to`'s; False if it had moved on meanwhile."""
        item = {
            "Put": {
                "TableName": self._table,
                "Item": to_item(_call_item(to)),
                **only_if(status_is(call.status)),
            }
        }
        try:
            with translating_errors():
                self._db.transact_write_items(TransactItems=[item, *(extra or [])])
        except Conflict as conflict:
            # Lost to another writer (a condition, or a transaction racing on the same call): it moved on.
            if conflict.reasons[:1] in (("ConditionalCheckFailed",), ("TransactionConflict",)):
                return False
            raise
        return True

    def allow_item(self, call: SiteCall, now: str) -> dict[str, Any]:
        """A transaction item remembering "Always allow" for this tool on this site, in this workspace."""
        values = {
            keys.PK: keys.account_pk(call.account_id),
            keys.SK: keys.site_allow_sk(call.workspace_id, call.site, call.tool),
            "workspaceId": call.workspace_id,
            "site": call.site,
            "tool": call.tool,
            "createdAt": now,
        }
        return {"Put": {"TableName": self._table, "Item": to_item(values)}}

    def conversation_items(self, call: SiteCall, line: Any) -> list[dict[str, Any]]:
        return [
            touch_task(self._table, call.workspace_id, call.task_id, line.created_at),
            {"Put": {"TableName": self._table, "Item": to_item(message_item(call.workspace_id, call.task_id, line))}},
        ]

    def queued_for_bridge(self, account_id: str, limit: int = 10) -> list[SiteCall]:
        return self._bridge_index(keys.bridge_calls_pk(account_id), limit)

    def pending_for_bridge(self, account_id: str, limit: int) -> list[SiteCall]:
        """The account's calls waiting for the human's decision, oldest first: one Query of GSI1."""
        return self._bridge_index(keys.bridge_pending_pk(account_id), limit)

    def _bridge_index(self, pk: str, limit: int) -> list[SiteCall]:
        with translating_errors():
            page = self._db.query(
                TableName=self._table,
                IndexName=keys.GSI1,
                KeyConditionExpression="GSI1PK = :pk",
                ExpressionAttributeValues=to_item({":pk": pk}),
                Limit=limit,
            )
        return [_call(from_item(item)) for item in page.get("Items", [])]

    def calls_of(self, workspace_id: str, status: str | None) -> list[SiteCall]:
        condition, values = keys.listing_condition(keys.site_call_list_pk(workspace_id), status)
        items = query_all(
            self._db,
            {
                "TableName": self._table,
                "IndexName": keys.GSI2,
                "KeyConditionExpression": condition,
                "ExpressionAttributeValues": to_item(values),
            },
        )
        return [_call(item) for item in items]

    def _get(self, pk: str, sk: str) -> dict[str, Any] | None:
        return get_item(self._db, self._table, pk, sk)


def _site_item(pk: str, site: Site, now: str) -> dict[str, Any]:
    return {
        keys.PK: pk,
        keys.SK: keys.site_sk(site.origin),
        "origin": site.origin,
        "title": site.title,
        "tools": [tool.definition() for tool in site.tools],
        "updatedAt": now,
    }


def _site(values: dict[str, Any]) -> Site:
    tools = tuple(
        SiteTool(t["name"], t.get("description", ""), t.get("inputSchema") or {}, t.get("annotations") or {})
        for t in values.get("tools", [])
    )
    return Site(values["origin"], values.get("title", values["origin"]), tools, values.get("updatedAt", ""))


def _call_item(call: SiteCall) -> dict[str, Any]:
    item: dict[str, Any] = {
        keys.PK: keys.account_pk(call.account_id),
        keys.SK: keys.site_call_sk(call.id),
        keys.GSI2_PK: keys.site_call_list_pk(call.workspace_id),
        keys.GSI2_SK: keys.listing_sk(call.status, call.created_at, call.id),
        "id": call.id,
        "accountId": call.account_id,
        "workspaceId": call.workspace_id,
        "taskId": call.task_id,
        "site": call.site,
        "tool": call.tool,
        # JSON text, not maps: any JSON a site returns fits (DynamoDB numbers, empty keys and nesting do not).
        "arguments": json.dumps(call.arguments, separators=(",", ":")),
        "status": call.status,
        "createdAt": call.created_at,
        "updatedAt": call.updated_at,
        "queuedAt": call.queued_at,
        "decision": call.decision,
        "result": None if call.result is None else json.dumps(call.result, separators=(",", ":")),
        "error": call.error,
    }
    if call.status == QUEUED:  # visible to the browser's poll only while it waits for it
        item[keys.GSI1_PK] = keys.bridge_calls_pk(call.account_id)
        item[keys.GSI1_SK] = f"{call.queued_at}#{call.id}"
    elif call.status == PENDING:  # visible to the browser's approvals only while it waits for the human
        item[keys.GSI1_PK] = keys.bridge_pending_pk(call.account_id)
        item[keys.GSI1_SK] = f"{call.created_at}#{call.id}"
    return item


def _call(values: dict[str, Any]) -> SiteCall:
    return SiteCall(
        id=values["id"],
        account_id=values["accountId"],
        workspace_id=values["workspaceId"],
        task_id=values["taskId"],
        site=values["site"],
        tool=values["tool"],
        arguments=json.loads(values["arguments"]) if values.get("arguments") else {},
        status=values["status"],
        created_at=values["createdAt"],
        updated_at=values["updatedAt"],
        queued_at=values.get("queuedAt"),
        decision=values.get("decision"),
        result=json.loads(values["result"]) if values.get("result") is not None else None,
        error=values.get("error"),
    )
