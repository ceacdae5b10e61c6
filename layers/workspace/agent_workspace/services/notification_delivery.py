"""Sending a notification (issue 21, decision 0010): what the events function runs for each trigger enqueued by
`services.notifications.notify`, on each channel the human chose (e-mail, Slack, Web Push).

Each channel is claimed before it sends, so a message SQS delivers twice sends nothing twice; a channel that fails
is released and the message enqueued again with a growing delay, and the channels that went out are not sent again.
"""

from datetime import timedelta
from typing import Any

from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Unavailable
from agent_workspace.domain.notifications import (
    CONFIRM_KIND,
    CONFIRMATION_SUBJECT,
    TRIGGERS,
    Note,
    confirmation_claims,
    confirmation_text,
    digest_note,
    note,
    parse_quiet_hours,
    sign_link,
    unseal,
)
from agent_workspace.observability import count, logger
from agent_workspace.runtime import Runtime
from agent_workspace.services import web_push
from agent_workspace.services.notification_keys import SLACK_PURPOSE, base_url, keys
from agent_workspace.services.notification_subjects import LINK_LIFETIME, subject
from agent_workspace.store.notifications import post_to_slack

SENT_KEPT = timedelta(days=7)  # a redelivery later than this could send again; SQS keeps a message 4 days
ANSWER_PATH = "/answer/"
CONFIRM_PATH = "/confirm-email/"


def deliver(rt: Runtime, message: dict[str, Any]) -> int:
    """Send one trigger on each channel the human chose; returns how many went out now."""
    account_id, workspace_id, kind = message["accountId"], message["workspaceId"], message["kind"]
    stored = rt.notifications.settings(account_id)
    if not stored:
        return 0
    if kind == DIGEST:
        return _send_digest(rt, message, stored)
    if kind == CONFIRM_KIND:  # the human's own request: no trigger, workspace or quiet hours apply
        return _send_confirmation(rt, message, stored)
    if kind not in (stored.get("triggers") or TRIGGERS):
        return 0
    override = rt.notifications.workspace(account_id, workspace_id) or {}
    if override.get("muted") or (override.get("triggers") is not None and kind not in override["triggers"]):
        return 0
    quiet = parse_quiet_hours(stored["quietHours"]) if stored.get("quietHours") else None
    held_until = quiet.held_until(rt.clock()) if quiet else None
    if held_until is not None:  # held: back on the queue until the window ends, 15 minutes at a time
        rt.queue.send(message, int((held_until - rt.clock()).total_seconds()) + 1)
        count("NotificationHeld")
        return 0
    note = _note(rt, message)
    if note is None:
        return 0  # answered or gone before the notification went out: nothing to ask any more
    channels = _channels(rt, account_id, stored)
    minute = rt.clock().strftime("%Y-%m-%dT%H:%M")
    seen_before, tallied = rt.notifications.tally(account_id, minute, message["id"])
    if tallied > DIGEST_AFTER:  # a flood: into the minute's digest, sent once when the minute is over
        return _into_digest(rt, message, note, channels, minute, first=not seen_before, place=tallied)
    return _send_all(rt, message, channels, note)


DIGEST = "digest"
DIGEST_AFTER = 3  # notifications a minute sent one by one; more wait for the minute's digest


def _channels(rt: Runtime, account_id: str, stored: dict[str, Any]) -> list[tuple[str, Any]]:
    pushes = rt.push_subscriptions.all(account_id)
    email = stored.get("email") if stored.get("emailConfirmed") else None  # nothing to an unconfirmed address
    wanted = [("email", email), ("slack", stored.get("slackUrlSealed")), ("webpush", pushes)]
    return [(medium, target) for medium, target in wanted if target]


def _send_all(rt: Runtime, message: dict[str, Any], channels: list[tuple[str, Any]], note: Note) -> int:
    """Each channel claimed, then sent. A channel that fails is released and the message sent again later, with a
    growing delay (30 s, 1, 2, 4, 8 minutes), when only what failed goes out; the others are never held up."""
    account_id, trigger_id = message["accountId"], message["id"]
    now = rt.clock()
    sent, failed = 0, []
    for medium, target in channels:
        expires = int((now + SENT_KEPT).timestamp())
        if not rt.notifications.claim_send(account_id, trigger_id, medium, iso(now), expires):
            continue  # a delivery before this one sent it
        try:
            _send(rt, medium, target, note)
        except Exception as error:
            rt.notifications.release_send(account_id, trigger_id, medium)
            logger.warning("notification failed", extra={"channel": medium, "trigger": trigger_id, "why": str(error)})
            failed.append(medium)
        else:
            sent += 1
            count(f"NotificationSent{medium.capitalize()}")
    if failed:
        attempt = int(message.get("attempt", 0))
        if attempt >= RETRIES:
            logger.error("notification given up", extra={"trigger": trigger_id, "channels": failed})
            count("NotificationGivenUp")
        else:
            rt.queue.send({**message, "attempt": attempt + 1}, RETRY_FIRST_SECONDS * 2**attempt)
            count("NotificationRetried")
    return sent


RETRIES = 5
RETRY_FIRST_SECONDS = 30


def _into_digest(
    rt: Runtime,
    message: dict[str, Any],
    note: Note,
    channels: list[tuple[str, Any]],
    minute: str,
    first: bool,
    place: int,
) -> int:
    """Keep the note for the minute's digest; the channels are claimed now, so a redelivery sends nothing."""
    account_id, now = message["accountId"], rt.clock()
    expires = int((now + SENT_KEPT).timestamp())
    claimed = [
        rt.notifications.claim_send(account_id, message["id"], medium, iso(now), expires) for medium, _ in channels
    ]
    if any(claimed):
        rt.notifications.add_to_digest(account_id, minute, {"id": message["id"], "subject": note.subject,
                                                             "url": note.url}, expires)  # fmt: skip
    if first and place == DIGEST_AFTER + 1:  # the minute's first overflow: the digest goes when the minute ends
        flush = {**message, "kind": DIGEST, "id": f"{DIGEST}#{minute}", "ref": minute, "taskId": None}
        rt.queue.send(flush, 65 - now.second)
    count("NotificationDigested")
    return 0


def _send_digest(rt: Runtime, message: dict[str, Any], stored: dict[str, Any]) -> int:
    account_id, minute = message["accountId"], message["ref"]
    entries: dict[str, dict[str, Any]] = {}
    for entry in rt.notifications.digest(account_id, minute):
        entries.setdefault(entry["id"], entry)  # a redelivered trigger is listed once
    if not entries:
        return 0
    base = base_url(rt)
    note = digest_note([(e["subject"], e["url"]) for e in entries.values()], f"{base}/")
    return _send_all(rt, message, _channels(rt, account_id, stored), note)


def _send(rt: Runtime, channel: str, target: Any, note: Note) -> None:
    if channel == "email":
        if not rt.settings.notification_sender:
            raise Unavailable("no sender identity is set (NotificationSender)")
        rt.mailer.send(target, note.subject, note.text)
        if rt.settings.aws_endpoint_url:  # the local stack: what it sent, readable in `make serve`'s log
            logger.info("e-mail sent (local)", extra={"to": target, "subject": note.subject, "text": note.text})
    elif channel == "slack":
        post_to_slack(unseal(keys(rt).data, target, SLACK_PURPOSE), note.slack)
    else:
        web_push.send(rt, target, note)


def _note(rt: Runtime, message: dict[str, Any]) -> Note | None:
    """What to tell the human, read now; None when it no longer waits for them (answered, decided, gone)."""
    account_id, workspace_id, kind, ref = message["accountId"], message["workspaceId"], message["kind"], message["ref"]
    task = rt.tasks.get(workspace_id, message["taskId"]) if message.get("taskId") else None
    found = subject(rt, kind, account_id, workspace_id, ref, task)
    workspace = rt.accounts.get_workspace(account_id, workspace_id)
    if found is None or workspace is None:
        return None
    headline, detail, choices, expires = found
    base = base_url(rt)
    expires = min(expires, rt.clock() + LINK_LIFETIME)
    links = []
    for label, answer in choices:
        claims = {"k": kind, "acct": account_id, "w": workspace_id, "id": ref, "l": label, **answer}
        links.append(
            (label, f"{base}{ANSWER_PATH}{sign_link(keys(rt).link, {**claims, 'exp': int(expires.timestamp())})}")
        )
    task_path = f"/tasks/{task.id}" if task else ""
    console = f"{base}/#/workspaces/{workspace_id}{task_path}"
    return note(workspace.title, headline, task.title if task else "none", detail, console, links)


def _send_confirmation(rt: Runtime, message: dict[str, Any], stored: dict[str, Any]) -> int:
    """The one mail an address gets before it is confirmed; nothing if it changed or was confirmed meanwhile."""
    nonce, address = message["ref"], stored.get("email")
    if not address or stored.get("emailConfirmed") or stored.get("emailNonce") != nonce:
        return 0
    token = sign_link(keys(rt).link, confirmation_claims(message["accountId"], address, nonce, rt.clock()))
    link = f"{base_url(rt)}{CONFIRM_PATH}{token}"
    note = Note(subject=CONFIRMATION_SUBJECT, text=confirmation_text(address, link), slack="", push="", url=link)
    return _send_all(rt, message, [("email", address)], note)
