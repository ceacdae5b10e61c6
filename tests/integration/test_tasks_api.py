"""The human side of tasks: the REST API over real HTTP against uvicorn, and what the agent then sees."""

import base64
import json

import httpx
import pytest
from botocore.exceptions import ClientError

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.tasks import TaskFilter
from agent_workspace.local.stack import seed
from tests.support import PROBLEM, TasksApi, assert_problem, b64, call, download_presigned

CONTENT = bytes(range(256)) * 3  # every byte value: base64 and the presigned link must both be byte-exact


def attachment(ident: str, data: bytes = CONTENT, **overrides: str) -> dict:
    return {"id": ident, "filename": "dump.bin", "mimeType": "application/octet-stream", "data": b64(data), **overrides}


@pytest.fixture
def api(live, seeded) -> TasksApi:
    return TasksApi(live, seeded.workspace_id, seeded.human_token)


def stored_objects(runtime, workspace_id: str) -> list[str]:
    listed = runtime.clients.s3.list_objects_v2(
        Bucket=runtime.settings.attachments_bucket, Prefix=f"workspaces/{workspace_id}/"
    )
    return [o["Key"] for o in listed.get("Contents", [])]


def test_a_task_the_human_creates_is_for_the_agent_and_listed(api):
    response = api.create(title="Update the changelog", body="Add the 0.2 entries.")

    assert response.status_code == 201
    task = response.json()
    assert (task["title"], task["body"]) == ("Update the changelog", "Add the 0.2 entries.")
    assert (task["assignee"], task["status"], task["createdBy"]) == ("agent", "notstarted", "human")
    assert task["attachments"] == []
    assert task["createdAt"] == task["updatedAt"]
    assert "history" not in task and "claim" not in task
    listed = api.listing().json()
    assert listed == {"tasks": [task], "nextCursor": None}


@pytest.mark.anyio
async def test_the_list_filters_by_status_and_assignee(api, runtime, seeded):
    for_agent = api.new_task("For the agent")["id"]
    done = api.new_task("Done already")["id"]
    assert api.patch(done, status="completed").status_code == 200
    created = await call(
        runtime,
        seeded.agent_token,
        "task",
        {"action": "create", "payload": {"title": "Approve the budget", "body": "", "assignee": "human"}},
    )
    assert not created.is_error, created.text
    for_human = created.text.rsplit("=", 1)[1]

    assert set(api.ids()) == {for_agent, done, for_human}
    assert set(api.ids(status="notstarted")) == {for_agent, for_human}
    assert api.ids(status="completed") == [done]
    assert api.ids(status="blocked") == []
    assert set(api.ids(assignee="agent")) == {for_agent, done}
    assert api.ids(assignee="human") == [for_human]
    assert api.ids(assignee="agent", status="notstarted") == [for_agent]


def test_the_list_pages_with_a_cursor_without_repeating_or_skipping(api):
    created = {api.new_task(f"Task {n}")["id"] for n in range(5)}

    pages, cursor = [], None
    while True:
        response = api.listing(limit=2, **({"cursor": cursor} if cursor else {}))
        assert response.status_code == 200, response.text
        page = response.json()
        pages.append([t["id"] for t in page["tasks"]])
        cursor = page["nextCursor"]
        if cursor is None:
            break
        assert len(pages) < 10, "the cursor never ends"

    assert [len(p) for p in pages] == [2, 2, 1]
    seen = [task_id for page in pages for task_id in page]
    assert len(seen) == len(set(seen)) == 5
    assert set(seen) == created


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "done"}, "status"),
        ({"assignee": "robot"}, "assignee"),
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
    ],
)
def test_bad_list_parameters_get_422_naming_them(api, params, field):
    assert_problem(api.listing(**params), 422, f"'{field}'")


def test_a_tampered_cursor_gets_422(api, seeded):
    task_id = api.new_task()["id"]
    for n in range(3):
        api.post_message(task_id, text=f"note {n}")
    foreign = base64.urlsafe_b64encode(json.dumps({"GSI2PK": {"S": "TASKS#elsewhere"}}).encode()).decode()

    for cursor in ("not-a-cursor", "e30", foreign):
        assert_problem(api.listing(cursor=cursor), 422, "cursor")
        assert_problem(api.get(task_id, cursor=cursor), 422, "cursor")


@pytest.fixture
def aws_start_key_rule(runtime):
    """DynamoDB's rule that moto does not enforce: a Query's ExclusiveStartKey must satisfy its key condition.
    AWS answers a start key outside a `begins_with` range with this ValidationException; here it does too."""

    def check(params: dict, **_) -> None:
        start, condition = params.get("ExclusiveStartKey"), params.get("KeyConditionExpression", "")
        if not start or "begins_with(GSI2SK, :status)" not in condition:
            return
        prefix = params["ExpressionAttributeValues"][":status"]["S"]
        if not start["GSI2SK"]["S"].startswith(prefix):
            raise ClientError(
                {
                    "Error": {
                        "Code": "ValidationException",
                        "Message": "The provided starting key is outside query boundaries based on provided conditions",
                    },
                    "ResponseMetadata": {"HTTPStatusCode": 400},
                },
                "Query",
            )

    events = runtime.clients.dynamodb.meta.events
    events.register("before-parameter-build.dynamodb.Query", check)
    yield
    events.unregister("before-parameter-build.dynamodb.Query", check)


def test_a_cursor_from_another_status_range_gets_422_naming_the_cursor(api, aws_start_key_rule):
    for n in range(3):
        api.new_task(title=f"task {n}")
    first = api.listing(status="notstarted", limit=1).json()
    cursor = first["nextCursor"]
    assert cursor is not None

    for other in ("completed", "ongoing"):
        assert_problem(api.listing(status=other, cursor=cursor), 422, "cursor")
    # In its own range, and in the listing of every status, the same cursor reads on.
    assert len(api.listing(status="notstarted", cursor=cursor).json()["tasks"]) == 2
    assert len(api.listing(cursor=cursor).json()["tasks"]) == 2


def test_the_boards_filtered_listing_refuses_a_cursor_from_another_status_range(
    api, runtime, seeded, aws_start_key_rule
):
    for n in range(3):
        api.new_task(title=f"task {n}")
    cursor = api.listing(status="notstarted", limit=1).json()["nextCursor"]
    with pytest.raises(PayloadError) as refused:
        runtime.tasks.list_filtered(seeded.workspace_id, "completed", TaskFilter(), 10, cursor)
    assert refused.value.field == "cursor"
    tasks, _ = runtime.tasks.list_filtered(seeded.workspace_id, "notstarted", TaskFilter(), 10, cursor)
    assert len(tasks) == 2


def test_get_shows_the_conversation_oldest_first_and_the_history(api):
    task_id = api.new_task()["id"]
    for text in ("first", "second", "third"):
        assert api.post_message(task_id, text=text).status_code == 201
    assert api.patch(task_id, status="blocked").status_code == 200

    response = api.get(task_id)

    assert response.status_code == 200
    got = response.json()
    assert (got["id"], got["status"], got["assignee"]) == (task_id, "blocked", "agent")
    messages = got["conversation"]["messages"]
    assert [m["text"] for m in messages] == ["first", "second", "third"]
    assert {(m["from"], m["kind"]) for m in messages} == {("human", "message")}
    assert got["conversation"]["nextCursor"] is None
    assert [(h["status"], h["by"]) for h in got["history"]] == [("notstarted", "human"), ("blocked", "human")]
    assert got["history"][0]["at"] == got["createdAt"]


def test_the_conversation_pages_with_limit_and_cursor(api):
    task_id = api.new_task()["id"]
    texts = [f"message {n}" for n in range(5)]
    for text in texts:
        api.post_message(task_id, text=text)

    seen, cursor, pages = [], None, 0
    while True:
        got = api.get(task_id, limit=2, **({"cursor": cursor} if cursor else {})).json()
        seen += [m["text"] for m in got["conversation"]["messages"]]
        assert got["id"] == task_id and len(got["history"]) == 1
        pages += 1
        cursor = got["conversation"]["nextCursor"]
        if cursor is None or pages > 5:
            break

    assert seen == texts
    assert pages == 3


def test_a_message_with_an_attachment_is_listed_and_its_content_downloads_intact(api):
    task_id = api.new_task()["id"]

    posted = api.post_message(task_id, text="The dump you asked for.", attachments=[attachment("dump")])

    assert posted.status_code == 201, posted.text
    message = posted.json()
    shown = {"id": "dump", "filename": "dump.bin", "mimeType": "application/octet-stream", "size": len(CONTENT)}
    assert (message["from"], message["text"], message["attachments"]) == ("human", "The dump you asked for.", [shown])
    conversation = api.get(task_id).json()["conversation"]["messages"]
    assert [(m["id"], m["attachments"]) for m in conversation] == [(message["id"], [shown])]

    as_base64 = api.attachment(task_id, "dump", format="base64")
    assert as_base64.status_code == 200, as_base64.text
    assert base64.b64decode(as_base64.json()["data"]) == CONTENT
    assert {k: v for k, v in as_base64.json().items() if k != "data"} == shown

    as_url = api.attachment(task_id, "dump")  # format=url is the default
    assert as_url.status_code == 200
    assert "data" not in as_url.json()
    downloaded = download_presigned(as_url.json()["url"])
    assert downloaded.status_code == 200
    assert downloaded.content == CONTENT
    assert "dump.bin" in downloaded.headers["content-disposition"]


def test_attachments_of_a_new_task_are_shown_and_served(api):
    task = api.new_task(attachments=[attachment("spec", b"# Spec\n", filename="spec.md", mimeType="text/markdown")])

    assert task["attachments"] == [{"id": "spec", "filename": "spec.md", "mimeType": "text/markdown", "size": 7}]
    got = api.attachment(task["id"], "spec", format="base64").json()
    assert base64.b64decode(got["data"]) == b"# Spec\n"


def test_patch_sets_the_status_and_the_history_grows(api):
    task_id = api.new_task()["id"]

    response = api.patch(task_id, status="ongoing")

    assert response.status_code == 200
    assert response.json()["status"] == "ongoing"
    assert api.patch(task_id, status="completed").json()["status"] == "completed"
    got = api.get(task_id).json()
    assert got["status"] == "completed"
    assert [h["status"] for h in got["history"]] == ["notstarted", "ongoing", "completed"]
    assert api.ids(status="completed") == [task_id]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"status": "done"}, "field 'status'"),
        ({"status": 3}, "field 'status'"),
        ({}, "missing required field 'status'"),
        ({"status": "ongoing", "title": "x"}, "unknown field 'title'"),
    ],
)
def test_a_bad_status_change_gets_422_problem_json_and_changes_nothing(api, body, expected):
    task_id = api.new_task()["id"]

    assert_problem(api.patch(task_id, **body), 422, expected)

    got = api.get(task_id).json()
    assert got["status"] == "notstarted" and len(got["history"]) == 1


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"body": "b"}, "missing required field 'title'"),
        ({"title": "t"}, "missing required field 'body'"),
        ({"title": "t", "body": 5}, "field 'body'"),
        ({"title": "t", "body": "b", "assignee": "human"}, "unknown field 'assignee'"),
        ({"title": 5, "body": "b"}, "field 'title'"),
        ({"title": "  ", "body": "b"}, "title must not be empty"),
        ({"title": "t", "body": "b", "attachments": [{"id": "a"}]}, "missing required field 'attachments[0].filename'"),
    ],
)
def test_bad_task_bodies_get_422_naming_the_field(api, body, expected):
    assert_problem(api.create(**body), 422, expected)
    assert api.ids() == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [(b'{"title": ', "not valid JSON"), (b"", "missing request body"), (b"[1]", "request body: ")],
)
def test_a_body_that_is_no_json_object_gets_422(api, content, expected):
    sent = httpx.post(api.base, content=content, headers={**api.headers, "content-type": "application/json"})
    assert_problem(sent, 422, expected)


def test_bad_base64_gets_422_naming_the_field_and_stores_nothing(api, runtime, seeded):
    task_id = api.new_task()["id"]
    files = [attachment("good"), {**attachment("bad"), "data": "not base64!"}]

    assert_problem(api.create(title="With files", body="", attachments=files), 422, "attachments[1].data")
    assert_problem(api.post_message(task_id, text="Files", attachments=files), 422, "attachments[1].data")

    assert api.ids() == [task_id]
    assert api.get(task_id).json()["conversation"]["messages"] == []
    assert stored_objects(runtime, seeded.workspace_id) == []


def test_an_unknown_task_or_attachment_gets_404_problem_json(api):
    task_id = api.new_task()["id"]

    assert_problem(api.get("0000000none"), 404, "0000000none")
    assert_problem(api.patch("0000000none", status="ongoing"), 404, "0000000none")
    assert_problem(api.post_message("0000000none", text="hello"), 404, "0000000none")
    assert_problem(api.attachment("0000000none", "x"), 404)
    assert_problem(api.attachment(task_id, "missing"), 404, "missing")


def every_route(api: TasksApi, task_id: str, attachment_id: str) -> list[httpx.Response]:
    """One request to each route of the tasks API with `api`'s token, each of which would change or show something."""
    return [
        api.listing(),
        api.create(title="Intruder", body=""),
        api.get(task_id),
        api.post_message(task_id, text="hello"),
        api.patch(task_id, status="completed"),
        api.attachment(task_id, attachment_id),
        api.attachment(task_id, attachment_id, format="base64"),
    ]


def test_another_accounts_human_gets_404_on_every_route_and_changes_nothing(live, runtime, seeded, api):
    task_id = api.new_task(attachments=[attachment("spec")])["id"]
    stranger = TasksApi(live, seeded.workspace_id, seed(runtime).human_token)

    for response in every_route(stranger, task_id, "spec"):
        assert_problem(response, 404, f"no workspace {seeded.workspace_id}")

    assert api.ids() == [task_id]
    got = api.get(task_id).json()
    assert got["status"] == "notstarted" and got["conversation"]["messages"] == []


def test_an_agent_token_gets_403_and_no_token_401(live, seeded, api):
    task_id = api.new_task()["id"]
    as_agent = TasksApi(live, seeded.workspace_id, seeded.agent_token)

    for response in every_route(as_agent, task_id, "x"):
        assert_problem(response, 403, "human token")

    anonymous = httpx.get(api.base)
    assert_problem(anonymous, 401, "missing bearer token")
    assert anonymous.headers["www-authenticate"].startswith('Bearer resource_metadata="')


def test_unknown_routes_and_methods_get_problem_json(live, seeded, api):
    assert_problem(httpx.get(f"{live.url}/api/nothing-here", headers=api.headers), 404, "/api/nothing-here")
    not_allowed = httpx.delete(api.base, headers=api.headers)
    assert_problem(not_allowed, 405, "DELETE")
    assert "GET" in not_allowed.headers["allow"]


@pytest.mark.anyio
async def test_the_agent_dequeues_a_task_the_human_created(api, runtime, seeded):
    task_id = api.new_task("Rotate the keys", body="Before Friday.")["id"]

    outcome = await call(runtime, seeded.agent_token, "task", {"action": "get"})

    assert not outcome.is_error, outcome.text
    got = json.loads(outcome.text)
    assert (got["id"], got["title"], got["createdBy"]) == (task_id, "Rotate the keys", "human")
    assert api.get(task_id).json()["claim"]["leaseExpiresAt"] == got["claim"]["leaseExpiresAt"]
    assert (await call(runtime, seeded.agent_token, "task", {"action": "get"})).text == "null"


def test_openapi_documents_the_task_routes_and_problem_json(live):
    schema = httpx.get(f"{live.url}/openapi.json").json()
    paths = schema["paths"]
    base = "/api/workspaces/{workspace_id}/tasks"
    assert set(paths[base]) == {"get", "post"}
    assert set(paths[base + "/{task_id}"]) == {"get", "patch", "delete"}
    assert set(paths[base + "/{task_id}/runs"]) == {"get"}
    assert set(paths[base + "/{task_id}/messages"]) == {"post"}
    assert set(paths[base + "/{task_id}/attachments/{attachment_id}"]) == {"get"}
    not_found = paths[base + "/{task_id}"]["get"]["responses"]["404"]["content"]
    assert set(not_found) == {PROBLEM}
    assert set(not_found[PROBLEM]["schema"]["properties"]) == {"type", "title", "status", "detail"}
    invalid = paths[base]["post"]["responses"]["422"]["content"]
    assert set(invalid) == {PROBLEM}
    listing = paths[base]["get"]["parameters"]
    assert {p["name"] for p in listing} == {"workspace_id", "assignee", "status", "limit", "cursor"}
