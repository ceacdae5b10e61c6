"""Waits in flight (a long-poll, an `elicit`, a site-tool call's wait), counted per token and per account across
Lambda instances, in one item per account: `WAITS#<accountId>` / `WAITS`.

Each wait holds a lease, the string `<expires>|<tokenId>|<waitId>`, in two string sets: `all` (the account's)
and `t_<tokenId>` (the token's). Taking one is one conditional UpdateItem (ADD to both sets while each is under
its cap); letting it go is one UpdateItem (DELETE from both; an emptied set disappears). A Lambda killed mid-wait
never lets go: its lease counts until it expires, and the next taker that finds a set full drops the expired
leases (read from the refused write's ALL_OLD, no extra read) and tries again.
"""

from dataclasses import dataclass
from typing import Any

from boto3.dynamodb.conditions import Attr
from botocore.exceptions import ClientError

from agent_workspace.store import keys
from agent_workspace.store.dynamo import from_item, key, translating_errors
from agent_workspace.store.expressions import EXISTS, Update

_ALL = "all"
_TRIES = 3  # a refusal, a drop of expired leases, one more try; a third only if others raced in meanwhile
_KEPT_SECONDS = 86400  # the item's TTL, pushed on at each take: an account that stops waiting leaves nothing


@dataclass(frozen=True, slots=True)
class Lease:
    token_id: str
    wait_id: str
    expires: int  # epoch seconds

    def text(self) -> str:
        return f"{self.expires:010d}|{self.token_id}|{self.wait_id}"

    @classmethod
    def parse(cls, text: str) -> "Lease":
        expires, token_id, wait_id = text.split("|", 2)
        return cls(token_id, wait_id, int(expires))


def _token_set(token_id: str) -> str:
    return f"t_{token_id}"


class WaitStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    def take(self, account_id: str, lease: Lease, now: int, per_token: int, per_account: int) -> list[Lease] | None:
        """Hold `lease` (None), or the account's live leases when the token or the account has no room left."""
        live: list[Lease] = []
        for _ in range(_TRIES):
            held = self._try(account_id, lease, now, per_token, per_account)
            if held is None:
                return None
            live = [other for other in held if other.expires > now]
            if len(live) == len(held):
                return live
            self._drop(account_id, [other for other in held if other.expires <= now])
        return live

    def let_go(self, account_id: str, lease: Lease) -> None:
        self._drop(account_id, [lease])

    def _try(self, account_id: str, lease: Lease, now: int, per_token: int, per_account: int) -> list[Lease] | None:
        mine = _token_set(lease.token_id)
        room = (Attr(_ALL).not_exists() | Attr(_ALL).size().lt(per_account)) & (
            Attr(mine).not_exists() | Attr(mine).size().lt(per_token)
        )
        update = (
            Update()
            .add(_ALL, {lease.text()})
            .add(mine, {lease.text()})
            .set(keys.TTL_ATTRIBUTE, now + _KEPT_SECONDS)
            .only_if(room)
        )
        try:
            self._db.update_item(
                TableName=self._table,
                Key=key(keys.waits_pk(account_id), keys.WAITS_SK),
                **update.params(),
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                with translating_errors():
                    raise
            old = from_item(error.response.get("Item") or {})
            return [Lease.parse(text) for text in old.get(_ALL, ())]
        return None

    def _drop(self, account_id: str, leases: list[Lease]) -> None:
        """A DELETE of an element already gone (another taker dropped it) changes nothing; the condition only keeps
        an item that expired meanwhile from coming back as a bare key."""
        update = Update().delete(_ALL, {lease.text() for lease in leases}).only_if(EXISTS)
        for token_id in {lease.token_id for lease in leases}:
            update.delete(_token_set(token_id), {lease.text() for lease in leases if lease.token_id == token_id})
        try:
            self._db.update_item(
                TableName=self._table, Key=key(keys.waits_pk(account_id), keys.WAITS_SK), **update.params()
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                with translating_errors():
                    raise
