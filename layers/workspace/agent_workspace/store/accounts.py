"""Accounts, their workspaces, and the tokens that reach them."""

from typing import Any

from botocore.exceptions import ClientError

from agent_workspace.domain.errors import Conflict, NotFound, RateLimited, Unavailable
from agent_workspace.domain.models import TASK_STATUSES, Principal, TokenRecord, Workspace
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.store import keys
from agent_workspace.store.dynamo import from_item, key, query_prefix, to_item, translating_errors

_NEW_ITEM = "attribute_not_exists(PK)"
_CONTENTION_ROUNDS = 3


class AccountStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

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
        }
        with translating_errors(f"account {account_id} already exists"):
            self._db.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": self._table, "Item": to_item(item), "ConditionExpression": _NEW_ITEM}},
                    *self._token_puts(*first_token),
                ]
            )

    def create_workspace(self, workspace: Workspace, first_token: tuple[str, TokenRecord]) -> None:
        """Write the workspace and its first agent token in one transaction: never one without the other."""
        token_hash, token = first_token
        item = {
            keys.PK: keys.account_pk(workspace.account_id),
            keys.SK: keys.workspace_sk(workspace.id),
            "id": workspace.id,
            "accountId": workspace.account_id,
            "title": workspace.title,
            "mission": workspace.mission,
            "createdAt": workspace.created_at,
            "taskCounts": {status: 0 for status in TASK_STATUSES},
        }
        with translating_errors(f"workspace {workspace.id} already exists"):
            self._db.transact_write_items(
                TransactItems=[
                    # The account must exist: a workspace is never orphaned.
                    {
                        "ConditionCheck": {
                            "TableName": self._table,
                            "Key": key(keys.account_pk(workspace.account_id), keys.ACCOUNT_SK),
                            "ConditionExpression": "attribute_exists(PK)",
                        }
                    },
                    {"Put": {"TableName": self._table, "Item": to_item(item), "ConditionExpression": _NEW_ITEM}},
                    *self._token_puts(token_hash, token),
                ]
            )

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
                    "ConditionExpression": _NEW_ITEM,
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
                    "ConditionExpression": _NEW_ITEM,
                }
            },
        ]

    def put_token(self, token_hash: str, token: TokenRecord) -> None:
        """Add a token to an existing workspace (agent) or account (human); a missing owner is `NotFound`."""
        owner = (
            key(keys.account_pk(token.account_id), keys.workspace_sk(token.workspace_id))
            if token.workspace_id is not None
            else key(keys.account_pk(token.account_id), keys.ACCOUNT_SK)
        )
        items = [
            *self._token_puts(token_hash, token),
            {"ConditionCheck": {"TableName": self._table, "Key": owner, "ConditionExpression": "attribute_exists(PK)"}},
        ]
        try:
            with translating_errors():
                self._db.transact_write_items(TransactItems=items)
        except Conflict as error:
            owner_name = f"workspace {token.workspace_id}" if token.workspace_id else f"account {token.account_id}"
            raise NotFound(f"no {owner_name}") from error

    def resolve_token(self, token_hash: str) -> Principal | None:
        """The token's principal (a consistent read), without counting a request: admin and tests."""
        with translating_errors():
            item = self._db.get_item(
                TableName=self._table, Key=key(keys.token_pk(token_hash), keys.TOKEN_SK), ConsistentRead=True
            ).get("Item")
        return _principal(from_item(item)) if item else None

    def admit(self, token_hash: str, window: int, limit: int) -> Principal | None:
        """The token's principal, counting this request against its limit for `window` in the same write.

        One `UpdateItem` does both: it fails on a missing (or revoked) token, and on a token that
        has used up this window, which `RateLimited` reports; the first request of a window opens it
        with a second write. Writes are strongly consistent, so revocation bites on the next call.
        """
        token_key = key(keys.token_pk(token_hash), keys.TOKEN_SK)
        for _ in range(_CONTENTION_ROUNDS):
            counted = self._count_request(
                token_key,
                "ADD rateCount :one",
                # A window already newer than ours (another instance's clock ran ahead) counts as ours.
                "attribute_exists(PK) AND rateWindow >= :w AND rateCount < :limit",
                {":one": 1, ":w": window, ":limit": limit},
            )
            if isinstance(counted, dict):
                return _principal(counted)
            if counted is None:
                return None  # no such token
            if counted >= window:
                raise RateLimited(f"this token made {limit} requests this minute, its limit", retry_after=0)
            opened = self._count_request(
                token_key,
                "SET rateWindow = :w, rateCount = :one",
                "attribute_exists(PK) AND (attribute_not_exists(rateWindow) OR rateWindow < :w)",
                {":one": 1, ":w": window},
            )
            if isinstance(opened, dict):
                return _principal(opened)
            if opened is None:
                return None
            # Another request opened this window meanwhile: count this one in it.
        raise Unavailable("the store is busy; retry shortly")

    def _count_request(self, token_key: dict[str, Any], update: str, condition: str, values: dict[str, Any]) -> Any:
        """The token's attributes after the update; else None (no token) or its `rateWindow` as it stands."""
        try:
            response = self._db.update_item(
                TableName=self._table,
                Key=token_key,
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeValues=to_item(values),
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                with translating_errors():
                    raise
            old = error.response.get("Item")
            return None if not old else int(from_item(old).get("rateWindow", -1))
        return from_item(response["Attributes"])

    def list_tokens(self, account_id: str, workspace_id: str | None) -> list[TokenRecord]:
        """A workspace's agent tokens, or with `workspace_id` None the account's human tokens."""
        prefix = keys.token_ref_prefix(_scope(workspace_id))
        return [_token(item) for item in query_prefix(self._db, self._table, keys.account_pk(account_id), prefix)]

    def revoke_token(self, account_id: str, workspace_id: str | None, token_id: str) -> None:
        """Delete the token so its next use gets 401; the reference goes with it in the same transaction."""
        ref_key = key(keys.account_pk(account_id), keys.token_ref_sk(_scope(workspace_id), token_id))
        with translating_errors():
            ref = self._db.get_item(TableName=self._table, Key=ref_key, ConsistentRead=True).get("Item")
        if not ref:
            where = f"workspace {workspace_id}" if workspace_id else "this account's human tokens"
            raise NotFound(f"no token {token_id} in {where}")
        values = from_item(ref)
        with translating_errors(f"token {token_id} was revoked meanwhile"):
            self._db.transact_write_items(
                TransactItems=[
                    {
                        "Delete": {
                            "TableName": self._table,
                            "Key": ref_key,
                            "ConditionExpression": "attribute_exists(PK)",
                        }
                    },
                    {
                        "Delete": {
                            "TableName": self._table,
                            "Key": key(keys.token_pk(values["tokenHash"]), keys.TOKEN_SK),
                        }
                    },
                ]
            )


def _principal(values: dict[str, Any]) -> Principal:
    return Principal(
        kind=TokenKind(values["kind"]),
        account_id=values["accountId"],
        token_id=values["tokenId"],
        workspace_id=values.get("workspaceId"),
    )


def _scope(workspace_id: str | None) -> str:
    return workspace_id if workspace_id is not None else keys.ACCOUNT_SCOPE


def _workspace(values: dict[str, Any]) -> Workspace:
    counts = {status: int(values.get("taskCounts", {}).get(status, 0)) for status in TASK_STATUSES}
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
