"""WebSocket push (issue 36): tickets, the open connections and who hears what, and posting to a connection.

Items (`docs/data-model.md`, WebSocket push): a ticket `PUSHTICKET#<sha256>`, a token's minute of mints
`PUSHRATE#<tokenId>`/`<minute>`, a connection `PUSHCONN#<connectionId>` and its listener item in the partition the
sender reads, `PUSH#<topic>#<scope>`/`CONN#<connectionId>`. Each carries `expiresAt`, so TTL removes what a lost
`$disconnect` or an unused ticket leaves behind.
"""

from typing import Any

from boto3.dynamodb.conditions import Attr
from botocore.exceptions import ClientError

from agent_workspace.domain.errors import Conflict, Unavailable
from agent_workspace.store import keys
from agent_workspace.store.dynamo import (
    UNREACHABLE,
    batch_get,
    from_item,
    key,
    to_item,
    transact_unless_first_refused,
    translating_errors,
)
from agent_workspace.store.expressions import EXISTS, NEW_ITEM, Update, only_if


def _unexpired(now: int) -> Any:
    """The item is there and its expiry is ahead: TTL deletes an expired item only some time later."""
    return EXISTS & Attr(keys.TTL_ATTRIBUTE).gt(now)


def _room(limit: int) -> Any:
    """A rate window with room for one more (a new window has no count yet)."""
    return Attr("count").not_exists() | Attr("count").lt(limit)


class PushStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    # -- tickets -----------------------------------------------------------------------------------------

    def mint(self, ticket_hash: str, values: dict[str, Any], token_id: str, window: int, limit: int) -> bool:
        """Store a ticket, counting it against its token's minute `window` in the same transaction; False (nothing
        stored) when the token has minted `limit` this minute."""
        counter = (
            Update().add("count", 1).set(keys.TTL_ATTRIBUTE, (window + 2) * 60).only_if(_room(limit))
        )  # fmt: skip
        items: list[dict[str, Any]] = [
            {"Update": {"TableName": self._table, "Key": key(keys.push_rate_pk(token_id), str(window)),
                        **counter.params()}},
            {"Put": {"TableName": self._table, "Item": to_item(
                {**values, keys.PK: keys.push_ticket_pk(ticket_hash), keys.SK: keys.PUSH_SK}), **only_if(NEW_ITEM)}},
        ]  # fmt: skip
        return transact_unless_first_refused(self._db, items)

    def take_ticket(self, ticket_hash: str, now: int) -> dict[str, Any] | None:
        """Spend a ticket: one conditional delete, so of two `$connect`s with it one gets it and the other None, as
        does an unknown or expired ticket. Returns what the ticket was minted for."""
        try:
            with translating_errors():
                answer = self._db.delete_item(
                    TableName=self._table,
                    Key=key(keys.push_ticket_pk(ticket_hash), keys.PUSH_SK),
                    ReturnValues="ALL_OLD",
                    **only_if(_unexpired(now)),
                )
        except Conflict:
            return None
        return from_item(answer["Attributes"])

    # -- connections -------------------------------------------------------------------------------------

    def connect(self, connection_id: str, topic: str, scope: str, values: dict[str, Any], expires_at: int) -> None:
        """The connection and its listener item, in one transaction: `$disconnect` finds the one by the other."""
        listeners = keys.push_listeners_pk(topic, scope)
        connection = {**values, "topic": topic, "scope": scope, keys.TTL_ATTRIBUTE: expires_at}
        listener = {**values, "connectionId": connection_id, keys.TTL_ATTRIBUTE: expires_at}
        items = [
            {"Put": {"TableName": self._table, "Item": to_item(
                {**connection, keys.PK: keys.push_connection_pk(connection_id), keys.SK: keys.PUSH_SK})}},
            {"Put": {"TableName": self._table, "Item": to_item(
                {**listener, keys.PK: listeners, keys.SK: keys.push_listener_sk(connection_id)})}},
        ]  # fmt: skip
        with translating_errors():
            self._db.transact_write_items(TransactItems=items)

    def disconnect(self, connection_id: str) -> bool:
        """Delete the connection, then the listener it names; False when there was none (a refused `$connect`)."""
        with translating_errors():
            answer = self._db.delete_item(
                TableName=self._table,
                Key=key(keys.push_connection_pk(connection_id), keys.PUSH_SK),
                ReturnValues="ALL_OLD",
            )
        if "Attributes" not in answer:
            return False
        connection = from_item(answer["Attributes"])
        listener = key(
            keys.push_listeners_pk(connection["topic"], connection["scope"]), keys.push_listener_sk(connection_id)
        )
        with translating_errors():
            self._db.delete_item(TableName=self._table, Key=listener)
        return True

    def forget(self, connection_id: str, topic: str, scope: str) -> None:
        """Both items of a connection the sender found gone (410) or no longer allowed, in one transaction."""
        items = [
            {"Delete": {"TableName": self._table, "Key": key(keys.push_connection_pk(connection_id), keys.PUSH_SK)}},
            {"Delete": {"TableName": self._table,
                        "Key": key(keys.push_listeners_pk(topic, scope), keys.push_listener_sk(connection_id))}},
        ]  # fmt: skip
        with translating_errors():
            self._db.transact_write_items(TransactItems=items)

    def listeners(self, topic: str, scope: str, limit: int) -> list[dict[str, Any]]:
        """The connections hearing `topic` of `scope`, at most `limit`: one Query (eventually consistent: a socket
        opened a moment ago catches up from its cursor anyway)."""
        request = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": to_item({":pk": keys.push_listeners_pk(topic, scope)}),
            "Limit": limit,
        }
        with translating_errors():
            page = self._db.query(**request)
        return [from_item(item) for item in page.get("Items", [])]

    def live_tokens(self, token_hashes: set[str], now: int) -> set[str]:
        """Which of these tokens still exist and have not expired (a signed-in app's access token lives an hour):
        one BatchGetItem of their keys, so a token revoked after its socket opened hears nothing more."""
        if not token_hashes:
            return set()
        found = batch_get(
            self._db,
            self._table,
            [key(keys.token_pk(token_hash), keys.TOKEN_SK) for token_hash in sorted(token_hashes)],
            consistent=False,
            projection={"ProjectionExpression": "#pk, #ttl",
                        "ExpressionAttributeNames": {"#pk": keys.PK, "#ttl": keys.TTL_ATTRIBUTE}},
        )  # fmt: skip
        live = set()
        for item in map(from_item, found):
            if int(item.get(keys.TTL_ATTRIBUTE, now + 1)) > now:
                live.add(item[keys.PK].removeprefix(keys.token_pk("")))
        return live


class ConnectionPoster:
    """Posts to one open socket through the WebSocket API's `@connections` endpoint (its callback URL)."""

    def __init__(self, connections: Any) -> None:
        self._connections = connections

    def post(self, connection_id: str, data: bytes) -> bool:
        """Send `data` as one frame; False when the connection is gone (410 GoneException: the client left without
        a `$disconnect` reaching us, or API Gateway cut it). Anything else is `Unavailable`, naming AWS's code."""
        try:
            self._connections.post_to_connection(ConnectionId=connection_id, Data=data)
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code == "GoneException" or status == 410:
                return False
            raise Unavailable(f"the WebSocket API refused the post ({code or status})") from error
        except UNREACHABLE as error:
            raise Unavailable("the WebSocket API could not be reached") from error
        return True
