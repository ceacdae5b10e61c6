"""A schedule fired: EventBridge Scheduler delivers the Input it was armed with.

Two kinds share the schedule group and this function: a cron template's next fire time (the
default), and a pano doc's expiry (`kind: panoExpiry`).
"""

from typing import Any

from agent_workspace.observability import logger
from agent_workspace.runtime import Runtime
from agent_workspace.services import pano, schedules


def handle(event: Any, runtime: Runtime) -> dict[str, str]:
    """Raises on failure, so Lambda's retries (then its on-failure destination) take over; a retry is harmless."""
    if isinstance(event, dict) and event.get("kind") == pano.EXPIRY_KIND:
        outcome = pano.expire(runtime, event)
        logger.info("pano doc expiry", extra={"docId": event.get("docId"), "outcome": outcome})
        return {"outcome": outcome}
    outcome = schedules.fire(runtime, event)
    logger.info(
        "schedule fired",
        extra={"templateId": event.get("templateId"), "fireAt": event.get("fireAt"), "outcome": outcome},
    )
    return {"outcome": outcome}
