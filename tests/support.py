"""Test helpers: the app under a real uvicorn, an MCP client with a bearer token, tool-call shortcuts."""

import socket
import threading
import time
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from agent_workspace.api.app import create_app
from agent_workspace.domain.tokens import hash_token
from agent_workspace.mcp_server.dispatch import ToolOutcome, dispatch
from agent_workspace.mcp_server.registry import Call
from agent_workspace.runtime import Runtime
from agent_workspace.tools import REGISTRY


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    def __init__(self, runtime: Runtime) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(create_app(runtime), host="127.0.0.1", port=self.port, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> "LiveServer":
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start within 10 s")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


@asynccontextmanager
async def mcp_client(url: str, token: str, mode: str = "legacy"):
    """The SDK's own client over real HTTP, authenticated the way Claude Code's `.mcp.json` does it."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode) as client,
    ):
        yield client


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content)


async def call(runtime: Runtime, token: str, tool: str, arguments: dict[str, Any] | None = None) -> ToolOutcome:
    """A tool call through the dispatcher, as the endpoint makes it for the token's principal."""
    principal = runtime.accounts.resolve_token(hash_token(token))
    assert principal is not None
    return await dispatch(REGISTRY, Call(principal, runtime, "test"), tool, arguments)
