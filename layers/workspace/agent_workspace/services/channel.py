"""The channel a Claude Code bridge long-polls (issue 19): what the agent of a workspace should hear, pushed as
things happen, and the permission questions the bridge relays to the human.

A poll is one Query from the bridge's cursor; when nothing is new it waits, reading again at growing intervals
(1 s, then 2 s, then every 4 s) until its wait ends: an idle bridge polling with a 20-second wait costs about 8
reads, 2 writes (its slot among the waits in flight, `services.waits`) and 20 Lambda-seconds a poll, 180 polls an
hour.
"""

import time
from dataclasses import replace
from datetime import timedelta
from typing import Any

from agent_workspace.blocking import client_gone, run_blocking, wait_ends_at
from agent_workspace.domain import channel as rules
from agent_workspace.domain.channel import ChannelEvent, PermissionQuestion
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Conflict, NotFound, PayloadError, WorkspaceError
from agent_workspace.domain.ids import first_id_at, is_id, new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.text import check_plain, echo
from agent_workspace.observability import count, logger
from agent_workspace.runtime import Runtime
from agent_workspace.services import notifications, waits
from agent_workspace.services.push import channel_event, console_changed

_INTERVALS = (1.0, 2.0, 4.0)


def push(rt: Runtime, workspace_id: str, kind: str, task_id: str | None, content: str, **meta: str) -> None:
    """An event for the workspace's agent; what already happened is not undone if this fails, so it logs."""
    if len(content) > rules.CONTENT_MAX:
        content = content[: rules.CONTENT_MAX - 60].rstrip() + f"\n… (cut: read the whole task with task get {task_id})"
    now = rt.clock()
    full = {"kind": kind, **({"chat_id": task_id} if task_id else {}), **meta}
    event = ChannelEvent(new_id(), kind, content, iso(now), task_id, full)
    expires = int((now + timedelta(days=rules.EVENTS_KEPT_DAYS)).timestamp())
    try:
        rt.channel.push(workspace_id, event, expires)
        count("ChannelEventPushed")
    except WorkspaceError as error:
        logger.warning("channel event not pushed", extra={"kind": kind, "error": error.message})
        return
    channel_event(rt, workspace_id, event)


def task_pushed(rt: Runtime, workspace_id: str, kind: str, task: Any) -> None:
    """A task for the agent, as the bridge shows it: title, body, attachments."""
    if task.assignee != "agent" or task.cron_schedule:
        return
    lines = [f"{task.title}", "", task.body] if task.body else [task.title]
    if task.attachments:
        lines += ["", "Attachments: " + ", ".join(f"{a.filename} ({a.id})" for a in task.attachments)]
    push(rt, workspace_id, kind, task.id, "\n".join(lines), title=task.title)


async def events(rt: Runtime, actor: Actor, cursor: str | None, wait: float, deadline: float | None) -> dict[str, Any]:
    """What is new after `cursor` (without one: the last day's), waiting up to `wait` when nothing is; the wait
    holds one of the token's waits in flight (`services.waits`) from its first pause."""
    if cursor is not None and not is_id(cursor):
        raise PayloadError("cursor is not one this endpoint returned", field="cursor")
    after = cursor or first_id_at(int((rt.clock() - timedelta(hours=rules.BACKLOG_HOURS)).timestamp() * 1000))
    settings = rt.settings
    seconds = min(wait, settings.bridge_poll_seconds)
    give_up = wait_ends_at(seconds, deadline, settings.lambda_return_margin_seconds)
    rounds = 0
    async with waits.waiting(rt, actor.account_id, actor.token_id, seconds) as waited:
        while True:
            read = await run_blocking(rt.channel.events_after, actor.workspace_id, after, rules.EVENTS_PER_POLL)
            found = [event for event in read if event.heard_by(actor.token_id)]  # another bridge's verdicts: not
            after = read[-1].id if read else after
            left = give_up - time.monotonic()
            if found or left <= 0 or client_gone():
                return {"events": [event.public() for event in found], "cursor": after}
            if not read:
                await waited.pause(min(_INTERVALS[min(rounds, len(_INTERVALS) - 1)], left))
                rounds += 1


def ask_permission(
    rt: Runtime, actor: Actor, request_id: str, tool: str, description: str, preview: str, task_id: str | None
) -> tuple[dict[str, Any], bool]:
    """A question for the human, or the verdict at once when the human always allows this tool here (True)."""
    _check("requestId", request_id, rules.REQUEST_ID_MAX, plain=True)
    _check("toolName", tool, rules.TOOL_NAME_MAX, plain=True)
    _check("description", description, rules.DESCRIPTION_MAX)
    _check("inputPreview", preview, rules.INPUT_PREVIEW_MAX)
    if task_id is not None and not is_id(task_id):
        raise PayloadError("taskId must be a task's id", field="taskId")
    now = rt.clock()
    question_id = new_id()
    if rt.channel.rule(actor.workspace_id, tool) is not None:
        count("ChannelPermissionAlwaysAllowed")
        return {"id": question_id, "status": "allowed", "behavior": "allow", "rule": "always"}, True
    expires = now + timedelta(seconds=rules.PERMISSION_SECONDS)
    question = PermissionQuestion(question_id, request_id, tool, description, preview, iso(now), iso(expires),
                                  task_id=task_id, token_id=actor.token_id)  # fmt: skip
    rt.channel.ask(actor.workspace_id, question, int(expires.timestamp()) + 3600)
    count("ChannelPermissionAsked")
    console_changed(rt, actor.workspace_id, task_id)
    notifications.notify(rt, "toolApproval", actor.account_id, actor.workspace_id, task_id, question_id)
    return {"id": question_id, "status": "pending"}, False


def questions(rt: Runtime, workspace_id: str) -> list[dict[str, Any]]:
    now = iso(rt.clock())
    return [q.public(now) for q in sorted(rt.channel.questions(workspace_id), key=lambda q: q.created_at)]


def decide(rt: Runtime, workspace_id: str, question_id: str, decision: str) -> dict[str, Any]:
    """The human's verdict, sent as a `permission` event to the bridge of the token that asked, and to no other
    (another bridge of the workspace could hold the same request id); `always` also allows the tool from now on."""
    if decision not in rules.PERMISSION_DECISIONS:
        raise PayloadError("decision must be allow, deny or always", field="decision")
    question = rt.channel.question(workspace_id, question_id) if is_id(question_id) else None
    if question is None:
        raise NotFound(f"no permission question {echo(question_id)} in this workspace")
    now = rt.clock()
    if question.status != "pending" or question.closes_at <= iso(now):
        raise Conflict(f"question {question.id} was already answered or has expired (Claude Code moved on)")
    behavior = "deny" if decision == "deny" else "allow"
    meta = {"kind": "permission", "request_id": question.request_id, "behavior": behavior}
    event = ChannelEvent(new_id(), "permission", f"{question.tool_name}: {behavior}", iso(now), question.task_id, meta,
                         to_token=question.token_id)  # fmt: skip
    expires = int((now + timedelta(days=rules.EVENTS_KEPT_DAYS)).timestamp())
    status = "denied" if behavior == "deny" else "allowed"
    rule = question.tool_name if decision == "always" else None
    rt.channel.decide(workspace_id, question, status, iso(now), event, rule, expires)
    count("ChannelPermissionDecided")
    channel_event(rt, workspace_id, event)
    console_changed(rt, workspace_id, question.task_id)
    return replace(question, status=status, decided_at=iso(now)).public(iso(now)) | {"decision": decision}


def rules_of(rt: Runtime, workspace_id: str) -> list[dict[str, Any]]:
    return rt.channel.rules(workspace_id)


def drop_rule(rt: Runtime, workspace_id: str, tool: str) -> dict[str, Any]:
    if len(tool) > rules.TOOL_NAME_MAX or not rt.channel.drop_rule(workspace_id, tool):
        raise NotFound(f"no always-allow rule for tool {echo(tool)!r} in this workspace")
    return {"removed": tool}


def _check(field: str, value: str, most: int, plain: bool = False) -> None:
    if len(value) > most:
        raise PayloadError(f"{field} is {len(value):,} characters; at most {most:,}", field=field)
    if plain:
        check_plain(value, field)
    if field in ("requestId", "toolName") and not value.strip():
        raise PayloadError(f"{field} must not be empty", field=field)
