"""The workspace over HTTP, as the bridge uses it: its MCP tools, prompts, resources and skills (the Agent Skills
extension), and the channel's REST endpoints.

Each MCP exchange opens its own client: the workspace serves stateless Streamable HTTP, so a client holds nothing
worth keeping between calls, and a server that went away and came back needs no reconnect logic. The first exchange
negotiates the protocol (`server/discover`, else the handshake); later ones reuse what it found, so a tool call on
the 2026-07-28 protocol is a single POST.
"""

import json
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict

from agent_workspace_channel import __version__
from agent_workspace_channel.config import Config

logger = logging.getLogger(__name__)

T = TypeVar("T")

CONNECT_SECONDS = 10.0
# A tool call may wait on the human (task elicit waits up to a minute per call) before it answers.
CALL_READ_SECONDS = 300.0
# A ticket refused this way means no push here: 503 is the workspace's "not configured" (Retry-After: when to ask
# again), 404 and 405 a server from before push.
NO_PUSH_STATUSES = frozenset({404, 405, 503})
CLIENT_INFO = types.Implementation(name="agent-workspace-channel", version=__version__)


class ExtensionResult(BaseModel):
    """An extension's result, every member kept as the workspace sent it (the SDK's raw request API wants a model)."""

    model_config = ConfigDict(extra="allow")


class Unreachable(Exception):
    """The workspace did not answer, or failed (down, unreachable, busy: 429 or 5xx); trying again later may work,
    not before `retry_after` seconds when the workspace said so."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class Refused(Exception):
    """The workspace refused the request (4xx: 401 bad token, 403, 404, 422…); trying it again will not cure it."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail


class NoPush(Exception):
    """The workspace has no WebSocket push (its ticket answered 503, or a server from before push has no such route):
    long-poll instead, and ask again after `retry_after` seconds when the workspace said when."""

    def __init__(self, reason: str, retry_after: float | None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


def _busy(status: int) -> bool:
    return status == 429 or status >= 500


def _detail(response: httpx2.Response) -> str:
    """The problem document's detail (RFC 7807), else the reason phrase: never the request, so never the token."""
    try:
        body = response.json()
    except ValueError:
        body = None
    detail = body.get("detail") if isinstance(body, dict) else None
    return str(detail)[:300] if detail else (response.reason_phrase or "error")


def _retry_after(response: httpx2.Response) -> float | None:
    """Retry-After in seconds (the workspace sends seconds, never a date)."""
    try:
        return max(0.0, float(response.headers.get("Retry-After", "")))
    except ValueError:
        return None


def _check(response: httpx2.Response) -> None:
    if _busy(response.status_code):
        raise Unreachable(f"the workspace answered {response.status_code}", _retry_after(response))
    if response.status_code >= 400:
        raise Refused(response.status_code, _detail(response))


async def _refuse_http_errors(response: httpx2.Response) -> None:
    """An MCP POST the workspace refused, with its own words: the SDK would only say "Server returned an error"."""
    if _busy(response.status_code) or response.status_code in (401, 403):
        await response.aread()
        _check(response)


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error
        if error.__cause__ is not None:
            yield from _leaves(error.__cause__)


def classify(error: BaseException) -> Exception | None:
    """What an exception out of an exchange means to the bridge: `Unreachable`, `Refused`, `MCPError`, or None."""
    leaves = list(_leaves(error))
    for leaf in leaves:
        if isinstance(leaf, Refused | Unreachable):
            return leaf
    for leaf in leaves:
        if isinstance(leaf, httpx2.TransportError | OSError):
            return Unreachable(type(leaf).__name__)
    for leaf in leaves:
        if isinstance(leaf, MCPError):
            return leaf
    return None


@dataclass(frozen=True)
class Event:
    """One event of the channel, as GET /api/channel/events lists it."""

    id: str
    kind: str
    task_id: str | None
    content: str
    meta: dict[str, str]

    @classmethod
    def of(cls, raw: dict[str, Any]) -> "Event":
        meta = raw.get("meta") or {}
        return cls(
            id=str(raw["id"]),
            kind=str(raw.get("kind", "")),
            task_id=raw.get("taskId"),
            content=str(raw.get("content", "")),
            meta={str(k): str(v) for k, v in meta.items()} if isinstance(meta, dict) else {},
        )


@dataclass(frozen=True)
class Page:
    events: list[Event]
    cursor: str


class Workspace:
    """The agent's side of one workspace: every method raises `Unreachable` or `Refused` when the workspace fails."""

    def __init__(self, config: Config) -> None:
        self._config = config
        headers = {"Authorization": f"Bearer {config.token}", "User-Agent": f"agent-workspace-channel/{__version__}"}
        timeout = httpx2.Timeout(CONNECT_SECONDS, read=CALL_READ_SECONDS)
        self._mcp_http = httpx2.AsyncClient(
            headers=headers, timeout=timeout, event_hooks={"response": [_refuse_http_errors]}
        )
        self._rest = httpx2.AsyncClient(base_url=config.api, headers=headers, timeout=timeout)
        self._negotiated: types.DiscoverResult | str | None = None  # a modern discover result, or "legacy"
        self.instructions: str | None = None  # the workspace's own, from the first exchange

    async def aclose(self) -> None:
        await self._mcp_http.aclose()
        await self._rest.aclose()

    # -- MCP ---------------------------------------------------------------------------------------------

    def _client(self) -> Client:
        transport = streamable_http_client(self._config.url, http_client=self._mcp_http, terminate_on_close=False)
        known = self._negotiated
        if isinstance(known, types.DiscoverResult):
            mode = max(v for v in MODERN_PROTOCOL_VERSIONS if v in known.supported_versions)
            return Client(transport, mode=mode, prior_discover=known, client_info=CLIENT_INFO, cache=None)
        return Client(transport, mode="legacy" if known else "auto", client_info=CLIENT_INFO, cache=None)

    async def _exchange(self, operation: Callable[[Client], Awaitable[T]]) -> T:
        try:
            async with self._client() as client:
                if self._negotiated is None:
                    discovered = client.session.discover_result
                    self._negotiated = discovered if discovered is not None else "legacy"
                    self.instructions = client.instructions
                return await operation(client)
        except Exception as error:  # the SDK raises what its transport met, often inside exception groups
            meaning = classify(error)
            if isinstance(meaning, Unreachable):
                self._negotiated = None  # it may come back as another version of the server
            if meaning is None:
                raise
            raise meaning from None

    async def list_tools(self) -> list[types.Tool]:
        async def listed(client: Client) -> list[types.Tool]:
            tools: list[types.Tool] = []
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor)
                tools += page.tools
                cursor = page.next_cursor
                if not cursor:
                    return tools

        return await self._exchange(listed)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        return await self._exchange(lambda client: client.call_tool(name, arguments))

    async def list_prompts(self) -> list[types.Prompt]:
        async def listed(client: Client) -> list[types.Prompt]:
            return (await client.list_prompts()).prompts

        return await self._exchange(listed)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        return await self._exchange(lambda client: client.get_prompt(name, arguments))

    async def list_resources(self, cursor: str | None) -> types.ListResourcesResult:
        """One page, as the workspace pages it: the caller follows `next_cursor`."""
        return await self._exchange(lambda client: client.list_resources(cursor=cursor))

    async def list_resource_templates(self, cursor: str | None) -> types.ListResourceTemplatesResult:
        return await self._exchange(lambda client: client.list_resource_templates(cursor=cursor))

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        return await self._exchange(lambda client: client.read_resource(uri))

    async def extension_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A request of an extension (`skills/list`, `skills/get`), its result as the workspace sent it: the SDK has
        no helper or result type for these methods, so its raw request API."""
        request = types.Request[dict[str, Any], str](method=method, params=params)
        result = await self._exchange(lambda client: client.session.send_request(request, ExtensionResult))
        return result.model_dump()

    async def task_status(self, task_id: str) -> str | None:
        """The task's status, read with the `task` tool (always with its id: without one, `get` dequeues)."""
        result = await self.call_tool("task", {"action": "get", "payload": {"taskId": task_id}})
        text = "".join(block.text for block in result.content if isinstance(block, types.TextContent))
        if result.is_error:
            raise Refused(404, f"task get {task_id}: {text[:200]}")
        try:
            status = json.loads(text).get("status")
        except (ValueError, AttributeError):
            return None
        return str(status) if status else None

    # -- REST ----------------------------------------------------------------------------------------------

    async def _rest_call(self, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        try:
            response = await self._rest.request(method, path, **kwargs)
        except httpx2.TransportError as error:
            raise Unreachable(type(error).__name__) from None
        _check(response)
        return response

    async def events(self, cursor: str | None, wait: int) -> Page:
        """What is new after `cursor`, waiting up to `wait` seconds when nothing is."""
        params: dict[str, Any] = {"wait": wait}
        if cursor:
            params["cursor"] = cursor
        timeout = httpx2.Timeout(CONNECT_SECONDS, read=wait + 30.0)
        response = await self._rest_call("GET", "/api/channel/events", params=params, timeout=timeout)
        body = response.json()
        return Page([Event.of(raw) for raw in body.get("events", [])], str(body.get("cursor") or cursor or ""))

    async def push_ticket(self) -> str:
        """The URL of a WebSocket that hears this token's channel, a single-use ticket in its query: open it within a
        minute, and never log it. `NoPush` when the workspace has no push."""
        try:
            response = await self._rest.post("/api/push/tickets", json={"topic": "channel"}, timeout=CONNECT_SECONDS)
        except httpx2.TransportError as error:
            raise Unreachable(type(error).__name__) from None
        if response.status_code in NO_PUSH_STATUSES:
            raise NoPush(f"the push ticket answered {response.status_code}", _retry_after(response))
        _check(response)
        try:
            body = response.json()
        except ValueError:
            body = None
        url = body.get("url") if isinstance(body, dict) else None
        if not isinstance(url, str) or not url.startswith(("ws://", "wss://")):
            raise NoPush("the push ticket named no WebSocket URL", None)
        return url

    async def ask_permission(
        self, request_id: str, tool_name: str, description: str, input_preview: str, task_id: str | None
    ) -> dict[str, Any]:
        """The question for the human: {"status": "pending"} (201), or the standing verdict (200, "behavior")."""
        body = {
            "requestId": request_id,
            "toolName": tool_name,
            "description": description,
            "inputPreview": input_preview,
            "taskId": task_id,
        }
        response = await self._rest_call("POST", "/api/channel/permissions", json=body)
        answer = response.json()
        return answer if isinstance(answer, dict) else {}
