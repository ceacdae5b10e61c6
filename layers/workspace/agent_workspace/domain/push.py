"""WebSocket push (issue 36): what a client may hear, the ticket that opens a socket, and the frames sent on it.

A browser cannot set an Authorization header on a WebSocket, so a client first mints a ticket over the REST API
with its token; the ticket rides in the socket's URL once. It is random, lives a minute, is stored only as its
hash and is spent by the `$connect` that uses it. What a connection hears is fixed by the ticket: a topic and the
scope of it the minting token may read. A push is a hint, never the record: a client reads what changed over REST
from its own cursor, so a push lost on the way costs latency, not data.
"""

import hashlib
import json
import secrets
from typing import Any

TICKET_PREFIX = "aw_ticket_"
TICKET_SECONDS = 60
TICKET_MAX = 64  # the longest ticket text looked up: a made-up megabyte is refused before it is hashed
TICKETS_PER_MINUTE = 10  # per token: a client reconnects every 2 hours, or after a drop with backoff

# API Gateway ends a WebSocket connection after 2 hours whatever happens on it (and after 10 idle minutes): a
# connection's items outlive that by a margin, so TTL removes what a lost `$disconnect` left behind.
CONNECTION_SECONDS = 2 * 3600 + 600
# The clients' side of those limits (channel bridge, extension, console): a ping every 5 minutes keeps a socket inside
# the idle timeout with room for a late timer, and a socket is replaced after 110 minutes, before it is cut at 120.
PING_SECONDS = 5 * 60
RECONNECT_SECONDS = 110 * 60
LISTENERS_PER_PUSH = 100  # connections one push is posted to; a scope with more is a client reconnecting in a loop

# API Gateway takes messages of up to 128 KB in frames of 32 KB; a push is one frame, so a client never reassembles.
FRAME_BYTES_MAX = 32 * 1024

CHANNEL, BRIDGE, CONSOLE = "channel", "bridge", "console"
# What each topic carries and who may hear it (checked when the ticket is minted):
TOPICS = {
    CHANNEL: "an agent token's workspace: its channel events (what GET /api/channel/events serves)",
    BRIDGE: "a human token's account: its site-tool calls to run or decide (what the browser bridge polls)",
    CONSOLE: "a human token and a workspace of its account: what changed in the console's inbox or on its board",
}
# What a console message says changed (`{"type": "changed", "what": …, "taskId"?: …}`): the inbox ("needs"; with a
# `taskId`, that task too) or a task the board shows ("task"). Without a `taskId` (several tasks, or none named),
# the console reads everything it shows again.
NEEDS, TASK = "needs", "task"

PING, PONG = {"type": "ping"}, {"type": "pong"}


def new_ticket() -> str:
    return f"{TICKET_PREFIX}{secrets.token_urlsafe(32)}"


def hash_ticket(ticket: str) -> str:
    """As tokens are kept (`domain.tokens.hash_token`): a plain SHA-256, as the ticket is random, not chosen."""
    return hashlib.sha256(ticket.encode("utf-8")).hexdigest()


def is_ticket(text: Any) -> bool:
    return isinstance(text, str) and text.startswith(TICKET_PREFIX) and len(text) <= TICKET_MAX


def listener_scope(topic: str, scope: str) -> str:
    """The one string naming what a connection hears: `channel#<workspaceId>`, `bridge#<accountId>`…"""
    return f"{topic}#{scope}"


def frame(topic: str, scope: str, message: dict[str, Any]) -> bytes:
    """The bytes posted to a connection: the message as JSON, or when that would not fit in one frame, a `fetch`
    telling the client to read `topic` over REST (from its cursor) instead."""
    data = _encode(message)
    if len(data) <= FRAME_BYTES_MAX:
        return data
    return _encode(fetch(topic, scope, message))


def fetch(topic: str, scope: str, message: dict[str, Any]) -> dict[str, Any]:
    """What replaces a message too large for a frame: its topic and, where the message had one, its cursor."""
    shown = {"type": "fetch", "topic": topic, "scope": scope}
    for name in ("cursor", "taskId", "id"):
        value = message.get(name)
        if isinstance(value, str) and len(value) <= 64:
            shown[name] = value
    return shown


def fits(topic: str, scope: str, message: dict[str, Any]) -> dict[str, Any]:
    """The message, or its `fetch` when it would not fit in a frame: what goes on the queue is never larger."""
    return message if len(_encode(message)) <= FRAME_BYTES_MAX else fetch(topic, scope, message)


def answer(body: Any) -> dict[str, Any]:
    """A client's frame on the `$default` route: a ping is answered with a pong (the clients' heartbeat, which
    keeps the socket inside API Gateway's 10-minute idle timeout); anything else with a small error frame."""
    try:
        parsed = json.loads(body) if isinstance(body, str | bytes) and len(body) <= 1024 else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("type") == "ping":
        return PONG
    return {"type": "error", "error": 'this socket only hears pushes; send {"type": "ping"} to keep it open'}


def _encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
