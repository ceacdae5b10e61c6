"""Asking the human and waiting for the answer, within what a Lambda invocation may last.

The question is stored before any waiting, so it survives whatever happens to the request. The
wait polls the record with an interval that grows with the question's age (at most one read per
`_MAX_POLL` seconds once settled, also on a resumed call). One call waits at most
`agent_wait_seconds` and never past the Lambda invocation: then the agent gets `pending` with the
question's id and resumes the wait on the same question with another call. Only `timeoutSeconds`,
the question's own lifetime, ends it with `cancel`.
"""

import json
import time
from datetime import datetime, timedelta
from typing import Any

from agent_workspace.blocking import client_gone, pause, run_blocking, wait_ends_at
from agent_workspace.domain.clock import iso, parse_iso
from agent_workspace.domain.elicitations import (
    MAX_TIMEOUT_SECONDS,
    MESSAGE_MAX,
    Elicitation,
    check_requested_schema,
    check_url,
    question_mode,
    validate_answer,
)
from agent_workspace.domain.errors import Conflict, NotFound, PayloadError
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tasks import Message, existing_id
from agent_workspace.domain.text import check_text, echo
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.services import channel, notifications, push

_FIRST_POLL = 0.25
_MAX_POLL = 3.0


def ask(
    rt: Runtime,
    actor: Actor,
    task_id: str,
    message: str,
    mode: str | None,
    requested_schema: dict[str, Any] | None,
    url: str | None,
    timeout_seconds: int,
) -> Elicitation:
    existing_id(task_id)
    check_text(message, "message", MESSAGE_MAX)
    if not 1 <= timeout_seconds <= MAX_TIMEOUT_SECONDS:
        raise PayloadError(
            f"timeoutSeconds must be 1-{MAX_TIMEOUT_SECONDS} (at most {MAX_TIMEOUT_SECONDS}); got {timeout_seconds}",
            field="timeoutSeconds",
        )
    mode = question_mode(mode, requested_schema, url)
    if requested_schema is not None:
        check_requested_schema(requested_schema)
    if url is not None:
        check_url(url)
    now = rt.clock()
    elicitation = Elicitation(
        id=new_id(),
        workspace_id=actor.workspace_id,
        task_id=task_id,
        message=message,
        mode=mode,
        status="pending",
        created_at=iso(now),
        expires_at=iso(now + timedelta(seconds=timeout_seconds)),
        requested_schema=requested_schema,
        url=url,
    )
    details = {"elicitationId": elicitation.id, "mode": mode, "requestedSchema": requested_schema, "url": url}
    question = Message(
        id=new_id(),
        author=actor.kind,
        text=message,
        created_at=elicitation.created_at,
        kind="question",
        details={k: v for k, v in details.items() if v is not None},
    )
    rt.elicitations.create(elicitation, question)
    count("ElicitationAsked")
    notifications.notify(rt, "question", actor.account_id, actor.workspace_id, task_id, elicitation.id)
    push.console_changed(rt, actor.workspace_id, task_id)
    return elicitation


def find(rt: Runtime, workspace_id: str, elicitation_id: str, task_id: str | None = None) -> Elicitation:
    elicitation = rt.elicitations.get(workspace_id, elicitation_id)
    if elicitation is None or (task_id is not None and elicitation.task_id != task_id):
        raise NotFound(f"no question {echo(elicitation_id)} in this {'task' if task_id else 'workspace'}")
    return elicitation


async def wait_for_answer(rt: Runtime, elicitation: Elicitation, deadline: float | None) -> dict[str, Any]:
    """The answer, `cancel` once the question expires, or `pending` when this call's wait is up.

    The wait is up after `agent_wait_seconds`, or `lambda_return_margin_seconds` before `deadline`, the
    monotonic time the invocation ends (None when nothing bounds it, as under uvicorn): a client that
    drops a call after its own request timeout would never see the answer, while the Lambda bills on.
    A client seen to hang up (`blocking.client_gone`) ends the wait at once, `pending` to no one.
    """
    settings = rt.settings
    expires = parse_iso(elicitation.expires_at)
    give_up = wait_ends_at(settings.agent_wait_seconds, deadline, settings.lambda_return_margin_seconds)
    while True:
        if elicitation.status == "answered" and elicitation.answer is not None:
            return elicitation.answer
        if elicitation.status == "expired":
            return {"action": "cancel"}
        now = rt.clock()
        until_expiry = (expires - now).total_seconds()
        if until_expiry <= 0:
            if await run_blocking(rt.elicitations.expire, elicitation):
                count("ElicitationExpired")
                return {"action": "cancel"}
            elicitation = await run_blocking(find, rt, elicitation.workspace_id, elicitation.id)
            continue
        left = give_up - time.monotonic()
        if left <= 0:
            return _pending(elicitation)
        # Sleeping to the end of the wait, then reading once more, lets an answer given meanwhile through.
        await pause(min(_interval(elicitation, now), until_expiry, left))
        if client_gone():  # no one will read the answer: stop reading the store for it
            return _pending(elicitation)
        elicitation = await run_blocking(find, rt, elicitation.workspace_id, elicitation.id)


def answer(rt: Runtime, workspace_id: str, elicitation_id: str, action: str, content: Any) -> dict[str, Any]:
    """Record the human's answer; it must fit the question, and a question is answered once."""
    elicitation = find(rt, workspace_id, elicitation_id)
    now = rt.clock()
    if elicitation.status != "pending" or parse_iso(elicitation.expires_at) <= now:
        raise Conflict(f"question {elicitation_id} was already answered or has expired")
    reply = validate_answer(elicitation, action, content)
    line = Message(
        id=new_id(),
        author="human",
        text=_summary(reply),
        created_at=iso(now),
        kind="answer",
        details={"elicitationId": elicitation.id, "answer": reply},
    )
    rt.elicitations.answer(elicitation, reply, iso(now), line)
    count("ElicitationAnswered")
    channel.push(rt, workspace_id, "answer", elicitation.task_id, line.text, question=elicitation.id)
    push.console_changed(rt, workspace_id, elicitation.task_id)
    return {"id": elicitation.id, "taskId": elicitation.task_id, "answer": reply}


def open_questions(rt: Runtime, workspace_id: str, status: str | None) -> list[dict[str, Any]]:
    """Questions by status; a pending one past its expiry is shown as expired (its record catches up lazily)."""
    now = rt.clock()
    shown = []
    for elicitation in rt.elicitations.list_by_status(workspace_id, status):
        current = elicitation.status
        if current == "pending" and parse_iso(elicitation.expires_at) <= now:
            current = "expired"
        if status is None or current == status:
            shown.append({**elicitation.public(), "status": current})
    return shown


def _interval(elicitation: Elicitation, now: datetime) -> float:
    """Seconds to the next read: quick while the question is new, settled once it has waited.

    0.25 s growing by half each read is 0.25 + age / 2, so computing it from the question's age gives the
    same reads as before for a fresh question, and a resumed call starts settled instead of quick again.
    """
    age = (now - parse_iso(elicitation.created_at)).total_seconds()
    return min(_FIRST_POLL + max(age, 0.0) / 2, _MAX_POLL)


def _pending(elicitation: Elicitation) -> dict[str, Any]:
    return {
        "action": "pending",
        "elicitationId": elicitation.id,
        "expiresAt": elicitation.expires_at,
        "next": (
            'The human has not answered yet. Keep waiting on the same question: task {"action": "elicit", '
            f'"payload": {{"taskId": "{elicitation.task_id}", "elicitationId": "{elicitation.id}"}}}}'
        ),
    }


def _summary(reply: dict[str, Any]) -> str:
    if reply["action"] != "accept":
        return f"Answered: {reply['action']}"
    content = reply.get("content")
    return "Answered: accept" + (f" {json.dumps(content, ensure_ascii=False)}" if content else "")
