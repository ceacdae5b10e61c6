"""Test helpers: the app under a real uvicorn, an MCP client with a bearer token, tool-call shortcuts, and the
deployed Lambda entry points loaded the way the Lambda runtime loads them."""

import base64
import importlib.util
import json
import os
import re
import secrets
import socket
import threading
import time
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from agent_workspace.api.app import create_app
from agent_workspace.config import get_settings
from agent_workspace.domain.tokens import hash_token
from agent_workspace.mcp_server.dispatch import ToolOutcome, dispatch
from agent_workspace.mcp_server.registry import Call
from agent_workspace.runtime import Runtime
from agent_workspace.tools import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
CREATED = re.compile(r"^task created with id=([0-9A-Za-z]{11})$")


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
async def mcp_client(url: str, token: str, mode: str = "legacy", timeout: float = 30):
    """The SDK's own client over real HTTP, authenticated the way Claude Code's `.mcp.json` does it."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode) as client,
    ):
        yield client


def download_presigned(url: str) -> httpx.Response:
    """The bytes behind a presigned link the app handed out, asserting AWS would accept its signature.

    moto takes any signature; S3 buckets made since mid-2020 refuse SigV2 (`AWSAccessKeyId=…&Signature=…`),
    so every link must carry SigV4's query parameters and none of SigV2's."""
    query = parse_qs(urlsplit(url).query)
    assert query.get("X-Amz-Algorithm") == ["AWS4-HMAC-SHA256"], url
    assert {"X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"} <= set(query)
    assert not {"AWSAccessKeyId", "Signature", "Expires"} & set(query), url
    response = httpx.get(url)
    assert response.status_code == 200, response.text
    return response


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content)


async def call(runtime: Runtime, token: str, tool: str, arguments: dict[str, Any] | None = None) -> ToolOutcome:
    """A tool call through the dispatcher, as the endpoint makes it for the token's principal."""
    principal = runtime.accounts.resolve_token(hash_token(token))
    assert principal is not None
    return await dispatch(REGISTRY, Call(principal, runtime, "test"), tool, arguments)


# -- agents over MCP ------------------------------------------------------------------------------


class Agent:
    """One connected agent: `await agent("task", "create", title=...)` → (text, is_error)."""

    def __init__(self, client) -> None:
        self._client = client

    async def raw(self, tool: str, arguments: dict) -> tuple[str, bool]:
        result = await self._client.call_tool(tool, arguments)
        return text_of(result), result.is_error

    async def act(self, tool: str, action: str, /, **payload) -> tuple[str, bool]:
        """One action of a tool; what `agent(...)` calls, kept apart so a subclass bound to one tool can rebind it."""
        return await self.raw(tool, {"action": action, "payload": payload})

    async def __call__(self, tool: str, action: str, /, **payload) -> tuple[str, bool]:
        return await self.act(tool, action, **payload)

    async def create(self, **payload) -> str:
        """`task create`, asserted: the new task's id."""
        text, is_error = await self.act("task", "create", **payload)
        assert not is_error, text
        match = CREATED.match(text)
        assert match, text
        return match.group(1)

    async def get(self, **payload) -> Any:
        """`task get`, asserted: the task as JSON (None when there is nothing to dequeue)."""
        text, is_error = await self.act("task", "get", **payload)
        assert not is_error, text
        return json.loads(text)


# -- the events queue -------------------------------------------------------------------------------


def receive_all(runtime: Runtime) -> list[dict]:
    """Every message visible on the events queue now (received: invisible afterwards, as for a consumer)."""
    received: list[dict] = []
    while page := runtime.clients.sqs.receive_message(
        QueueUrl=runtime.settings.events_queue_url,
        MaxNumberOfMessages=10,
        WaitTimeSeconds=0,
        AttributeNames=["All"],
    ).get("Messages", []):
        received += page
    return received


# -- the deployed Lambda functions ----------------------------------------------------------------

# What the functions are called when deployed as the stack `agent-workspace`: the schedule function has
# a fixed name (template.yaml), the others the names CloudFormation generates.
FUNCTION_NAMES = {
    "api": "agent-workspace-ApiFunction-Xk2n7Qp9Lm3R",
    "events": "agent-workspace-EventsFunction-Pq4Rs8Tu2Vw6",
    "schedule": "agent-workspace-schedule",
}


@dataclass
class LambdaContext:
    """The context object the Lambda runtime hands the function `function_name` with each invocation."""

    function_name: str
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    remaining_ms: int = 900_000
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 1024
    log_stream_name: str = "2026/12/02/[$LATEST]0123456789abcdef0123456789abcdef"

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


def function_environment(folder: str, runtime: Runtime) -> dict[str, str]:
    """The environment template.yaml gives the function `folder`, pointed at `runtime`'s resources (on moto)."""
    settings = runtime.settings
    assert settings.aws_endpoint_url, "a function is loaded against moto, never against AWS"
    return {
        "AWS_REGION": settings.aws_region,
        "AWS_DEFAULT_REGION": settings.aws_region,
        "AWS_LAMBDA_FUNCTION_NAME": FUNCTION_NAMES[folder],
        "WORKSPACE_TABLE_NAME": settings.table_name,
        "WORKSPACE_ATTACHMENTS_BUCKET": settings.attachments_bucket,
        "WORKSPACE_EVENTS_QUEUE_URL": settings.events_queue_url,
        "WORKSPACE_ALLOWED_ORIGINS": ",".join(settings.allowed_origins),
        "WORKSPACE_ATTACHMENT_RETENTION_DAYS": str(settings.attachment_retention_days),
        "WORKSPACE_SCHEDULE_GROUP": settings.schedule_group,
        "WORKSPACE_SCHEDULE_TARGET_ARN": settings.schedule_target_arn,
        "WORKSPACE_SCHEDULER_ROLE_ARN": settings.scheduler_role_arn,
        "WORKSPACE_SCHEDULE_DEAD_LETTER_ARN": settings.schedule_dead_letter_arn,
        "WORKSPACE_AWS_ENDPOINT_URL": settings.aws_endpoint_url,
    }


def load_function(folder: str, runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """functions/<folder>/app.py, imported afresh under a module name of its own, with the environment
    template.yaml gives every function, pointed at `runtime`'s resources (on moto): no other WORKSPACE_*."""
    env = function_environment(folder, runtime)
    for name in [name for name in os.environ if name.startswith("WORKSPACE_") and name not in env]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    spec = importlib.util.spec_from_file_location(
        f"lambda_{folder}_app_{secrets.token_hex(4)}", ROOT / "functions" / folder / "app.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    finally:
        get_settings.cache_clear()  # the module has read its settings; nobody else is to see them cached
    return module


def wait_until_healthy(url: str, process: Any, output: Any, seconds: float = 60) -> None:
    """Poll `url`/health until the started server answers; if it exits or takes too long, fail with `output()`."""
    import httpx

    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"local stack did not start:\n{output()}")
        time.sleep(0.2)
