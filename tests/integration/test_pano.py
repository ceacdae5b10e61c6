"""The pano tool: markdown docs every workspace of an account shares, through the SDK's own MCP client."""

import json
import re
import threading
from datetime import UTC, datetime, timedelta

import anyio
import httpx
import pytest

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.models import Actor
from agent_workspace.domain.pano import MARKDOWN_MAX
from agent_workspace.domain.tokens import hash_token
from agent_workspace.local.drivers import ScheduleDriver
from agent_workspace.local.stack import seed
from agent_workspace.services import accounts
from agent_workspace.services import pano as pano_service
from agent_workspace.store.blobs import pano_prefix
from agent_workspace.store.schedules import at_expression, parse_at
from agent_workspace.tools.task import AttachmentIn
from agent_workspace.workers import fire_schedule
from tests.support import Agent, assert_problem, b64, bearer, download_presigned, mcp_client

pytestmark = pytest.mark.anyio

START = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
BASE62_ID = re.compile(r"^[0-9A-Za-z]{11}$")
COMMENTED = re.compile(r"^comment added to doc ([0-9A-Za-z]{11}) with id=([0-9A-Za-z]{11})$")
UNKNOWN = "0000000none"


class Pano(Agent):
    """The shared agent bound to the pano tool: `await pano("save", title=...)` → (text, is_error)."""

    async def __call__(self, action: str, /, **payload) -> tuple[str, bool]:
        return await self.act("pano", action, **payload)

    async def save(self, **payload) -> dict:
        text, is_error = await self("save", **payload)
        assert not is_error, text
        return json.loads(text)

    async def read(self, **payload) -> dict:
        text, is_error = await self("read", **payload)
        assert not is_error, text
        return json.loads(text)

    async def comment(self, doc_id: str, comment: str) -> str:
        text, is_error = await self("comment", id=doc_id, comment=comment)
        assert not is_error, text
        match = COMMENTED.match(text)
        assert match and match.group(1) == doc_id, text
        return match.group(2)


@pytest.fixture
def agent_type() -> type[Agent]:
    return Pano


def file_in(ident: str, filename: str, data: bytes, mime: str = "application/octet-stream") -> dict:
    return {"id": ident, "filename": filename, "mimeType": mime, "data": b64(data)}


def linked_file(ident: str, filename: str, data: bytes) -> AttachmentIn:
    """A file as the tool hands it to the service."""
    return AttachmentIn(**file_in(ident, filename, data))


def s3_keys(runtime, prefix: str = "") -> list[str]:
    listed = runtime.clients.s3.list_objects_v2(Bucket=runtime.settings.attachments_bucket, Prefix=prefix)
    return sorted(item["Key"] for item in listed.get("Contents", []))


def raw_doc(runtime, account_id: str, doc_id: str) -> dict | None:
    return runtime.clients.dynamodb.get_item(
        TableName=runtime.settings.table_name,
        Key={"PK": {"S": f"ACCOUNT#{account_id}"}, "SK": {"S": f"PANO#{doc_id}"}},
        ConsistentRead=True,
    ).get("Item")


def raw_comments(runtime, account_id: str, doc_id: str) -> list[dict]:
    return runtime.clients.dynamodb.query(
        TableName=runtime.settings.table_name,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues={":pk": {"S": f"ACCOUNT#{account_id}"}, ":prefix": {"S": f"PANOCMT#{doc_id}#"}},
        ConsistentRead=True,
    )["Items"]


def expiry_schedule(runtime, account_id: str, doc_id: str) -> dict:
    return runtime.clients.scheduler.get_schedule(
        Name=f"pano-{account_id}-{doc_id}", GroupName=runtime.settings.schedule_group
    )


def assert_no_schedule(runtime, account_id: str, doc_id: str) -> None:
    with pytest.raises(runtime.clients.scheduler.exceptions.ResourceNotFoundException):
        expiry_schedule(runtime, account_id, doc_id)


def assert_not_found(text: str, is_error: bool, doc_id: str) -> None:
    assert is_error and f"no doc {doc_id}" in text, text


async def assert_every_action_finds_no(agent: Pano, doc_id: str) -> None:
    """Every action that names a doc answers that there is no doc `doc_id`."""
    for action, payload in [
        ("read", {"id": doc_id}),
        ("comment", {"id": doc_id, "comment": "late"}),
        ("delete", {"id": doc_id}),
        ("attach", {"id": doc_id, "files": [file_in("f", "f.txt", b"x")]}),
        ("save", {"id": doc_id, "title": "t", "markdown": "revived"}),
    ]:
        text, is_error = await agent(action, **payload)
        assert_not_found(text, is_error, doc_id)


# -- save and read ------------------------------------------------------------------------------


async def test_save_without_id_creates_a_yellow_doc_and_answers_its_summary_without_markdown(agent, seeded):
    saved = await agent.save(title="Release plan", markdown="# Release plan\n\n- [ ] tag")
    assert BASE62_ID.match(saved["id"]), saved
    assert "markdown" not in saved
    assert (saved["title"], saved["color"], saved["ttlDays"]) == ("Release plan", "yellow", 30)
    assert saved["author"] == saved["updatedBy"] == seeded.workspace_id
    assert (saved["linkedFiles"], saved["attachmentCount"], saved["commentCount"]) == ([], 0, 0)

    doc = await agent.read(id=saved["id"])
    assert doc["markdown"] == "# Release plan\n\n- [ ] tag" and doc["files"] == []
    assert "comments" not in doc and "attachments" not in doc


async def test_save_with_id_replaces_title_markdown_and_color_completely(agent, seeded):
    first = await agent.save(title="Draft", markdown="old line one\nold line two", color="pink", ttlDays=3)
    second = await agent.save(id=first["id"], title="Final", markdown="new only", color="green")
    assert second["id"] == first["id"] and "markdown" not in second
    assert (second["title"], second["color"], second["ttlDays"]) == ("Final", "green", 30)

    doc = await agent.read(id=first["id"])
    assert (doc["title"], doc["markdown"], doc["color"]) == ("Final", "new only", "green")
    assert "old" not in doc["markdown"]


async def test_a_replace_without_color_keeps_the_docs_color_and_replaces_title_and_markdown(agent):
    first = await agent.save(title="Draft", markdown="old", color="green")
    second = await agent.save(id=first["id"], title="Final", markdown="new")
    assert (second["title"], second["color"]) == ("Final", "green")

    doc = await agent.read(id=first["id"])
    assert (doc["title"], doc["markdown"], doc["color"]) == ("Final", "new", "green")


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"title": "t", "markdown": "m", "color": "red"}, "'color'"),
        ({"title": "t", "markdown": "m", "ttlDays": 0}, "ttlDays"),
        ({"title": "t", "markdown": "m", "ttlDays": 366}, "ttlDays"),
        ({"title": " ", "markdown": "m"}, "title"),
        ({"title": "t", "markdown": "x" * (MARKDOWN_MAX + 1)}, "markdown"),
        ({"title": "t", "markdown": "m", "verbose": True}, "unknown field 'verbose'"),
        ({"markdown": "m"}, "missing required field 'title'"),
    ],
)
async def test_save_refuses_bad_fields_naming_them_and_creates_nothing(agent, runtime, seeded, payload, expected):
    text, is_error = await agent("save", **payload)
    assert is_error and text.startswith("pano save: ") and expected in text, text
    assert pano_service.list_docs(runtime, seeded.account_id) == []


async def test_markdown_of_exactly_64_kib_is_accepted(agent):
    saved = await agent.save(title="big", markdown="x" * MARKDOWN_MAX)
    assert len((await agent.read(id=saved["id"]))["markdown"]) == MARKDOWN_MAX


async def test_a_refused_replace_leaves_the_doc_as_it_was(agent):
    saved = await agent.save(title="Keep", markdown="kept", color="blue")
    text, is_error = await agent("save", id=saved["id"], title="Lost", markdown="lost", color="red")
    assert is_error and "'color'" in text
    doc = await agent.read(id=saved["id"])
    assert (doc["title"], doc["markdown"], doc["color"]) == ("Keep", "kept", "blue")


# -- linked files -------------------------------------------------------------------------------


async def test_linked_files_come_back_with_presigned_urls_byte_for_byte(agent):
    image, notes, spaced = bytes(range(256)) * 8, b"line 1\nline 2\n", b"\x00\xffspaced"
    markdown = '# Plan\n\n![chart](chart.png)\nSee [the notes](notes.txt "title") and [plan](<my plan.bin>).'
    saved = await agent.save(
        title="With files",
        markdown=markdown,
        files=[
            file_in("chart", "chart.png", image, "image/png"),
            file_in("notes", "notes.txt", notes, "text/plain"),
            file_in("plan", "my plan.bin", spaced),
        ],
    )
    assert saved["linkedFiles"] == ["chart.png", "notes.txt", "my plan.bin"]
    doc = await agent.read(id=saved["id"])
    by_name = {f["name"]: f for f in doc["files"]}
    assert set(by_name) == {"chart.png", "notes.txt", "my plan.bin"}
    for name, content, mime in [
        ("chart.png", image, "image/png"),
        ("notes.txt", notes, "text/plain"),
        ("my plan.bin", spaced, "application/octet-stream"),
    ]:
        shown = by_name[name]
        assert set(shown) == {"name", "mimeType", "size", "url"}
        assert (shown["mimeType"], shown["size"]) == (mime, len(content))
        assert download_presigned(shown["url"]).content == content


async def test_a_percent_encoded_link_links_the_file_with_spaces(agent):
    saved = await agent.save(
        title="t", markdown="![shot](my%20shot.png)", files=[file_in("s", "my shot.png", b"png", "image/png")]
    )
    assert saved["linkedFiles"] == ["my shot.png"]


@pytest.mark.parametrize(
    "markdown",
    [
        "mentions data.csv but links nothing",
        "[data](other.csv)",
        "[data] (data.csv)",
    ],
)
async def test_an_unlinked_file_is_refused_on_create_naming_it_and_nothing_is_stored(agent, runtime, seeded, markdown):
    text, is_error = await agent("save", title="t", markdown=markdown, files=[file_in("d", "data.csv", b"a,b\n")])
    assert is_error and "files[0]" in text and "data.csv" in text, text
    assert pano_service.list_docs(runtime, seeded.account_id) == []
    assert s3_keys(runtime) == []


async def test_an_unlinked_file_is_refused_on_replace_and_the_doc_is_unchanged(agent, runtime, seeded):
    saved = await agent.save(title="t", markdown="[a](a.txt)", files=[file_in("a", "a.txt", b"first")])
    before = s3_keys(runtime, pano_prefix(seeded.account_id, saved["id"]))
    assert len(before) == 1
    text, is_error = await agent(
        "save",
        id=saved["id"],
        title="changed",
        markdown="[a](a.txt) only",
        files=[file_in("a", "a.txt", b"second"), file_in("b", "b.txt", b"unlinked")],
    )
    assert is_error and "files[1]" in text and "b.txt" in text, text
    doc = await agent.read(id=saved["id"])
    assert (doc["title"], doc["markdown"]) == ("t", "[a](a.txt)")
    assert [f["name"] for f in doc["files"]] == ["a.txt"]
    assert download_presigned(doc["files"][0]["url"]).content == b"first"
    assert s3_keys(runtime, pano_prefix(seeded.account_id, saved["id"])) == before


async def test_a_file_the_markdown_stops_linking_is_dropped_and_one_still_linked_is_kept_unsent(agent, runtime, seeded):
    saved = await agent.save(
        title="t",
        markdown="![a](a.png) and [b](b.txt)",
        files=[file_in("a", "a.png", b"AAAA", "image/png"), file_in("b", "b.txt", b"BBBB", "text/plain")],
    )
    prefix = pano_prefix(seeded.account_id, saved["id"])
    before = s3_keys(runtime, prefix)
    assert len(before) == 2
    resaved = await agent.save(id=saved["id"], title="t", markdown="only [b](b.txt) now")
    assert resaved["linkedFiles"] == ["b.txt"]
    doc = await agent.read(id=saved["id"])
    assert [(f["name"], f["size"]) for f in doc["files"]] == [("b.txt", 4)]
    assert download_presigned(doc["files"][0]["url"]).content == b"BBBB"
    remaining = s3_keys(runtime, prefix)
    assert len(remaining) == 1 and remaining[0] in before  # a.png's object is gone, b.txt's is the one sent first


async def test_a_linked_file_sent_again_replaces_the_old_content(agent, runtime, seeded):
    saved = await agent.save(title="t", markdown="[n](n.txt)", files=[file_in("n", "n.txt", b"old")])
    await agent.save(id=saved["id"], title="t", markdown="[n](n.txt)", files=[file_in("n", "n.txt", b"newer")])
    doc = await agent.read(id=saved["id"])
    assert [(f["name"], f["size"]) for f in doc["files"]] == [("n.txt", 5)]
    assert download_presigned(doc["files"][0]["url"]).content == b"newer"
    assert len(s3_keys(runtime, pano_prefix(seeded.account_id, saved["id"]))) == 1


# -- attach -------------------------------------------------------------------------------------


async def test_attached_files_need_no_link_and_show_only_with_include_attachments(agent, runtime, seeded):
    saved = await agent.save(title="t", markdown="[a](a.txt)", files=[file_in("a", "a.txt", b"linked")])
    text, is_error = await agent("attach", id=saved["id"], files=[file_in("log", "deploy.log", b"log\n", "text/plain")])
    assert not is_error, text
    attached = json.loads(text)
    assert (attached["attachmentCount"], attached["linkedFiles"]) == (1, ["a.txt"])

    plain = await agent.read(id=saved["id"])
    assert [f["name"] for f in plain["files"]] == ["a.txt"] and "attachments" not in plain
    full = await agent.read(id=saved["id"], includeAttachments=True)
    assert [(f["name"], f["mimeType"], f["size"]) for f in full["attachments"]] == [("deploy.log", "text/plain", 4)]
    assert download_presigned(full["attachments"][0]["url"]).content == b"log\n"

    # A save that does not link the attachment keeps it: only linked files follow the markdown.
    await agent.save(id=saved["id"], title="t", markdown="no links at all")
    after = await agent.read(id=saved["id"], includeAttachments=True)
    assert after["files"] == [] and [f["name"] for f in after["attachments"]] == ["deploy.log"]
    assert len(s3_keys(runtime, pano_prefix(seeded.account_id, saved["id"]))) == 1


async def test_attach_refuses_a_filename_already_on_the_doc_and_stores_nothing(agent, runtime, seeded):
    saved = await agent.save(title="t", markdown="[a](a.txt)", files=[file_in("a", "a.txt", b"linked")])
    await agent("attach", id=saved["id"], files=[file_in("l", "deploy.log", b"log")])
    prefix = pano_prefix(seeded.account_id, saved["id"])
    before = s3_keys(runtime, prefix)
    for name in ("a.txt", "deploy.log"):
        text, is_error = await agent("attach", id=saved["id"], files=[file_in("x", name, b"again")])
        assert is_error and "files[0]" in text and name in text, text
    assert s3_keys(runtime, prefix) == before
    doc = await agent.read(id=saved["id"], includeAttachments=True)
    assert [f["size"] for f in doc["files"]] == [6] and [f["size"] for f in doc["attachments"]] == [3]


# -- comments and not-found ---------------------------------------------------------------------


async def test_comments_are_listed_oldest_first_by_the_commenting_workspace(agent, seeded):
    saved = await agent.save(title="t", markdown="m")
    ids = [await agent.comment(saved["id"], f"note {n}") for n in range(3)]
    doc = await agent.read(id=saved["id"], includeComments=True)
    assert [c["id"] for c in doc["comments"]] == ids
    assert [c["comment"] for c in doc["comments"]] == ["note 0", "note 1", "note 2"]
    assert {c["by"] for c in doc["comments"]} == {seeded.workspace_id}
    assert doc["commentCount"] == 3


async def test_unknown_ids_are_not_found_for_every_action(agent):
    await assert_every_action_finds_no(agent, UNKNOWN)


async def test_delete_removes_the_doc_its_comments_its_files_and_its_expiry_schedule(agent, runtime, seeded):
    saved = await agent.save(title="t", markdown="![a](a.png)", files=[file_in("a", "a.png", b"png")])
    doc_id = saved["id"]
    await agent("attach", id=doc_id, files=[file_in("l", "l.log", b"log")])
    await agent.comment(doc_id, "first")
    assert expiry_schedule(runtime, seeded.account_id, doc_id)["Name"] == f"pano-{seeded.account_id}-{doc_id}"
    assert len(s3_keys(runtime, pano_prefix(seeded.account_id, doc_id))) == 2

    assert await agent("delete", id=doc_id) == (f"doc {doc_id} deleted", False)
    assert raw_doc(runtime, seeded.account_id, doc_id) is None
    assert raw_comments(runtime, seeded.account_id, doc_id) == []
    assert s3_keys(runtime) == []
    assert_no_schedule(runtime, seeded.account_id, doc_id)
    for action, payload in [
        ("read", {"id": doc_id}),
        ("comment", {"id": doc_id, "comment": "x"}),
        ("delete", {"id": doc_id}),
        ("save", {"id": doc_id, "title": "t", "markdown": "m"}),
    ]:
        text, is_error = await agent(action, **payload)
        assert_not_found(text, is_error, doc_id)
    assert raw_doc(runtime, seeded.account_id, doc_id) is None  # the save did not bring it back


# -- expiry -------------------------------------------------------------------------------------


async def test_an_expired_doc_is_not_found_before_anything_deletes_it(agent, runtime, seeded, clock):
    clock.set(START)
    saved = await agent.save(title="t", markdown="m", ttlDays=2)
    doc_id = saved["id"]
    clock.advance(days=2, seconds=-1)
    assert (await agent.read(id=doc_id))["title"] == "t"
    clock.advance(seconds=1)
    await assert_every_action_finds_no(agent, doc_id)
    item = raw_doc(runtime, seeded.account_id, doc_id)
    assert item is not None and item["markdown"]["S"] == "m"  # still stored, just expired
    assert raw_comments(runtime, seeded.account_id, doc_id) == []


async def test_expiry_is_ttl_days_after_the_last_save_and_each_save_moves_it_and_the_schedule(
    agent, runtime, seeded, clock
):
    clock.set(START)
    saved = await agent.save(title="t", markdown="m", ttlDays=3)
    doc_id = saved["id"]
    first_expiry = START + timedelta(days=3)
    assert saved["expiresAt"] == "2030-01-04T09:00:00.000Z"
    assert int(raw_doc(runtime, seeded.account_id, doc_id)["expiresAt"]["N"]) == int(first_expiry.timestamp())
    schedule = expiry_schedule(runtime, seeded.account_id, doc_id)
    assert schedule["ScheduleExpression"] == at_expression(first_expiry)
    assert json.loads(schedule["Target"]["Input"]) == {
        "kind": "panoExpiry",
        "accountId": seeded.account_id,
        "docId": doc_id,
        "expiresAt": saved["expiresAt"],
    }

    clock.advance(days=2, hours=5)
    resaved = await agent.save(id=doc_id, title="t", markdown="m2", ttlDays=10)
    second_expiry = START + timedelta(days=12, hours=5)
    assert resaved["expiresAt"] == "2030-01-13T14:00:00.000Z"
    assert int(raw_doc(runtime, seeded.account_id, doc_id)["expiresAt"]["N"]) == int(second_expiry.timestamp())
    assert parse_at(expiry_schedule(runtime, seeded.account_id, doc_id)["ScheduleExpression"]) == second_expiry

    clock.advance(days=5)  # past the first expiry, well before the second
    assert (await agent.read(id=doc_id))["markdown"] == "m2"


async def test_attach_and_comment_do_not_move_the_expiry(agent, runtime, seeded, clock):
    clock.set(START)
    saved = await agent.save(title="t", markdown="m", ttlDays=1)
    clock.advance(hours=12)
    await agent("attach", id=saved["id"], files=[file_in("f", "f.txt", b"x")])
    await agent.comment(saved["id"], "c")
    assert (await agent.read(id=saved["id"]))["expiresAt"] == saved["expiresAt"]
    assert int(raw_doc(runtime, seeded.account_id, saved["id"])["expiresAt"]["N"]) == int(
        (START + timedelta(days=1)).timestamp()
    )


async def test_the_schedule_driver_deletes_an_expired_doc_with_its_comments_and_files(agent, runtime, seeded, clock):
    clock.set(START)
    doomed = await agent.save(title="doomed", markdown="[a](a.txt)", ttlDays=1, files=[file_in("a", "a.txt", b"a")])
    kept = await agent.save(title="kept", markdown="[k](k.txt)", ttlDays=5, files=[file_in("k", "k.txt", b"k")])
    await agent("attach", id=doomed["id"], files=[file_in("l", "l.log", b"l")])
    await agent.comment(doomed["id"], "bye")
    driver = ScheduleDriver(runtime)

    clock.advance(hours=23)
    assert driver.run_due() == 0
    assert raw_doc(runtime, seeded.account_id, doomed["id"]) is not None

    clock.advance(hours=1, seconds=1)
    assert driver.run_due() == 1
    assert raw_doc(runtime, seeded.account_id, doomed["id"]) is None
    assert raw_comments(runtime, seeded.account_id, doomed["id"]) == []
    assert s3_keys(runtime, pano_prefix(seeded.account_id, doomed["id"])) == []
    assert_no_schedule(runtime, seeded.account_id, doomed["id"])
    assert driver.run_due() == 0  # nothing left to fire

    assert raw_doc(runtime, seeded.account_id, kept["id"]) is not None
    assert len(s3_keys(runtime, pano_prefix(seeded.account_id, kept["id"]))) == 1
    assert (await agent.read(id=kept["id"]))["title"] == "kept"


async def test_a_fired_expiry_for_a_doc_saved_again_meanwhile_keeps_it_and_rearms(agent, runtime, seeded, clock):
    clock.set(START)
    saved = await agent.save(title="t", markdown="[a](a.txt)", ttlDays=1, files=[file_in("a", "a.txt", b"a")])
    doc_id = saved["id"]
    old_input = json.loads(expiry_schedule(runtime, seeded.account_id, doc_id)["Target"]["Input"])
    clock.advance(hours=20)
    resaved = await agent.save(id=doc_id, title="t", markdown="[a](a.txt) still")
    clock.advance(hours=4, seconds=1)  # the first expiry has passed

    assert fire_schedule.handle(old_input, runtime) == {"outcome": "extended"}
    doc = await agent.read(id=doc_id)
    assert doc["markdown"] == "[a](a.txt) still" and download_presigned(doc["files"][0]["url"]).content == b"a"
    schedule = expiry_schedule(runtime, seeded.account_id, doc_id)
    assert parse_at(schedule["ScheduleExpression"]) == START + timedelta(hours=20, days=30)
    assert json.loads(schedule["Target"]["Input"])["expiresAt"] == resaved["expiresAt"]


async def test_a_fired_expiry_for_a_doc_already_deleted_is_harmless(agent, runtime, seeded):
    saved = await agent.save(title="t", markdown="m")
    payload = json.loads(expiry_schedule(runtime, seeded.account_id, saved["id"])["Target"]["Input"])
    await agent("delete", id=saved["id"])
    assert fire_schedule.handle(payload, runtime) == {"outcome": "expired"}
    assert raw_doc(runtime, seeded.account_id, saved["id"]) is None


# -- account scoping ----------------------------------------------------------------------------


async def test_two_workspaces_of_an_account_share_docs_and_another_account_sees_none(live, runtime, seeded, agent):
    _, other = accounts.create_workspace(runtime.accounts, seeded.account_id, "Second", "")
    second_ws = runtime.accounts.resolve_token(hash_token(other.token)).workspace_id
    saved = await agent.save(title="by A", markdown="[a](a.txt)", files=[file_in("a", "a.txt", b"A")])
    doc_id = saved["id"]
    async with mcp_client(live.url, other.token) as client:
        colleague = Pano(client)
        assert (await colleague.read(id=doc_id))["markdown"] == "[a](a.txt)"
        replaced = await colleague.save(id=doc_id, title="by B", markdown="B wrote this")
        assert (replaced["author"], replaced["updatedBy"]) == (seeded.workspace_id, second_ws)
        await colleague.comment(doc_id, "from B")
    doc = await agent.read(id=doc_id, includeComments=True)
    assert (doc["title"], doc["markdown"], doc["files"]) == ("by B", "B wrote this", [])
    assert (doc["author"], doc["updatedBy"]) == (seeded.workspace_id, second_ws)
    assert [c["by"] for c in doc["comments"]] == [second_ws]

    stranger = seed(runtime)
    async with mcp_client(live.url, stranger.agent_token) as client:
        outsider = Pano(client)
        for action, payload in [
            ("read", {"id": doc_id}),
            ("comment", {"id": doc_id, "comment": "intrusion"}),
            ("attach", {"id": doc_id, "files": [file_in("x", "x.txt", b"x")]}),
            ("save", {"id": doc_id, "title": "hijacked", "markdown": "hijacked"}),
            ("delete", {"id": doc_id}),
        ]:
            text, is_error = await outsider(action, **payload)
            assert_not_found(text, is_error, doc_id)
            assert "by B" not in text
        own = await outsider.save(title="stranger's", markdown="m")
    listed = httpx.get(f"{live.url}/api/pano", headers=bearer(stranger.human_token))
    assert listed.status_code == 200 and [d["id"] for d in listed.json()] == [own["id"]]
    mine = httpx.get(f"{live.url}/api/pano", headers=bearer(seeded.human_token)).json()
    assert [d["id"] for d in mine] == [doc_id]
    doc = await agent.read(id=doc_id, includeComments=True, includeAttachments=True)
    assert (doc["title"], doc["commentCount"], doc["attachments"]) == ("by B", 1, [])
    assert httpx.get(f"{live.url}/api/pano/{doc_id}", headers=bearer(stranger.human_token)).status_code == 404


# -- the human REST API -------------------------------------------------------------------------


async def test_the_human_lists_reads_and_comments_on_the_accounts_unexpired_docs(live, runtime, seeded, agent, clock):
    clock.set(START)
    short = await agent.save(title="short", markdown="gone soon", ttlDays=1)
    clock.advance(seconds=1)
    long = await agent.save(
        title="long", markdown="![c](c.png)", color="purple", files=[file_in("c", "c.png", b"PNG", "image/png")]
    )
    await agent("attach", id=long["id"], files=[file_in("l", "l.log", b"LOG", "text/plain")])
    await agent.comment(long["id"], "agent note")

    listed = httpx.get(f"{live.url}/api/pano", headers=bearer(seeded.human_token))
    assert listed.status_code == 200
    assert [d["id"] for d in listed.json()] == [short["id"], long["id"]]
    assert all("markdown" not in d for d in listed.json())
    summary = listed.json()[1]
    assert (summary["title"], summary["color"], summary["linkedFiles"]) == ("long", "purple", ["c.png"])
    assert (summary["attachmentCount"], summary["commentCount"]) == (1, 1)

    posted = httpx.post(
        f"{live.url}/api/pano/{long['id']}/comments", headers=bearer(seeded.human_token), json={"comment": "human note"}
    )
    assert posted.status_code == 201, posted.text
    assert (posted.json()["comment"], posted.json()["by"]) == ("human note", "human")

    doc = httpx.get(f"{live.url}/api/pano/{long['id']}", headers=bearer(seeded.human_token))
    assert doc.status_code == 200
    body = doc.json()
    assert body["markdown"] == "![c](c.png)"
    assert [(f["name"], download_presigned(f["url"]).content) for f in body["files"]] == [("c.png", b"PNG")]
    assert [(f["name"], download_presigned(f["url"]).content) for f in body["attachments"]] == [("l.log", b"LOG")]
    assert [(c["comment"], c["by"]) for c in body["comments"]] == [
        ("agent note", seeded.workspace_id),
        ("human note", "human"),
    ]
    assert body["commentCount"] == 2

    clock.advance(days=1)  # `short` has expired, `long` has not
    listed = httpx.get(f"{live.url}/api/pano", headers=bearer(seeded.human_token)).json()
    assert [d["id"] for d in listed] == [long["id"]]
    assert_problem(
        httpx.get(f"{live.url}/api/pano/{short['id']}", headers=bearer(seeded.human_token)), 404, short["id"]
    )


async def test_the_human_api_answers_unknown_docs_with_404_problems(live, seeded):
    headers = bearer(seeded.human_token)
    assert_problem(httpx.get(f"{live.url}/api/pano/{UNKNOWN}", headers=headers), 404, UNKNOWN)
    assert_problem(
        httpx.post(f"{live.url}/api/pano/{UNKNOWN}/comments", headers=headers, json={"comment": "x"}), 404, UNKNOWN
    )


async def test_agent_tokens_cannot_use_the_human_pano_routes(live, seeded, agent):
    saved = await agent.save(title="t", markdown="m")
    headers = bearer(seeded.agent_token)
    assert httpx.get(f"{live.url}/api/pano", headers=headers).status_code == 403
    assert httpx.get(f"{live.url}/api/pano/{saved['id']}", headers=headers).status_code == 403
    posted = httpx.post(f"{live.url}/api/pano/{saved['id']}/comments", headers=headers, json={"comment": "x"})
    assert posted.status_code == 403
    assert (await agent.read(id=saved["id"]))["commentCount"] == 0


# -- concurrency --------------------------------------------------------------------------------


def test_two_concurrent_saves_of_one_doc_both_land_whole_in_some_order(runtime, seeded):
    _, other = accounts.create_workspace(runtime.accounts, seeded.account_id, "Second", "")
    second = runtime.accounts.resolve_token(hash_token(other.token))
    first_actor = Actor("agent", seeded.account_id, seeded.workspace_id, "t1")
    second_actor = Actor("agent", seeded.account_id, second.workspace_id, "t2")
    created = pano_service.save(runtime, first_actor, None, "start", "start", None, None, [])
    versions = {
        "A": (first_actor, "title A", "[a](a.txt)\n" + "A" * 2000, "pink", [linked_file("a", "a.txt", b"AAA")]),
        "B": (second_actor, "title B", "[b](b.txt)\n" + "B" * 2000, "green", [linked_file("b", "b.txt", b"BBB")]),
    }
    barrier = threading.Barrier(2)
    outcomes: dict[str, object] = {}

    def run(name: str) -> None:
        actor, title, markdown, color, files = versions[name]
        barrier.wait(timeout=10)
        try:
            outcomes[name] = pano_service.save(runtime, actor, created.id, title, markdown, color, None, files)
        except Exception as error:  # noqa: BLE001 - recorded and asserted on below
            outcomes[name] = error

    threads = [threading.Thread(target=run, args=(name,)) for name in versions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    assert all(not isinstance(outcome, Exception) for outcome in outcomes.values()), outcomes
    assert sorted(outcome.revision for outcome in outcomes.values()) == [2, 3]

    final = runtime.pano.get(seeded.account_id, created.id)
    assert final.revision == created.revision + 2
    winner = "A" if outcomes["A"].revision == 3 else "B"
    actor, title, markdown, color, files = versions[winner]
    assert (final.title, final.markdown, final.color, final.updated_by) == (title, markdown, color, actor.workspace_id)
    assert [f.name for f in final.files] == [files[0].filename]
    assert s3_keys(runtime, pano_prefix(seeded.account_id, created.id)) == [final.files[0].ref.key]


async def test_five_concurrent_comments_are_all_kept_and_counted(live, seeded, agent):
    saved = await agent.save(title="t", markdown="m")
    added: list[str] = []

    async def comment(number: int) -> None:
        async with mcp_client(live.url, seeded.agent_token) as client:
            added.append(await Pano(client).comment(saved["id"], f"c{number}"))

    async with anyio.create_task_group() as group:
        for number in range(5):
            group.start_soon(comment, number)

    doc = await agent.read(id=saved["id"], includeComments=True)
    assert doc["commentCount"] == 5
    assert sorted(c["id"] for c in doc["comments"]) == sorted(added)
    assert sorted(c["comment"] for c in doc["comments"]) == [f"c{n}" for n in range(5)]


async def test_help_describes_every_pano_action(agent):
    text, is_error = await agent("help")
    assert not is_error, text
    for action in ("save", "read", "comment", "attach", "delete"):
        assert action in text


# -- stray objects and records ------------------------------------------------------------------


def test_a_replace_refused_for_too_many_files_leaves_no_uploaded_object_behind(runtime, seeded):
    actor = Actor("agent", seeded.account_id, seeded.workspace_id, "t")
    doc = pano_service.save(runtime, actor, None, "t", "m", None, None, [])
    for batch in range(5):
        files = [linked_file(f"f{batch}-{n}", f"f{batch}-{n}.log", b"x") for n in range(10)]
        pano_service.attach(runtime, actor, doc.id, files)
    prefix = pano_prefix(seeded.account_id, doc.id)
    before = s3_keys(runtime, prefix)
    assert len(before) == 50

    with pytest.raises(PayloadError) as refused:
        pano_service.save(runtime, actor, doc.id, "t", "[n](n.txt)", None, None, [linked_file("n", "n.txt", b"n")])
    assert refused.value.field == "files"
    assert s3_keys(runtime, prefix) == before


async def test_an_expiry_firing_after_dynamodb_ttl_removed_the_doc_still_deletes_its_comments(agent, runtime, seeded):
    saved = await agent.save(title="t", markdown="[a](a.txt)", files=[file_in("a", "a.txt", b"a")])
    await agent.comment(saved["id"], "orphan?")
    payload = json.loads(expiry_schedule(runtime, seeded.account_id, saved["id"])["Target"]["Input"])
    runtime.clients.dynamodb.delete_item(  # what DynamoDB's TTL does, ahead of the schedule
        TableName=runtime.settings.table_name,
        Key={"PK": {"S": f"ACCOUNT#{seeded.account_id}"}, "SK": {"S": f"PANO#{saved['id']}"}},
    )
    assert fire_schedule.handle(payload, runtime) == {"outcome": "expired"}
    assert s3_keys(runtime, pano_prefix(seeded.account_id, saved["id"])) == []
    assert_no_schedule(runtime, seeded.account_id, saved["id"])
    assert raw_comments(runtime, seeded.account_id, saved["id"]) == []
