"""Cron templates: arming their schedule, firing a run per fire time, and deleting them.

A template's schedule is armed for its next fire time only (`store.schedules`); each firing
creates the run for that time and re-arms for the following one. The run's id and its link under
the template derive from the template and the fire time, and the write is conditional on the
template still waiting for that time, so a retried or duplicated invocation creates nothing twice.
"""

from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any

from agent_workspace.domain import paging
from agent_workspace.domain.clock import iso, parse_iso
from agent_workspace.domain.cron import CronSchedule
from agent_workspace.domain.errors import Conflict, NotFound, PayloadError, Unavailable
from agent_workspace.domain.ids import is_id, new_id
from agent_workspace.domain.tasks import AttachmentRef, Task, existing_id
from agent_workspace.observability import count, logger
from agent_workspace.runtime import Runtime
from agent_workspace.services import channel, notifications, push
from agent_workspace.store.blobs import attachment_key
from agent_workspace.store.schedules import schedule_name

_FIRE_FIELDS = ("accountId", "workspaceId", "templateId", "fireAt")


@dataclass(frozen=True)
class Firing:
    """What a schedule delivers (its target's Input): which template, and the fire time it stands for."""

    account_id: str
    workspace_id: str
    template_id: str
    fire_at: str

    def input(self) -> dict[str, str]:
        values = (self.account_id, self.workspace_id, self.template_id, self.fire_at)
        return dict(zip(_FIRE_FIELDS, values, strict=True))

    @classmethod
    def parse(cls, event: Any) -> "Firing":
        """Refuses anything but the Input this module arms schedules with."""
        if not isinstance(event, dict) or any(not isinstance(event.get(name), str) for name in _FIRE_FIELDS):
            raise PayloadError(f"a schedule event carries {', '.join(_FIRE_FIELDS)} as strings", field="event")
        firing = cls(*(event[name] for name in _FIRE_FIELDS))
        if not all(is_id(value) for value in (firing.account_id, firing.workspace_id, firing.template_id)):
            raise PayloadError("a schedule event's ids must be base62 ids", field="event")
        try:
            parse_iso(firing.fire_at)
        except ValueError:
            raise PayloadError("fireAt must be an ISO 8601 time", field="fireAt") from None
        return firing


def arm_new(rt: Runtime, account_id: str, template: Task) -> None:
    """Create the schedule of a template about to be written (before it, so a template never lacks one)."""
    assert template.next_fire_at is not None
    firing = Firing(account_id, template.workspace_id, template.id, template.next_fire_at)
    rt.schedules.create(
        schedule_name(template.workspace_id, template.id), parse_iso(template.next_fire_at), firing.input()
    )


def disarm(rt: Runtime, template: Task) -> None:
    rt.schedules.disarm(schedule_name(template.workspace_id, template.id))


def fire(rt: Runtime, event: Any) -> str:
    """Handle one delivery of a schedule; returns what happened ("created", "duplicate" or "gone"). A failure is
    raised for Lambda to retry, and the human is told in 10 minutes if the run still does not exist then."""
    firing = Firing.parse(event)
    try:
        return _fire(rt, firing, event)
    except Exception:
        ref = f"{firing.template_id}#{firing.fire_at}"
        notifications.notify(rt, "failedRun", firing.account_id, firing.workspace_id, firing.template_id, ref,
                             delay_seconds=FAILED_RUN_NOTICE_SECONDS)  # fmt: skip
        raise


FAILED_RUN_NOTICE_SECONDS = 600  # Lambda's two retries of an asynchronous invocation are over by then


def _fire(rt: Runtime, firing: Firing, event: Any) -> str:
    template = rt.tasks.get(firing.workspace_id, firing.template_id, consistent=True)
    if template is None or not template.is_template:
        rt.schedules.disarm(schedule_name(firing.workspace_id, firing.template_id))
        return "gone"
    if template.next_fire_at != firing.fire_at:
        _rearm(rt, firing.account_id, template)  # handled already: only make sure the schedule looks ahead
        return "duplicate"

    now = rt.clock()
    fire_time = parse_iso(firing.fire_at)
    schedule = CronSchedule(template.cron_schedule or "", template.timezone)
    # A late delivery still creates its own run, but runs missed meanwhile are skipped, not burst out.
    following = None if schedule.one_time else schedule.next_after(max(fire_time, now))
    run = replace(
        _run_of(rt, template, firing.fire_at, iso(now)),
        number=rt.tasks.next_number(firing.account_id, template.workspace_id),
    )
    finished = None if following else {"status": "completed", "at": iso(now), "by": "schedule"}
    try:
        rt.tasks.create_run(firing.account_id, template, run, iso(following) if following else None, finished)
    except Conflict:
        current = rt.tasks.get(firing.workspace_id, firing.template_id, consistent=True)
        if current is None:
            return _fire(rt, firing, event)  # deleted meanwhile: disarm
        if current.next_fire_at == firing.fire_at:
            raise Unavailable(f"template {template.id} is being changed; the firing will be retried") from None
        _rearm(rt, firing.account_id, current)
        return "duplicate"
    count("CronTaskFired")
    channel.task_pushed(rt, template.workspace_id, "task", run)
    push.task_changed(rt, template.workspace_id, run.id)
    _rearm(rt, firing.account_id, replace(template, next_fire_at=iso(following) if following else None))
    return "created"


def delete_template(rt: Runtime, account_id: str, workspace_id: str, template_id: str) -> Task:
    """Remove the schedule first, so nothing fires while the template goes; its runs stay."""
    template = rt.tasks.get(workspace_id, existing_id(template_id), consistent=True)
    if template is None:
        raise NotFound(f"no task {template_id} in this workspace")
    if not template.is_template:
        raise Conflict(f"task {template_id} is not a cron template; only templates can be deleted")
    disarm(rt, template)
    try:
        rt.tasks.delete_template(account_id, template)
    except BaseException:
        with suppress(Exception):  # put the schedule back: the template is still there
            _rearm(rt, account_id, template)
        raise
    # The template is gone from here on: what is left is housekeeping, which must not undo that.
    try:
        rt.tasks.purge_template_items(template)
    except Exception:
        logger.exception("template deleted, but its run links were not all removed", extra={"templateId": template.id})
    with suppress(Exception):  # objects left behind only cost storage
        rt.blobs.delete([ref.key for ref in template.attachments])
    count("CronTemplateDeleted")
    push.task_changed(rt, workspace_id, template.id)
    return template


def list_runs(rt: Runtime, workspace_id: str, template_id: str, limit: int, cursor: str | None) -> dict[str, Any]:
    template = rt.tasks.get(workspace_id, existing_id(template_id))
    if template is None:
        raise NotFound(f"no task {template_id} in this workspace")
    if not template.is_template:
        raise PayloadError(f"task {template_id} is not a cron template, so it has no runs", field="taskId")
    runs, next_cursor = rt.tasks.list_runs(workspace_id, template_id, limit, cursor)
    shown, next_cursor = paging.fill(
        runs,
        next_cursor,
        budget=rt.settings.page_bytes,
        shown=Task.public,
        cursor_after=lambda run: rt.tasks.run_cursor(workspace_id, template_id, run),
        name=lambda run: f"run {run.id} of template {template_id}",
        read_alone=lambda run: f"GET /api/workspaces/{workspace_id}/tasks/{run.id}",
    )
    return {"runs": shown, "nextCursor": next_cursor}


def _run_of(rt: Runtime, template: Task, fire_at: str, now: str) -> Task:
    """The run of one fire time. Its link under the template, not its id, makes it happen once: a retry
    that loses copies files no run uses, under the prefix the bucket expires."""
    run_id = new_id()
    refs: list[AttachmentRef] = []
    for ref in template.attachments:
        target = attachment_key(template.workspace_id, run_id, ref.key.rsplit("/", 1)[-1])
        rt.blobs.copy(ref.key, target)  # each run's files age from its own firing, not the template's
        refs.append(replace(ref, key=target, created_at=now))
    return Task.new(
        id=run_id,
        workspace_id=template.workspace_id,
        by="schedule",
        created_by=template.created_by,
        now=now,
        title=template.title,
        body=template.body,
        assignee=template.assignee,
        attachments=tuple(refs),
        event_id=template.event_id,
        clear_context=template.clear_context,
        template_id=template.id,
        fire_at=fire_at,
    )


def _rearm(rt: Runtime, account_id: str, template: Task) -> None:
    if template.next_fire_at is None:
        disarm(rt, template)
        return
    firing = Firing(account_id, template.workspace_id, template.id, template.next_fire_at)
    rt.schedules.arm(
        schedule_name(template.workspace_id, template.id), parse_iso(template.next_fire_at), firing.input()
    )
    logger.debug("schedule armed", extra={"templateId": template.id, "fireAt": template.next_fire_at})
