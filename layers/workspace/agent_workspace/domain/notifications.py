"""Notifications to the human: what triggers one, the settings that route it, quiet hours, and answer links.

An agent that waits for the human (a question, a blocker, an approval) or hands them work should reach them
where they are. Everything here is pure: the store keeps the settings, the events path sends.
"""

import base64
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any
from urllib.parse import SplitResult, urlsplit
from zoneinfo import ZoneInfo

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.zones import zone

# What the human is told about, as the settings name them.
TRIGGERS = ("question", "blocker", "siteCall", "toolApproval", "humanTask", "review", "failedRun")

EMAIL_MAX = 254  # RFC 5321's path limit
# Deliberately simple and linear: one @, no spaces or controls, a dotted domain. SES has the final word.
_EMAIL = re.compile(r"[^@\s\x00-\x1f\x7f]{1,64}@[A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63})+")
SLACK_HOST = "hooks.slack.com"
SLACK_URL_MAX = 300
# A URL the server posts to is read by two parsers: urlsplit here, urllib.request (which unquotes the host) when
# it is sent. Only text both read the same way passes: printable ASCII without backslashes, and an authority that
# is a plain lowercase host name with an optional port (no user info, no %-escapes, no brackets).
_PLAIN_URL = re.compile(r"[\x21-\x5b\x5d-\x7e]+")
_PLAIN_AUTHORITY = re.compile(r"[a-z0-9-]+(\.[a-z0-9-]+)*(:[0-9]{1,5})?")
_CLOCK = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")

LINK_MAX = 1024  # characters of a signed link's token; anything longer is refused unread
LINK_CHOICES_MAX = 8  # enum values that get a link each; more, and the notification links to the console


@dataclass(frozen=True)
class QuietHours:
    """A daily window, in the human's time zone, when notifications are held and sent together after it."""

    start: time
    end: time
    time_zone: str

    def held_until(self, now: datetime) -> datetime | None:
        """The UTC moment the window ends if `now` falls in it, else None. A window may cross midnight."""
        local = now.astimezone(ZoneInfo(self.time_zone))
        today_start = local.replace(hour=self.start.hour, minute=self.start.minute, second=0, microsecond=0)
        today_end = local.replace(hour=self.end.hour, minute=self.end.minute, second=0, microsecond=0)
        if self.start == self.end:
            return None  # an empty window, not a whole day
        if self.start < self.end:
            inside = today_start <= local < today_end
            ends = today_end
        else:
            inside = local >= today_start or local < today_end
            ends = today_end if local < today_end else today_end + timedelta(days=1)
        if not inside:
            return None
        # Rebuilt in the zone from the wall time, so a DST change inside the window lands on the right instant.
        wall = datetime.combine(ends.date(), self.end, tzinfo=ZoneInfo(self.time_zone))
        return wall.astimezone(UTC)

    def public(self) -> dict[str, str]:
        return {"start": self.start.strftime("%H:%M"), "end": self.end.strftime("%H:%M"), "timeZone": self.time_zone}


def check_email(value: str, field_name: str = "email") -> str:
    if len(value) > EMAIL_MAX or not _EMAIL.fullmatch(value):
        raise PayloadError(f"{field_name} must be an e-mail address such as 'me@example.com'", field=field_name)
    return value


def plain_url_parts(value: str, field_name: str) -> SplitResult:
    """The parts of a URL the server will post to, if every parser reads its host the same way; else refused
    (never normalised), naming the field. The caller then checks the scheme, host and port it allows."""
    if not _PLAIN_URL.fullmatch(value):
        raise PayloadError(
            f"{field_name} must be printable ASCII without spaces or backslashes; percent-encode the rest",
            field=field_name,
        )
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - a port out of range raises here
    except ValueError:
        raise PayloadError(f"{field_name} is not a URL", field=field_name) from None
    if not _PLAIN_AUTHORITY.fullmatch(parts.netloc):
        raise PayloadError(
            f"{field_name} must name its host plainly: a lowercase host name and an optional port, without user "
            "info or %-escapes",
            field=field_name,
        )
    return parts


def check_slack_url(value: str, *, allow_loopback: bool, field_name: str = "slackWebhookUrl") -> str:
    """Only Slack's own incoming-webhook host on a deployed stack: the server posts to this URL, so it must
    never be a way to make it reach anything else. The local stack may post to a loopback receiver."""
    if len(value) > SLACK_URL_MAX:
        raise PayloadError(f"{field_name} is longer than {SLACK_URL_MAX} characters", field=field_name)
    parts = plain_url_parts(value, field_name)
    port = parts.port
    if parts.fragment:
        raise PayloadError(f"{field_name} must not carry a fragment", field=field_name)
    slack = parts.scheme == "https" and parts.hostname == SLACK_HOST and port in (None, 443)
    loopback = allow_loopback and parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost")
    if not (slack and parts.path.startswith("/services/")) and not loopback:
        where = "https://hooks.slack.com/services/…" + (" (or a loopback URL locally)" if allow_loopback else "")
        raise PayloadError(f"{field_name} must be a Slack incoming-webhook URL: {where}", field=field_name)
    return value


def check_triggers(values: list[str], field_name: str = "triggers") -> tuple[str, ...]:
    unknown = [v for v in values if v not in TRIGGERS]
    if unknown:
        raise PayloadError(f"{field_name} has {unknown[0]!r}; choose from {', '.join(TRIGGERS)}", field=field_name)
    return tuple(t for t in TRIGGERS if t in values)


def parse_quiet_hours(raw: dict[str, Any] | None, field_name: str = "quietHours") -> QuietHours | None:
    if raw is None:
        return None
    times = []
    for part in ("start", "end"):
        value = raw.get(part)
        match = _CLOCK.fullmatch(value) if isinstance(value, str) else None
        if match is None:
            raise PayloadError(f"{field_name}.{part} must be a time such as '22:00'", field=f"{field_name}.{part}")
        times.append(time(int(match.group(1)), int(match.group(2))))
    name = raw.get("timeZone")
    if not isinstance(name, str) or zone(name) is None:
        raise PayloadError(
            f"{field_name}.timeZone must be an IANA time zone such as 'Europe/Istanbul'", field=f"{field_name}.timeZone"
        )
    return QuietHours(times[0], times[1], name)


# -- answer links ----------------------------------------------------------------------------------


def sign_link(key: bytes, claims: dict[str, Any]) -> str:
    """A token for a link that answers one thing one way: its claims (what, which, the choice, until when) and
    an HMAC-SHA256 over them with the stack's link key. It proves the server made it; use is enforced apart."""
    body = b64url(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    return f"{body}.{b64url(_mac(key, body))}"


def read_link(key: bytes, token: str, now: datetime) -> dict[str, Any]:
    """The claims of a token this server signed, still valid at `now`; PayloadError otherwise, saying why."""
    if len(token) > LINK_MAX or token.count(".") != 1:
        raise PayloadError("this link is not one the workspace made", field="token")
    body, mac = token.split(".")
    try:
        given = from_b64url(mac)
        claims = json.loads(from_b64url(body))
    except ValueError:
        raise PayloadError("this link is not one the workspace made", field="token") from None
    if not hmac.compare_digest(given, _mac(key, body)) or not isinstance(claims, dict):
        raise PayloadError("this link is not one the workspace made", field="token")
    expires = claims.get("exp")
    if not isinstance(expires, int) or now.timestamp() >= expires:
        raise PayloadError("this link has expired; answer in the console", field="token")
    return claims


# -- confirming the e-mail address ----------------------------------------------------------------

# Nothing but one confirmation mail goes to an address until its link is used: the account could otherwise make
# the stack mail anyone. The link is signed like an answer link, with its own kind, and names the address and
# the nonce stored with it, so changing the address (a new nonce) spends every earlier link.
CONFIRM_KIND = "confirmEmail"
ANSWER_KINDS = ("question", "siteCall", "toolApproval")
CONFIRMATION_SUBJECT = "Confirm your address for Agent Workspace notifications"
CONFIRM_LINK_LIFETIME = timedelta(days=2)
CONFIRM_EVERY = timedelta(minutes=1)  # at most one confirmation mail a minute per account


def confirmation_claims(account_id: str, address: str, nonce: str, now: datetime) -> dict[str, Any]:
    return {
        "k": CONFIRM_KIND,
        "acct": account_id,
        "e": address,
        "n": nonce,
        "exp": int((now + CONFIRM_LINK_LIFETIME).timestamp()),
    }


def confirmation_text(address: str, link: str) -> str:
    return "\n".join(
        [
            f"Agent Workspace was asked to send notifications to {address}.",
            "",
            f"To receive them, open this link and confirm (valid {CONFIRM_LINK_LIFETIME.days} days):",
            f"  {link}",
            "",
            "If you did not ask for this, ignore this mail: nothing more will be sent to this address.",
        ]
    )


def claims_of_kind(claims: dict[str, Any], kinds: tuple[str, ...]) -> dict[str, Any]:
    """A link's claims if it is of one of `kinds`: a confirmation link answers nothing, an answer link confirms
    nothing."""
    if claims.get("k") not in kinds:
        raise PayloadError("this link is not one the workspace made", field="token")
    return claims


# -- keys and secrets at rest ----------------------------------------------------------------------


@dataclass(frozen=True)
class Keys:
    """What the stack's one secret derives: a link key and a data key, each for one purpose only."""

    link: bytes
    data: bytes
    vapid: bytes  # the seed of the stack's VAPID key pair (Web Push)

    @classmethod
    def derive(cls, secret: str) -> "Keys":
        root = secret.encode()
        return cls(
            link=hmac.new(root, b"agent-workspace/answer-links", hashlib.sha256).digest(),
            data=hmac.new(root, b"agent-workspace/sealed-settings", hashlib.sha256).digest(),
            vapid=hmac.new(root, b"agent-workspace/vapid", hashlib.sha256).digest(),
        )


def seal(key: bytes, text: str, purpose: str) -> str:
    """`text` encrypted (AES-256-GCM) and bound to `purpose`: a sealed value moved to another field does not open."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # only where a secret is written or read

    nonce = secrets.token_bytes(12)
    return b64url(nonce + AESGCM(key).encrypt(nonce, text.encode(), purpose.encode()))


def unseal(key: bytes, sealed: str, purpose: str) -> str:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    data = from_b64url(sealed)
    return AESGCM(key).decrypt(data[:12], data[12:], purpose.encode()).decode()


def _mac(key: bytes, body: str) -> bytes:
    return hmac.new(key, body.encode(), hashlib.sha256).digest()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def from_b64url(text: str) -> bytes:
    if not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# -- what the human reads ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """One answer a link can give: a label, the elicitation action and content it answers with."""

    label: str
    action: str
    content: dict[str, Any] | None


@dataclass(frozen=True)
class Note:
    subject: str
    text: str  # plain text for e-mail, every link spelled out
    slack: str  # Slack's mrkdwn, links as <url|label>
    push: str = ""  # a browser notification's short body
    url: str = ""  # where clicking it goes: the task in the console


def simple_choices(requested_schema: dict[str, Any] | None) -> list[Choice]:
    """The answers a question can take from a link: one yes/no or enum field (and Decline); else none."""
    if not requested_schema:
        return []
    properties = requested_schema.get("properties") or {}
    if len(properties) != 1:
        return []
    [(name, field_schema)] = properties.items()
    if not isinstance(field_schema, dict):
        return []
    if field_schema.get("type") == "boolean":
        values: list[Any] = [True, False]
        labels = ["Yes", "No"]
    elif isinstance(field_schema.get("enum"), list) and 0 < len(field_schema["enum"]) <= LINK_CHOICES_MAX:
        values = [v for v in field_schema["enum"] if isinstance(v, str)]
        if len(values) != len(field_schema["enum"]):
            return []
        labels = values
    else:
        return []
    choices = [Choice(label, "accept", {name: value}) for label, value in zip(labels, values, strict=True)]
    return [*choices, Choice("Decline", "decline", None)]


def note(
    workspace_title: str, headline: str, task_title: str, detail: str, console_url: str, links: list[tuple[str, str]]
) -> Note:
    """What the human reads: what happened where, the agent's words as they are, the links to act on it."""
    subject = f"[{_line(workspace_title, 60)}] {headline}: {_line(detail or task_title, 80)}"
    lines = [f"{headline}, in {workspace_title}, task “{task_title}”:", "", detail, ""]
    if links:
        lines += ["Answer from here (each link answers once):", *(f"  {label}: {url}" for label, url in links), ""]
    lines += [f"Open it in the console: {console_url}"]
    slack = "\n".join(
        [
            f"*{_mrkdwn(headline)}*, in {_mrkdwn(workspace_title)}, task “{_mrkdwn(task_title)}”:",
            f">{_mrkdwn(detail)}".replace("\n", "\n>"),
            " · ".join([*(f"<{url}|{_mrkdwn(label)}>" for label, url in links), f"<{console_url}|Open the task>"]),
        ]
    )
    push = _line(detail or task_title, 180)
    return Note(subject=subject, text="\n".join(lines), slack=slack, push=push, url=console_url)


BLOCKER_QUESTIONS_SHOWN = 10  # the board takes at most 10; a notification never shows more
BLOCKER_QUESTION_SHOWN = 500  # characters of each question a notification shows; the console shows it whole


def blocker_detail(questions: tuple[str, ...], fallback: str) -> str:
    """What a blocker's notification says: the agent's questions, numbered, each on one line of bounded length;
    `fallback` (the task's description or title) for a blocker set without questions (AgentRQ's updateStatus)."""
    if not questions:
        return fallback
    shown = questions[:BLOCKER_QUESTIONS_SHOWN]
    return "\n".join(f"{n}. {_line(q, BLOCKER_QUESTION_SHOWN)}" for n, q in enumerate(shown, 1))


def digest_note(items: list[tuple[str, str]], console_url: str) -> Note:
    """Many at once: one message listing each (its subject and where to open it), instead of a flood."""
    subject = f"{len(items)} things wait for you in Agent Workspace"
    text = "\n".join([f"{subject}:", "", *(f"- {title}\n  {url}" for title, url in items), "", console_url])
    slack = "\n".join([f"*{subject}*", *(f"• <{url}|{_mrkdwn(title)}>" for title, url in items)])
    return Note(subject=subject, text=text, slack=slack, push=f"{len(items)} notifications", url=console_url)


def _line(text: str, limit: int) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _mrkdwn(text: str) -> str:
    """Slack's three control characters escaped, so an agent's text cannot forge a link or a mention."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
