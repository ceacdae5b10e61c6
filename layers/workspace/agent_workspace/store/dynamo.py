"""Thin helpers over the low-level DynamoDB client: (de)serialising items and mapping its errors."""

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from agent_workspace.backoff import back_off
from agent_workspace.domain.errors import Conflict, Unavailable
from agent_workspace.store.cursor import decode_cursor, encode_cursor

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

# The network failing between us and AWS: no connection (refused, DNS, TLS, proxy, connect timeout), or one that
# broke or timed out mid-answer (read timeout, closed). Missing credentials or region stay bugs, not outages.
UNREACHABLE = (BotocoreConnectionError, HTTPClientError)

_RETRYABLE_CODES = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionInProgressException",
    "InternalServerException",
    "ServiceQuotaExceededException",
}


def to_item(values: dict[str, Any]) -> dict[str, Any]:
    return {key: _serializer.serialize(_to_dynamo(value)) for key, value in values.items() if value is not None}


def from_item(item: dict[str, Any]) -> dict[str, Any]:
    return {key: _from_dynamo(_deserializer.deserialize(value)) for key, value in item.items()}


def _to_dynamo(value: Any) -> Any:
    """DynamoDB numbers are decimals; JSON content (answers, schemas) brings floats."""
    if isinstance(value, float):
        return Decimal(repr(value))
    if isinstance(value, dict):
        return {k: _to_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_dynamo(v) for v in value]
    return value


def _from_dynamo(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_dynamo(v) for v in value]
    return value


def key(pk: str, sk: str) -> dict[str, Any]:
    return {"PK": {"S": pk}, "SK": {"S": sk}}


@contextmanager
def translating_errors(
    conflict_message: str = "the item changed meanwhile; read it again and retry", service: str = "store"
) -> Iterator[None]:
    """Turn a lost conditional write into `Conflict` and throttling or 5xx (of any AWS service) into `Unavailable`."""
    try:
        yield
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code in ("ConditionalCheckFailedException", "TransactionConflictException"):
            raise Conflict(conflict_message) from error
        if code == "TransactionCanceledException":
            reasons = tuple(
                None if r.get("Code") in (None, "None") else r["Code"]
                for r in error.response.get("CancellationReasons", [])
            )
            if "ConditionalCheckFailed" in reasons or "TransactionConflict" in reasons:
                raise Conflict(conflict_message, reasons) from error
            raise Unavailable(f"the {service} is busy; retry shortly") from error
        if code in _RETRYABLE_CODES or error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) >= 500:
            raise Unavailable(f"the {service} is busy; retry shortly") from error
        raise
    except UNREACHABLE as error:
        raise Unavailable(f"the {service} could not be reached; retry shortly") from error


def transact_unless_first_refused(dynamodb: Any, items: list[dict[str, Any]]) -> bool:
    """Run a transaction whose first item's condition is the caller's question (is it still there, is there
    room): False when that condition failed, True when all was written; any other failure raises."""
    try:
        with translating_errors():
            dynamodb.transact_write_items(TransactItems=items)
    except Conflict as conflict:
        if conflict.reasons[:1] == ("ConditionalCheckFailed",):
            return False
        raise
    return True


def get_item(dynamodb: Any, table: str, pk: str, sk: str, consistent: bool = True) -> dict[str, Any] | None:
    """One item, deserialised, or None; consistent unless asked otherwise."""
    with translating_errors():
        item = dynamodb.get_item(TableName=table, Key=key(pk, sk), ConsistentRead=consistent).get("Item")
    return from_item(item) if item else None


def query_all(dynamodb: Any, request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every item a Query matches, page after page, deserialised."""
    request = dict(request)
    items: list[dict[str, Any]] = []
    with translating_errors():
        while True:
            page = dynamodb.query(**request)
            items.extend(from_item(item) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return items
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def query_prefix(dynamodb: Any, table: str, partition: str, sk_prefix: str) -> list[dict[str, Any]]:
    """Every item of one partition whose sort key starts with `sk_prefix`, deserialised."""
    return query_all(
        dynamodb,
        {
            "TableName": table,
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
            "ExpressionAttributeValues": to_item({":pk": partition, ":prefix": sk_prefix}),
        },
    )


def query_prefix_page(
    dynamodb: Any,
    table: str,
    partition: str,
    sk_prefix: str,
    limit: int,
    cursor: str | None,
    projection: dict[str, Any] | None = None,
) -> tuple[list[dict[str, Any]], str | None]:
    """One Query of a partition's items whose sort key starts with `sk_prefix`: at most `limit`, deserialised,
    after `cursor` (checked to lie in that partition and range); and the cursor to what follows, None when
    nothing does. One more item than asked is read so that a page ending exactly at the last item says so
    (rather than sending the caller to an empty page). `projection` adds a ProjectionExpression (and its
    attribute names; the keys are always read)."""
    request: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
        "ExpressionAttributeValues": to_item({":pk": partition, ":prefix": sk_prefix}),
        "Limit": limit + 1,
        **(projection or {}),
    }
    if projection:
        request["ProjectionExpression"] = f"PK, SK, {projection['ProjectionExpression']}"
    start = decode_cursor(cursor, {"PK": partition}, ("SK",), sk_prefix)
    if start is not None:
        request["ExclusiveStartKey"] = start
    with translating_errors():
        page = dynamodb.query(**request)
    items = page.get("Items", [])
    if len(items) > limit:
        last = items[limit - 1]
        return [from_item(item) for item in items[:limit]], encode_cursor({"PK": last["PK"], "SK": last["SK"]})
    return [from_item(item) for item in items], encode_cursor(page.get("LastEvaluatedKey"))


_BATCH_WRITE = 25  # DynamoDB's BatchWriteItem limit
_BATCH_GET = 100  # and BatchGetItem's
_UNPROCESSED_ROUNDS = 8  # bounded retries of what a batch call left unprocessed under throttling


def batch_get(
    dynamodb: Any,
    table: str,
    keys: list[dict[str, Any]],
    consistent: bool = True,
    projection: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The raw items at these keys that exist: one BatchGetItem per 100 keys, plus retries of the unprocessed.
    `projection` (a ProjectionExpression and its attribute names) reads only those attributes."""
    found: list[dict[str, Any]] = []
    with translating_errors():
        for start in range(0, len(keys), _BATCH_GET):
            pending: dict[str, Any] = {
                table: {"Keys": keys[start : start + _BATCH_GET], "ConsistentRead": consistent, **(projection or {})}
            }
            for attempt in range(_UNPROCESSED_ROUNDS):
                response = dynamodb.batch_get_item(RequestItems=pending)
                found.extend(response.get("Responses", {}).get(table, []))
                pending = response.get("UnprocessedKeys") or {}
                if not pending:
                    break
                back_off(attempt)
            else:
                raise Unavailable("the store is busy; retry shortly")
    return found


def batch_write(dynamodb: Any, table: str, requests: list[dict[str, Any]], unfinished: str) -> None:
    """Put/Delete requests, 25 per BatchWriteItem; `unfinished` says what a give-up leaves behind."""
    with translating_errors():
        for start in range(0, len(requests), _BATCH_WRITE):
            pending: dict[str, Any] = {table: requests[start : start + _BATCH_WRITE]}
            for attempt in range(_UNPROCESSED_ROUNDS):
                pending = dynamodb.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
                if not pending:
                    break
                back_off(attempt)
            else:
                raise Unavailable(f"the store is busy; {unfinished}")


def batch_delete(dynamodb: Any, table: str, keys: list[dict[str, Any]], unfinished: str) -> None:
    """Delete the items at these keys (see `batch_write`)."""
    batch_write(dynamodb, table, [{"DeleteRequest": {"Key": k}} for k in keys], unfinished)
