"""Opaque pagination cursors: a DynamoDB LastEvaluatedKey, encoded, and checked on the way back in."""

import base64
import json
from typing import Any

from agent_workspace.domain.errors import PayloadError


def encode_cursor(last_key: dict[str, Any] | None) -> str | None:
    return cursor_after(last_key) if last_key else None


def cursor_after(item_key: dict[str, Any]) -> str:
    """The cursor that resumes right after the item at this key (typed, as DynamoDB's ExclusiveStartKey)."""
    return base64.urlsafe_b64encode(json.dumps(item_key, separators=(",", ":")).encode()).decode().rstrip("=")


def decode_cursor(
    cursor: str | None,
    partition: dict[str, str],
    other_keys: tuple[str, ...],
    sk_prefix: str | None = None,
    sort_key: str = "SK",
) -> dict[str, Any] | None:
    """The start key, which must lie in the partition being read (a cursor never crosses workspaces)
    and hold exactly the key attributes the read needs; with `sk_prefix`, a `sort_key` (the table's or an
    index's) in the range read (DynamoDB refuses a start key outside a Query's `begins_with`, which would be
    a 500, not a 422)."""
    if not cursor:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        key = json.loads(base64.urlsafe_b64decode(padded.encode()))
        valid = (
            isinstance(key, dict)
            and all(key.get(name) == {"S": value} for name, value in partition.items())
            and set(key) == {*partition, *other_keys}
            and all(isinstance(key[name], dict) and isinstance(key[name].get("S"), str) for name in other_keys)
            and (sk_prefix is None or key[sort_key]["S"].startswith(sk_prefix))
        )
    except (ValueError, UnicodeDecodeError):
        valid = False
    if not valid:
        raise PayloadError("cursor is not one this listing returned", field="cursor")
    return key
