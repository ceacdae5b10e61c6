"""Site tools: searching what the human's browser shares, asking the human, and running calls through the bridge.

A call is stored before anything waits, like a question to the human: the agent's request polls
it while the human decides (unless the tool is read-only or always allowed) and while the browser
picks it up and answers. Every move of a call is conditional on the status it was read in, so a
late answer, a second decision or a timeout never overwrite one another.
"""

import json
import time
from dataclasses import replace
from datetime import timedelta
from typing import Any

from agent_workspace.blocking import client_gone, pause, run_blocking, wait_ends_at
from agent_workspace.domain.clock import iso, parse_iso
from agent_workspace.domain.errors import Conflict, Failed, NotFound, PayloadError, Unavailable
from agent_workspace.domain.ids import check_id, is_id, new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.patterns import Deadline, PatternTimeout, compile_pattern
from agent_workspace.domain.push import BRIDGE
from agent_workspace.domain.site_tools import (
    DENIED,
    DONE,
    EXPIRED,
    FAILED,
    FINISHED,
    ONLINE_SECONDS,
    PENDING,
    PENDING_SHOWN_MAX,
    QUEUED,
    RESULT_BYTES_MAX,
    RUNNING,
    THIRD_PARTY_NOTICE,
    SiteCall,
    SiteTool,
    check_arguments,
    check_query,
    normalise_origin,
    parse_sites,
    rank,
)
from agent_workspace.domain.tasks import Message
from agent_workspace.domain.text import echo
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.services import notifications, push, waits

_FIRST_POLL = 0.2
_MAX_POLL = 1.0
_BRIDGE_POLL = 0.5


# -- what the browser shares ---------------------------------------------------------------------


def report_sites(rt: Runtime, account_id: str, raw_sites: list[dict[str, Any]]) -> dict[str, Any]:
    sites = parse_sites(raw_sites)
    rt.site_tools.replace_sites(account_id, sites, iso(rt.clock()))
    return {"sites": len(sites), "tools": sum(len(site.tools) for site in sites), "online": True}


def bridge_state(rt: Runtime, account_id: str) -> dict[str, Any]:
    """What the human's browser shares now and whether it is connected: the extension's popup, the console."""
    last = rt.site_tools.last_seen(account_id)
    sites = rt.site_tools.sites(account_id)
    return {
        "online": _online(rt, account_id, last),
        "lastSeenAt": last,
        "sites": [
            {
                "origin": site.origin,
                "title": site.title,
                "updatedAt": site.updated_at,
                "tools": [
                    {"name": tool.name, "description": tool.description, "readOnly": tool.read_only}
                    for tool in site.tools
                ],
            }
            for site in sites
        ],
    }


def disconnect(rt: Runtime, account_id: str) -> None:
    """The browser signs out: new calls are refused and waiting ones fail now, not 45 seconds later."""
    rt.site_tools.gone(account_id)


def pending_calls(rt: Runtime, account_id: str) -> list[dict[str, Any]]:
    """Every call of the account waiting for the human's decision, oldest first; one past its time is expired."""
    waiting = []
    for call in rt.site_tools.pending_for_bridge(account_id, PENDING_SHOWN_MAX):
        if _approval_overdue(rt, call):
            _end(rt, call, EXPIRED, "the human did not decide in time")
            continue
        waiting.append({**call.public(), "workspaceId": call.workspace_id})
    return waiting


def is_online(rt: Runtime, account_id: str) -> bool:
    """The browser polled or reported within `ONLINE_SECONDS`, or its bridge socket is open: a browser that hears
    its calls pushed makes no request while idle, so its open socket is its heartbeat (read only when the other
    is stale). A socket counts until its `$disconnect` (a sign-out closes it first) or its expiry."""
    return _online(rt, account_id, rt.site_tools.last_seen(account_id))


def _online(rt: Runtime, account_id: str, last_seen: str | None) -> bool:
    return _online_since(rt, last_seen) or push.listening(rt, BRIDGE, account_id)


def _online_since(rt: Runtime, last_seen: str | None) -> bool:
    return last_seen is not None and (rt.clock() - parse_iso(last_seen)).total_seconds() <= ONLINE_SECONDS


def search(
    rt: Runtime, account_id: str, q: str | None, pattern: str | None, deadline: Deadline | None = None
) -> dict[str, Any]:
    """Every shared site, with its tools that match; `q` ranks, `pattern` filters by regular expression.

    All the pattern's evaluations share one `Deadline` (half a second): past it the search is refused, not
    answered in part, since a tool left unread would look like a tool that does not match."""
    matcher = _pattern(pattern) if pattern is not None else None
    if q is not None:
        check_query(q, "q")
    online = is_online(rt, account_id)
    sites = rt.site_tools.sites(account_id)
    deadline = deadline or Deadline()
    shown = []
    for site in sites:
        tools: list[tuple[int, SiteTool]] = [(0, tool) for tool in site.tools]
        if matcher is not None:
            tools = [(score, tool) for score, tool in tools if _matches(matcher, tool, deadline)]
        if q is not None:
            tools = sorted(((rank(tool, q), tool) for _, tool in tools), key=lambda pair: -pair[0])
            tools = [(score, tool) for score, tool in tools if score > 0]
        shown.append(
            (
                max((score for score, _ in tools), default=0),
                {
                    "site": site.origin,
                    "title": site.title,
                    "online": online,
                    "tools": [{"name": tool.name, "description": tool.description} for _, tool in tools],
                },
            )
        )
    shown.sort(key=lambda pair: (-pair[0], pair[1]["site"]))
    return {"online": online, "sites": [site for _, site in shown]}


def definition(rt: Runtime, account_id: str, site: str, tool: str) -> dict[str, Any]:
    origin, found = _tool(rt, account_id, site, tool)
    return {"site": origin, **found.definition()}


# -- the agent's call ----------------------------------------------------------------------------


def start_call(rt: Runtime, actor: Actor, task_id: str, site: str, tool: str, arguments: dict[str, Any]) -> SiteCall:
    """Check everything, then store the call: ready to run, or waiting for the human's decision in the task."""
    check_id(task_id, "taskId")
    origin, found = _tool(rt, actor.account_id, site, tool)
    check_arguments(found, arguments)
    if rt.tasks.get(actor.workspace_id, task_id) is None:
        raise NotFound(f"no task {task_id} in this workspace")
    if not is_online(rt, actor.account_id):
        raise Unavailable("the human's Chrome is not connected, so site tools cannot run now; try again later")
    allowed = found.read_only or rt.site_tools.always_allowed(actor.account_id, actor.workspace_id, origin, tool)
    now = iso(rt.clock())
    call = SiteCall(
        id=new_id(),
        account_id=actor.account_id,
        workspace_id=actor.workspace_id,
        task_id=task_id,
        site=origin,
        tool=tool,
        arguments=arguments,
        status=QUEUED if allowed else PENDING,
        created_at=now,
        updated_at=now,
        queued_at=now if allowed else None,
    )
    line = None
    if not allowed:
        line = Message(
            id=new_id(),
            author="agent",
            kind="siteCall",
            text=f"Wants to run {tool} on {origin}. Allow once, Always allow, or Deny.",
            created_at=now,
            details={"siteCallId": call.id, "site": origin, "tool": tool, "arguments": arguments},
        )
    rt.site_tools.create_call(call, line)
    count("SiteCallStarted")
    push.site_call(rt, call)  # the browser runs it now, or shows it waiting for the human
    if not allowed:
        notifications.notify(rt, "siteCall", actor.account_id, actor.workspace_id, task_id, call.id)
        push.console_changed(rt, actor.workspace_id, task_id)
    return call


def find_call(rt: Runtime, actor: Actor, call_id: str, task_id: str) -> SiteCall:
    check_id(call_id, "callId")
    call = rt.site_tools.get_call(actor.account_id, call_id)
    if call is None or call.workspace_id != actor.workspace_id or call.task_id != task_id:
        raise NotFound(f"no site-tool call {call_id} in task {task_id}")
    return call


async def wait_for_result(rt: Runtime, call: SiteCall, deadline: float | None) -> dict[str, Any]:
    """Poll the call until it ends; after `agent_wait_seconds`, or before the invocation would end, return
    `pending` to resume with callId: a client that drops the request at its own timeout would lose the result.
    A client seen to hang up ends the wait at once; the call goes on, and a resumed wait finds its outcome."""
    settings = rt.settings
    return_by = wait_ends_at(settings.agent_wait_seconds, deadline, settings.lambda_return_margin_seconds)
    interval = _FIRST_POLL
    while True:
        if call.status == DONE:
            count("SiteCallDone")
            return {
                "site": call.site,
                "tool": call.tool,
                "callId": call.id,
                "notice": THIRD_PARTY_NOTICE,
                "result": call.result,
            }
        if call.status in FINISHED:
            raise Failed(call.error or f"the call ended {call.status}")
        ended = await run_blocking(_enforce_deadlines, rt, call)
        if ended is not None:
            call = ended
            continue
        if time.monotonic() + interval >= return_by:
            return _pending(call)
        await pause(interval)
        if client_gone():  # no one will read the result: stop reading the store for it
            return _pending(call)
        interval = min(interval * 1.5, _MAX_POLL)
        call = await run_blocking(_reread, rt, call)


# -- the human's decision ------------------------------------------------------------------------


def decide(rt: Runtime, account_id: str, workspace_id: str, call_id: str, decision: str) -> SiteCall:
    call = rt.site_tools.get_call(account_id, call_id) if is_id(call_id) else None  # else no key: 1 KiB max
    if call is None or call.workspace_id != workspace_id:
        raise NotFound(f"no site-tool call {echo(call_id)} in this workspace")
    if call.status != PENDING:
        raise Conflict(f"call {call_id} is {call.status}; only a pending call takes a decision")
    now = rt.clock()
    if _approval_overdue(rt, call):
        _end(rt, call, EXPIRED, "the human did not decide in time")
        raise Conflict(f"call {call_id} waited too long for a decision and has expired")
    moved = replace(call, decision=decision, updated_at=iso(now))
    if decision == "deny":
        moved = replace(moved, status=DENIED, error=f"the human denied running {call.tool} on {call.site}")
    else:
        moved = replace(moved, status=QUEUED, queued_at=iso(now))
    words = {"allow_once": "Allowed once", "always_allow": "Always allowed", "deny": "Denied"}[decision]
    line = Message(
        id=new_id(),
        author="human",
        kind="siteCallDecision",
        text=f"{words}: {call.tool} on {call.site}",
        created_at=iso(now),
        details={"siteCallId": call.id, "decision": decision},
    )
    extra = rt.site_tools.conversation_items(call, line)
    if decision == "always_allow":
        extra.append(rt.site_tools.allow_item(call, iso(now)))
    if not rt.site_tools.move(call, moved, extra):
        raise Conflict(f"call {call_id} changed meanwhile; read it again")
    count("SiteCallDecided")
    push.site_call(rt, moved)
    push.console_changed(rt, workspace_id, call.task_id)
    return moved


def calls_of(rt: Runtime, workspace_id: str, status: str | None) -> list[dict[str, Any]]:
    return [call.public() for call in rt.site_tools.calls_of(workspace_id, status)]


# -- the bridge (the human's browser) -------------------------------------------------------------


async def poll_calls(
    rt: Runtime, account_id: str, token_id: str, wait_seconds: float, deadline: float | None = None
) -> list[dict[str, Any]]:
    """Long-poll for calls to run, claiming each so that one browser runs it once; marks the browser online.

    The poll answers at once when calls are ready, else empty after the browser's `wait_seconds`, cut to
    `bridge_poll_seconds` and to before the invocation's end (`deadline`, monotonic): the browser polls again.
    It waits on the event loop and reads the store in a worker thread, so many polls hold no thread between
    reads (a thread each starved every other route of anyio's 40). A poll whose browser hung up claims nothing.
    From its first pause the poll holds one of the token's waits in flight (`services.waits`).
    """
    await run_blocking(rt.site_tools.seen, account_id, iso(rt.clock()))
    settings = rt.settings
    seconds = min(wait_seconds, settings.bridge_poll_seconds)
    give_up = wait_ends_at(seconds, deadline, settings.lambda_return_margin_seconds)
    async with waits.waiting(rt, account_id, token_id, seconds) as waited:
        while True:
            claimed = await run_blocking(_claim_queued, rt, account_id)
            if claimed or time.monotonic() >= give_up:
                # Only while still connected: a poll outliving the browser's sign-out must not bring it back online.
                await run_blocking(rt.site_tools.seen_again, account_id, iso(rt.clock()))
                return [_for_bridge(rt, call) for call in claimed]
            await waited.pause(min(_BRIDGE_POLL, max(0.0, give_up - time.monotonic())))
            if client_gone():  # a call claimed now would wait for a browser that is not listening
                return []


def _claim_queued(rt: Runtime, account_id: str) -> list[SiteCall]:
    """Every queued call this poll could move to running; one past its deadline is ended instead."""
    claimed = []
    for call in rt.site_tools.queued_for_bridge(account_id):
        if _past_deadline(rt, call):  # nobody waits for it any more: never run it late
            _end(rt, call, FAILED, _too_late(rt))
            continue
        running = replace(call, status=RUNNING, updated_at=iso(rt.clock()))
        if rt.site_tools.move(call, running):
            claimed.append(running)
    return claimed


def post_result(rt: Runtime, account_id: str, call_id: str, result: Any, error: str | None) -> SiteCall:
    call = rt.site_tools.get_call(account_id, call_id) if is_id(call_id) else None  # else no key: 1 KiB max
    if call is None:
        raise NotFound(f"no site-tool call {echo(call_id)}")
    if call.status != RUNNING:
        raise Conflict(f"call {call_id} is {call.status}; its result is no longer awaited")
    if _past_deadline(rt, call):
        _end(rt, call, FAILED, _too_late(rt))
        raise Conflict(f"call {call_id} is past its deadline; its result is no longer awaited")
    now = iso(rt.clock())
    if error is not None:
        ended = replace(call, status=FAILED, error=f"the site answered with an error: {error[:2000]}", updated_at=now)
    else:
        # Counted as sent and stored: compact JSON, so a result the browser measured under the limit is under it here.
        size = len(json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode())
        if size > RESULT_BYTES_MAX:
            limit = RESULT_BYTES_MAX // 1024
            _end(rt, call, FAILED, f"the site's result is {size:,} bytes, over the {limit} KiB limit")
            raise PayloadError(f"result is {size:,} bytes; at most {RESULT_BYTES_MAX:,}", field="result")
        ended = replace(call, status=DONE, result=result, updated_at=now)
    if not rt.site_tools.move(call, ended):
        raise Conflict(f"call {call_id} changed meanwhile (it may have timed out)")
    return ended


# -- helpers -------------------------------------------------------------------------------------


def _tool(rt: Runtime, account_id: str, site: str, tool: str) -> tuple[str, SiteTool]:
    origin = normalise_origin(site)
    found = rt.site_tools.site(account_id, origin)
    if found is None:
        raise NotFound(f"no shared site {echo(origin)}; siteTools search lists the sites the human shared")
    definition = found.tool(tool)
    if definition is None:
        raise NotFound(f"site {echo(origin)} has no tool {echo(tool)!r}; siteTools search lists its tools")
    return origin, definition


def _enforce_deadlines(rt: Runtime, call: SiteCall) -> SiteCall | None:
    """End a call whose time is up (the human's decision, the browser's answer); None while it may go on."""
    if call.status == PENDING and _approval_overdue(rt, call):
        return _end(rt, call, EXPIRED, "the human did not decide in time")
    if call.status in (QUEUED, RUNNING):
        if _past_deadline(rt, call):
            return _end(rt, call, FAILED, _too_late(rt))
        if call.status == QUEUED and not is_online(rt, call.account_id):
            return _end(rt, call, FAILED, "the human's Chrome is not connected, so the call could not run")
    return None


def _past_deadline(rt: Runtime, call: SiteCall) -> bool:
    """The site's 60 seconds (`site_timeout_seconds`) count from when the call could run."""
    waited = rt.clock() - parse_iso(call.queued_at or call.created_at)
    return waited.total_seconds() > rt.settings.site_timeout_seconds


def _too_late(rt: Runtime) -> str:
    return f"the site did not answer within {rt.settings.site_timeout_seconds} seconds"


def _approval_overdue(rt: Runtime, call: SiteCall) -> bool:
    limit = timedelta(seconds=rt.settings.site_call_approval_seconds)
    return rt.clock() - parse_iso(call.created_at) > limit


def _end(rt: Runtime, call: SiteCall, status: str, error: str) -> SiteCall:
    ended = replace(call, status=status, error=error, updated_at=iso(rt.clock()))
    if rt.site_tools.move(call, ended):
        count(f"SiteCall{status.capitalize()}")
        return ended
    return _reread(rt, call)  # it moved on meanwhile (answered, decided): that is the outcome


def _reread(rt: Runtime, call: SiteCall) -> SiteCall:
    current = rt.site_tools.get_call(call.account_id, call.id)
    if current is None:
        raise NotFound(f"site-tool call {call.id} is gone")
    return current


def _for_bridge(rt: Runtime, call: SiteCall) -> dict[str, Any]:
    deadline = parse_iso(call.queued_at or call.created_at) + timedelta(seconds=rt.settings.site_timeout_seconds)
    return {"id": call.id, "site": call.site, "tool": call.tool, "arguments": call.arguments, "deadline": iso(deadline)}


def _pending(call: SiteCall) -> dict[str, Any]:
    waiting_for = "the human's decision" if call.status == PENDING else "the site's answer"
    return {
        "status": "pending",
        "callId": call.id,
        "waitingFor": waiting_for,
        "next": (
            f"Still waiting for {waiting_for}. Keep waiting on the same call: siteTools "
            f'{{"action": "call", "payload": {{"taskId": "{call.task_id}", "site": "{call.site}", '
            f'"tool": "{call.tool}", "arguments": {{}}, "callId": "{call.id}"}}}}'
        ),
    }


def _pattern(pattern: str) -> Any:
    check_query(pattern, "pattern")
    return compile_pattern(pattern, "pattern", ignore_case=True)


def _matches(matcher: Any, tool: SiteTool, deadline: Deadline) -> bool:
    try:
        return deadline.search(matcher, f"{tool.name}\n{tool.description}")
    except PatternTimeout:
        raise PayloadError("pattern takes too long to evaluate; use a simpler one", field="pattern") from None
