"""A cron template's schedule fired: EventBridge Scheduler delivers the Input it was armed with."""

from typing import Any

from agent_workspace.observability import logger
from agent_workspace.runtime import Runtime
from agent_workspace.services import schedules


def handle(event: Any, runtime: Runtime) -> dict[str, str]:
    """Raises on failure, so Lambda's retries (then its on-failure destination) take over; a retry is harmless."""
    outcome = schedules.fire(runtime, event)
    logger.info("schedule fired", extra={"templateId": event.get("templateId"), "fireAt": event.get("fireAt"),
                                         "outcome": outcome})
    return {"outcome": outcome}
