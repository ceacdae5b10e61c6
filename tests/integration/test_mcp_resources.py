"""MCP resources and the Agent Skills extension (SEP-2640) through the SDK's own client against the app under
uvicorn: every kind listed and read, the templates, pagination, the bounds, and what another workspace or account
may not read.

The seeded workspace is furnished (tests/support.py `furnish`): the skill release-notes with templates/entry.md,
the memory deploys.md, the pano doc Plan, and a task for the human with the attachment `log` (deploy.log, "ok").
"""

import base64
import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from agent_workspace.domain.resources import BLOB_MAX, URI_MAX, listing_cursor
from agent_workspace.local.stack import local_runtime, seed
from agent_workspace.services import accounts, memory, pano, skills
from agent_workspace.store import keys
from agent_workspace.store.cursor import cursor_after
from tests.support import DOC, TASK, LiveServer, call, furnish, mcp_client

pytestmark = pytest.mark.anyio

RELEASE_MD = "skill://release-notes/SKILL.md"
ENTRY_MD = "skill://release-notes/templates/entry.md"
EXTENSION = "io.modelcontextprotocol/skills"
MODES = ["legacy", "2026-07-28"]


# -- helpers ------------------------------------------------------------------------------------------------------


async def made(runtime, token: str, tool: str, action: str, /, **payload: Any) -> str:
    outcome = await call(runtime, token, tool, {"action": action, "payload": payload})
    assert not outcome.is_error, outcome.text
    return outcome.text


async def pages_of(client) -> list[list[str]]:
    """Every page of `resources/list`, each as its URIs, following `nextCursor` until there is none; a cursor
    handed out twice fails (the walk would never end)."""
    pages: list[list[str]] = []
    cursors: set[str] = set()
    cursor = None
    while True:
        page = await client.list_resources(cursor=cursor, cache_mode="bypass")
        pages.append([resource.uri for resource in page.resources])
        if page.next_cursor is None:
            return pages
        assert page.next_cursor not in cursors, pages
        assert len(pages) < 50, pages
        cursors.add(page.next_cursor)
        cursor = page.next_cursor


async def extension(client, method: str, **params: Any) -> dict[str, Any]:
    """A `skills/*` request: the SDK has no helper for the extension's methods, so its raw request API."""
    request = types.Request[dict[str, Any], str](method=method, params=params)
    return await client.session.send_request(request, TypeAdapter(dict[str, Any]))


async def all_skills(client) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = await extension(client, "skills/list", **({"cursor": cursor} if cursor else {}))
        entries += page["skills"]
        cursor = page.get("nextCursor")
        if cursor is None:
            return entries


async def read_bytes(client, uri: str) -> bytes:
    """What `resources/read` serves at `uri`, as bytes (text as UTF-8, a blob decoded)."""
    (contents,) = (await client.read_resource(uri)).contents
    assert contents.uri == uri
    if isinstance(contents, types.BlobResourceContents):
        return base64.b64decode(contents.blob)
    return contents.text.encode("utf-8")


async def read_refusal(client, uri: str, *words: str) -> str:
    """`resources/read` of `uri` is a JSON-RPC error INVALID_PARAMS naming every one of `words`; its message."""
    with pytest.raises(MCPError) as raised:
        await client.read_resource(uri)
    error = raised.value
    assert error.code == types.INVALID_PARAMS, (error.code, error.message)
    assert error.message.startswith("resources/read: "), error.message
    assert "Traceback" not in error.message and len(error.message) < 1000, error.message
    for word in words:
        assert word in error.message, error.message
    return error.message


@pytest.fixture
async def ids(runtime, seeded) -> dict[str, str]:
    return await furnish(runtime, seeded)


def rpc(url: str, token: str, method: str, params: dict[str, Any] | None = None, **headers: str) -> dict[str, Any]:
    """One JSON-RPC POST to /mcp with no initialize first: each POST is its own stateless session."""
    response = httpx.post(
        f"{url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params is not None else {})},
        headers={
            "authorization": f"Bearer {token}",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-06-18",
            **headers,
        },
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


# -- capabilities -------------------------------------------------------------------------------------------------


async def test_the_server_declares_resources_and_the_skills_extension_in_both_eras(live, seeded):
    async with mcp_client(live.url, seeded.agent_token) as client:
        capabilities = client.server_capabilities
    assert capabilities.resources is not None
    assert capabilities.resources.subscribe is False
    initialized = rpc(
        live.url,
        seeded.agent_token,
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    )
    assert initialized["result"]["capabilities"]["extensions"] == {EXTENSION: {}}
    async with mcp_client(live.url, seeded.agent_token, mode="2026-07-28") as client:
        discovered = await client.session.send_discover("2026-07-28")
    assert discovered["capabilities"]["extensions"] == {EXTENSION: {}}
    assert discovered["capabilities"]["resources"] == {"listChanged": False, "subscribe": False}


# -- resources/list and resources/templates/list -------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_the_listing_shows_every_skill_file_memory_and_pano_doc_once(live, seeded, ids, mode):
    async with mcp_client(live.url, seeded.agent_token, mode=mode) as client:
        pages = await pages_of(client)
        first = await client.list_resources(cache_mode="bypass")
    listed = [uri for page in pages for uri in page]
    assert listed == [RELEASE_MD, ENTRY_MD, "memory://deploys.md", f"pano://{ids[DOC]}"]
    by_uri = {resource.uri: resource for resource in first.resources}
    assert by_uri[RELEASE_MD].mime_type == "text/markdown"
    assert by_uri[RELEASE_MD].description == "Notes."
    assert by_uri[ENTRY_MD].name == "release-notes/templates/entry.md"


async def test_a_cursor_walks_every_page_each_of_one_kind_with_no_duplicates(live, runtime, seeded, monkeypatch):
    monkeypatch.setattr(skills, "RESOURCE_PAGE", 2)
    monkeypatch.setattr(memory, "RESOURCE_PAGE", 2)
    monkeypatch.setattr(pano, "RESOURCE_PAGE", 1)
    token = seeded.agent_token
    for name in ("a-skill", "b-skill", "c-skill"):
        await made(
            runtime, token, "skills", "save", uri=f"skill://{name}/SKILL.md", content="---\ndescription: d\n---\n"
        )
    await made(runtime, token, "skills", "save", uri="skill://b-skill/x.md", content="x")
    for name in ("a.md", "b.md", "c.md", None):
        await made(runtime, token, "memory", "save", name=name, content="m")
    docs = [json.loads(await made(runtime, token, "pano", "save", title=t, markdown="#"))["id"] for t in "PQ"]

    async with mcp_client(live.url, token) as client:
        pages = await pages_of(client)

    assert pages == [
        ["skill://a-skill/SKILL.md", "skill://b-skill/SKILL.md", "skill://b-skill/x.md"],
        ["skill://c-skill/SKILL.md"],
        ["memory://MEMORY.md", "memory://a.md"],
        ["memory://b.md", "memory://c.md"],
        [f"pano://{docs[0]}"],
        [f"pano://{docs[1]}"],
    ]


async def test_a_page_stays_within_page_bytes_and_the_walk_still_returns_everything(moto_endpoint, aws_clients):
    runtime = local_runtime(moto_endpoint, clients=aws_clients, page_bytes=700)
    seeded = seed(runtime)
    for number in range(6):
        await made(runtime, seeded.agent_token, "memory", "save", name=f"note-{number}.md", content="n" * 100)
    listed: list[str] = []
    pages = 0
    with LiveServer(runtime) as live:
        params: dict[str, Any] = {}
        while True:
            page = rpc(live.url, seeded.agent_token, "resources/list", params)["result"]
            assert len(json.dumps(page["resources"])) <= 700, page
            listed += [resource["uri"] for resource in page["resources"]]
            pages += 1
            if "nextCursor" not in page:
                break
            params = {"cursor": page["nextCursor"]}
    assert pages > 2
    assert listed == [f"memory://note-{n}.md" for n in range(6)]


@pytest.mark.parametrize(
    "cursor",
    [
        "nope",
        "x" * 5000,
        listing_cursor("memory", cursor_after({"PK": {"S": "WS#someone-else"}, "SK": {"S": "MEM#a.md"}})),
        listing_cursor("skills", "not base64 json"),
        listing_cursor("unknown", None),
    ],
)
async def test_a_cursor_not_handed_out_is_refused_naming_the_cursor(live, seeded, cursor):
    async with mcp_client(live.url, seeded.agent_token) as client:
        with pytest.raises(MCPError) as raised:
            await client.list_resources(cursor=cursor, cache_mode="bypass")
    assert raised.value.code == types.INVALID_PARAMS
    assert raised.value.message == "resources/list: cursor is not one this listing returned"


async def test_a_cursor_into_another_range_of_the_workspace_is_refused_not_an_internal_error(live, seeded):
    # The caller's own partition, but a sort key outside the memories: DynamoDB would refuse the Query itself.
    inner = cursor_after({"PK": {"S": keys.workspace_pk(seeded.workspace_id)}, "SK": {"S": "SKILLREF#x"}})
    async with mcp_client(live.url, seeded.agent_token) as client:
        with pytest.raises(MCPError) as raised:
            await client.list_resources(cursor=listing_cursor("memory", inner), cache_mode="bypass")
    assert raised.value.message == "resources/list: cursor is not one this listing returned"


async def test_a_cursor_of_another_workspace_is_refused(live, runtime, seeded, monkeypatch):
    monkeypatch.setattr(memory, "RESOURCE_PAGE", 1)
    for name in ("a.md", "b.md"):
        await made(runtime, seeded.agent_token, "memory", "save", name=name, content="m")
    other, other_token = accounts.create_workspace(runtime.accounts, seeded.account_id, "Other", "")
    async with mcp_client(live.url, seeded.agent_token) as client:
        page = await client.list_resources(cache_mode="bypass")
    assert [r.uri for r in page.resources] == ["memory://a.md"]
    async with mcp_client(live.url, other_token.token) as client:
        with pytest.raises(MCPError) as raised:
            await client.list_resources(cursor=page.next_cursor, cache_mode="bypass")
    assert raised.value.code == types.INVALID_PARAMS
    assert "cursor is not one this listing returned" in raised.value.message


async def test_templates_list_every_kind_in_rfc_6570_form(live, seeded):
    async with mcp_client(live.url, seeded.agent_token) as client:
        templates = (await client.list_resource_templates(cache_mode="bypass")).resource_templates
    assert [(t.name, t.uri_template, t.mime_type) for t in templates] == [
        ("skill", "skill://{name}/SKILL.md", "text/markdown"),
        ("skill-file", "skill://{name}/{+path}", None),
        ("memory", "memory://{name}", "text/markdown"),
        ("pano-doc", "pano://{docId}", "text/markdown"),
        ("task-attachment", "task://{taskId}/attachments/{attachmentId}", None),
    ]
    assert all(t.title and t.description for t in templates)


# -- resources/read -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_every_kind_reads_as_its_tool_action_reads_it(live, seeded, ids, mode):
    async with mcp_client(live.url, seeded.agent_token, mode=mode) as client:
        skill_md = (await client.read_resource(RELEASE_MD)).contents[0]
        entry = (await client.read_resource(ENTRY_MD)).contents[0]
        note = (await client.read_resource("memory://deploys.md")).contents[0]
        doc = (await client.read_resource(f"pano://{ids[DOC]}")).contents[0]
        attachment = (await client.read_resource(f"task://{ids[TASK]}/attachments/log")).contents[0]
    # The stored SKILL.md has no name: it is served with one, naming the skill (domain.skill_manifest).
    assert (skill_md.mime_type, skill_md.text) == (
        "text/markdown",
        '---\nname: "release-notes"\ndescription: Notes.\n---\n# N\n',
    )
    assert (entry.mime_type, entry.text) == ("text/markdown", "- entry\n")
    assert (note.uri, note.mime_type, note.text) == ("memory://deploys.md", "text/markdown", "# Deploys\n")
    assert (doc.mime_type, doc.text) == ("text/markdown", "# Plan\n\n[log](deploy.log)")
    assert isinstance(attachment, types.BlobResourceContents)
    assert (attachment.mime_type, base64.b64decode(attachment.blob)) == ("text/plain", b"ok")


async def test_a_skill_md_that_names_its_skill_is_served_as_stored(live, runtime, seeded):
    stored = "---\nname: named\ndescription: Has a name.\n---\nbody\n"
    await made(runtime, seeded.agent_token, "skills", "save", uri="skill://named/SKILL.md", content=stored)
    async with mcp_client(live.url, seeded.agent_token) as client:
        assert await read_bytes(client, "skill://named/SKILL.md") == stored.encode()


async def test_an_attachment_reads_by_the_tasks_short_identifier_too(live, runtime, seeded, ids):
    task = runtime.tasks.get(seeded.workspace_id, ids[TASK])
    assert task is not None and task.identifier is not None
    uri = f"task://{task.identifier}/attachments/log"
    async with mcp_client(live.url, seeded.agent_token) as client:
        assert await read_bytes(client, uri) == b"ok"


@pytest.mark.parametrize(
    ("uri", "words"),
    [
        ("file:///etc/passwd", ["scheme 'file'", "skill://, memory://, pano:// and task://"]),
        ("https://example.com/SKILL.md", ["scheme 'https'"]),
        ("deploys.md", ["no scheme"]),
        ("skill://Release/SKILL.md", ["skill names are lowercase letters"]),
        ("skill://release-notes", ["names the whole skill", RELEASE_MD]),
        ("skill://release-notes/../x.md", ["the path after the skill's name must be"]),
        ("memory://", ["names no memory", "memory://MEMORY.md is the index"]),
        ("memory://../deploys.md", ["names no memory"]),
        ("pano://nope", ["names no pano doc"]),
        ("task://nope/attachments/log", ["names no attachment", "task://<taskId>/attachments/<attachmentId>"]),
        ("task://0kGogHmaqvZ/files/log", ["names no attachment"]),
    ],
)
async def test_a_malformed_or_unknown_uri_is_refused_naming_its_problem(live, seeded, ids, uri, words):
    async with mcp_client(live.url, seeded.agent_token) as client:
        await read_refusal(client, uri, *words)


async def test_a_uri_that_names_nothing_is_refused_as_not_found(live, seeded, ids):
    async with mcp_client(live.url, seeded.agent_token) as client:
        await read_refusal(client, "skill://nothing-here/SKILL.md", "no skill nothing-here in this workspace")
        await read_refusal(client, "skill://release-notes/missing.md", "skill release-notes has no file missing.md")
        await read_refusal(client, "memory://missing.md", "nothing is saved in memory://missing.md yet")
        await read_refusal(client, "memory://MEMORY.md", "nothing is saved in memory://MEMORY.md yet")
        await read_refusal(client, "pano://0kGogHmaqvZ", "no doc 0kGogHmaqvZ on the pano")
        await read_refusal(client, f"task://{ids[TASK]}/attachments/nope", "no attachment 'nope' in task")
        await read_refusal(client, "task://WS-999/attachments/log", "no task 'WS-999' in this workspace")


async def test_a_uri_over_the_bound_is_refused_without_being_repeated(live, seeded):
    uri = "skill://release-notes/" + "a" * 5_000_000
    async with mcp_client(live.url, seeded.agent_token) as client:
        message = await read_refusal(client, uri, f"uri is {len(uri):,} characters", f"over {URI_MAX:,}")
    assert "aaaa" not in message


async def test_an_attachment_over_the_blob_limit_is_refused_naming_the_limit_before_s3_is_read(
    live, runtime, seeded, ids, monkeypatch
):
    # An attachment is at most BLOB_MAX when stored; this record says more, as a legacy or altered one might.
    runtime.clients.dynamodb.update_item(
        TableName=runtime.settings.table_name,
        Key={"PK": {"S": keys.workspace_pk(seeded.workspace_id)}, "SK": {"S": keys.attachment_sk(ids[TASK], "log")}},
        UpdateExpression="SET #size = :size",
        ExpressionAttributeNames={"#size": "size"},
        ExpressionAttributeValues={":size": {"N": str(BLOB_MAX + 1)}},
    )
    monkeypatch.setattr(runtime.blobs, "read", lambda key: pytest.fail("S3 was read"))
    async with mcp_client(live.url, seeded.agent_token) as client:
        await read_refusal(
            client,
            f"task://{ids[TASK]}/attachments/log",
            f"attachment 'log' is {BLOB_MAX + 1:,} bytes",
            f"at most {BLOB_MAX:,} bytes (4 MiB)",
        )


# -- what another workspace or account reaches ---------------------------------------------------------------------


async def test_another_workspace_reads_none_of_this_ones_skills_memories_or_attachments(live, runtime, seeded, ids):
    _, other = accounts.create_workspace(runtime.accounts, seeded.account_id, "Neighbour", "")
    async with mcp_client(live.url, other.token) as client:
        assert await pages_of(client) == [[f"pano://{ids[DOC]}"]]  # the account's pano, by design
        await read_refusal(client, RELEASE_MD, "no skill release-notes in this workspace")
        await read_refusal(client, ENTRY_MD, "no skill release-notes in this workspace")
        await read_refusal(client, "memory://deploys.md", "nothing is saved in memory://deploys.md yet")
        await read_refusal(client, f"task://{ids[TASK]}/attachments/log", "no attachment 'log'")
        assert await read_bytes(client, f"pano://{ids[DOC]}") == b"# Plan\n\n[log](deploy.log)"
        assert await all_skills(client) == []
        with pytest.raises(MCPError) as raised:
            await extension(client, "skills/get", uri=RELEASE_MD)
        assert raised.value.code == types.INVALID_PARAMS
        assert "no skill release-notes in this workspace" in raised.value.message


async def test_another_account_reads_not_even_the_pano(live, runtime, seeded, ids):
    account, _ = accounts.create_account(runtime.accounts, "Other account")
    _, other = accounts.create_workspace(runtime.accounts, account, "Theirs", "")
    async with mcp_client(live.url, other.token) as client:
        assert await pages_of(client) == [[]]
        await read_refusal(client, f"pano://{ids[DOC]}", f"no doc {ids[DOC]} on the pano")


async def test_a_skill_shared_into_a_workspace_is_listed_and_read_there(live, runtime, seeded, ids):
    target, target_token = accounts.create_workspace(runtime.accounts, seeded.account_id, "Shared into", "")
    skills.share(runtime, seeded.workspace_id, "release-notes", target.id)
    async with mcp_client(live.url, target_token.token) as client:
        assert [uri for page in await pages_of(client) for uri in page][:2] == [RELEASE_MD, ENTRY_MD]
        assert await read_bytes(client, ENTRY_MD) == b"- entry\n"
        assert [entry["uri"] for entry in await all_skills(client)] == [RELEASE_MD]


# -- the Agent Skills extension ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_each_skill_lists_its_frontmatter_and_every_file_with_the_digest_of_what_is_served(
    live, runtime, seeded, ids, mode
):
    stored = "---\ndescription: Has a name.\nmetadata:\n  tags: [a, b]\n  since: 2024-01-01\n---\nbody é\n"
    await made(runtime, seeded.agent_token, "skills", "save", uri="skill://named/SKILL.md", content=stored)
    async with mcp_client(live.url, seeded.agent_token, mode=mode) as client:
        entries = await all_skills(client)
        got = await extension(client, "skills/get", uri=RELEASE_MD)
        served = {
            resource["uri"]: await read_bytes(client, resource["uri"])
            for entry in entries
            for resource in entry["resources"]
        }
    assert [entry["uri"] for entry in entries] == ["skill://named/SKILL.md", RELEASE_MD]
    assert entries[0]["frontmatter"] == {
        "name": "named",
        "description": "Has a name.",
        "metadata": {"tags": ["a", "b"], "since": "2024-01-01"},  # YAML 1.2: a date is a string
    }
    assert entries[1]["frontmatter"] == {"name": "release-notes", "description": "Notes."}
    assert [r["uri"] for r in entries[1]["resources"]] == [RELEASE_MD, ENTRY_MD]
    for entry in entries:
        for resource in entry["resources"]:
            data = served[resource["uri"]]
            assert resource["digest"] == f"sha256:{hashlib.sha256(data).hexdigest()}", resource
            assert resource["size"] == len(data), resource
    assert got["skill"] == entries[1]
    if mode != "legacy":  # 2026-07-28 requires the cache hints on these results
        assert (got["ttlMs"], got["cacheScope"]) == (0, "private")


async def test_skills_list_pages_with_a_cursor_and_no_duplicates(live, runtime, seeded, monkeypatch):
    monkeypatch.setattr(skills, "CATALOG_PAGE", 2)
    names = [f"skill-{number}" for number in range(5)]
    for name in names:
        await made(
            runtime,
            seeded.agent_token,
            "skills",
            "save",
            uri=f"skill://{name}/SKILL.md",
            content="---\ndescription: d\n---\n",
        )
    async with mcp_client(live.url, seeded.agent_token) as client:
        first = await extension(client, "skills/list")
        entries = await all_skills(client)
    assert len(first["skills"]) == 2 and first["nextCursor"]
    assert [entry["uri"] for entry in entries] == [f"skill://{name}/SKILL.md" for name in names]


async def test_skills_get_refuses_a_file_uri_and_a_malformed_one(live, seeded, ids):
    async with mcp_client(live.url, seeded.agent_token) as client:
        for uri, words in (
            (ENTRY_MD, "skills/get takes the skill's own URI, skill://release-notes/SKILL.md"),
            ("memory://deploys.md", "must start with skill://"),
            ("skill://" + "a" * 2000, "no resource here has one over"),
        ):
            with pytest.raises(MCPError) as raised:
                await extension(client, "skills/get", uri=uri)
            assert raised.value.code == types.INVALID_PARAMS
            assert raised.value.message.startswith("skills/get: ") and words in raised.value.message


# -- the stateless JSON transport ----------------------------------------------------------------------------------


async def test_every_new_method_answers_a_lone_post_with_json(live, seeded, ids):
    token = seeded.agent_token
    listed = rpc(live.url, token, "resources/list")["result"]["resources"]
    assert RELEASE_MD in [resource["uri"] for resource in listed]
    assert rpc(live.url, token, "resources/templates/list")["result"]["resourceTemplates"]
    assert rpc(live.url, token, "resources/read", {"uri": ENTRY_MD})["result"]["contents"][0]["text"] == "- entry\n"
    assert rpc(live.url, token, "skills/list")["result"]["skills"][0]["uri"] == RELEASE_MD
    assert rpc(live.url, token, "skills/get", {"uri": RELEASE_MD})["result"]["skill"]["uri"] == RELEASE_MD
    error = rpc(live.url, token, "resources/read", {"uri": "memory://missing.md"})["error"]
    assert error == {
        "code": types.INVALID_PARAMS,
        "message": "resources/read: nothing is saved in memory://missing.md yet",
    }


# -- DynamoDB round trips ------------------------------------------------------------------------------------------


@contextmanager
def dynamodb_reads(runtime, monkeypatch) -> Iterator[Counter[str]]:
    """The DynamoDB reads the runtime's client sends meanwhile, by operation, the bearer token's lookup
    (`AccountStore.admit`) apart."""
    reads: Counter[str] = Counter()
    admitting = [False]
    admit = runtime.accounts.admit

    def admit_uncounted(*args: Any) -> Any:
        admitting[0] = True
        try:
            return admit(*args)
        finally:
            admitting[0] = False

    def count(model: Any, **_: Any) -> None:
        if not admitting[0] and model.name in ("GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"):
            reads[model.name] += 1

    monkeypatch.setattr(runtime.accounts, "admit", admit_uncounted)
    events = runtime.clients.dynamodb.meta.events
    events.register("before-call", count, unique_id="resource-reads")
    try:
        yield reads
    finally:
        events.unregister("before-call", unique_id="resource-reads")
        monkeypatch.undo()


async def test_each_method_reads_dynamodb_a_fixed_few_times_whatever_the_skills_hold(
    live, runtime, seeded, ids, monkeypatch
):
    for number in range(3):
        uri = f"skill://more-{number}"
        await made(
            runtime, seeded.agent_token, "skills", "save", uri=f"{uri}/SKILL.md", content="---\ndescription: d\n---\n"
        )
        for path in ("a.md", "b/c.md"):
            await made(runtime, seeded.agent_token, "skills", "save", uri=f"{uri}/{path}", content=path)
    budgets: list[tuple[str, dict[str, Any], Counter[str]]] = [
        ("resources/list", {}, Counter({"Query": 1, "BatchGetItem": 1})),  # references, then their file lists
        ("resources/read", {"uri": ENTRY_MD}, Counter({"BatchGetItem": 1})),  # reference and file together
        ("resources/read", {"uri": "memory://deploys.md"}, Counter({"GetItem": 1})),
        ("resources/read", {"uri": f"pano://{ids[DOC]}"}, Counter({"GetItem": 1})),
        ("resources/read", {"uri": f"task://{ids[TASK]}/attachments/log"}, Counter({"GetItem": 1})),
        ("skills/list", {}, Counter({"Query": 1, "BatchGetItem": 2})),  # references, records, every file at once
        ("skills/get", {"uri": "skill://more-1/SKILL.md"}, Counter({"BatchGetItem": 2})),  # reference+record, files
    ]
    for method, params, budget in budgets:
        with dynamodb_reads(runtime, monkeypatch) as reads:
            answer = rpc(live.url, seeded.agent_token, method, params)
        assert "result" in answer, answer
        assert reads == budget, (method, params, dict(reads))
