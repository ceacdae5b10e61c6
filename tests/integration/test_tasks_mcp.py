"""The agent side of tasks, through the SDK's own MCP client against the app under uvicorn."""

import base64
import json
from datetime import UTC, datetime

import pytest

from agent_workspace.domain.tasks import MAX_ATTACHMENT_BYTES
from agent_workspace.domain.tokens import TokenKind, hash_token
from agent_workspace.local.stack import seed
from agent_workspace.services import accounts
from tests.support import CREATED, Agent, b64, download_presigned, mcp_client

pytestmark = pytest.mark.anyio


def attachment(ident: str, data: bytes, filename: str = "notes.txt", mime: str = "text/plain") -> dict:
    return {"id": ident, "filename": filename, "mimeType": mime, "data": b64(data)}


# -- create and read --------------------------------------------------------------------------


async def test_create_answers_with_the_id_and_get_by_id_returns_the_task_without_dequeuing(agent):
    task_id = await agent.create(title="Review notes", body="Check v0.9.20", clearContext=True)
    task = await agent.get(taskId=task_id)
    assert task["id"] == task_id
    assert (task["title"], task["body"], task["status"], task["assignee"]) == (
        "Review notes",
        "Check v0.9.20",
        "notstarted",
        "agent",
    )
    assert task["clearContext"] is True and task["attachments"] == []
    assert (await agent.get(taskId=task_id))["status"] == "notstarted"
    dequeued = await agent.get()
    assert dequeued["id"] == task_id and dequeued["clearContext"] is True


async def test_dequeue_hands_out_the_oldest_agent_task_records_the_claim_and_then_null(agent, seeded, runtime):
    first = await agent.create(title="first", body="")
    await agent.create(title="for the human", body="", assignee="human")
    second = await agent.create(title="second", body="")

    got_first, got_second = await agent.get(), await agent.get()
    assert (got_first["id"], got_second["id"]) == (first, second)
    token_id = runtime.accounts.resolve_token(hash_token(seeded.agent_token)).token_id
    assert got_first["claim"]["tokenId"] == token_id
    assert got_first["claim"]["leaseExpiresAt"] > got_first["claim"]["claimedAt"]
    text, is_error = await agent("task", "get")
    assert (text, is_error) == ("null", False)


async def test_update_status_is_kept_in_history_counted_and_takes_the_task_off_the_queue(agent, runtime, seeded):
    task_id = await agent.create(title="t", body="b")
    text, is_error = await agent("task", "updateStatus", taskId=task_id, status="ongoing")
    assert (text, is_error) == (f"task {task_id} status set to ongoing", False)
    assert (await agent("task", "get"))[0] == "null"
    await agent("task", "updateStatus", taskId=task_id, status="blocked")
    await agent("task", "updateStatus", taskId=task_id, status="completed")

    stored = runtime.tasks.get(seeded.workspace_id, task_id)
    assert [h["status"] for h in stored.history] == ["notstarted", "ongoing", "blocked", "completed"]
    counts = json.loads((await agent("workspace", "get"))[0])["taskCounts"]
    assert counts == {"notstarted": 0, "ongoing": 0, "blocked": 0, "completed": 1, "rejected": 0}

    await agent("task", "updateStatus", taskId=task_id, status="notstarted")
    assert (await agent.get())["id"] == task_id  # back in the queue


async def test_a_change_stamped_by_a_clock_behind_the_last_one_keeps_the_history_in_order(
    agent, runtime, seeded, clock
):
    # Two instances' clocks differ a little, and a change that lost a race is applied after a later one.
    clock.set(datetime(2026, 12, 2, 9, 0, 5, tzinfo=UTC))
    task_id = await agent.create(title="t", body="b")
    await agent("task", "updateStatus", taskId=task_id, status="ongoing")
    clock.advance(seconds=-3)
    await agent("task", "updateStatus", taskId=task_id, status="blocked")

    stored = runtime.tasks.get(seeded.workspace_id, task_id)
    assert [(h["status"], h["at"]) for h in stored.history[1:]] == [
        ("ongoing", "2026-12-02T09:00:05.000Z"),
        ("blocked", "2026-12-02T09:00:05.000Z"),
    ]
    assert stored.updated_at == "2026-12-02T09:00:05.000Z"


async def test_a_change_read_before_another_went_there_and_back_is_read_again_not_written_out_of_order(
    agent, runtime, seeded, clock, monkeypatch
):
    # A change reads the task as ongoing; before it writes, others move it to blocked and back to ongoing.
    # Its status condition still holds: only the history as read tells that the task changed meanwhile.
    clock.set(datetime(2026, 12, 2, 9, 0, 0, tzinfo=UTC))
    task_id = await agent.create(title="t", body="b")
    await agent("task", "updateStatus", taskId=task_id, status="ongoing")
    stale = runtime.tasks.get(seeded.workspace_id, task_id, consistent=True)
    for status in ("blocked", "ongoing"):
        clock.advance(seconds=10)
        await agent("task", "updateStatus", taskId=task_id, status=status)
    reads = iter([stale])
    real_get = runtime.tasks.get
    monkeypatch.setattr(runtime.tasks, "get", lambda *args, **kw: next(reads, None) or real_get(*args, **kw))

    runtime.tasks.set_status(
        seeded.account_id, seeded.workspace_id, task_id, "completed", {"by": "agent"}, stale.updated_at
    )

    history = real_get(seeded.workspace_id, task_id, consistent=True).history
    assert [h["status"] for h in history] == ["notstarted", "ongoing", "blocked", "ongoing", "completed"]
    assert [h["at"] for h in history] == sorted(h["at"] for h in history)


async def test_a_status_outside_the_five_is_refused_naming_the_field(agent):
    task_id = await agent.create(title="t", body="b")
    text, is_error = await agent("task", "updateStatus", taskId=task_id, status="done")
    assert is_error
    assert text.startswith("task updateStatus: field 'status' must be 'ongoing', 'completed', 'blocked'")


async def test_an_unstarted_claim_expires_after_the_lease_and_the_task_returns_to_the_queue(
    live, runtime, seeded, clock
):
    clock.set(datetime(2026, 12, 1, 9, 0, tzinfo=UTC))
    other = accounts.issue_token(runtime.accounts, TokenKind.AGENT, seeded.account_id, seeded.workspace_id).token
    async with mcp_client(live.url, seeded.agent_token) as first, mcp_client(live.url, other) as second:
        crashed, healthy = Agent(first), Agent(second)
        task_id = await crashed.create(title="t", body="b")
        assert (await crashed.get())["id"] == task_id
        assert (await healthy("task", "get"))[0] == "null"
        clock.advance(seconds=runtime.settings.claim_lease_seconds - 1)
        assert (await healthy("task", "get"))[0] == "null"
        clock.advance(seconds=2)
        reclaimed = await healthy.get()
        assert reclaimed["id"] == task_id
        assert reclaimed["claim"]["claimedAt"] == "2026-12-01T09:30:01.000Z"


async def test_a_dequeued_task_set_back_to_notstarted_goes_straight_back_to_the_queue(live, runtime, seeded):
    other = accounts.issue_token(runtime.accounts, TokenKind.AGENT, seeded.account_id, seeded.workspace_id)
    async with mcp_client(live.url, seeded.agent_token) as first, mcp_client(live.url, other.token) as second:
        giving_up, taking_over = Agent(first), Agent(second)
        task_id = await giving_up.create(title="t", body="b")
        assert (await giving_up.get())["id"] == task_id
        assert (await taking_over("task", "get"))[0] == "null"  # claimed

        text, is_error = await giving_up("task", "updateStatus", taskId=task_id, status="notstarted")
        assert (text, is_error) == (f"task {task_id} status set to notstarted", False)
        assert "claim" not in await giving_up.get(taskId=task_id)

        handed_on = await taking_over.get()  # at once, not when the 30-minute lease runs out
        assert handed_on["id"] == task_id and handed_on["claim"]["tokenId"] == other.record.id
        assert (await giving_up("task", "get"))[0] == "null"
        stored = runtime.tasks.get(seeded.workspace_id, task_id)
        assert [h["status"] for h in stored.history] == ["notstarted"]  # no status changed
        counts = runtime.accounts.get_workspace(seeded.account_id, seeded.workspace_id).task_counts
        assert counts["notstarted"] == 1


# -- conversation and attachments ---------------------------------------------------------------


async def test_reply_adds_to_the_conversation_oldest_first_in_pages(agent):
    task_id = await agent.create(title="t", body="b")
    for number in range(5):
        text, is_error = await agent("task", "reply", taskId=task_id, text=f"message {number}")
        assert not is_error and text.startswith(f"reply posted to task {task_id} with id=")
    seen, cursor = [], None
    while True:
        paging = {"cursor": cursor} if cursor else {}
        page = await agent.get(taskId=task_id, includeConversation=True, limit=2, **paging)
        seen += [m["text"] for m in page["conversation"]["messages"]]
        assert all(m["from"] == "agent" for m in page["conversation"]["messages"])
        cursor = page["conversation"]["nextCursor"]
        if cursor is None:
            break
    assert seen == [f"message {number}" for number in range(5)]


async def test_attachments_round_trip_byte_for_byte_through_base64_and_the_presigned_link(agent):
    binary = bytes(range(256)) * 40
    task_id = await agent.create(
        title="t", body="b", attachments=[attachment("dump", binary, "dump.bin", "application/octet-stream")]
    )
    task = await agent.get(taskId=task_id)
    assert task["attachments"] == [
        {"id": "dump", "filename": "dump.bin", "mimeType": "application/octet-stream", "size": len(binary)}
    ]
    inline, _ = await agent("task", "getAttachment", taskId=task_id, attachmentId="dump", format="base64")
    assert base64.b64decode(json.loads(inline)["data"]) == binary
    linked = json.loads((await agent("task", "getAttachment", taskId=task_id, attachmentId="dump"))[0])
    assert (linked["filename"], linked["mimeType"]) == ("dump.bin", "application/octet-stream")
    assert download_presigned(linked["url"]).content == binary

    await agent("task", "reply", taskId=task_id, text="log", attachments=[attachment("log", b"line 1\n")])
    conversation = (await agent.get(taskId=task_id, includeConversation=True))["conversation"]["messages"]
    assert conversation[0]["attachments"] == [
        {"id": "log", "filename": "notes.txt", "mimeType": "text/plain", "size": 7}
    ]
    log, _ = await agent("task", "getAttachment", taskId=task_id, attachmentId="log", format="base64")
    assert base64.b64decode(json.loads(log)["data"]) == b"line 1\n"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ([{**attachment("a", b"x"), "data": "not base64!"}], "attachments[0].data is not valid base64"),
        ([attachment("a", b"x", filename=" ")], "attachments[0].filename must be"),
        ([{**attachment("a", b"x"), "url": "https://example.com/x"}], "url is set by the server only"),
        ([attachment("a", b"x"), attachment("a", b"y")], "attachments[1].id 'a' is used twice"),
        ([attachment("a", b"x", mime="text")], "attachments[0].mimeType must be a MIME type"),
        ([attachment("big", b"\0" * (MAX_ATTACHMENT_BYTES + 1))], "more than 4 MiB"),
    ],
)
async def test_bad_attachments_are_refused_and_nothing_is_stored(agent, runtime, seeded, files, expected):
    text, is_error = await agent("task", "create", title="t", body="b", attachments=files)
    assert is_error and text.startswith("task create:") and expected in text
    assert runtime.tasks.list_page(seeded.workspace_id, None, None, 10, None)[0] == []
    listed = runtime.clients.s3.list_objects_v2(Bucket=runtime.settings.attachments_bucket)
    assert listed.get("KeyCount", 0) == 0


async def test_an_attachment_past_its_retention_is_an_error(agent, runtime, clock):
    task_id = await agent.create(title="t", body="b", attachments=[attachment("old", b"x")])
    clock.advance(days=runtime.settings.attachment_retention_days, seconds=1)
    for fmt in ("url", "base64"):
        text, is_error = await agent("task", "getAttachment", taskId=task_id, attachmentId="old", format=fmt)
        assert is_error and "expired" in text and "30 days" in text


# -- isolation, old names, strict decoding ------------------------------------------------------


async def test_another_workspaces_agent_sees_and_changes_nothing(live, runtime, seeded, agent):
    task_id = await agent.create(title="secret", body="b", attachments=[attachment("f", b"x")])
    _, other = accounts.create_workspace(runtime.accounts, seeded.account_id, "Other", "")
    stranger_account = seed(runtime)
    for token in (other.token, stranger_account.agent_token):
        async with mcp_client(live.url, token) as client:
            stranger = Agent(client)
            for action, payload in [
                ("get", {"taskId": task_id}),
                ("get", {"taskId": task_id, "includeConversation": True}),
                ("updateStatus", {"taskId": task_id, "status": "completed"}),
                ("reply", {"taskId": task_id, "text": "hi"}),
                ("getAttachment", {"taskId": task_id, "attachmentId": "f"}),
            ]:
                text, is_error = await stranger("task", action, **payload)
                assert is_error and "no " in text and "secret" not in text, (action, text)
            assert (await stranger("task", "get"))[0] == "null"
    task = await agent.get(taskId=task_id, includeConversation=True)
    assert task["status"] == "notstarted" and task["conversation"]["messages"] == []


async def test_old_tool_names_reach_the_task_actions(agent):
    text, _ = await agent.raw("createTask", {"title": "old", "body": "client"})
    task_id = CREATED.match(text).group(1)
    assert json.loads((await agent.raw("getTask", {"taskId": task_id}))[0])["title"] == "old"
    assert (await agent.raw("updateTaskStatus", {"taskId": task_id, "status": "ongoing"}))[1] is False
    text, is_error = await agent.raw("reply", {"chatId": task_id, "text": "via chatId"})
    assert not is_error
    flat, is_error = await agent.raw("task", {"action": "reply", "taskId": task_id, "text": "flat"})
    assert not is_error
    messages = (await agent.get(taskId=task_id, includeConversation=True))["conversation"]["messages"]
    assert [m["text"] for m in messages] == ["via chatId", "flat"]


@pytest.mark.parametrize("action", ["create", "get", "updateStatus", "reply", "getAttachment"])
async def test_every_action_refuses_unknown_fields_by_name(agent, action):
    text, is_error = await agent("task", action, verbose=True)
    assert is_error and text.startswith(f"task {action}: ") and "unknown field 'verbose'" in text


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"body": "b"}, "task create: missing required field 'title'"),
        ({"title": "t", "body": "b", "assignee": "robot"}, "task create: field 'assignee' must be 'human' or 'agent'"),
        ({"title": " ", "body": "b"}, "task create: title must not be empty"),
        ({"title": "t", "body": "b", "cronSchedule": "*/5 * * * *"}, "runs more than hourly"),
        ({"title": "t", "body": "b", "cronSchedule": "0-30 * * * *"}, "runs more than hourly"),
        ({"title": "t", "body": "b", "cronSchedule": "30 * * *"}, "must have 5 fields"),
        ({"title": "t", "body": "b", "cronSchedule": "30 25 * * *"}, "not a valid cron expression"),
        ({"title": "t", "body": "b", "cronSchedule": "30 * * * *", "timezone": "Mars/Olympus"}, "IANA time zone"),
        ({"title": "t", "body": "b", "eventId": "not base62!"}, "eventId must be a base62 id"),
        ({"title": "t", "body": "b", "eventId": "0kGoe9Xy3Vb"}, "is not an event of this account"),
        ({"title": 5, "body": "b"}, "task create: field 'title' must be a string"),
    ],
)
async def test_create_refuses_bad_fields_naming_them(agent, payload, expected):
    text, is_error = await agent("task", "create", **payload)
    assert is_error and expected in text, text


async def test_a_cron_task_is_a_template_and_never_dequeued(agent):
    task_id = await agent.create(title="hourly", body="b", cronSchedule="30 * * * *", timezone="Europe/Berlin")
    task = await agent.get(taskId=task_id)
    assert (task["cronSchedule"], task["timezone"]) == ("30 * * * *", "Europe/Berlin")
    assert (await agent("task", "get"))[0] == "null"


async def test_unknown_task_ids_are_not_found_errors(agent):
    for action, payload in [
        ("get", {"taskId": "0000000none"}),
        ("updateStatus", {"taskId": "0000000none", "status": "ongoing"}),
        ("reply", {"taskId": "0000000none", "text": "x"}),
    ]:
        text, is_error = await agent("task", action, **payload)
        assert is_error and "no task 0000000none" in text


async def test_a_cursor_from_elsewhere_is_refused(agent):
    task_id = await agent.create(title="t", body="b")
    forged = base64.urlsafe_b64encode(json.dumps({"PK": {"S": "WS#someoneelse"}, "SK": {"S": "x"}}).encode()).decode()
    text, is_error = await agent("task", "get", taskId=task_id, includeConversation=True, cursor=forged)
    assert is_error and "cursor" in text
