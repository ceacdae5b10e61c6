"""Permission relay: Claude Code's tool-approval prompt becomes a question on the workspace; the human's verdict,
from the console or REST, comes back as a `permission` event and is sent to Claude Code.

Claude Code keeps its local dialog open meanwhile and applies whichever answer comes first, so a question the
workspace cannot take (down, refused) only costs the remote path: it is retried for a while, then given up.
"""

import logging
import time
from collections.abc import Callable

import anyio
from pydantic import BaseModel, ConfigDict

from agent_workspace_channel.outbox import Outbox
from agent_workspace_channel.upstream import Event, Refused, Unreachable, Workspace

logger = logging.getLogger(__name__)

ASK_FOR_SECONDS = 60.0  # retrying a question the workspace did not take
REMEMBER_SECONDS = 900.0  # a request Claude Code made; the workspace expires its question after 10 minutes
BEHAVIORS = ("allow", "deny")


class PermissionRequest(BaseModel):
    """`notifications/claude/channel/permission_request` params; description and preview are Claude's, untrusted."""

    model_config = ConfigDict(extra="ignore")
    request_id: str
    tool_name: str
    description: str = ""
    input_preview: str = ""


class Relay:
    def __init__(self, workspace: Workspace, outbox: Outbox, current_task: Callable[[], str | None]) -> None:
        self._workspace = workspace
        self._outbox = outbox
        self._current_task = current_task
        self._asked: dict[str, float] = {}  # request id → when Claude Code asked

    async def ask(self, request: PermissionRequest) -> None:
        """Put the question to the human; a standing "always allow" is answered at once."""
        self._forget_old()
        self._asked[request.request_id] = time.monotonic()
        answer = await self._put(request)
        if answer is None:
            self._asked.pop(request.request_id, None)
            return
        behavior = answer.get("behavior")
        if answer.get("status") != "pending" and behavior in BEHAVIORS:
            logger.info(
                "permission %s for %s: %s at once (%s)",
                request.request_id,
                request.tool_name,
                behavior,
                answer.get("rule", "rule"),
            )
            self._asked.pop(request.request_id, None)
            await self._outbox.verdict(request.request_id, str(behavior))
        else:
            logger.info("permission %s for %s: asked the human", request.request_id, request.tool_name)

    async def _put(self, request: PermissionRequest) -> dict | None:
        give_up = time.monotonic() + ASK_FOR_SECONDS
        delay = 1.0
        retried = False
        while True:
            try:
                return await self._workspace.ask_permission(
                    request.request_id,
                    request.tool_name,
                    request.description,
                    request.input_preview,
                    self._current_task(),
                )
            except Refused as error:
                if retried and error.status == 409:  # the try that seemed lost got through: the question stands
                    return {"status": "pending"}
                logger.warning(
                    "permission %s not relayed: the workspace refused it (%s)", request.request_id, error.status
                )
                return None
            except Unreachable as error:
                if time.monotonic() + delay > give_up:
                    logger.warning(
                        "permission %s not relayed: workspace unreachable (%s); answer it in the terminal",
                        request.request_id,
                        error,
                    )
                    return None
                await anyio.sleep(delay)
                delay = min(delay * 2, 8.0)
                retried = True

    async def verdict(self, event: Event) -> None:
        """A `permission` event: the human's verdict, sent on when it answers a request of this session."""
        request_id = event.meta.get("request_id", "")
        behavior = event.meta.get("behavior", "")
        if request_id not in self._asked or behavior not in BEHAVIORS:
            logger.debug("permission event %s is not for this session", event.id)
            return
        del self._asked[request_id]
        logger.info("permission %s: %s from the workspace", request_id, behavior)
        await self._outbox.verdict(request_id, behavior)

    def _forget_old(self) -> None:
        cutoff = time.monotonic() - REMEMBER_SECONDS
        for request_id in [r for r, at in self._asked.items() if at < cutoff]:
            del self._asked[request_id]
