"""Pages bounded by bytes as well as by count, over REST and MCP, and through the deployed Lambda handler.

Lambda refuses a response over 6 MB (the Function URL answers 502): every listing ends its page before
its items take `page_bytes`, and hands out a cursor that resumes at the first item left out. Boundary
tests lower `page_bytes` on the test's runtime (the production code path, a smaller number) so they
need kilobytes of data, not megabytes; the realistic ones keep the production budget.
"""

import copy
import json
import secrets
import time

import httpx
import pytest

from agent_workspace.domain import paging
from agent_workspace.domain.clock import parse_iso
from agent_workspace.domain.models import Actor
from agent_workspace.services import tasks
from agent_workspace.services.tasks import NewTask
from agent_workspace.store.schedules import schedule_name
from agent_workspace.workers import fire_schedule
from tests.support import FUNCTION_NAMES, PROBLEM, ROOT, Clock, LambdaContext, bearer, load_function

# A text that grows on its way out: quotes and backslashes double at each string level, non-ASCII becomes \uXXXX.
AWKWARD = 'He said "ship it" \\ 漢字 é 😀. '


def with_budget(runtime, page_bytes: int) -> None:
    """Lower the page budget for the rest of the test: same code path, smaller number."""
    runtime.settings = runtime.settings.model_copy(update={"page_bytes": page_bytes})


def text(length: int, seed: str = AWKWARD) -> str:
    return (seed * (length // len(seed) + 1))[:length]


class Rest:
    """The human's REST API in one workspace."""

    def __init__(self, live, seeded) -> None:
        self.url = live.url
        self.workspace = seeded.workspace_id
        self.tasks = f"{live.url}/api/workspaces/{seeded.workspace_id}/tasks"
        self.headers = bearer(seeded.human_token)

    def get(self, url: str, **params) -> httpx.Response:
        return httpx.get(url, params={k: v for k, v in params.items() if v is not None}, headers=self.headers)

    def ok(self, url: str, **params) -> dict:
        response = self.get(url, **params)
        assert response.status_code == 200, response.text
        return response.json()

    def new_task(self, body: str) -> str:
        response = httpx.post(self.tasks, json={"title": "t", "body": body}, headers=self.headers)
        assert response.status_code == 201, response.text
        return response.json()["id"]

    def post_message(self, task_id: str, message: str) -> str:
        response = httpx.post(f"{self.tasks}/{task_id}/messages", json={"text": message}, headers=self.headers)
        assert response.status_code == 201, response.text
        return response.json()["id"]

    def pages(self, url: str, key, **params) -> list[dict]:
        """Every page of a listing, following nextCursor; `key` picks the page's items and cursor."""
        pages, cursor = [], None
        while True:
            page = self.ok(url, cursor=cursor, **params)
            pages.append(page)
            cursor = key(page)[1]
            if cursor is None:
                return pages
            assert len(pages) < 100, "the cursor never ends"


def problem(response: httpx.Response, status: int, *words: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    detail = response.json()["detail"]
    for word in words:
        assert word in detail, detail
    return detail


def skip_cursor(detail: str) -> str:
    """The cursor past an item too large for any page, as its error hands it out."""
    assert "to list what follows it, pass cursor " in detail, detail
    return detail.rsplit(" ", 1)[1]


def sizes(items: list) -> list[int]:
    return [paging.wire_size(item) for item in items]


@pytest.fixture
def rest(live, seeded) -> Rest:
    return Rest(live, seeded)


def tasks_page(page: dict):
    return page["tasks"], page["nextCursor"]


def conversation_page(page: dict):
    return page["conversation"]["messages"], page["conversation"]["nextCursor"]


# -- the workspace's tasks -------------------------------------------------------------------------


def test_a_task_page_exactly_at_the_byte_budget_holds_every_task_and_one_byte_less_moves_the_last(rest, runtime):
    for length in (1_000, 2_000, 3_000):
        rest.new_task(text(length))
    listed = rest.ok(rest.tasks)["tasks"]
    exact = sum(sizes(listed))

    with_budget(runtime, exact)
    assert rest.ok(rest.tasks) == {"tasks": listed, "nextCursor": None}

    with_budget(runtime, exact - 1)
    first = rest.ok(rest.tasks)
    assert first["tasks"] == listed[:2] and first["nextCursor"]
    assert rest.ok(rest.tasks, cursor=first["nextCursor"]) == {"tasks": listed[2:], "nextCursor": None}


def test_following_cursors_under_a_byte_budget_returns_every_task_exactly_once(rest, runtime):
    created = [rest.new_task(text(500 * (n % 4 + 1))) for n in range(9)]
    budget = 2 * max(sizes(rest.ok(rest.tasks)["tasks"]))
    with_budget(runtime, budget)

    pages = rest.pages(rest.tasks, tasks_page, assignee="agent", limit=200)  # assignee: the filtered read

    seen = [task["id"] for page in pages for task in page["tasks"]]
    assert sorted(seen) == sorted(created) and len(set(seen)) == len(created)
    assert all(sum(sizes(page["tasks"])) <= budget for page in pages)
    assert len(pages) >= 4  # the bytes ended the pages, not the limit of 200


def test_a_task_too_large_for_any_page_is_a_422_naming_it_and_the_cursor_goes_past_it(rest, runtime, seeded):
    for length in (100, 20_000, 200):
        rest.new_task(text(length))
    small, big, other = rest.ok(rest.tasks)["tasks"]
    with_budget(runtime, paging.wire_size(big) - 1)

    first = rest.ok(rest.tasks)
    assert first["tasks"] == [small]
    response = rest.get(rest.tasks, cursor=first["nextCursor"])

    detail = problem(
        response,
        422,
        f"task {big['id']} takes",
        f"read it on its own: GET /api/workspaces/{seeded.workspace_id}/tasks/{big['id']}",
    )
    assert rest.ok(rest.tasks, cursor=skip_cursor(detail)) == {"tasks": [other], "nextCursor": None}
    assert rest.ok(f"{rest.tasks}/{big['id']}")["body"] == big["body"]  # on its own, it is served


def test_the_realistic_listing_of_200_tasks_with_64_kib_bodies_comes_in_pages_each_under_6_mb(
    runtime, seeded, monkeypatch
):
    """13 MB of tasks, through the deployed handler at the production budget: each Lambda response fits."""
    actor = Actor("human", seeded.account_id, seeded.workspace_id, "tok-human")
    body = text(64 * 1024, "All work and no play makes a dull release. ")
    created = {tasks.create_task(runtime, actor, NewTask(title=f"Task {n}", body=body)).id for n in range(200)}
    handler = load_function("api", runtime, monkeypatch).handler
    path = f"/api/workspaces/{seeded.workspace_id}/tasks"

    seen, payloads, cursor = [], [], None
    while True:
        query = "limit=200" + (f"&cursor={cursor}" if cursor else "")
        response = handler(rest_event(seeded.human_token, path, query), context())
        payloads.append(len(json.dumps(response)))  # what the Lambda runtime sends back, and what 6 MB limits
        assert response["statusCode"] == 200, response["body"][:500]
        page = json.loads(response["body"])
        seen += [task["id"] for task in page["tasks"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break

    assert sorted(seen) == sorted(created)
    # A page is filled to what its items take as an MCP answer, which carries each twice (as text and as
    # structuredContent): over REST, which carries them once, a full page is a little under half the budget.
    assert len(payloads) == 6
    assert all(paging.PAGE_BYTES * 0.45 < size < paging.RESPONSE_MAX / 2 for size in payloads[:-1]), payloads


# -- a task's conversation -------------------------------------------------------------------------


def test_a_conversation_page_exactly_at_the_budget_counts_the_task_that_comes_with_it(rest, runtime):
    task_id = rest.new_task(text(3_000))
    for length in (1_000, 2_000, 3_000):
        rest.post_message(task_id, text(length))
    url = f"{rest.tasks}/{task_id}"
    got = rest.ok(url)
    messages = got["conversation"]["messages"]
    task = {k: v for k, v in got.items() if k != "conversation"}
    exact = paging.wire_size(task) + sum(sizes(messages))

    with_budget(runtime, exact)
    assert rest.ok(url) == got

    with_budget(runtime, exact - 1)
    pages = rest.pages(url, conversation_page)
    assert [conversation_page(page)[0] for page in pages] == [messages[:2], messages[2:]]
    assert all({k: v for k, v in page.items() if k != "conversation"} == task for page in pages)


def test_a_message_too_large_for_any_page_names_its_own_route_and_the_cursor_past_it(rest, runtime, seeded):
    task_id = rest.new_task("Read the logs.")
    small = rest.post_message(task_id, "Here they come.")
    big = rest.post_message(task_id, text(40_000))
    last = rest.post_message(task_id, "That was all.")
    url = f"{rest.tasks}/{task_id}"
    got = rest.ok(url)
    task = {k: v for k, v in got.items() if k != "conversation"}
    big_message = got["conversation"]["messages"][1]
    with_budget(runtime, paging.wire_size(task) + paging.wire_size(big_message) - 1)

    first = rest.ok(url)
    assert [m["id"] for m in first["conversation"]["messages"]] == [small]
    response = rest.get(url, cursor=first["conversation"]["nextCursor"])

    own_route = f"/api/workspaces/{seeded.workspace_id}/tasks/{task_id}/messages/{big}"
    detail = problem(response, 422, f"message {big} of task {task_id} takes", f"read it on its own: GET {own_route}")
    assert rest.ok(f"{rest.url}{own_route}") == big_message
    after = rest.ok(url, cursor=skip_cursor(detail))["conversation"]
    assert ([m["id"] for m in after["messages"]], after["nextCursor"]) == ([last], None)


def test_reading_one_message_of_another_task_or_a_made_up_one_is_a_404(rest):
    task_id = rest.new_task("One")
    other = rest.new_task("Two")
    message = rest.post_message(task_id, "hello")

    for path in (f"{other}/messages/{message}", f"{task_id}/messages/0000000none", f"{task_id}/messages/x"):
        problem(rest.get(f"{rest.tasks}/{path}"), 404, "no message")


@pytest.mark.anyio
async def test_task_get_pages_the_conversation_by_bytes_and_names_a_message_too_large(agent, runtime):
    task_id = await agent.create(title="Logs", body=text(2_000))
    for length in (1_000, 2_000, 30_000, 500):
        text_, is_error = await agent("task", "reply", taskId=task_id, text=text(length))
        assert not is_error, text_
    got = await agent.get(taskId=task_id, includeConversation=True)
    messages = got["conversation"]["messages"]
    task = {k: v for k, v in got.items() if k != "conversation"}
    reserved = paging.wire_size(task)

    with_budget(runtime, reserved + sum(sizes(messages[:2])))  # exactly the first two
    first = await agent.get(taskId=task_id, includeConversation=True)
    assert first["conversation"]["messages"] == messages[:2]
    answer, is_error = await agent(
        "task", "get", taskId=task_id, includeConversation=True, cursor=first["conversation"]["nextCursor"]
    )

    assert is_error
    assert answer.startswith(f"task get: message {messages[2]['id']} of task {task_id} takes"), answer
    rest = await agent.get(taskId=task_id, includeConversation=True, cursor=skip_cursor(answer))
    assert (rest["conversation"]["messages"], rest["conversation"]["nextCursor"]) == (messages[3:], None)


def test_a_realistic_conversation_over_mcp_comes_in_pages_each_under_6_mb(runtime, seeded, monkeypatch):
    """40 messages of 64 K characters that JSON inflates (CJK, quotes): 13 MB in one answer, were it sent at once."""
    actor = Actor("agent", seeded.account_id, seeded.workspace_id, "tok-agent")
    task = tasks.create_task(runtime, actor, NewTask(title="Translate", body="Into Japanese."))
    posted = [tasks.post_message(runtime, actor, task.id, text(64 * 1024, f'「{n}」"引用" '), []).id for n in range(40)]
    handler = load_function("api", runtime, monkeypatch).handler

    seen, payloads, cursor = [], [], None
    while True:
        arguments = {"action": "get", "payload": {"taskId": task.id, "includeConversation": True, "limit": 200}}
        if cursor:
            arguments["payload"]["cursor"] = cursor
        response = handler(mcp_event(seeded.agent_token, "task", arguments), context())
        payloads.append(len(json.dumps(response)))
        assert response["statusCode"] == 200, response["body"][:500]
        result = json.loads(response["body"])["result"]
        assert result["isError"] is False, result["content"][0]["text"][:500]
        page = json.loads(result["content"][0]["text"])
        seen += [m["id"] for m in page["conversation"]["messages"]]
        cursor = page["conversation"]["nextCursor"]
        if cursor is None:
            break

    assert seen == posted
    assert len(payloads) >= 3
    assert all(size < paging.RESPONSE_MAX for size in payloads), payloads


# -- a template's runs, and the account's publications ---------------------------------------------


def fire(runtime, seeded, template_id: str) -> None:
    """Deliver the template's schedule at its fire time, as EventBridge Scheduler would."""
    payload = runtime.schedules.get(schedule_name(seeded.workspace_id, template_id)).input
    runtime.clock = Clock(parse_iso(payload["fireAt"]))
    assert fire_schedule.handle(payload, runtime)["outcome"] == "created"


def test_runs_page_by_bytes_and_every_run_comes_once(rest, runtime, seeded):
    actor = Actor("human", seeded.account_id, seeded.workspace_id, "tok-human")
    template = tasks.create_task(runtime, actor, NewTask(title="Report", body=text(5_000), cron_schedule="30 * * * *"))
    for _ in range(3):
        fire(runtime, seeded, template.id)
    url = f"{rest.tasks}/{template.id}/runs"
    runs = rest.ok(url)["runs"]
    assert len(runs) == 3

    with_budget(runtime, sum(sizes(runs)))
    assert rest.ok(url) == {"runs": runs, "nextCursor": None}

    with_budget(runtime, sum(sizes(runs)) - 1)
    pages = rest.pages(url, lambda page: (page["runs"], page["nextCursor"]))
    assert [page["runs"] for page in pages] == [runs[:2], runs[2:]]


@pytest.mark.anyio
async def test_publications_page_by_bytes_and_every_one_comes_once(rest, runtime, agent):
    for length in (1_000, 3_000, 2_000, 4_000):
        answer, is_error = await agent("workspace", "publishEvent", name="deploy_done", payload=text(length))
        assert not is_error, answer
    url = f"{rest.url}/api/published-events"
    published = rest.ok(url)["publications"]
    assert len(published) == 4
    budget = sum(sizes(published[:2]))
    with_budget(runtime, budget)

    pages = rest.pages(url, lambda page: (page["publications"], page["nextCursor"]))

    assert [p for page in pages for p in page["publications"]] == published  # newest first, each once
    assert pages[0]["publications"] == published[:2]  # exactly at the budget
    assert len(pages) == 2 and sum(sizes(pages[1]["publications"])) <= budget


# -- the deployed handler ----------------------------------------------------------------------------


def context() -> LambdaContext:
    return LambdaContext(FUNCTION_NAMES["api"], secrets.token_hex(8))


def _event(sample: str, token: str) -> dict:
    event = json.loads((ROOT / "events" / sample).read_text())
    event["headers"]["authorization"] = f"Bearer {token}"
    event["requestContext"]["requestId"] = secrets.token_hex(8)
    event["requestContext"]["timeEpoch"] = int(time.time() * 1000)
    return event


def rest_event(token: str, path: str, query: str) -> dict:
    event = _event("api_list_workspaces.json", token)
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["rawQueryString"] = query
    return event


def mcp_event(token: str, tool: str, arguments: dict) -> dict:
    event = copy.deepcopy(_event("mcp_tools_call_help.json", token))
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    event["body"] = json.dumps(call)
    return event
