"""Web Push to the human's browsers (issue 21): their subscriptions, and one notification encrypted for each.

A browser subscribes through the console with the stack's VAPID public key; the events function sends each
notification to every subscribed browser's push service, signed with the VAPID key (decision 0010).
"""

import hashlib
import json
from typing import Any
from urllib.parse import urlsplit

from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import NotFound, PayloadError, Unavailable
from agent_workspace.domain.notifications import Note
from agent_workspace.domain.web_push import (
    PUSH_SUBSCRIPTIONS_MAX,
    check_push_endpoint,
    check_push_key,
    encrypt_push,
    public_key_b64,
    vapid_key,
)
from agent_workspace.runtime import Runtime
from agent_workspace.services.notification_keys import base_url, enabled, keys
from agent_workspace.store.notifications import PushGone, post_web_push


def push_key(rt: Runtime) -> str:
    """The stack's VAPID public key, the `applicationServerKey` a browser subscribes with."""
    if not enabled(rt):
        raise Unavailable("notifications are not set up on this stack: it has no notification secret")
    return public_key_b64(vapid_key(keys(rt).vapid))


def subscribe(rt: Runtime, account_id: str, endpoint: str, p256dh: str, auth: str) -> dict[str, Any]:
    """Remember one browser's push subscription (again: the same id), at most 10 per account."""
    if not enabled(rt):
        raise Unavailable("notifications are not set up on this stack: it has no notification secret")
    check_push_endpoint(endpoint, allow_loopback=rt.settings.aws_endpoint_url is not None)
    check_push_key(p256dh, "keys.p256dh", 65)
    check_push_key(auth, "keys.auth", 16)
    subscription_id = hashlib.sha256(endpoint.encode()).hexdigest()[:32]
    existing = rt.push_subscriptions.all(account_id)
    if subscription_id not in {_subscription_id(s) for s in existing} and len(existing) >= PUSH_SUBSCRIPTIONS_MAX:
        raise PayloadError(
            f"this account has {PUSH_SUBSCRIPTIONS_MAX} push subscriptions; remove one first", field="endpoint"
        )
    now = iso(rt.clock())
    rt.push_subscriptions.put(account_id, subscription_id, {"endpoint": endpoint, "p256dh": p256dh, "auth": auth,
                                                             "createdAt": now})  # fmt: skip
    return {"id": subscription_id, "createdAt": now}


def unsubscribe(rt: Runtime, account_id: str, subscription_id: str) -> None:
    valid = len(subscription_id) == 32 and all(c in "0123456789abcdef" for c in subscription_id)
    if not valid or not rt.push_subscriptions.delete(account_id, subscription_id):
        raise NotFound(f"no push subscription {subscription_id[:40]!r}")


def subscriptions_of(rt: Runtime, account_id: str) -> list[dict[str, Any]]:
    """Each browser subscribed, without its endpoint or keys (they are the browser's secrets)."""
    return [{"id": _subscription_id(s), "createdAt": s["createdAt"]} for s in rt.push_subscriptions.all(account_id)]


def _subscription_id(stored: dict[str, Any]) -> str:
    return str(stored["SK"]).removeprefix("PUSHSUB#")


def send(rt: Runtime, subscriptions: list[dict[str, Any]], note: Note) -> None:
    """One encrypted message (RFC 8291, aes128gcm) to each subscribed browser, signed with VAPID (RFC 8292); a
    subscription the push service no longer knows is forgotten. Fails if none took it."""
    from py_vapid import Vapid02

    vapid = Vapid02(private_key=vapid_key(keys(rt).vapid))
    payload = json.dumps({"title": note.subject, "body": note.push, "url": note.url}).encode()
    # RFC 8292's contact for the push service: the stack's https URL, else the sender's address.
    base = base_url(rt)
    contact = base if base.startswith("https://") else f"mailto:{rt.settings.notification_sender or 'admin@localhost'}"
    delivered, failures = 0, []
    for subscription in subscriptions:
        endpoint = subscription["endpoint"]
        body = encrypt_push(
            payload,
            check_push_key(subscription["p256dh"], "keys.p256dh", 65),
            check_push_key(subscription["auth"], "keys.auth", 16),
        )
        parts = urlsplit(endpoint)
        claims = {"aud": f"{parts.scheme}://{parts.netloc}", "exp": int(rt.clock().timestamp()) + 12 * 3600,
                  "sub": contact}  # fmt: skip
        headers = {"Content-Encoding": "aes128gcm", "TTL": "86400", "Urgency": "high", **vapid.sign(claims)}
        try:
            post_web_push(endpoint, body, headers)
        except PushGone:
            rt.push_subscriptions.delete(subscription["PK"].removeprefix("ACCOUNT#"), _subscription_id(subscription))
        except Unavailable as error:
            failures.append(error.message)
        else:
            delivered += 1
    if failures and not delivered:
        raise Unavailable("; ".join(failures))
