"""Notification settings and what was sent, in the account's partition (decision 0010).

`NOTIFY` holds the account's routing (the Slack URL sealed), `NOTIFYWS#<workspaceId>` a workspace's override,
and `NOTIFIED#<triggerId>#<channel>` marks a notification sent, so a redelivered message sends nothing twice.
The stack's notification secret (Secrets Manager) is read once per process.
"""

import json
import threading
import urllib.error
import urllib.request
from typing import Any

from boto3.dynamodb.conditions import Attr

from agent_workspace.domain.errors import Conflict, Unavailable
from agent_workspace.store import keys
from agent_workspace.store.dynamo import from_item, get_item, key, query_prefix, to_item, translating_errors
from agent_workspace.store.expressions import NEW_ITEM, Update, only_if

_SETTINGS_SK = "NOTIFY"


def _day_later(minute: str) -> int:
    from datetime import UTC, datetime, timedelta

    return int((datetime.strptime(minute, "%Y-%m-%dT%H:%M").replace(tzinfo=UTC) + timedelta(days=1)).timestamp())


def _workspace_sk(workspace_id: str) -> str:
    return f"NOTIFYWS#{workspace_id}"


def _sent_sk(trigger_id: str, channel: str) -> str:
    return f"NOTIFIED#{trigger_id}#{channel}"


class NotificationStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    def settings(self, account_id: str) -> dict[str, Any] | None:
        return get_item(self._db, self._table, keys.account_pk(account_id), _SETTINGS_SK)

    def save_settings(self, account_id: str, values: dict[str, Any], read_revision: int) -> None:
        """Write the settings read at `read_revision` (0: none yet); Conflict if another change landed meanwhile."""
        item = {keys.PK: keys.account_pk(account_id), keys.SK: _SETTINGS_SK, **values, "revision": read_revision + 1}
        condition = NEW_ITEM if read_revision == 0 else Attr("revision").eq(read_revision)
        with translating_errors("the notification settings changed meanwhile; read them again and retry"):
            self._db.put_item(TableName=self._table, Item=to_item(item), **only_if(condition))

    def confirm_email(self, account_id: str, address: str, nonce: str) -> None:
        """Mark the address confirmed, if it is still the one (and the nonce) the link was sent for; Conflict if
        the address changed since, or the link was used. The revision moves, so a settings change read before
        this is refused rather than writing the address back unconfirmed."""
        update = (
            Update()
            .set("emailConfirmed", True)
            .remove("emailNonce")
            .add("revision", 1)
            .only_if(Attr("email").eq(address) & Attr("emailNonce").eq(nonce))
        )
        with translating_errors("this link confirms nothing now: the address changed, or it is confirmed already"):
            self._db.update_item(
                TableName=self._table, Key=key(keys.account_pk(account_id), _SETTINGS_SK), **update.params()
            )

    def workspace(self, account_id: str, workspace_id: str) -> dict[str, Any] | None:
        return get_item(self._db, self._table, keys.account_pk(account_id), _workspace_sk(workspace_id))

    def save_workspace(self, account_id: str, workspace_id: str, values: dict[str, Any]) -> None:
        item = {keys.PK: keys.account_pk(account_id), keys.SK: _workspace_sk(workspace_id), **values}
        with translating_errors():
            self._db.put_item(TableName=self._table, Item=to_item(item))

    def claim_send(self, account_id: str, trigger_id: str, channel: str, now: str, expires_at: int) -> bool:
        """Mark the notification sent before sending it; False if a delivery before this one already did."""
        item = {
            keys.PK: keys.account_pk(account_id),
            keys.SK: _sent_sk(trigger_id, channel),
            "sentAt": now,
            keys.TTL_ATTRIBUTE: expires_at,
        }
        try:
            with translating_errors():
                self._db.put_item(TableName=self._table, Item=to_item(item), **only_if(NEW_ITEM))
        except Conflict:
            return False
        return True

    def tally(self, account_id: str, minute: str, trigger_id: str) -> tuple[bool, int]:
        """Count a trigger in this minute (a set: a redelivery counts once): (seen before, how many now)."""
        with translating_errors():
            answer = self._db.update_item(
                TableName=self._table,
                Key=key(keys.account_pk(account_id), f"NOTIFYRATE#{minute}"),
                UpdateExpression="ADD ids :id SET #ttl = if_not_exists(#ttl, :ttl)",
                ExpressionAttributeNames={"#ttl": keys.TTL_ATTRIBUTE},
                ExpressionAttributeValues=to_item({":id": {trigger_id}, ":ttl": _day_later(minute)}),
                ReturnValues="ALL_OLD",
            )
        before = set(from_item(answer.get("Attributes", {})).get("ids", set()))
        return trigger_id in before, len(before | {trigger_id})

    def add_to_digest(self, account_id: str, minute: str, entry: dict[str, Any], expires_at: int) -> None:
        with translating_errors():
            self._db.update_item(
                TableName=self._table,
                Key=key(keys.account_pk(account_id), f"NOTIFYDIGEST#{minute}"),
                UpdateExpression="SET entries = list_append(if_not_exists(entries, :none), :entry), #ttl = :ttl",
                ExpressionAttributeNames={"#ttl": keys.TTL_ATTRIBUTE},
                ExpressionAttributeValues=to_item({":entry": [entry], ":none": [], ":ttl": expires_at}),
            )

    def digest(self, account_id: str, minute: str) -> list[dict[str, Any]]:
        item = get_item(self._db, self._table, keys.account_pk(account_id), f"NOTIFYDIGEST#{minute}")
        return list(item.get("entries", [])) if item else []

    def release_send(self, account_id: str, trigger_id: str, channel: str) -> None:
        """The send failed: let the retried message send it."""
        with translating_errors():
            self._db.delete_item(
                TableName=self._table, Key=key(keys.account_pk(account_id), _sent_sk(trigger_id, channel))
            )


def _subscription_sk(subscription_id: str) -> str:
    return f"PUSHSUB#{subscription_id}"


class PushSubscriptions:
    """The account's Web Push subscriptions (`PUSHSUB#<id>`, the id a hash of the endpoint): one per browser."""

    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    def all(self, account_id: str) -> list[dict[str, Any]]:
        return query_prefix(self._db, self._table, keys.account_pk(account_id), "PUSHSUB#")

    def put(self, account_id: str, subscription_id: str, values: dict[str, Any]) -> None:
        item = {keys.PK: keys.account_pk(account_id), keys.SK: _subscription_sk(subscription_id), **values}
        with translating_errors():
            self._db.put_item(TableName=self._table, Item=to_item(item))

    def delete(self, account_id: str, subscription_id: str) -> bool:
        """False if the account has no such subscription."""
        try:
            with translating_errors():
                self._db.delete_item(
                    TableName=self._table,
                    Key=key(keys.account_pk(account_id), _subscription_sk(subscription_id)),
                    ConditionExpression="attribute_exists(PK)",
                )
        except Conflict:
            return False
        return True


class StackSecret:
    """The notification secret's value, read from Secrets Manager on first use and kept for the process."""

    def __init__(self, secretsmanager: Any, arn: str) -> None:
        self._secrets = secretsmanager
        self._arn = arn
        self._value: str | None = None
        self._lock = threading.Lock()

    def value(self) -> str:
        with self._lock:
            if self._value is None:
                with translating_errors(service="secret"):
                    self._value = self._secrets.get_secret_value(SecretId=self._arn)["SecretString"]
            return self._value


class Mailer:
    """Amazon SES (v2): one plain-text e-mail."""

    def __init__(self, sesv2: Any, sender: str) -> None:
        self._ses = sesv2
        self._sender = sender

    def send(self, to: str, subject: str, text: str) -> str:
        with translating_errors(service="e-mail"):
            answer = self._ses.send_email(
                FromEmailAddress=self._sender,
                Destination={"ToAddresses": [to]},
                Content={"Simple": {"Subject": {"Data": subject}, "Body": {"Text": {"Data": text}}}},
            )
        return answer["MessageId"]


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a webhook that redirects fails: the URL was checked, where it points to next was not


_OPENER = urllib.request.build_opener(_NoRedirects)
_SLACK_TIMEOUT = 5


def post_to_slack(url: str, text: str) -> None:
    """One message to an incoming webhook (its URL checked when it was set); raises `Unavailable` on failure."""
    body = json.dumps({"text": text}).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with _OPENER.open(request, timeout=_SLACK_TIMEOUT) as response:
            response.read(1024)
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        reason = getattr(error, "code", None) or type(error).__name__
        raise Unavailable(f"Slack did not take the message ({reason})") from None


class PushGone(Exception):
    """The push service says the subscription no longer exists (404, 410): forget it."""


def post_web_push(endpoint: str, body: bytes, headers: dict[str, str]) -> None:
    """One encrypted message to a browser's push service (its URL checked when the browser subscribed)."""
    request = urllib.request.Request(endpoint, data=body, headers=headers, method="POST")
    try:
        with _OPENER.open(request, timeout=_SLACK_TIMEOUT) as response:
            response.read(1024)
    except urllib.error.HTTPError as error:
        if error.code in (404, 410):
            raise PushGone(endpoint) from None
        raise Unavailable(f"the push service did not take the message ({error.code})") from None
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        raise Unavailable(f"the push service did not take the message ({type(error).__name__})") from None
