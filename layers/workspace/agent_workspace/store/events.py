"""Event definitions, subscriptions and publications, in the account's partition.

`EVENT#<id>` is a definition and `EVENTNAME#<name>` claims its name; `SUB#<id>` is a subscription,
found by event through GSI1 (`EVENTSUBS#<eventId>`) and by workspace through GSI2 (`SUBS#<wid>`);
`PUB#<id>` records a publication until its TTL. See docs/data-model.md.
"""

from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase

from agent_workspace.domain.errors import Conflict, NotFound, PayloadError
from agent_workspace.domain.events import EventDefinition, Publication, Subscription
from agent_workspace.store import keys
from agent_workspace.store.cursor import cursor_after, decode_cursor, encode_cursor
from agent_workspace.store.dynamo import (
    from_item,
    get_item,
    key,
    query_all,
    query_prefix,
    to_item,
    transact_unless_first_refused,
    translating_errors,
)
from agent_workspace.store.expressions import EXISTS, NEW_ITEM, Update, only_if

_UNUSED = EXISTS & Attr("subscriptionCount").eq(0)  # a definition no subscription uses


def _subscribed_by(workspace_id: str) -> ConditionBase:
    """A subscription of this workspace: another workspace of the account never removes it."""
    return Attr("workspaceId").eq(workspace_id)


class EventStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    # -- definitions ---------------------------------------------------------------------------

    def define(self, account_id: str, event: EventDefinition) -> None:
        """The definition and its name claim together: two events never share a name in one account."""
        pk = keys.account_pk(account_id)
        definition = {
            keys.PK: pk,
            keys.SK: keys.event_sk(event.id),
            "id": event.id,
            "name": event.name,
            "description": event.description,
            "createdAt": event.created_at,
            "subscriptionCount": 0,
        }
        claim = {keys.PK: pk, keys.SK: keys.event_name_sk(event.name), "eventId": event.id}
        with translating_errors(f"an event named {event.name!r} already exists in this account"):
            self._db.transact_write_items(
                TransactItems=[
                    # The account must exist, so a definition is never orphaned.
                    {
                        "ConditionCheck": {
                            "TableName": self._table,
                            "Key": key(pk, keys.ACCOUNT_SK),
                            **only_if(EXISTS),
                        }
                    },
                    self._put(definition),
                    self._put(claim),
                ]
            )

    def get(self, account_id: str, event_id: str) -> EventDefinition | None:
        item = self._get(keys.account_pk(account_id), keys.event_sk(event_id))
        return _definition(item) if item else None

    def list_events(self, account_id: str) -> list[EventDefinition]:
        items = query_prefix(self._db, self._table, keys.account_pk(account_id), keys.EVENT_SK_PREFIX)
        return [_definition(item) for item in items]

    def resolve_name(self, account_id: str, name: str) -> str | None:
        item = self._get(keys.account_pk(account_id), keys.event_name_sk(name))
        return item["eventId"] if item else None

    def delete(self, account_id: str, event_id: str) -> None:
        """Refused while subscriptions use the event: deleting it would silently cut them off."""
        event = self.get(account_id, event_id)
        if event is None:
            raise NotFound(f"no event {event_id}")
        pk = keys.account_pk(account_id)
        try:
            with translating_errors():
                self._db.transact_write_items(
                    TransactItems=[
                        {
                            "Delete": {
                                "TableName": self._table,
                                "Key": key(pk, keys.event_sk(event_id)),
                                **only_if(_UNUSED),
                            }
                        },
                        {"Delete": {"TableName": self._table, "Key": key(pk, keys.event_name_sk(event.name))}},
                    ]
                )
        except Conflict:
            current = self.get(account_id, event_id)
            if current is None:
                raise NotFound(f"no event {event_id}") from None
            raise Conflict(
                f"event {event_id} has {current.subscription_count} subscription(s); delete them first"
            ) from None

    # -- subscriptions -------------------------------------------------------------------------

    def subscribe(self, account_id: str, subscription: Subscription) -> None:
        """The subscription and its event's count together, conditional on the event existing in this account."""
        pk = keys.account_pk(account_id)
        item = {
            keys.PK: pk,
            keys.SK: keys.subscription_sk(subscription.id),
            keys.GSI1_PK: keys.event_subscribers_pk(subscription.event_id),
            keys.GSI1_SK: subscription.id,
            keys.GSI2_PK: keys.subscription_list_pk(subscription.workspace_id),
            keys.GSI2_SK: f"{subscription.created_at}#{subscription.id}",
            "id": subscription.id,
            "eventId": subscription.event_id,
            "workspaceId": subscription.workspace_id,
            "title": subscription.title,
            "body": subscription.body,
            "createdAt": subscription.created_at,
        }
        if not transact_unless_first_refused(self._db, [self._count(pk, subscription.event_id, 1), self._put(item)]):
            raise NotFound(f"no event {subscription.event_id}")

    def get_subscription(self, account_id: str, subscription_id: str) -> Subscription | None:
        item = self._get(keys.account_pk(account_id), keys.subscription_sk(subscription_id))
        return _subscription(item) if item else None

    def list_subscriptions(self, workspace_id: str) -> list[Subscription]:
        items = query_all(
            self._db,
            {
                "TableName": self._table,
                "IndexName": keys.GSI2,
                "KeyConditionExpression": "GSI2PK = :pk",
                "ExpressionAttributeValues": to_item({":pk": keys.subscription_list_pk(workspace_id)}),
            },
        )
        return [_subscription(item) for item in items]

    def subscribers(self, event_id: str) -> list[Subscription]:
        """Every subscription of the event (GSI1; an event id belongs to one account)."""
        items = query_all(
            self._db,
            {
                "TableName": self._table,
                "IndexName": keys.GSI1,
                "KeyConditionExpression": "GSI1PK = :pk",
                "ExpressionAttributeValues": to_item({":pk": keys.event_subscribers_pk(event_id)}),
            },
        )
        return [_subscription(item) for item in items]

    def unsubscribe(self, account_id: str, workspace_id: str, subscription_id: str) -> None:
        pk = keys.account_pk(account_id)
        subscription = self.get_subscription(account_id, subscription_id)
        if subscription is None or subscription.workspace_id != workspace_id:
            raise NotFound(f"no subscription {subscription_id} in this workspace")
        delete = {
            "Delete": {
                "TableName": self._table,
                "Key": key(pk, keys.subscription_sk(subscription_id)),
                **only_if(_subscribed_by(workspace_id)),
            }
        }
        if not transact_unless_first_refused(self._db, [delete, self._count(pk, subscription.event_id, -1)]):
            raise NotFound(f"no subscription {subscription_id} in this workspace")

    # -- publications --------------------------------------------------------------------------

    def publication_put(self, account_id: str, publication: Publication, expires_at: int) -> dict[str, Any]:
        """A transaction item recording the publication, for writing it together with something else."""
        return self._put(_publication_item(account_id, publication, expires_at))

    def delivery_put(
        self, account_id: str, publication_id: str, subscription: Subscription, task_id: str, expires_at: int
    ) -> dict[str, Any]:
        """A transaction item marking the publication delivered to the subscription, failing if it was already."""
        return self._put(
            {
                keys.PK: keys.account_pk(account_id),
                keys.SK: keys.delivery_sk(publication_id, subscription.id),
                keys.TTL_ATTRIBUTE: expires_at,
                "taskId": task_id,
                "workspaceId": subscription.workspace_id,
            }
        )

    def record(self, account_id: str, publication: Publication, expires_at: int) -> None:
        with translating_errors(f"publication {publication.id} already exists"):
            self._db.put_item(
                TableName=self._table,
                Item=to_item(_publication_item(account_id, publication, expires_at)),
                **only_if(NEW_ITEM),
            )

    def forget(self, account_id: str, publication_id: str) -> None:
        """Take back a record whose message never reached the queue."""
        with translating_errors():
            self._db.delete_item(
                TableName=self._table, Key=key(keys.account_pk(account_id), keys.publication_sk(publication_id))
            )

    def get_publication(self, account_id: str, publication_id: str) -> Publication | None:
        item = self._get(keys.account_pk(account_id), keys.publication_sk(publication_id))
        return _publication(item) if item else None

    def mark_delivered(
        self, account_id: str, publication_id: str, event_id: str | None, name: str | None, triggered: int, now: str
    ) -> None:
        delivered = Update().set("state", "delivered").set("triggered", triggered).set("deliveredAt", now)
        if event_id:
            delivered.set("eventId", event_id)
        if name:
            delivered.set("name", name)
        with translating_errors():
            self._db.update_item(
                TableName=self._table,
                Key=key(keys.account_pk(account_id), keys.publication_sk(publication_id)),
                **delivered.only_if(EXISTS).params(),
            )

    def list_publications(
        self, account_id: str, limit: int, cursor: str | None, now_epoch: int
    ) -> tuple[list[Publication], str | None]:
        """Newest first, a page at a time; expired ones are left out (TTL deletes them lazily)."""
        pk = keys.account_pk(account_id)
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
            "FilterExpression": f"{keys.TTL_ATTRIBUTE} > :now",
            "ExpressionAttributeValues": to_item({":pk": pk, ":prefix": keys.PUBLICATION_SK_PREFIX, ":now": now_epoch}),
            "ScanIndexForward": False,
            "Limit": limit,
        }
        start = decode_cursor(cursor, {keys.PK: pk}, (keys.SK,))
        if start is not None:
            if not start[keys.SK]["S"].startswith(keys.PUBLICATION_SK_PREFIX):
                raise PayloadError("cursor is not one this listing returned", field="cursor")
            request["ExclusiveStartKey"] = start
        with translating_errors():
            page = self._db.query(**request)
        items = page.get("Items", [])
        last = page.get("LastEvaluatedKey")
        next_cursor = encode_cursor({keys.PK: last[keys.PK], keys.SK: last[keys.SK]}) if last else None
        return [_publication(from_item(item)) for item in items], next_cursor

    def publication_cursor(self, account_id: str, publication: Publication) -> str:
        """The cursor of `list_publications` that resumes right after this publication."""
        position = {keys.PK: keys.account_pk(account_id), keys.SK: keys.publication_sk(publication.id)}
        return cursor_after(to_item(position))

    # -- helpers -------------------------------------------------------------------------------

    def _get(self, pk: str, sk: str) -> dict[str, Any] | None:
        return get_item(self._db, self._table, pk, sk)

    def _put(self, item: dict[str, Any]) -> dict[str, Any]:
        return {"Put": {"TableName": self._table, "Item": to_item(item), **only_if(NEW_ITEM)}}

    def _count(self, pk: str, event_id: str, delta: int) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": self._table,
                "Key": key(pk, keys.event_sk(event_id)),
                **Update().add("subscriptionCount", delta).only_if(EXISTS).params(),
            }
        }


def _publication_item(account_id: str, publication: Publication, expires_at: int) -> dict[str, Any]:
    return {
        keys.PK: keys.account_pk(account_id),
        keys.SK: keys.publication_sk(publication.id),
        keys.TTL_ATTRIBUTE: expires_at,
        "id": publication.id,
        "name": publication.name,
        "eventId": publication.event_id,
        "workspaceId": publication.workspace_id,
        "taskId": publication.task_id,
        "payload": publication.payload,
        "faq": [dict(entry) for entry in publication.faq],
        "publishedAt": publication.published_at,
        "state": publication.state,
        "triggered": publication.triggered,
        "sourceTaskId": publication.source_task_id,
    }


def _definition(values: dict[str, Any]) -> EventDefinition:
    return EventDefinition(
        id=values["id"],
        name=values["name"],
        description=values.get("description", ""),
        created_at=values["createdAt"],
        subscription_count=int(values.get("subscriptionCount", 0)),
    )


def _subscription(values: dict[str, Any]) -> Subscription:
    return Subscription(
        id=values["id"],
        event_id=values["eventId"],
        workspace_id=values["workspaceId"],
        title=values["title"],
        body=values.get("body", ""),
        created_at=values["createdAt"],
    )


def _publication(values: dict[str, Any]) -> Publication:
    return Publication(
        id=values["id"],
        name=values.get("name"),
        event_id=values.get("eventId"),
        workspace_id=values["workspaceId"],
        task_id=values.get("taskId"),
        payload=values.get("payload", ""),
        faq=tuple(values.get("faq", [])),
        published_at=values["publishedAt"],
        state=values.get("state", "queued"),
        triggered=int(values.get("triggered", 0)),
        source_task_id=values.get("sourceTaskId"),
    )
