"""What a trigger asks of the human, read now: the notification's words and the answers its links may give, or
None once it no longer waits for them (answered, decided, gone). Read by the delivery that writes the message and by
the answer links that check, before answering, that the question still waits."""

import json
from datetime import datetime, timedelta
from typing import Any

from agent_workspace.domain.clock import parse_iso
from agent_workspace.domain.notifications import blocker_detail, simple_choices
from agent_workspace.runtime import Runtime

LINK_LIFETIME = timedelta(days=7)  # and never past the question's own expiry

_Subject = tuple[str, str, list[tuple[str, dict[str, Any]]], datetime]


def subject(rt: Runtime, kind: str, account_id: str, workspace_id: str, ref: str, task: Any) -> _Subject | None:
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
