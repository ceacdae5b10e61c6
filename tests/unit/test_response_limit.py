"""No answer reaches Lambda larger than it may carry: past the limit the caller gets an error naming what to do."""

import json

import httpx
import pytest
from fastapi import FastAPI
from fastapi.responses import PlainTextResponse

from agent_workspace.api.response_limit import ResponseSizeLimit
from agent_workspace.domain import paging
from agent_workspace.mcp_server import dispatch as dispatch_module
from tests.support import call

pytestmark = pytest.mark.anyio


def app_answering(body: str) -> FastAPI:
    app = FastAPI()

    @app.get("/things")
    def things() -> PlainTextResponse:
        return PlainTextResponse(body, media_type="application/json")

    app.add_middleware(ResponseSizeLimit)
    return app


async def get(app: FastAPI) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        return await client.get("/things")


async def test_a_rest_answer_past_lambdas_response_limit_becomes_a_problem_naming_the_route():
    body = json.dumps(["x" * 1000] * 6500)  # 6.5 MB: Lambda would refuse it and the URL would answer 502

    response = await get(app_answering(body))

    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    detail = response.json()["detail"]
    assert detail.startswith("GET /things: the answer would take ") and "ask for less" in detail


async def test_an_answer_exactly_at_the_limit_passes_unchanged_and_one_byte_more_does_not():
    filler = paging.ANSWER_MAX - paging.body_wire_size(b'[""]')
    body = json.dumps(["x" * filler])
    assert paging.body_wire_size(body.encode()) == paging.ANSWER_MAX

    response = await get(app_answering(body))

    assert response.status_code == 200 and response.text == body
    assert (await get(app_answering(json.dumps(["x" * (filler + 1)])))).status_code == 422


async def test_quotes_count_twice_on_the_way_out():
    body = '"' * (paging.ANSWER_MAX // 2 + 1)  # under the limit in bytes, over it once escaped

    assert (await get(app_answering(body))).status_code == 422


@pytest.fixture
def small_answers(monkeypatch):
    monkeypatch.setattr(dispatch_module, "ANSWER_MAX", 2_000)
    return monkeypatch


async def test_a_tool_answer_past_the_limit_is_a_tool_error_and_nothing_stored_changes(runtime, seeded, small_answers):
    saved = await call(runtime, seeded.agent_token, "memory", {"action": "save", "payload": {"content": "n" * 3_000}})
    assert not saved.is_error, saved.text

    loaded = await call(runtime, seeded.agent_token, "memory", {"action": "load", "payload": {}})

    assert loaded.is_error
    assert loaded.text.startswith("memory load: the answer takes ") and "ask for less" in loaded.text
    small_answers.undo()
    again = await call(runtime, seeded.agent_token, "memory", {"action": "load", "payload": {}})
    assert "n" * 3_000 in again.text
