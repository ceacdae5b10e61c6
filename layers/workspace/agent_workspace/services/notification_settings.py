"""The human's notification settings (issue 21): where and when they hear that an agent waits for them (the
account's settings, a workspace's override), and the link that confirms their e-mail address."""

import secrets
from typing import Any

from agent_workspace.domain.clock import iso, parse_iso
from agent_workspace.domain.errors import NotFound, RateLimited, Unavailable
from agent_workspace.domain.notifications import (
    CONFIRM_EVERY,
    CONFIRM_KIND,
    TRIGGERS,
    check_email,
    check_slack_url,
    check_triggers,
    claims_of_kind,
    parse_quiet_hours,
    read_link,
    seal,
)
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.services.notification_keys import SLACK_PURPOSE, base_url, enabled, keys


def settings_of(rt: Runtime, account_id: str) -> dict[str, Any]:
    return _public(rt.notifications.settings(account_id) or {})


def update(rt: Runtime, account_id: str, changes: dict[str, Any]) -> dict[str, Any]:
    """Change the fields given (None clears one); a change racing another is refused, not merged.

    A new address (or the unconfirmed one again) is stored unconfirmed and sent one confirmation mail; nothing
    else goes to it until that mail's link is used. At most one such mail a minute (429 before)."""
    if not enabled(rt):
        raise Unavailable("notifications are not set up on this stack: it has no notification secret")
    stored = rt.notifications.settings(account_id) or {}
    values = {k: v for k, v in stored.items() if k not in ("PK", "SK", "revision")}
    confirmation: str | None = None  # the nonce of the confirmation mail to send
    if "email" in changes:
        address = check_email(changes["email"]) if changes["email"] is not None else None
        if not (address is not None and address == stored.get("email") and stored.get("emailConfirmed")):
            values |= {"email": address, "emailConfirmed": None, "emailNonce": None}  # a new address starts over
            if address is not None:
                _hold_confirmations(rt, stored)
                _confirmable(rt)
                confirmation = nonce = secrets.token_urlsafe(16)
                values |= {"emailConfirmed": False, "emailNonce": nonce, "emailConfirmSentAt": iso(rt.clock())}
    if "slackWebhookUrl" in changes:
        url = changes["slackWebhookUrl"]
        if url is None:
            values["slackUrlSealed"] = None
        else:
            check_slack_url(url, allow_loopback=rt.settings.aws_endpoint_url is not None)
            values["slackUrlSealed"] = seal(keys(rt).data, url, SLACK_PURPOSE)
    if "triggers" in changes:
        wanted = changes["triggers"]  # null: back to every trigger
        values["triggers"] = list(check_triggers(wanted)) if wanted is not None else None
    if "quietHours" in changes:
        quiet = parse_quiet_hours(changes["quietHours"])
        values["quietHours"] = quiet.public() if quiet else None
    values["updatedAt"] = iso(rt.clock())
    rt.notifications.save_settings(account_id, values, int(stored.get("revision", 0)))
    if confirmation is not None:
        _enqueue_confirmation(rt, account_id, confirmation)
    return _public({**values, "revision": int(stored.get("revision", 0)) + 1})


def _hold_confirmations(rt: Runtime, stored: dict[str, Any]) -> None:
    """One confirmation mail a minute per account: the address is anyone's, so the stack must not mail it often."""
    last = stored.get("emailConfirmSentAt")
    if last is None:
        return
    wait = parse_iso(last) + CONFIRM_EVERY - rt.clock()
    if wait.total_seconds() > 0:
        raise RateLimited(
            "a confirmation mail went out less than a minute ago; set the address again after Retry-After",
            retry_after=max(1, int(wait.total_seconds()) + 1),
        )


def _confirmable(rt: Runtime) -> None:
    """Checked before anything is stored: a stack that cannot mail or make links changes nothing."""
    if not rt.settings.notification_sender:
        raise Unavailable("e-mail is not set up on this stack: no sender identity (NotificationSender)")
    base_url(rt)


def _enqueue_confirmation(rt: Runtime, account_id: str, nonce: str) -> None:
    """The mail leaves from the events queue like every notification (the events function holds the SES grant);
    unlike a trigger's, a failure to enqueue is the caller's 503: they asked for this mail."""
    message = {"type": "notify", "id": f"{CONFIRM_KIND}#{nonce}", "kind": CONFIRM_KIND, "accountId": account_id,
               "workspaceId": None, "taskId": None, "ref": nonce}  # fmt: skip
    rt.queue.send(message, 0)


def confirm_email(rt: Runtime, token: str, *, use: bool) -> str:
    """The address a confirmation link confirms; with `use`, confirm it (once: Conflict after, or once the
    address changed). PayloadError for a link that is no confirmation link, or expired."""
    if not enabled(rt):
        raise NotFound("confirmation links are not set up on this stack")
    claims = claims_of_kind(read_link(keys(rt).link, token, rt.clock()), (CONFIRM_KIND,))
    if use:
        rt.notifications.confirm_email(claims["acct"], claims["e"], claims["n"])
        count("NotificationEmailConfirmed")
    return str(claims["e"])


def set_workspace(
    rt: Runtime, account_id: str, workspace_id: str, muted: bool, triggers: list[str] | None
) -> dict[str, Any]:
    values = {"muted": muted, "triggers": list(check_triggers(triggers)) if triggers is not None else None}
    rt.notifications.save_workspace(account_id, workspace_id, {**values, "updatedAt": iso(rt.clock())})
    return values


def workspace_of(rt: Runtime, account_id: str, workspace_id: str) -> dict[str, Any]:
    stored = rt.notifications.workspace(account_id, workspace_id) or {}
    return {"muted": bool(stored.get("muted", False)), "triggers": stored.get("triggers")}


def _public(stored: dict[str, Any]) -> dict[str, Any]:
    return {
        "email": stored.get("email"),
        "emailConfirmed": bool(stored.get("emailConfirmed")),
        "slack": stored.get("slackUrlSealed") is not None,  # the URL is a secret: never shown again
        "triggers": stored.get("triggers") or list(TRIGGERS),
        "quietHours": stored.get("quietHours"),
        "revision": int(stored.get("revision", 0)),
        "updatedAt": stored.get("updatedAt"),
    }
