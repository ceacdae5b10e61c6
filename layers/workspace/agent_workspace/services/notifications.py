"""Notifications (issue 21): telling the human what an agent waits on (decision 0010), the enqueue every service
calls.

A trigger is enqueued on the events queue by the request that made the waiting thing, and sent by the events
function (`services.notification_delivery`): never inside the agent's request. This module is a leaf: it imports
no service that could call it back.
"""

from typing import Any

from agent_workspace.observability import count, logger
from agent_workspace.runtime import Runtime
from agent_workspace.services.notification_keys import enabled


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
