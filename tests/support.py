"""Test helpers: the app under a real uvicorn, an MCP client with a bearer token, tool-call shortcuts, a clock the
test moves, a workspace with one thing of every kind, and the deployed Lambda entry points loaded the way the Lambda
runtime loads them."""

import base64
import importlib.util
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio.from_thread
import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AuthorizationParams
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from agent_workspace.app import create_app
from agent_workspace.config import get_settings
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tokens import hash_token
from agent_workspace.local import push_gateway
from agent_workspace.local.drivers import Drivers
from agent_workspace.local.push_gateway import PushGateway
from agent_workspace.local.stack import Seed, local_runtime, seed
from agent_workspace.mcp_server.dispatch import ToolOutcome, dispatch
from agent_workspace.runtime import Runtime
from agent_workspace.services import elicitations, events, oauth_consent
from agent_workspace.services.oauth_clients import ClientDirectory
from agent_workspace.services.oauth_provider import CURRENT, OAuthRequest, WorkspaceOAuthProvider
from agent_workspace.tool_registry import Call
from agent_workspace.tools import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
# What tools/list shows, in order: over HTTP and through the Claude Code channel alike.
TOOL_NAMES = ["task", "memory", "skills", "workspace", "siteTools", "pano", "board", "agent", "help"]
CREATED = re.compile(r"^task created with id=([0-9A-Za-z]{11})$")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    """The app under uvicorn on a free loopback port; with `push`, as `make serve` runs it: the local WebSocket
    gateway in front (`gateway`) and the queue and schedule drivers delivering what is published."""

    def __init__(self, runtime: Runtime, push: bool = False) -> None:
        # Bound here and handed to uvicorn: a port only looked up free could be taken by a parallel test before
        # uvicorn binds it ("address already in use").
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.app = create_app(runtime)
        app: Any = self.app
        self.gateway: PushGateway | None = None
        self._drivers: Drivers | None = None
        if push:
            push_gateway.configure(runtime, f"127.0.0.1:{self.port}")
            app = self.gateway = PushGateway(app, runtime)
            self._drivers = Drivers(runtime)
        config = uvicorn.Config(
            self.around(app), host="127.0.0.1", port=self.port, log_level="warning", ws=push_gateway.UVICORN_WS
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True)

    def around(self, app: Any) -> Any:
        """What serves the requests: the app (a subclass may wrap it, to watch or hold requests)."""
        return app

    def __enter__(self) -> "LiveServer":
        self._thread.start()
        if self._drivers is not None:
            self._drivers.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start within 10 s")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._drivers is not None:
            self._drivers.stop()
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()


@asynccontextmanager
async def mcp_client(url: str, token: str, mode: str = "legacy", timeout: float = 30, path: str = "/mcp"):
    """The SDK's own client over real HTTP, authenticated the way Claude Code's `.mcp.json` does it, on the MCP path
    `path` (/mcp, or a reference's own: /mcp/masaro)."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http,
        Client(streamable_http_client(f"{url}{path}", http_client=http), mode=mode) as client,
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
    return "\n\n".join(block.text for block in result.content)  # load_agent answers several blocks


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


@asynccontextmanager
async def connected(
    url: str, token: str, kind: type[Agent] = Agent, timeout: float = 30, path: str = "/mcp"
) -> AsyncIterator[Any]:
    """An agent connected over MCP with `token`: an `Agent`, or the subclass `kind` a module bound to its tool."""
    async with mcp_client(url, token, timeout=timeout, path=path) as client:
        yield kind(client)


# -- time ------------------------------------------------------------------------------------------------


class Clock:
    """The runtime's clock in the test's hands, in place of waiting: `Clock(start)` stands still at `start`,
    `Clock()` goes with real time; either moves by what the test says (`advance`, `set`).

    `monotonic` and `sleep` move with it (by `advance` alone), for a wait loop that reads both: patched in for the
    loop's own, an hour of waiting passes in the moment the loop's store reads take."""

    def __init__(self, start: datetime | None = None) -> None:
        self._start = start
        self._offset = timedelta(0)
        self._origin = time.monotonic()
        self._advanced = 0.0

    def __call__(self) -> datetime:
        return (datetime.now(UTC) if self._start is None else self._start) + self._offset

    @property
    def now(self) -> datetime:
        return self()

    def set(self, moment: datetime) -> None:
        """Stand still at `moment` from now on."""
        self._start, self._offset = moment, timedelta(0)

    def advance(self, **delta: float) -> None:
        """Move by `timedelta(**delta)`, e.g. `advance(seconds=46)` or `advance(days=2, seconds=-1)`."""
        moved = timedelta(**delta)
        self._offset += moved
        self._advanced += moved.total_seconds()

    def monotonic(self) -> float:
        return (time.monotonic() if self._start is None else self._origin) + self._advanced

    async def sleep(self, seconds: float) -> None:
        self.advance(seconds=seconds)


# -- a workspace with one thing of every kind -------------------------------------------------------------

# Placeholders for the ids `furnish` makes, swapped in by `resolved` (also inside longer strings): a payload written
# with them, or printed by hypothesis, replays in any workspace.
TASK, DOC, EVENT, QUESTION, WORKSPACE = "⟪task⟫", "⟪doc⟫", "⟪event⟫", "⟪question⟫", "⟪workspace⟫"
SESSION = "⟪session⟫"  # a load session of the agent release-captain
TASK_PREFIX = "⟪task[:5]⟫"  # the first 5 characters of the task's id
TASK_SWAPPED = "⟪TASK⟫"  # the task's id with its letters' case swapped: right format, names nothing


def file_in(ident: str = "log", filename: str = "deploy.log", mime: str = "text/plain", data: bytes = b"ok") -> dict:
    """A file as `attachments` or `files` of a tool call carry it."""
    return {"id": ident, "filename": filename, "mimeType": mime, "data": b64(data)}


async def furnish(runtime: Runtime, seeded: Seed, question_seconds: int = 1) -> dict[str, str]:
    """One thing of every kind in the seeded workspace, and their ids by placeholder: a task for the human (no
    dequeue takes it) with the attachment `log` (deploy.log), the doc Plan linking it, the memory deploys.md, the
    skill release-notes with templates/entry.md, the event deploy_done, the agent release-captain (with a prompt, a
    load session, the memory release-checklist, the brief deploy and a cursor profile), and a form question on the
    task that expires after `question_seconds` (after the default second, resuming it never waits)."""

    async def made(tool: str, action: str, /, **payload: Any) -> str:
        outcome = await call(runtime, seeded.agent_token, tool, {"action": action, "payload": payload})
        assert not outcome.is_error, outcome.text
        return outcome.text

    log = file_in()
    created = await made("task", "create", title="Ship it", body="Release v1.", assignee="human", attachments=[log])
    match = CREATED.match(created)
    assert match, created
    task_id = match.group(1)
    doc = json.loads(await made("pano", "save", title="Plan", markdown="# Plan\n\n[log](deploy.log)", files=[log]))
    await made("memory", "save", name="deploys.md", content="# Deploys\n")
    await made("skills", "save", uri="skill://release-notes/SKILL.md", content="---\ndescription: Notes.\n---\n# N\n")
    await made("skills", "save", uri="skill://release-notes/templates/entry.md", content="- entry\n")
    event = events.define_event(runtime, seeded.account_id, "deploy_done", "A deploy finished.")
    await made("agent", "create", name="Release Captain", prompt="You run our releases.")
    loaded = await made("agent", "load", agent="release-captain")
    session = loaded.rsplit("Session: ", 1)[1][:36]
    await made(
        "agent",
        "remember",
        agent="release-captain",
        session=session,
        name="release-checklist",
        type="project",
        description="Steps",
        body="Smoke test.",
    )
    await made(
        "agent",
        "updateBrief",
        agent="release-captain",
        session=session,
        name="deploy",
        description="How we deploy",
        body="make deploy",
    )
    await made("agent", "setProfile", agent="release-captain", harness="cursor", settings={"model": "auto"})
    principal = runtime.accounts.resolve_token(hash_token(seeded.agent_token))
    assert principal is not None
    schema = {"type": "object", "properties": {"branch": {"type": "string"}}, "required": ["branch"]}
    question = elicitations.ask(
        runtime, Actor.of(principal), task_id, "Which branch?", "form", schema, None, question_seconds
    )
    return {
        TASK: task_id,
        TASK_PREFIX: task_id[:5],
        TASK_SWAPPED: task_id.swapcase(),
        DOC: doc["id"],
        EVENT: event.id,
        QUESTION: question.id,
        WORKSPACE: seeded.workspace_id,
        SESSION: session,
    }


def resolved(value: Any, ids: dict[str, str]) -> Any:
    """`value` with the placeholders replaced by `ids` in every string and key; iterative, for 400-level nesting."""

    def swap(text: str) -> str:
        for placeholder, real in ids.items():
            text = text.replace(placeholder, real)
        return text

    def fresh(item: Any) -> Any:
        if isinstance(item, str):
            return swap(item)
        if isinstance(item, dict):
            return {}
        if isinstance(item, list):
            return []
        return item

    root = fresh(value)
    stack = [(value, root)]
    while stack:
        source, target = stack.pop()
        if isinstance(source, dict):
            for key, item in source.items():
                target[swap(key) if isinstance(key, str) else key] = copied = fresh(item)
                stack.append((item, copied))
        elif isinstance(source, list):
            for item in source:
                target.append(copied := fresh(item))
                stack.append((item, copied))
    return root


@dataclass(frozen=True)
class World:
    """A furnished workspace on a runtime of its own, for tests that call tools from synchronous code (hypothesis'
    `@given`): each call runs on the portal's event loop as the agent, with the placeholders swapped for the ids."""

    runtime: Runtime
    seeded: Seed
    portal: anyio.from_thread.BlockingPortal
    ids: dict[str, str]

    @property
    def token(self) -> str:
        return self.seeded.agent_token

    def call(self, tool: str, arguments: dict[str, Any] | None) -> ToolOutcome:
        return self.portal.call(call, self.runtime, self.token, tool, resolved(arguments, self.ids))


@contextmanager
def furnished_world(moto_endpoint: str, clients: Any, question_seconds: int = 1, **settings: Any) -> Iterator[World]:
    """A `World` on fresh resources at `moto_endpoint`, its runtime's settings changed by `settings`."""
    runtime = local_runtime(moto_endpoint, clients=clients, **settings)
    seeded = seed(runtime)
    with anyio.from_thread.start_blocking_portal() as portal:
        yield World(runtime, seeded, portal, portal.call(furnish, runtime, seeded, question_seconds))


# -- OAuth sign-in ----------------------------------------------------------------------------------------


@contextmanager
def loopback_page(body: bytes, path: str | None = None, seen: Callable[[str], None] | None = None) -> Iterator[str]:
    """A page on a loopback port of its own (another origin than the app's), served at `path` (any path when None),
    each request's path told to `seen`; its base URL. What an OAuth app's redirect or a framing site needs."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if path is not None and urlsplit(self.path).path != path:
                self.send_error(404)
                return
            if seen is not None:
                seen(self.path)
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


async def connect_app(
    runtime: Runtime, workspace_id: str, human_token: str, scopes: tuple[str, ...] = ("read", "write")
) -> tuple[str, OAuthToken]:
    """An app signed in to the workspace through the provider's own steps, as `/authorize`, the consent page and
    `/token` take them: (its grant id, its tokens)."""
    directory = ClientDirectory(runtime)
    provider = WorkspaceOAuthProvider(runtime, directory)
    redirect = "http://127.0.0.1:9/callback"
    app = OAuthClientInformationFull(client_id=uuid.uuid4().hex, redirect_uris=[redirect], client_name="App")
    directory.register(app)
    context = CURRENT.set(OAuthRequest("http://testserver", "127.0.0.1"))
    try:
        client = await provider.get_client(app.client_id)
        assert client is not None
        params = AuthorizationParams(
            state="s",
            scopes=list(scopes),
            code_challenge="c" * 43,
            redirect_uri=redirect,
            redirect_uri_provided_explicitly=True,
        )
        consent = urlsplit(await provider.authorize(client, params))
        human = runtime.accounts.resolve_token(hash_token(human_token))
        assert human is not None
        request_id = parse_qs(consent.query)["request"][0]
        answer = oauth_consent.decide(runtime, human, request_id, True, workspace_id, "http://testserver")
        code = await provider.load_authorization_code(client, parse_qs(urlsplit(answer).query)["code"][0])
        assert code is not None
        return code.grant_id, await provider.exchange_authorization_code(client, code)
    finally:
        CURRENT.reset(context)


# -- the human REST API ----------------------------------------------------------------------------------

PROBLEM = "application/problem+json"


def bearer(token: str) -> dict[str, str]:
    """The header a request made with `token` carries."""
    return {"authorization": f"Bearer {token}"}


def assert_problem(response: httpx.Response, status: int, *words: str) -> dict:
    """`response` is the API's problem (RFC 9457) of `status`, its detail naming every one of `words`; returned."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    problem = response.json()
    assert set(problem) == {"type", "title", "status", "detail"}
    assert (problem["type"], problem["status"]) == ("about:blank", status) and problem["title"], problem
    for word in words:
        assert word in problem["detail"], problem["detail"]
    return problem


class TasksApi:
    """The tasks routes of one workspace, as one token's holder."""

    def __init__(self, live: LiveServer, workspace_id: str, token: str) -> None:
        self.base = f"{live.url}/api/workspaces/{workspace_id}/tasks"
        self.headers = bearer(token)

    def listing(self, **params) -> httpx.Response:
        return httpx.get(self.base, params=params, headers=self.headers)

    def create(self, **body) -> httpx.Response:
        return httpx.post(self.base, json=body, headers=self.headers)

    def get(self, task_id: str, **params) -> httpx.Response:
        return httpx.get(f"{self.base}/{task_id}", params=params, headers=self.headers)

    def post_message(self, task_id: str, **body) -> httpx.Response:
        return httpx.post(f"{self.base}/{task_id}/messages", json=body, headers=self.headers)

    def patch(self, task_id: str, **body) -> httpx.Response:
        return httpx.patch(f"{self.base}/{task_id}", json=body, headers=self.headers)

    def delete(self, task_id: str) -> httpx.Response:
        return httpx.delete(f"{self.base}/{task_id}", headers=self.headers)

    def attachment(self, task_id: str, attachment_id: str, **params) -> httpx.Response:
        return httpx.get(f"{self.base}/{task_id}/attachments/{attachment_id}", params=params, headers=self.headers)

    def runs(self, task_id: str, **params) -> httpx.Response:
        return httpx.get(f"{self.base}/{task_id}/runs", params=params, headers=self.headers)

    # -- the happy paths, asserted --

    def new_task(self, title: str = "Update the changelog", **body) -> dict:
        response = self.create(title=title, body=body.pop("body", "Add the 0.2 entries."), **body)
        assert response.status_code == 201, response.text
        return response.json()

    def ids(self, **params) -> list[str]:
        response = self.listing(**params)
        assert response.status_code == 200, response.text
        return [t["id"] for t in response.json()["tasks"]]


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
    "push": "agent-workspace-PushFunction-Hb5Tn8Wq1Zx4",
}
# The push stage's URL as the template hands it to the functions (`${PushApi.ApiEndpoint}/${PushStage}`). Posting
# goes to moto like every other AWS call of the local stack (WORKSPACE_AWS_ENDPOINT_URL), never to this host.
PUSH_URL = "wss://k3x9p2m7qa.execute-api.us-east-1.amazonaws.com/live"
PUSH_CALLBACK_URL = "https://k3x9p2m7qa.execute-api.us-east-1.amazonaws.com/live"


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
    own = {  # what template.yaml sets on the function itself, beside the Globals
        "api": {"WORKSPACE_PUSH_URL": PUSH_URL},
        "schedule": {"WORKSPACE_PUSH_URL": PUSH_URL},
        "events": {"WORKSPACE_PUSH_URL": PUSH_URL, "WORKSPACE_PUSH_CALLBACK_URL": PUSH_CALLBACK_URL},
        "push": {},
    }[folder]
    return {
        **own,
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


def in_fresh_interpreter(code: str, env: dict[str, str] | None = None) -> Any:
    """What `code` prints last, as JSON, run in a new interpreter with the layer on its path: what a cold start
    imports, seen from a process that has imported nothing else."""
    base = {"PYTHONPATH": str(ROOT / "layers" / "workspace"), "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**base, **(env or {})}, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


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


async def ok(client: Agent, tool: str, action: str | None = None, /, **arguments: Any) -> Any:
    """A call that must succeed, its JSON answer: `ok(agent, "agent", "load", ...)` or by an old name,
    `ok(agent, "load_agent", agent=...)` (the arguments flat, as that name takes them)."""
    text, is_error = await (client(tool, action, **arguments) if action else client.raw(tool, arguments))
    assert not is_error, text
    return json.loads(text)


async def refused(client: Agent, tool: str, arguments: dict[str, Any]) -> str:
    """A call by an old name that must fail: its error text."""
    text, is_error = await client.raw(tool, arguments)
    assert is_error, text
    return text
