"""Long waits (an agent's `elicit` or site-tool call, the browser's bridge poll) never starve the server, end
when their client hangs up, and never hold up `make serve`'s shutdown."""

import functools
import inspect
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import pytest

from agent_workspace.domain.tokens import hash_token
from agent_workspace.services import elicitations, site_tools
from agent_workspace.services.tasks import Actor, NewTask, create_task
from agent_workspace.store import keys
from agent_workspace.store.dynamo import get_item
from agent_workspace.store.waits import Lease
from tests.support import connected, free_port, wait_until_healthy

MCP = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
}
DEV_AGENT_TOKEN = "aw_agent_fixed-for-waits-0123456789abcdef"
DEV_HUMAN_TOKEN = "aw_human_fixed-for-waits-0123456789abcdef"


def wait_until(condition: Callable[[], Any], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        time.sleep(0.02)


@contextmanager
def request_left_open(url: str, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> Iterator[None]:
    """A request sent whole whose answer is never read: leaving the block closes the socket (the hang-up)."""
    parts = urlsplit(url)
    lines = [f"{method} {path} HTTP/1.1", f"host: {parts.netloc}", f"content-length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    with socket.create_connection((parts.hostname, parts.port)) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        yield


def tool_call(tool: str, action: str, payload: dict) -> bytes:
    arguments = {"action": action, "payload": payload}
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    ).encode()


def recording(monkeypatch, module: Any, name: str) -> dict[str, Any]:
    """Replace the wait `module.name` (coroutine function or plain) by one noting when it returned, and what."""
    ended: dict[str, Any] = {}
    real = getattr(module, name)

    def noted(result: Any) -> Any:
        ended.update(result=result, at=time.monotonic())
        return result

    async def waits(*args: Any, **kwargs: Any) -> Any:
        return noted(await real(*args, **kwargs))

    def blocks(*args: Any, **kwargs: Any) -> Any:
        return noted(real(*args, **kwargs))

    monkeypatch.setattr(module, name, waits if inspect.iscoroutinefunction(real) else blocks)
    return ended


def counting(monkeypatch, store: Any, name: str) -> list[float]:
    """Note every call of the store method `store.name`: the wait's reads."""
    calls: list[float] = []
    real = getattr(store, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(time.monotonic())
        return real(*args, **kwargs)

    monkeypatch.setattr(store, name, wrapper)
    return calls


def hang_up_after_two_reads(url: str, method: str, path: str, headers: dict[str, str], body: bytes, reads: list[float],
                            ended: dict[str, Any]) -> float:  # fmt: skip
    """Send the request, hang up once the wait serving it has read the store twice, and wait for that wait to end
    (`ended`, from `recording`): how many seconds after the hang-up it ended. No read comes after its end."""
    with request_left_open(url, method, path, headers, body):
        wait_until(lambda: len(reads) >= 2, 10, "the wait reads the store")
    hung_up = time.monotonic()
    wait_until(lambda: ended, 5, "the wait ends after the hang-up")
    assert all(read <= ended["at"] for read in reads)
    return ended["at"] - hung_up


def new_task(runtime, seeded) -> str:
    return create_task(runtime, Actor("human", seeded.account_id, seeded.workspace_id, "t"), NewTask("Release", "")).id


# -- waits hold no worker thread ------------------------------------------------------------------


def test_many_bridge_polls_at_once_leave_the_server_free_to_answer_other_requests(live, runtime, seeded, monkeypatch):
    """anyio lends sync routes 40 threads: polls that slept in them kept /health waiting for a poll to end."""
    polls, threads = 48, 40
    runtime.settings = runtime.settings.model_copy(update={"waits_per_token": polls, "waits_per_account": polls})
    started = counting(monkeypatch, runtime.site_tools, "seen")  # a poll's first store call
    human = {"authorization": f"Bearer {seeded.human_token}"}
    health: list[float] = []

    async def main() -> None:
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
        async with (
            httpx.AsyncClient(base_url=live.url, headers=human, timeout=30, limits=limits) as http,
            anyio.create_task_group() as waiting,
        ):
            for _ in range(polls):
                waiting.start_soon(functools.partial(http.get, "/api/bridge/calls", params={"wait": 10}))
            with anyio.fail_after(10):
                while len(started) < threads:
                    await anyio.sleep(0.02)
            for _ in range(3):
                asked = time.monotonic()
                response = await http.get("/health", timeout=15)
                assert response.status_code == 200
                health.append(time.monotonic() - asked)
            waiting.cancel_scope.cancel()

    anyio.run(main)
    assert max(health) < 5.0, health  # it was the polls' 10 s (the bound leaves room for a loaded CI machine)


# -- a client that hangs up ends the wait serving it ---------------------------------------------------


def test_an_elicit_whose_client_hangs_up_stops_reading_the_store(live, runtime, seeded, monkeypatch):
    runtime.settings = runtime.settings.model_copy(update={"agent_wait_seconds": 300})
    reads = counting(monkeypatch, runtime.elicitations, "get")
    ended = recording(monkeypatch, elicitations, "wait_for_answer")
    body = tool_call("task", "elicit", {"taskId": new_task(runtime, seeded), "message": "Ship?", "mode": "url",
                                        "url": "https://x.example", "timeoutSeconds": 600})  # fmt: skip

    agent = {**MCP, "authorization": f"Bearer {seeded.agent_token}"}
    assert hang_up_after_two_reads(live.url, "POST", "/mcp", agent, body, reads, ended) < 4
    assert ended["result"]["action"] == "pending"


def test_a_site_call_whose_client_hangs_up_stops_reading_the_store(live, runtime, seeded, monkeypatch):
    runtime.settings = runtime.settings.model_copy(update={"agent_wait_seconds": 300})
    tool = {"name": "deploy", "description": "Deploy", "inputSchema": {"type": "object"}, "annotations": {}}
    shared = [{"origin": "https://ci.example", "title": "CI", "tools": [tool]}]
    site_tools.report_sites(runtime, seeded.account_id, shared)
    reads = counting(monkeypatch, runtime.site_tools, "get_call")
    ended = recording(monkeypatch, site_tools, "wait_for_result")
    body = tool_call("siteTools", "call", {"taskId": new_task(runtime, seeded), "site": "https://ci.example",
                                           "tool": "deploy", "arguments": {}})  # fmt: skip

    agent = {**MCP, "authorization": f"Bearer {seeded.agent_token}"}
    assert hang_up_after_two_reads(live.url, "POST", "/mcp", agent, body, reads, ended) < 3  # pending the human
    assert ended["result"]["status"] == "pending"


def test_a_bridge_poll_whose_browser_hangs_up_ends_without_claiming_anything(live, runtime, seeded, monkeypatch):
    reads = counting(monkeypatch, runtime.site_tools, "queued_for_bridge")
    ended = recording(monkeypatch, site_tools, "poll_calls")

    human = {"authorization": f"Bearer {seeded.human_token}"}
    assert hang_up_after_two_reads(live.url, "GET", "/api/bridge/calls?wait=25", human, b"", reads, ended) < 2
    assert ended["result"] == []


# -- `make serve` stops at once -------------------------------------------------------------------------


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl+C"])
def test_serve_exits_promptly_while_an_agent_waits_for_the_human(stop):
    port = free_port()
    env = {**os.environ, "HOST": "127.0.0.1", "PORT": str(port), "WORKSPACE_DEV_AGENT_TOKEN": DEV_AGENT_TOKEN,
           "WORKSPACE_DEV_HUMAN_TOKEN": DEV_HUMAN_TOKEN, "WORKSPACE_AGENT_WAIT_SECONDS": "300"}  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_workspace.local"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    output: list[bytes] = []
    reader = threading.Thread(target=lambda: output.extend(process.stdout), daemon=True)  # never a full pipe
    url = f"http://127.0.0.1:{port}"
    reader.start()
    try:
        wait_until_healthy(url, process, lambda: b"".join(output).decode(errors="replace"))
        human = {"authorization": f"Bearer {DEV_HUMAN_TOKEN}"}
        (workspace,) = httpx.get(f"{url}/api/workspaces", headers=human).json()
        tasks = f"{url}/api/workspaces/{workspace['id']}/tasks"
        task = httpx.post(tasks, headers=human, json={"title": "Release", "body": ""}).json()
        body = tool_call("task", "elicit", {"taskId": task["id"], "message": "Ship?", "mode": "url",
                                            "url": "https://x.example", "timeoutSeconds": 600})  # fmt: skip
        questions = f"{url}/api/workspaces/{workspace['id']}/elicitations?status=pending"
        with request_left_open(url, "POST", "/mcp", {**MCP, "authorization": f"Bearer {DEV_AGENT_TOKEN}"}, body):
            wait_until(lambda: httpx.get(questions, headers=human).json(), 10, "the agent waits for the answer")
            stopping = time.monotonic()
            process.send_signal(stop)
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=15)
            stopped = time.monotonic() - stopping
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert stopped < 8, b"".join(output).decode(errors="replace")[-3000:]


# -- waits in flight are bounded per token and per account ------------------------------------------------


def leases(runtime, account_id: str) -> set[str]:
    """The account's waits in flight, as the store holds them."""
    item = get_item(runtime.clients.dynamodb, runtime.settings.table_name, keys.waits_pk(account_id), keys.WAITS_SK)
    return set((item or {}).get("all", ()))


def token_id_of(runtime, token: str) -> str:
    principal = runtime.accounts.resolve_token(hash_token(token))
    assert principal is not None
    return principal.token_id


def hold(runtime, account_id: str, token_id: str, seconds: int = 60) -> Lease:
    """A wait in flight elsewhere (another Lambda instance): its lease, taken in the store directly."""
    now = int(runtime.clock().timestamp())
    lease = Lease(token_id, f"elsewhere-{time.monotonic_ns()}", now + seconds)
    assert runtime.waits.take(account_id, lease, now, 100, 100) is None
    return lease


async def until(condition: Callable[[], Any], seconds: float, what: str) -> None:
    with anyio.fail_after(seconds):
        while not condition():
            await anyio.sleep(0.02)


def test_a_token_with_its_waits_in_flight_is_refused_one_more_with_429_saying_how_many(live, runtime, seeded):
    runtime.settings = runtime.settings.model_copy(update={"waits_per_token": 2})
    agent = {"authorization": f"Bearer {seeded.agent_token}"}
    outcome: dict[str, httpx.Response] = {}

    async def main() -> None:
        async with (
            httpx.AsyncClient(base_url=live.url, headers=agent, timeout=30) as http,
            anyio.create_task_group() as waiting,
        ):
            for _ in range(2):
                waiting.start_soon(functools.partial(http.get, "/api/channel/events", params={"wait": 20}))
            await until(lambda: len(leases(runtime, seeded.account_id)) == 2, 10, "two polls wait")
            outcome["refused"] = await http.get("/api/channel/events", params={"wait": 20})
            outcome["at_once"] = await http.get("/api/channel/events", params={"wait": 0})  # waits for nothing
            waiting.cancel_scope.cancel()  # the two polls hang up

    anyio.run(main)
    refused = outcome["refused"]
    assert refused.status_code == 429, refused.text
    assert "2 waits already in flight for this token" in refused.json()["detail"]
    assert "retry when one ends" in refused.json()["detail"]
    assert 1 <= int(refused.headers["retry-after"]) <= 20 + 1
    assert outcome["at_once"].status_code == 200
    wait_until(lambda: not leases(runtime, seeded.account_id), 5, "the polls that hung up let their slots go")
    again = httpx.get(f"{live.url}/api/channel/events", params={"wait": 0.3}, headers=agent, timeout=30)
    assert again.status_code == 200 and not leases(runtime, seeded.account_id)  # taken, then let go


@pytest.mark.anyio
async def test_an_accounts_waits_in_flight_refuse_an_elicit_of_another_token_before_it_asks(live, runtime, seeded):
    """The account cap counts every token of the account; a refused elicit stores no question to ask twice."""
    runtime.settings = runtime.settings.model_copy(update={"waits_per_token": 5, "waits_per_account": 1})
    hold(runtime, seeded.account_id, token_id_of(runtime, seeded.human_token))  # the browser's poll
    task_id = new_task(runtime, seeded)
    async with connected(live.url, seeded.agent_token) as agent:
        text, is_error = await agent("task", "elicit", taskId=task_id, message="Ship?", mode="url",
                                     url="https://x.example", timeoutSeconds=600)  # fmt: skip
    assert is_error
    assert text.startswith("task elicit: 1 waits already in flight for this account")
    assert "retry when one ends" in text
    assert elicitations.open_questions(runtime, seeded.workspace_id, None) == []


def test_a_bridge_poll_is_refused_while_the_accounts_agents_hold_every_wait(live, runtime, seeded):
    runtime.settings = runtime.settings.model_copy(update={"waits_per_account": 2})
    agent_token_id = token_id_of(runtime, seeded.agent_token)
    held = [hold(runtime, seeded.account_id, agent_token_id) for _ in range(2)]
    human = {"authorization": f"Bearer {seeded.human_token}"}
    refused = httpx.get(f"{live.url}/api/bridge/calls", params={"wait": 5}, headers=human, timeout=30)
    assert refused.status_code == 429 and "2 waits already in flight for this account" in refused.json()["detail"]
    runtime.waits.let_go(seeded.account_id, held[0])
    assert httpx.get(f"{live.url}/api/bridge/calls", params={"wait": 0.3}, headers=human, timeout=30).json() == {
        "calls": []
    }


def test_a_wait_whose_lambda_was_killed_frees_its_slot_when_its_lease_expires(live, runtime, seeded, clock):
    """A killed invocation never lets go; its lease (the wait's cap plus slack) runs out, and the next wait drops it."""
    runtime.settings = runtime.settings.model_copy(update={"waits_per_token": 1})
    hold(runtime, seeded.account_id, token_id_of(runtime, seeded.agent_token), seconds=55)
    agent = {"authorization": f"Bearer {seeded.agent_token}"}
    poll = functools.partial(httpx.get, f"{live.url}/api/channel/events", headers=agent, timeout=30)
    assert poll(params={"wait": 0.3}).status_code == 429
    clock.advance(seconds=56)
    assert poll(params={"wait": 0.3}).status_code == 200
    assert not leases(runtime, seeded.account_id)  # the dead lease dropped, the poll's own let go


@pytest.mark.anyio
async def test_a_site_call_over_the_tokens_waits_is_refused_before_it_starts(live, runtime, seeded):
    runtime.settings = runtime.settings.model_copy(update={"waits_per_token": 1})
    tool = {"name": "deploy", "description": "Deploy", "inputSchema": {"type": "object"}, "annotations": {}}
    shared = [{"origin": "https://ci.example", "title": "CI", "tools": [tool]}]
    site_tools.report_sites(runtime, seeded.account_id, shared)
    hold(runtime, seeded.account_id, token_id_of(runtime, seeded.agent_token))  # its channel poll, say
    task_id = new_task(runtime, seeded)
    async with connected(live.url, seeded.agent_token) as agent:
        text, is_error = await agent("siteTools", "call", taskId=task_id, site="https://ci.example", tool="deploy",
                                     arguments={})  # fmt: skip
    assert is_error and text.startswith("siteTools call: 1 waits already in flight for this token")
    assert site_tools.calls_of(runtime, seeded.workspace_id, None) == []  # nothing to start again
