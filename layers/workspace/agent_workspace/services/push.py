"""WebSocket push (issue 36): tickets, the sockets' lifecycle, and one sender for everything a client waits on.

What today wakes a long-poll (a channel event, a site call to run or decided, a change in the console's inbox) is
published once, as one message on the events queue, by the request that made it: the request never waits on a
socket, and a publish that fails is logged, not raised (what happened is stored; the push is only its hint). The
events function (`workers.fan_out`) then posts it to every connection that may hear it. A client catches up over
REST from its own cursor after connecting, so a push lost on the way costs a little latency, never data.

A leaf: the services that publish import this module, and it imports none of them.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from agent_workspace.domain import oauth
from agent_workspace.domain import push as rules
from agent_workspace.domain.channel import ChannelEvent
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import (
    Forbidden,
    NotFound,
    PayloadError,
    RateLimited,
    Unauthorized,
    Unavailable,
    WorkspaceError,
)
from agent_workspace.domain.ids import is_id
from agent_workspace.domain.models import Principal
from agent_workspace.domain.site_tools import SiteCall
from agent_workspace.domain.text import echo
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.observability import count, logger
from agent_workspace.runtime import Runtime

NOT_CONFIGURED_RETRY_SECONDS = 3600  # a stack without a WebSocket API will not have one in a moment: long-poll
CONNECTION_ID_MAX = 128  # API Gateway's ids are 16 characters; a bound before one becomes a key


# -- tickets (the REST API) ------------------------------------------------------------------------------------


def mint_ticket(
    rt: Runtime, principal: Principal, token_hash: str, topic: str, workspace_id: str | None
) -> dict[str, Any]:
    """A single-use ticket to open one socket on `topic`, bound to the minting token and to what it may hear;
    at most `TICKETS_PER_MINUTE` a minute per token (429 with Retry-After past it)."""
    scope = _scope(rt, principal, topic, workspace_id)
    push_url = rt.settings.push_url
    if not push_url:
        refused = Unavailable("push is not configured on this stack: long-poll instead (/api/channel/events, "
                              "/api/bridge/calls, the console's refresh)")  # fmt: skip
        refused.retry_after = NOT_CONFIGURED_RETRY_SECONDS
        raise refused
    now = rt.clock()
    expires = now + timedelta(seconds=rules.TICKET_SECONDS)
    ticket = rules.new_ticket()
    values = {
        "tokenId": principal.token_id,
        "tokenHash": token_hash,
        "accountId": principal.account_id,
        "kind": principal.kind.value,
        "topic": topic,
        "scope": scope,
        "createdAt": iso(now),
        "expiresAt": int(expires.timestamp()),
    }
    window = int(now.timestamp() // 60)
    if not rt.push.mint(rules.hash_ticket(ticket), values, principal.token_id, window, rules.TICKETS_PER_MINUTE):
        raise RateLimited(
            f"this token minted {rules.TICKETS_PER_MINUTE} push tickets this minute, its limit; reconnect after "
            "Retry-After (with backoff), or long-poll meanwhile",
            retry_after=max(1, int((window + 1) * 60 - now.timestamp()) + 1),
        )
    count("PushTicketMinted")
    if topic == rules.BRIDGE:
        # The browser is there, (re)connecting: online across the gap until its socket opens, as a poll would be.
        rt.site_tools.seen(principal.account_id, iso(now))
    return {
        "ticket": ticket,
        "url": f"{push_url}?ticket={ticket}",
        "expiresAt": iso(expires),
        "pingSeconds": rules.PING_SECONDS,
        "reconnectSeconds": rules.RECONNECT_SECONDS,
    }


def _scope(rt: Runtime, principal: Principal, topic: str, workspace_id: str | None) -> str:
    """What a ticket on `topic` lets its socket hear, checked as the long-poll it replaces checks its caller."""
    if topic not in rules.TOPICS:
        raise PayloadError(f"topic must be one of {', '.join(rules.TOPICS)}", field="topic")
    if topic == rules.CHANNEL:
        if principal.kind is not TokenKind.AGENT:
            raise Forbidden("the channel topic needs an agent token: a socket hears that token's workspace's channel")
        refusal = oauth.scope_refusal(principal.scopes, oauth.READ)  # as GET /api/channel/events
        if refusal:
            raise Forbidden(refusal)
        if workspace_id is not None and workspace_id != principal.workspace_id:
            raise Forbidden("an agent token hears its own workspace's channel only")
        assert principal.workspace_id is not None
        return principal.workspace_id
    if principal.kind is not TokenKind.HUMAN:
        raise Forbidden(f"the {topic} topic needs a human token (REST API)")
    if topic == rules.BRIDGE:
        if workspace_id is not None:
            raise PayloadError("the bridge topic is the account's: send no workspaceId", field="workspaceId")
        return principal.account_id
    if workspace_id is None:
        raise PayloadError("the console topic is one workspace's: send its workspaceId", field="workspaceId")
    if not is_id(workspace_id) or rt.accounts.get_workspace(principal.account_id, workspace_id) is None:
        raise NotFound(f"no workspace {echo(workspace_id)}")  # another account's is indistinguishable from none
    return workspace_id


# -- sockets (the push function) -------------------------------------------------------------------------------


def connect(rt: Runtime, connection_id: str, ticket: Any) -> None:
    """`$connect`: spend the ticket (a second use finds nothing), check the token that minted it is still live,
    and record the connection with its listener item; `Unauthorized` refuses the socket."""
    if not connection_id or len(connection_id) > CONNECTION_ID_MAX:
        raise PayloadError("no connection id", field="connectionId")
    if not rules.is_ticket(ticket):
        raise Unauthorized("connect with ?ticket=<a ticket from POST /api/push/tickets>")
    now = rt.clock()
    taken = rt.push.take_ticket(rules.hash_ticket(ticket), int(now.timestamp()))
    if taken is None:
        count("PushTicketRefused")
        raise Unauthorized("unknown, used or expired ticket: mint another")
    holder = rt.accounts.resolve_token(taken["tokenHash"])
    token_expiry = (holder.expires_at or 0) if holder else 0
    if holder is None or holder.token_id != taken["tokenId"] or 0 < token_expiry <= now.timestamp():
        count("PushTicketRefused")
        raise Unauthorized("the token that minted this ticket was revoked or has expired")
    # No longer than API Gateway keeps the socket open, nor than a signed-in app's access token lives.
    expires = int((now + timedelta(seconds=rules.CONNECTION_SECONDS)).timestamp())
    if token_expiry:
        expires = min(expires, token_expiry)
    values = {
        "tokenId": taken["tokenId"],
        "tokenHash": taken["tokenHash"],
        "accountId": taken["accountId"],
        "connectedAt": iso(now),
    }
    rt.push.connect(connection_id, taken["topic"], taken["scope"], values, expires)
    count("PushConnected")


def disconnect(rt: Runtime, connection_id: str) -> None:
    """`$disconnect`: both items of the connection go (none for a socket `$connect` refused)."""
    if connection_id and len(connection_id) <= CONNECTION_ID_MAX and rt.push.disconnect(connection_id):
        count("PushDisconnected")


def listening(rt: Runtime, topic: str, scope: str) -> bool:
    """Whether a socket hears `topic` of `scope` now: a listener item not yet expired (TTL removes an expired one
    only some time later). One Query, bounded as the sender's; always False while push is off."""
    if not rt.settings.push_url:
        return False
    now = int(rt.clock().timestamp())
    return any(_live(listener, now) for listener in rt.push.listeners(topic, scope, rules.LISTENERS_PER_PUSH))


# -- publishing (any function, in the request that made the change) --------------------------------------------


def publish(rt: Runtime, topic: str, scope: str, message: dict[str, Any], to_token: str | None = None) -> None:
    """One message for every socket hearing `topic` of `scope` (with `to_token`, only that token's sockets): one
    SQS SendMessage, best effort. Nothing is published while push is off (no WebSocket API)."""
    if not rt.settings.push_url:
        return
    body: dict[str, Any] = {"type": "push", "topic": topic, "scope": scope,
                            "message": rules.fits(topic, scope, message)}  # fmt: skip
    if to_token is not None:
        body["tokenId"] = to_token
    try:
        rt.queue.send(body)
    except Exception:  # what happened is stored; an agent's or a human's call must not fail for its hint
        logger.exception("push not enqueued", extra={"topic": topic, "scope": scope})
        count("PushNotEnqueued")
    else:
        count("PushPublished")


def channel_event(rt: Runtime, workspace_id: str, event: ChannelEvent) -> None:
    """A channel event stored for a workspace's agent, as its long-poll serves it; its id is the cursor to resume
    from. A permission verdict goes to the sockets of the token that asked alone, as on the long-poll."""
    message = {"type": "event", "cursor": event.id, "event": event.public()}
    publish(rt, rules.CHANNEL, workspace_id, message, to_token=event.to_token)


def site_call(rt: Runtime, call: SiteCall) -> None:
    """A site-tool call for the account's browser: to run now (`queued`: poll `GET /api/bridge/calls`), waiting for
    the human's decision (`pending`), or decided against (`denied`)."""
    message = {"type": "siteCall", "id": call.id, "status": call.status, "workspaceId": call.workspace_id}
    publish(rt, rules.BRIDGE, call.account_id, message)


def console_changed(rt: Runtime, workspace_id: str, task_id: str | None = None, what: str = rules.NEEDS) -> None:
    """What a workspace's console shows changed: its inbox (`what` "needs": a question asked or answered, a blocker,
    a task in triage or review, a site call or a permission question waiting or decided), or a task on its board
    (`what` "task": created, edited, moved, claimed or released, commented, archived or deleted). Inside
    `coalescing`, gathered and published once when it ends."""
    pending = _PENDING.get()
    if pending is None:
        _publish_changed(rt, workspace_id, _Changed(what, task_id))
    else:
        seen = pending.get(workspace_id)
        pending[workspace_id] = _Changed(what, task_id) if seen is None else seen.joined(what, task_id)


def task_changed(rt: Runtime, workspace_id: str, task_id: str, inbox: bool = False) -> None:
    """A task the board shows changed; `inbox` when the change moved it into or out of the inbox too (one message
    says both: "needs" with the task's id)."""
    console_changed(rt, workspace_id, task_id, rules.NEEDS if inbox else rules.TASK)


@contextmanager
def coalescing(rt: Runtime) -> Iterator[None]:
    """Within this block, the console changes of each workspace are one message, published when it ends (even by an
    error: what was written before it stands): a change to many tasks costs one SendMessage, not one per task."""
    if _PENDING.get() is not None:  # an outer block publishes
        yield
        return
    pending: dict[str, _Changed] = {}
    token = _PENDING.set(pending)
    try:
        yield
    finally:
        _PENDING.reset(token)
        for workspace_id, changed in pending.items():
            _publish_changed(rt, workspace_id, changed)


@dataclass(frozen=True)
class _Changed:
    what: str
    task_id: str | None

    def joined(self, what: str, task_id: str | None) -> "_Changed":
        """Both changes as one: the inbox if either touched it; the task's id only if both name the same task."""
        joined_what = rules.NEEDS if rules.NEEDS in (self.what, what) else rules.TASK
        return _Changed(joined_what, self.task_id if self.task_id == task_id else None)


# The changes of the `coalescing` block running now (tasks it starts, threads included, share the same dict).
_PENDING: ContextVar[dict[str, _Changed] | None] = ContextVar("console_changes", default=None)


def _publish_changed(rt: Runtime, workspace_id: str, changed: _Changed) -> None:
    message: dict[str, Any] = {"type": "changed", "what": changed.what}
    if changed.task_id is not None:
        message["taskId"] = changed.task_id
    publish(rt, rules.CONSOLE, workspace_id, message)


# -- sending (the events function) -----------------------------------------------------------------------------


def deliver(rt: Runtime, body: Any) -> int:
    """Post one published message to each socket that may hear it; returns how many it reached.

    A gone socket (410) and one whose token was revoked or expired since it opened lose their items; any other
    failure is logged and counted, never retried (a late hint is worth nothing: the client catches up from its
    cursor), so nothing here raises but a malformed message, which the queue keeps for inspection."""
    topic, scope, message, only = _parse(body)
    now = int(rt.clock().timestamp())
    try:
        found = rt.push.listeners(topic, scope, rules.LISTENERS_PER_PUSH + 1)
        if len(found) > rules.LISTENERS_PER_PUSH:
            logger.warning("push capped", extra={"topic": topic, "scope": scope, "most": rules.LISTENERS_PER_PUSH})
            count("PushListenersCapped")
            found = found[: rules.LISTENERS_PER_PUSH]
        listening = [
            listener for listener in found if _live(listener, now) and (only is None or listener.get("tokenId") == only)
        ]
        if not listening:
            return 0
        live = rt.push.live_tokens({listener["tokenHash"] for listener in listening}, now)
        poster = rt.push_poster
    except WorkspaceError as error:
        logger.warning("push dropped", extra={"topic": topic, "scope": scope, "why": error.message})
        count("PushDropped")
        return 0
    data = rules.frame(topic, scope, message)
    sent = 0
    for listener in listening:
        connection_id = listener["connectionId"]
        try:
            if listener["tokenHash"] not in live:
                rt.push.forget(connection_id, topic, scope)
                count("PushTokenGone")
            elif poster.post(connection_id, data):
                sent += 1
            else:
                rt.push.forget(connection_id, topic, scope)
                count("PushConnectionGone")
        except WorkspaceError as error:
            logger.warning("push not posted", extra={"connectionId": connection_id, "why": error.message})
            count("PushPostFailed")
    count("PushDelivered")
    return sent


def _live(listener: dict[str, Any], now: int) -> bool:
    """A listener item not yet expired: TTL deletes an expired one only some time later."""
    return int(listener.get("expiresAt", 0)) > now


def _parse(body: Any) -> tuple[str, str, dict[str, Any], str | None]:
    if not (
        isinstance(body, dict)
        and body.get("topic") in rules.TOPICS
        and isinstance(body.get("scope"), str)
        and is_id(body["scope"])
        and isinstance(body.get("message"), dict)
        and (body.get("tokenId") is None or isinstance(body["tokenId"], str))
    ):
        raise PayloadError("a push message carries a topic, a scope id and a message object", field="body")
    return body["topic"], body["scope"], body["message"], body.get("tokenId")
