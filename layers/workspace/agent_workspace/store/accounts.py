"""Accounts, their workspaces, and the tokens that reach them."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase
from botocore.exceptions import ClientError

from agent_workspace.backoff import back_off
from agent_workspace.domain.errors import Conflict, NotFound, RateLimited, Unavailable, WorkspaceError
from agent_workspace.domain.models import Principal, TokenRecord, Workspace
from agent_workspace.domain.tasks import STATUSES
from agent_workspace.domain.tokens import FEWEST_HUMAN_TOKENS, TokenKind
from agent_workspace.store import keys
from agent_workspace.store.dynamo import from_item, get_item, key, query_prefix, to_item, translating_errors
from agent_workspace.store.expressions import EXISTS, NEW_ITEM, Update, only_if
from agent_workspace.store.known_tokens import KnownTokens

_CONTENTION_ROUNDS = 3
_COUNT_ROUNDS = 6  # bounded retries when other mints or revocations of the same owner won the race


@dataclass(frozen=True)
class _Counter:
    """A count kept on an owner item and moved in the transaction that adds or removes what it counts.

    The workspace item counts its agent tokens, the account item its human tokens and its workspaces. `prefix`
    is the sort-key prefix of the counted items in the account's partition: an owner stored before the count
    was kept is counted from them once.
    """

    attribute: str
    prefix: str

    @property
    def counted(self) -> ConditionBase:
        return Attr(self.attribute).exists()

    @property
    def not_yet_counted(self) -> ConditionBase:
        return EXISTS & Attr(self.attribute).not_exists()

    def within(self, delta: int, bound: int) -> ConditionBase:
        """An addition (`delta` > 0) stays below the cap `bound`; a removal leaves more than `bound`, the fewest."""
        return Attr(self.attribute).lt(bound) if delta > 0 else Attr(self.attribute).gt(bound)


_TOKEN_COUNT = "tokenCount"
_WORKSPACE_COUNT = "workspaceCount"
_WORKSPACES = _Counter(_WORKSPACE_COUNT, keys.WORKSPACE_SK_PREFIX)


def _tokens_of(workspace_id: str | None) -> _Counter:
    return _Counter(_TOKEN_COUNT, keys.token_ref_prefix(_scope(workspace_id)))


def _live(now: int) -> ConditionBase:
    """The token is there and has not expired: a signed-in app's access token lives an hour (`domain.oauth`), and
    DynamoDB's TTL deletes it only some time after that, so the expiry is checked here, in the same write."""
    return EXISTS & (Attr(keys.TTL_ATTRIBUTE).not_exists() | Attr(keys.TTL_ATTRIBUTE).gt(now))


def _room_in_window(window: int, limit: int, now: int) -> ConditionBase:
    """The token is live, under its limit in the current window. A window already newer than ours (another
    instance's clock ran ahead) counts as ours."""
    return _live(now) & Attr("rateWindow").gte(window) & Attr("rateCount").lt(limit)


def _window_over(window: int, now: int) -> ConditionBase:
    """The token is live, and its window (if any) is older than `window`: this request opens the new one."""
    return _live(now) & (Attr("rateWindow").not_exists() | Attr("rateWindow").lt(window))


class AccountStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name
        self._known = KnownTokens()

    # -- accounts and workspaces ------------------------------------------------------------

    def create_account(
        self, account_id: str, title: str, created_at: str, first_token: tuple[str, TokenRecord]
    ) -> None:
        """Write the account and its first human token together: an account nobody can administer never exists."""
        item = {
            keys.PK: keys.account_pk(account_id),
            keys.SK: keys.ACCOUNT_SK,
            "id": account_id,
            "title": title,
            "createdAt": created_at,
            _TOKEN_COUNT: 1,
            _WORKSPACE_COUNT: 0,
        }
        with translating_errors(f"account {account_id} already exists"):
            self._db.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": self._table, "Item": to_item(item), **only_if(NEW_ITEM)}},
                    *self._token_puts(*first_token),
                ]
            )

    def create_workspace(self, workspace: Workspace, first_token: tuple[str, TokenRecord], cap: int) -> None:
        """Write the workspace and its first agent token in one transaction: never one without the other.

        The same transaction counts the workspace on its account, which must exist (a workspace is never
        orphaned, `NotFound`) and hold fewer than `cap` workspaces (`Conflict`).
        """
        token_hash, token = first_token
        item = {
            keys.PK: keys.account_pk(workspace.account_id),
            keys.SK: keys.workspace_sk(workspace.id),
            "id": workspace.id,
            "accountId": workspace.account_id,
            "title": workspace.title,
            "mission": workspace.mission,
            "createdAt": workspace.created_at,
            "taskCounts": {status: 0 for status in STATUSES},
            _TOKEN_COUNT: 1,
        }
        self._counted_write(
            _owner_key(workspace.account_id, None),
            _WORKSPACES,
            +1,
            cap,
            [
                {"Put": {"TableName": self._table, "Item": to_item(item), **only_if(NEW_ITEM)}},
                *self._token_puts(token_hash, token),
            ],
            refused=lambda held: Conflict(
                f"account {workspace.account_id} already has {held} workspaces, the most it may hold ({cap})"
            ),
            missing=NotFound(f"no account {workspace.account_id}"),
            lost=f"workspace {workspace.id} already exists",
        )

    def get_account(self, account_id: str) -> dict[str, Any] | None:
        return get_item(self._db, self._table, keys.account_pk(account_id), keys.ACCOUNT_SK, False)

    def get_workspace(self, account_id: str, workspace_id: str) -> Workspace | None:
        with translating_errors():
            response = self._db.get_item(
                TableName=self._table, Key=key(keys.account_pk(account_id), keys.workspace_sk(workspace_id))
            )
        item = response.get("Item")
        return _workspace(from_item(item)) if item else None

    def list_workspaces(self, account_id: str) -> list[Workspace]:
        items = query_prefix(self._db, self._table, keys.account_pk(account_id), keys.WORKSPACE_SK_PREFIX)
        return [_workspace(item) for item in items]

    # -- tokens -----------------------------------------------------------------------------

    def _token_puts(self, token_hash: str, token: TokenRecord) -> list[dict[str, Any]]:
        """The token item (found by hash on every request) and its reference (found by id, to revoke it)."""
        common = {
            "tokenId": token.id,
            "kind": token.kind.value,
            "accountId": token.account_id,
            "workspaceId": token.workspace_id,
            "createdAt": token.created_at,
        }
        return [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": to_item({keys.PK: keys.token_pk(token_hash), keys.SK: keys.TOKEN_SK, **common}),
                    **only_if(NEW_ITEM),
                }
            },
            {
                "Put": {
                    "TableName": self._table,
                    "Item": to_item(
                        {
                            keys.PK: keys.account_pk(token.account_id),
                            keys.SK: keys.token_ref_sk(_scope(token.workspace_id), token.id),
                            "tokenHash": token_hash,
                            **common,
                        }
                    ),
                    **only_if(NEW_ITEM),
                }
            },
        ]

    def put_token(self, token_hash: str, token: TokenRecord, cap: int | None) -> None:
        """Add a token to an existing workspace (agent) or account (human), counted on it in the same transaction.

        Refused with `Conflict` when the owner already holds `cap` tokens (None: no cap, the operator's
        break-glass); a missing owner is `NotFound`.
        """
        owner = _owner_name(token.account_id, token.workspace_id)
        self._counted_write(
            _owner_key(token.account_id, token.workspace_id),
            _tokens_of(token.workspace_id),
            +1,
            cap,
            self._token_puts(token_hash, token),
            refused=lambda held: Conflict(
                f"{owner} already has {held} {token.kind.value} tokens, the most it may hold ({cap}); "
                "revoke one before minting another"
            ),
            missing=NotFound(f"no {owner}"),
            lost=f"token {token.id} already exists",
        )

    def resolve_token(self, token_hash: str) -> Principal | None:
        """The token's principal (a consistent read), without counting a request: admin and tests."""
        with translating_errors():
            item = self._db.get_item(
                TableName=self._table, Key=key(keys.token_pk(token_hash), keys.TOKEN_SK), ConsistentRead=True
            ).get("Item")
        return _principal(from_item(item)) if item else None

    def admit(self, token_hash: str, now: float, limit: int) -> Principal | None:
        """The token's principal, counting this request against its limit for the minute of `now` in the same write.

        One `UpdateItem` does both: it fails on a missing (or revoked) token, and on a token that
        has used up this window, which `RateLimited` reports; the first request of a window opens it
        with a second write. Writes are strongly consistent, so revocation bites on the next call.

        A failed conditional write still costs a write, so that write is only tried for a token this
        process has seen resolve, or that a consistent read has just found: a made-up token costs one
        read and no write, a known one the single write as before (its first use here adds the read).
        """
        if token_hash not in self._known:
            if not self._exists(token_hash):
                return None
            self._known.add(token_hash)
        principal = self._admit_existing(token_hash, int(now // 60), limit, int(now))
        if principal is None:
            self._known.forget(token_hash)  # revoked, here or elsewhere: its next use costs a read again
        return principal

    def _exists(self, token_hash: str) -> bool:
        """Whether the token is stored (consistent: a token minted a moment ago on another instance is found)."""
        with translating_errors():
            response = self._db.get_item(
                TableName=self._table,
                Key=key(keys.token_pk(token_hash), keys.TOKEN_SK),
                ConsistentRead=True,
                ProjectionExpression=keys.PK,
            )
        return "Item" in response

    def _admit_existing(self, token_hash: str, window: int, limit: int, now: int) -> Principal | None:
        token_key = key(keys.token_pk(token_hash), keys.TOKEN_SK)
        for _ in range(_CONTENTION_ROUNDS):
            counted = self._count_request(
                token_key, Update().add("rateCount", 1).only_if(_room_in_window(window, limit, now)), now
            )
            if isinstance(counted, dict):
                return _principal(counted)
            if counted is None:
                return None  # no such token
            if counted >= window:
                raise RateLimited(f"this token made {limit} requests this minute, its limit", retry_after=0)
            opening = Update().set("rateWindow", window).set("rateCount", 1).only_if(_window_over(window, now))
            opened = self._count_request(token_key, opening, now)
            if isinstance(opened, dict):
                return _principal(opened)
            if opened is None:
                return None
            # Another request opened this window meanwhile: count this one in it.
        raise Unavailable("the store is busy; retry shortly")

    def _count_request(self, token_key: dict[str, Any], update: Update, now: int) -> Any:
        """The token's attributes after the update; else None (no token, or an expired one) or its `rateWindow`.

        Any other failure, the network's included, is translated: the token check is a request's first store
        call, and an outage there must answer 503 like everywhere else, not 500."""
        with translating_errors():
            try:
                response = self._db.update_item(
                    TableName=self._table,
                    Key=token_key,
                    **update.params(),
                    ReturnValues="ALL_NEW",
                    ReturnValuesOnConditionCheckFailure="ALL_OLD",
                )
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                    raise
                old = from_item(error.response.get("Item") or {})
                if not old or int(old.get(keys.TTL_ATTRIBUTE, now + 1)) <= now:
                    return None
                return int(old.get("rateWindow", -1))
        return from_item(response["Attributes"])

    def list_tokens(self, account_id: str, workspace_id: str | None) -> list[TokenRecord]:
        """A workspace's agent tokens, or with `workspace_id` None the account's human tokens."""
        prefix = keys.token_ref_prefix(_scope(workspace_id))
        return [_token(item) for item in query_prefix(self._db, self._table, keys.account_pk(account_id), prefix)]

    def has_agent_token(self, account_id: str, workspace_id: str, token_id: str) -> bool:
        """Whether the workspace has this (unrevoked) agent token: one GetItem of its reference."""
        sk = keys.token_ref_sk(_scope(workspace_id), token_id)
        return get_item(self._db, self._table, keys.account_pk(account_id), sk, consistent=False) is not None

    def revoke_token(self, account_id: str, workspace_id: str | None, token_id: str) -> None:
        """Delete the token so its next use gets 401; the reference and the owner's count go with it in the same
        transaction. The account's last human token is refused (`Conflict`): as `create_account` says, an
        account nobody can administer never exists, and the count's condition holds that against a race too.
        """
        ref_key = key(keys.account_pk(account_id), keys.token_ref_sk(_scope(workspace_id), token_id))
        with translating_errors():
            ref = self._db.get_item(TableName=self._table, Key=ref_key, ConsistentRead=True).get("Item")
        if not ref:
            where = f"workspace {workspace_id}" if workspace_id else "this account's human tokens"
            raise NotFound(f"no token {token_id} in {where}")
        values = from_item(ref)
        self._counted_write(
            _owner_key(account_id, workspace_id),
            _tokens_of(workspace_id),
            -1,
            None if workspace_id is not None else FEWEST_HUMAN_TOKENS,
            [
                {"Delete": {"TableName": self._table, "Key": ref_key, **only_if(EXISTS)}},
                {"Delete": {"TableName": self._table, "Key": key(keys.token_pk(values["tokenHash"]), keys.TOKEN_SK)}},
            ],
            refused=lambda held: Conflict(
                f"token {token_id} is this account's last human token: revoking it would leave the account "
                "locked out; mint another first"
            ),
            missing=NotFound(f"no {_owner_name(account_id, workspace_id)}"),
            lost=f"token {token_id} was revoked meanwhile",
        )
        self._known.forget(values["tokenHash"])

    def _counted_write(
        self,
        owner: dict[str, Any],
        counter: _Counter,
        delta: int,
        bound: int | None,
        items: list[dict[str, Any]],
        refused: Callable[[int], WorkspaceError],
        missing: WorkspaceError,
        lost: str,
    ) -> None:
        """`items` written with the `owner`'s `counter` moved by `delta`, in one transaction that holds the count
        below `bound` (a cap) or above it (the fewest a removal may leave); None: no bound.

        The condition, not a read before, is what decides, so of many concurrent additions at the cap (or
        removals of the last tokens) only those that fit succeed. A failed count is read once to say why:
        `missing` owner, `refused(count)`, or a race lost, retried. An owner stored before the count was kept
        is counted from the counted items, and that count is written only while there still is none.
        """
        uncounted: int | None = None  # the owner's items as a query counts them, while it has no count
        for attempt in range(_COUNT_ROUNDS):
            count_item = self._count_change(owner, counter, delta, bound, uncounted)
            try:
                with translating_errors(lost):
                    self._db.transact_write_items(TransactItems=[count_item, *items])
                return
            except Conflict as conflict:
                if "ConditionalCheckFailed" in conflict.reasons[1:]:
                    raise  # the items' own condition: a token already there, or already gone
                if conflict.reasons[:1] != ("ConditionalCheckFailed",):
                    back_off(attempt)  # lost a race with another transaction on these items
                    continue
            stored = get_item(self._db, self._table, owner["PK"]["S"], owner["SK"]["S"])
            if stored is None:
                raise missing
            uncounted = self._count_items(owner["PK"]["S"], counter.prefix) if counter.attribute not in stored else None
            held = int(stored[counter.attribute]) if uncounted is None else uncounted
            if bound is not None and not (held < bound if delta > 0 else held > bound):
                raise refused(held)
            back_off(attempt)
        raise Unavailable("the store is busy; retry shortly")

    def _count_change(
        self, owner: dict[str, Any], counter: _Counter, delta: int, bound: int | None, uncounted: int | None
    ) -> dict[str, Any]:
        if uncounted is not None:
            update = Update().set(counter.attribute, uncounted + delta).only_if(counter.not_yet_counted)
        else:
            update = Update().add(counter.attribute, delta).only_if(counter.counted)
            if bound is not None:
                update.only_if(counter.within(delta, bound))
        return {"Update": {"TableName": self._table, "Key": owner, **update.params()}}

    def _count_items(self, partition: str, prefix: str) -> int:
        """The partition's items under `prefix`, counted (`Select COUNT`: no item comes back)."""
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
            "ExpressionAttributeValues": to_item({":pk": partition, ":prefix": prefix}),
            "Select": "COUNT",
        }
        total = 0
        with translating_errors():
            while True:
                page = self._db.query(**request)
                total += int(page.get("Count", 0))
                if "LastEvaluatedKey" not in page:
                    return total
                request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _principal(values: dict[str, Any]) -> Principal:
    scopes = values.get("scopes")
    return Principal(
        kind=TokenKind(values["kind"]),
        account_id=values["accountId"],
        token_id=values["tokenId"],
        workspace_id=values.get("workspaceId"),
        scopes=frozenset(scopes) if scopes is not None else None,
        expires_at=int(values[keys.TTL_ATTRIBUTE]) if keys.TTL_ATTRIBUTE in values else None,
    )


def _scope(workspace_id: str | None) -> str:
    return workspace_id if workspace_id is not None else keys.ACCOUNT_SCOPE


def _owner_key(account_id: str, workspace_id: str | None) -> dict[str, Any]:
    """The item that counts the tokens: the workspace for agent tokens, the account for human ones."""
    sk = keys.workspace_sk(workspace_id) if workspace_id is not None else keys.ACCOUNT_SK
    return key(keys.account_pk(account_id), sk)


def _owner_name(account_id: str, workspace_id: str | None) -> str:
    return f"workspace {workspace_id}" if workspace_id is not None else f"account {account_id}"


def _workspace(values: dict[str, Any]) -> Workspace:
    counts = {status: int(values.get("taskCounts", {}).get(status, 0)) for status in STATUSES}
    return Workspace(
        id=values["id"],
        account_id=values["accountId"],
        title=values["title"],
        mission=values.get("mission", ""),
        created_at=values["createdAt"],
        task_counts=counts,
    )


def _token(values: dict[str, Any]) -> TokenRecord:
    return TokenRecord(
        id=values["tokenId"],
        kind=TokenKind(values["kind"]),
        account_id=values["accountId"],
        workspace_id=values.get("workspaceId"),
        created_at=values["createdAt"],
    )
