"""OAuth sign-in's items: clients, consent requests, codes, grants and their tokens.

A grant is one connected app in one workspace. It holds the hashes of its one live access token and its one live
refresh token, so that revoking it deletes both in the same transaction; every change of a grant's tokens is
conditional on the refresh hash it read, so a revocation and a refresh racing each other never leave a token alive.
Codes, requests, access and refresh tokens carry `expiresAt`: DynamoDB's TTL removes them some time after, and every
read here checks the time itself, since TTL is not prompt.
"""

from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase

from agent_workspace.backoff import back_off
from agent_workspace.domain.errors import Conflict, Unavailable
from agent_workspace.store import keys
from agent_workspace.store.dynamo import from_item, get_item, key, query_prefix, to_item, translating_errors
from agent_workspace.store.expressions import EXISTS, NEW_ITEM, Update, only_if

_GRANT_COUNT = "grantCount"
_ROUNDS = 4


def _unexpired(now: int) -> ConditionBase:
    return EXISTS & Attr(keys.TTL_ATTRIBUTE).gt(now)


class OAuthStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    # -- clients -------------------------------------------------------------------------------

    def put_client(self, client_id: str, values: dict[str, Any]) -> None:
        self._put(keys.oauth_client_pk(client_id), values, NEW_ITEM)

    def get_client(self, client_id: str, now: int) -> dict[str, Any] | None:
        return self._live(keys.oauth_client_pk(client_id), now, consistent=False)

    def get_document(self, url_hash: str, now: int) -> dict[str, Any] | None:
        return self._live(keys.oauth_document_pk(url_hash), now, consistent=False)

    def put_document(self, url_hash: str, values: dict[str, Any]) -> None:
        self._put(keys.oauth_document_pk(url_hash), values, None)

    def count_registration(self, scope: str, window: int, limit: int, expires_at: int) -> bool:
        """Count one registration in `scope`'s `window`; False (nothing counted) when the window is full."""
        update = (
            Update()
            .add("count", 1)
            .set(keys.TTL_ATTRIBUTE, expires_at)
            .only_if(Attr("count").not_exists() | Attr("count").lt(limit))
        )
        try:
            with translating_errors():
                self._db.update_item(
                    TableName=self._table, Key=key(keys.oauth_rate_pk(scope), str(window)), **update.params()
                )
        except Conflict:
            return False
        return True

    # -- consent requests and codes -----------------------------------------------------------------

    def put_request(self, request_id: str, values: dict[str, Any]) -> None:
        self._put(keys.oauth_request_pk(request_id), values, NEW_ITEM)

    def get_request(self, request_id: str, now: int) -> dict[str, Any] | None:
        """A request still waiting for the human: not expired, not decided."""
        values = self._live(keys.oauth_request_pk(request_id), now, consistent=True)
        return None if values is None or "decidedAt" in values else values

    def decide(self, request_id: str, now: int, code: tuple[str, dict[str, Any]] | None) -> None:
        """Mark the request decided and, on allow, store its code, in one transaction: a request is decided once
        (`Conflict` for the second decision or an expired request)."""
        decided = Update().set("decidedAt", now).only_if(_unexpired(now) & Attr("decidedAt").not_exists())
        items: list[dict[str, Any]] = [self._update(keys.oauth_request_pk(request_id), decided)]
        if code is not None:
            code_hash, values = code
            items.append(self._put_item(keys.oauth_code_pk(code_hash), values, NEW_ITEM))
        with translating_errors("this sign-in request was decided already or has expired"):
            self._db.transact_write_items(TransactItems=items)

    def get_code(self, code_hash: str) -> dict[str, Any] | None:
        """A code as stored, used or not (a second use must find it, to revoke what the first one got)."""
        return get_item(self._db, self._table, keys.oauth_code_pk(code_hash), keys.OAUTH_SK)

    def redeem(
        self,
        code_hash: str,
        now: int,
        grant: dict[str, Any],
        access: tuple[str, dict[str, Any]],
        refresh: tuple[str, dict[str, Any]],
        cap: int,
    ) -> None:
        """Use the code once and create its grant with its first tokens, counted on the workspace.

        `Conflict` with reasons: the first (the code) when it was used already or expired; the last (the
        workspace) when the workspace holds `cap` grants."""
        used = Update().set("usedAt", now).only_if(_unexpired(now) & Attr("usedAt").not_exists())
        counted = (
            Update()
            .add(_GRANT_COUNT, 1)
            .only_if(EXISTS & (Attr(_GRANT_COUNT).not_exists() | Attr(_GRANT_COUNT).lt(cap)))
        )
        account, workspace = grant["accountId"], grant["workspaceId"]
        items = [
            self._update(keys.oauth_code_pk(code_hash), used),
            self._put_item(keys.account_pk(account), grant, NEW_ITEM, keys.grant_sk(workspace, grant["id"])),
            self._put_item(keys.token_pk(access[0]), access[1], NEW_ITEM, keys.TOKEN_SK),
            self._put_item(keys.oauth_refresh_pk(refresh[0]), refresh[1], NEW_ITEM),
            self._update(keys.account_pk(account), counted, keys.workspace_sk(workspace)),
        ]
        self._transact(items, "this authorization code was used already or has expired")

    def keep_client(self, client_id: str) -> None:
        """A registered client that got a grant no longer expires as unused."""
        update = Update().remove(keys.TTL_ATTRIBUTE).only_if(EXISTS)
        try:
            with translating_errors():
                self._db.update_item(
                    TableName=self._table, Key=key(keys.oauth_client_pk(client_id), keys.OAUTH_SK), **update.params()
                )
        except Conflict:
            pass  # a client metadata document, or a client deleted meanwhile: nothing to keep

    # -- grants and their tokens -------------------------------------------------------------------

    def get_refresh(self, token_hash: str) -> dict[str, Any] | None:
        return get_item(self._db, self._table, keys.oauth_refresh_pk(token_hash), keys.OAUTH_SK)

    def get_access(self, token_hash: str, now: int) -> dict[str, Any] | None:
        values = get_item(self._db, self._table, keys.token_pk(token_hash), keys.TOKEN_SK)
        if values is None or "grantId" not in values or int(values.get(keys.TTL_ATTRIBUTE, 0)) <= now:
            return None
        return values

    def grant_count(self, account_id: str, workspace_id: str) -> int | None:
        """How many apps the workspace has connected; None when the account has no such workspace."""
        values = get_item(self._db, self._table, keys.account_pk(account_id), keys.workspace_sk(workspace_id), False)
        return None if values is None else int(values.get(_GRANT_COUNT, 0))

    def get_grant(self, account_id: str, workspace_id: str, grant_id: str) -> dict[str, Any] | None:
        return get_item(self._db, self._table, keys.account_pk(account_id), keys.grant_sk(workspace_id, grant_id))

    def rotate(
        self,
        old_refresh: str,
        grant: dict[str, Any],
        access: tuple[str, dict[str, Any]],
        refresh: tuple[str, dict[str, Any]],
        now: int,
    ) -> None:
        """Spend the refresh token and put the grant's next pair of tokens in its place (the old access token goes).

        `Conflict`: the refresh token was spent meanwhile (a reuse), or the grant was revoked or moved on."""
        spent = Update().set("rotatedAt", now).only_if(EXISTS & Attr("rotatedAt").not_exists())
        moved = (
            Update()
            .set("accessHash", access[0])
            .set("refreshHash", refresh[0])
            .set("refreshedAt", now)
            .only_if(EXISTS & Attr("refreshHash").eq(old_refresh))
        )
        grant_key = (keys.account_pk(grant["accountId"]), keys.grant_sk(grant["workspaceId"], grant["id"]))
        items = [
            self._update(keys.oauth_refresh_pk(old_refresh), spent),
            self._update(grant_key[0], moved, grant_key[1]),
            self._delete(keys.token_pk(grant["accessHash"]), keys.TOKEN_SK),
            self._put_item(keys.token_pk(access[0]), access[1], NEW_ITEM, keys.TOKEN_SK),
            self._put_item(keys.oauth_refresh_pk(refresh[0]), refresh[1], NEW_ITEM),
        ]
        self._transact(items, "this refresh token was used already")

    def revoke_grant(self, account_id: str, workspace_id: str, grant_id: str) -> str | None:
        """Delete the grant with its live tokens and uncount it; the revoked access token's hash, None if no grant.

        Conditional on the tokens read, so a refresh that slipped in between is read again and revoked too."""
        grant_key = key(keys.account_pk(account_id), keys.grant_sk(workspace_id, grant_id))
        for attempt in range(_ROUNDS):
            grant = self.get_grant(account_id, workspace_id, grant_id)
            if grant is None:
                return None
            uncounted = Update().add(_GRANT_COUNT, -1).only_if(EXISTS)
            items = [
                {
                    "Delete": {
                        "TableName": self._table,
                        "Key": grant_key,
                        **only_if(EXISTS & Attr("refreshHash").eq(grant["refreshHash"])),
                    }
                },
                self._delete(keys.token_pk(grant["accessHash"]), keys.TOKEN_SK),
                self._delete(keys.oauth_refresh_pk(grant["refreshHash"])),
                self._update(keys.account_pk(account_id), uncounted, keys.workspace_sk(workspace_id)),
            ]
            try:
                with translating_errors():
                    self._db.transact_write_items(TransactItems=items)
                return str(grant["accessHash"])
            except Conflict:
                back_off(attempt)
        raise Unavailable("the store is busy; retry shortly")

    def list_grants(self, account_id: str, workspace_id: str) -> list[dict[str, Any]]:
        """The workspace's grants, each with `lastUsedWindow`: the minute its live access token was last used (its
        rate window; one BatchGetItem for them all, so a request costs no write to record use)."""
        grants = query_prefix(self._db, self._table, keys.account_pk(account_id), keys.grant_prefix(workspace_id))
        if not grants:
            return grants
        wanted = {g["accessHash"]: g for g in grants}
        request = {
            self._table: {
                "Keys": [key(keys.token_pk(h), keys.TOKEN_SK) for h in wanted],
                "ProjectionExpression": "PK, rateWindow",
            }
        }
        with translating_errors():
            for attempt in range(_ROUNDS):
                response = self._db.batch_get_item(RequestItems=request)
                for item in response.get("Responses", {}).get(self._table, []):
                    values = from_item(item)
                    if "rateWindow" in values:
                        wanted[values["PK"].removeprefix("TOKEN#")]["lastUsedWindow"] = int(values["rateWindow"])
                request = response.get("UnprocessedKeys") or {}
                if not request:
                    break
                back_off(attempt)
        return grants

    # -- plumbing ------------------------------------------------------------------------------------

    def _transact(self, items: list[dict[str, Any]], lost: str) -> None:
        """The transaction, retried while it only collided with another one in flight: its conditions, not the
        collision, must decide (a reused code or refresh token racing the first use is told by them, and revoked).
        `Conflict` with the cancellation reasons once a condition failed."""
        for attempt in range(_ROUNDS):
            try:
                with translating_errors(lost):
                    self._db.transact_write_items(TransactItems=items)
                return
            except Conflict as conflict:
                if "ConditionalCheckFailed" in conflict.reasons or not conflict.reasons:
                    raise
                back_off(attempt)
        raise Unavailable("the store is busy; retry shortly")

    def _live(self, pk: str, now: int, consistent: bool) -> dict[str, Any] | None:
        values = get_item(self._db, self._table, pk, keys.OAUTH_SK, consistent)
        if values is None or int(values.get(keys.TTL_ATTRIBUTE, now + 1)) <= now:
            return None
        return values

    def _put(self, pk: str, values: dict[str, Any], condition: ConditionBase | None) -> None:
        with translating_errors():
            self._db.put_item(**self._put_item(pk, values, condition)["Put"])

    def _put_item(
        self, pk: str, values: dict[str, Any], condition: ConditionBase | None, sk: str = keys.OAUTH_SK
    ) -> dict[str, Any]:
        put = {"TableName": self._table, "Item": to_item({keys.PK: pk, keys.SK: sk, **values})}
        return {"Put": put | (only_if(condition) if condition is not None else {})}

    def _delete(self, pk: str, sk: str = keys.OAUTH_SK) -> dict[str, Any]:
        return {"Delete": {"TableName": self._table, "Key": key(pk, sk)}}

    def _update(self, pk: str, update: Update, sk: str = keys.OAUTH_SK) -> dict[str, Any]:
        return {"Update": {"TableName": self._table, "Key": key(pk, sk), **update.params()}}
