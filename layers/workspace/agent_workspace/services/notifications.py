"""Notifications (issue 21): the human's settings, and telling them what an agent waits on (decision 0010).

A trigger is enqueued on the events queue by the request that made the waiting thing, and sent by the events
function: never inside the agent's request. Each channel is claimed before it sends, so a message SQS delivers
twice sends nothing twice; a channel that fails is released and the message enqueued again with a growing
delay, and the channels that went out are not sent again.
"""

import json
import secrets
from datetime import datetime, timedelta
from typing import Any

from agent_workspace.domain.clock import iso, parse_iso
from agent_workspace.domain.errors import NotFound, PayloadError, RateLimited, Unavailable
from agent_workspace.domain.notifications import (
    ANSWER_KINDS,
    CONFIRM_EVERY,
    CONFIRM_KIND,
    CONFIRMATION_SUBJECT,
    TRIGGERS,
    Keys,
    Note,
    blocker_detail,
    check_email,
    check_slack_url,
    check_triggers,
    claims_of_kind,
    confirmation_claims,
    confirmation_text,
    digest_note,
    note,
    parse_quiet_hours,
    read_link,
    seal,
    sign_link,
    simple_choices,
    unseal,
)
from agent_workspace.observability import count, logger
from agent_workspace.runtime import Runtime
from agent_workspace.services import channel, elicitations, site_tools, web_push
from agent_workspace.store.notifications import post_to_slack

SENT_KEPT = timedelta(days=7)  # a redelivery later than this could send again; SQS keeps a message 4 days
LINK_LIFETIME = timedelta(days=7)  # and never past the question's own expiry
ANSWER_PATH = "/answer/"
CONFIRM_PATH = "/confirm-email/"
_SLACK_PURPOSE = "slack-webhook-url"


def enabled(rt: Runtime) -> bool:
    return bool(rt.settings.notification_secret_arn)


def keys(rt: Runtime) -> Keys:
    return Keys.derive(rt.notification_secret.value())


# -- the human's settings --------------------------------------------------------------------------


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
            values["slackUrlSealed"] = seal(keys(rt).data, url, _SLACK_PURPOSE)
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


def _send_confirmation(rt: Runtime, message: dict[str, Any], stored: dict[str, Any]) -> int:
    """The one mail an address gets before it is confirmed; nothing if it changed or was confirmed meanwhile."""
    nonce, address = message["ref"], stored.get("email")
    if not address or stored.get("emailConfirmed") or stored.get("emailNonce") != nonce:
        return 0
    token = sign_link(keys(rt).link, confirmation_claims(message["accountId"], address, nonce, rt.clock()))
    link = f"{base_url(rt)}{CONFIRM_PATH}{token}"
    note = Note(subject=CONFIRMATION_SUBJECT, text=confirmation_text(address, link), slack="", push="", url=link)
    return _send_all(rt, message, [("email", address)], note)


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


# -- triggers --------------------------------------------------------------------------------------


def notify(
    rt: Runtime,
    kind: str,
    account_id: str,
    workspace_id: str,
    task_id: str | None,
    ref: str,
    delay_seconds: int = 0,
) -> None:
    """Tell the human of `kind` about `ref` (a question, task, site call or permission question's id), later:
    at once, or after `delay_seconds` for what may still resolve itself (a failed run Lambda retries)."""
    message = {
        "type": "notify",
        "id": f"{kind}#{ref}",
        "kind": kind,
        "accountId": account_id,
        "workspaceId": workspace_id,
        "taskId": task_id,
        "ref": ref,
    }
    _enqueue(rt, message, delay_seconds)


def _enqueue(rt: Runtime, message: dict[str, Any], delay_seconds: int = 0) -> None:
    """Best effort: the waiting thing is stored already, and an agent's call must not fail for a notification."""
    if not enabled(rt):
        return
    try:
        rt.queue.send(message, delay_seconds)
    except Exception:
        logger.exception("notification not enqueued", extra={"trigger": message["id"]})
        count("NotificationNotEnqueued")


# -- sending (the events function) -----------------------------------------------------------------


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
        post_to_slack(unseal(keys(rt).data, target, _SLACK_PURPOSE), note.slack)
    else:
        web_push.send(rt, target, note)


def _note(rt: Runtime, message: dict[str, Any]) -> Note | None:
    """What to tell the human, read now; None when it no longer waits for them (answered, decided, gone)."""
    account_id, workspace_id, kind, ref = message["accountId"], message["workspaceId"], message["kind"], message["ref"]
    task = rt.tasks.get(workspace_id, message["taskId"]) if message.get("taskId") else None
    found = _subject(rt, kind, account_id, workspace_id, ref, task)
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


_Subject = tuple[str, str, list[tuple[str, dict[str, Any]]], datetime]


def _subject(rt: Runtime, kind: str, account_id: str, workspace_id: str, ref: str, task: Any) -> _Subject | None:
    """(headline, the agent's words, the answers a link may give, until when) for one trigger, if it still waits."""
    far = rt.clock() + LINK_LIFETIME
    if kind == "question":
        question = rt.elicitations.get(workspace_id, ref)
        if question is None or question.status != "pending":
            return None
        choices = simple_choices(question.requested_schema) if question.mode == "form" else []
        answers = [(c.label, {"a": c.action, "c": c.content}) for c in choices]
        return "An agent asks you", question.message, answers, parse_iso(question.expires_at)
    if kind == "blocker":
        if task is None or task.status != "blocked":
            return None
        return "Blocked on you", blocker_detail(task.questions, task.body or task.title), [], far
    if kind == "humanTask":
        if task is None or task.status not in ("notstarted", "ongoing"):
            return None
        return "A task for you", task.body or task.title, [], far
    if kind == "failedRun" and ref.startswith("event#"):
        publication = rt.events.get_publication(account_id, ref.removeprefix("event#"))
        if publication is None or publication.state == "delivered":
            return None  # a retry delivered it meanwhile, or it expired
        what = f"“{publication.name}”" if publication.name else "An event"
        detail = f"{what} published at {publication.published_at} has not reached its subscribers yet."
        return "An event could not be delivered", detail, [], far
    if kind == "failedRun":
        fire_at = ref.partition("#")[2]
        if task is None or not task.is_template or task.next_fire_at != fire_at:
            return None  # a retry created the run meanwhile, or the template is gone
        return "A cron run failed", f"The run due at {fire_at} failed after retries.", [], far
    if kind == "review":
        if task is None or task.board_column != "in_review":
            return None
        summary = (task.delivery or {}).get("summary") or task.title
        return "A delivery waits for your review", summary, [], far
    if kind == "siteCall":
        call = rt.site_tools.get_call(account_id, ref)
        if call is None or call.status != "pending":
            return None
        detail = f"Arguments: {json.dumps(call.arguments, ensure_ascii=False)[:2000]}"
        answers = [("Allow once", {"d": "allow_once"}), ("Deny", {"d": "deny"})]
        until = parse_iso(call.created_at) + timedelta(seconds=rt.settings.site_call_approval_seconds)
        return f"An agent wants to run {call.tool} on {call.site}", detail, answers, until
    if kind == "toolApproval":
        asked = rt.channel.question(workspace_id, ref)
        if asked is None or asked.status != "pending":
            return None
        detail = "\n".join(part for part in (asked.description, asked.input_preview) if part)
        answers = [("Allow", {"d": "allow"}), ("Deny", {"d": "deny"})]
        return f"Claude Code asks to use {asked.tool_name}", detail, answers, parse_iso(asked.closes_at)
    return None


def base_url(rt: Runtime) -> str:
    if not rt.settings.public_url:
        raise Unavailable("the stack's public URL is not set (WORKSPACE_PUBLIC_URL): links could not be made")
    return rt.settings.public_url.rstrip("/")


# -- answer links ----------------------------------------------------------------------------------


def read_answer_link(rt: Runtime, token: str) -> dict[str, Any]:
    """A valid link's claims, and whether what it answers still waits; PayloadError or NotFound otherwise."""
    if not enabled(rt):
        raise NotFound("answer links are not set up on this stack")
    claims = claims_of_kind(read_link(keys(rt).link, token, rt.clock()), ANSWER_KINDS)
    found = _subject(rt, claims.get("k", ""), claims["acct"], claims["w"], claims["id"], None)
    return {"claims": claims, "waiting": found is not None, "text": found[1] if found else ""}


def use_answer_link(rt: Runtime, token: str) -> dict[str, Any]:
    """Answer with the link, once: the answer's own conditional write refuses a second use or a late one."""
    claims = read_answer_link(rt, token)["claims"]
    kind, workspace_id, ref = claims["k"], claims["w"], claims["id"]
    if kind == "question":
        elicitations.answer(rt, workspace_id, ref, claims["a"], claims["c"])
    elif kind == "siteCall":
        site_tools.decide(rt, claims["acct"], workspace_id, ref, claims["d"])
    elif kind == "toolApproval":
        channel.decide(rt, workspace_id, ref, claims["d"])
    else:
        raise PayloadError("this link is not one the workspace made", field="token")
    count("NotificationLinkUsed")
    return claims
