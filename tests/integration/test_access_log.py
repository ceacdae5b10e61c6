"""The local server's access log: one line per request, and never a secret carried in the URL."""

import json

import httpx
import pytest

from agent_workspace.api.access_log import AccessLog
from agent_workspace.app import create_app

pytestmark = pytest.mark.anyio

LINK_TOKEN = "v1.eyJ3IjoiV1MxMjMiLCJlIjoiRUxJQ0lUIn0.c2lnbmF0dXJlLXRoYXQtbXVzdC1uZXZlci1iZS1sb2dnZWQ"


@pytest.fixture
async def client(runtime):
    transport = httpx.ASGITransport(app=AccessLog(create_app(runtime)), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


def lines(logged) -> list[dict]:
    return [json.loads(line) for line in logged.getvalue().splitlines() if '"request"' in line]


async def test_each_request_is_logged_with_method_path_and_status_but_not_its_query(client, logged):
    await client.get("/health?token=aw_agent_secret")
    [line] = lines(logged)
    assert (line["method"], line["path"], line["status"]) == ("GET", "/health", 200)
    assert "aw_agent_secret" not in logged.getvalue()


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("prefix", ["/answer/", "/confirm-email/"])
async def test_a_signed_links_token_never_reaches_the_log(client, logged, method, prefix):
    await client.request(method, f"{prefix}{LINK_TOKEN}")
    [line] = lines(logged)
    assert line["path"] == f"{prefix}<redacted>"
    assert "signature-that" not in logged.getvalue() and LINK_TOKEN not in logged.getvalue()


async def test_an_internal_error_on_an_answer_link_logs_its_path_redacted(client, logged, monkeypatch):
    def broken(*_: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("agent_workspace.services.answer_links.read_answer_link", broken)
    assert (await client.get(f"/answer/{LINK_TOKEN}")).status_code == 500
    failed = [json.loads(line) for line in logged.getvalue().splitlines() if '"request failed"' in line]
    assert [line["path"] for line in failed] == ["/answer/<redacted>"]
    assert "signature-that" not in logged.getvalue()
