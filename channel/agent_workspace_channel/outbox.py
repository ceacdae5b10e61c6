"""What the bridge sends Claude Code unasked: channel events, permission verdicts, list changes.

Claude Code's channel extensions (`notifications/claude/channel…`) are plain JSON-RPC notifications on the stdio
connection; nothing is sent before the session says it is initialized, so a push at start-up is not lost on a client
still in its handshake. No notification is acknowledged: see `poller` for what is pushed again.
"""

import logging
import re

from mcp.server.connection import Connection

logger = logging.getLogger(__name__)

CHANNEL = "notifications/claude/channel"
PERMISSION_VERDICT = "notifications/claude/channel/permission"
PERMISSION_REQUEST = "notifications/claude/channel/permission_request"
TOOLS_CHANGED = "notifications/tools/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
RESOURCES_CHANGED = "notifications/resources/list_changed"

# Claude Code turns meta keys into attributes of the <channel> tag and silently drops a key that is not an identifier.
_ATTRIBUTE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def attributes(meta: dict[str, str]) -> dict[str, str]:
    """The meta entries Claude Code shows, as strings."""
    return {key: str(value) for key, value in meta.items() if _ATTRIBUTE.match(key)}


class Outbox:
    def __init__(self) -> None:
        self._connection: Connection | None = None

    def attach(self, connection: Connection) -> None:
        self._connection = connection

    async def ready(self) -> None:
        """Returns once the client has sent `notifications/initialized`."""
        assert self._connection is not None, "attach the connection first"
        await self._connection.initialized.wait()

    async def _send(self, method: str, params: dict[str, object] | None) -> None:
        await self.ready()
        assert self._connection is not None
        await self._connection.notify(method, params)  # never raises: a closed stream drops it

    async def channel(self, content: str, meta: dict[str, str]) -> None:
        await self._send(CHANNEL, {"content": content, "meta": attributes(meta)})

    async def verdict(self, request_id: str, behavior: str) -> None:
        await self._send(PERMISSION_VERDICT, {"request_id": request_id, "behavior": behavior})

    async def lists_changed(self) -> None:
        await self._send(TOOLS_CHANGED, None)
        await self._send(PROMPTS_CHANGED, None)
        await self._send(RESOURCES_CHANGED, None)
