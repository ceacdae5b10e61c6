"""The `skills` tool through the SDK's own MCP client against the app under uvicorn.

Sharing is the human's act, so the sharing tests share over REST and then look through the agents.
"""

import json

import anyio
import httpx
import pytest

from agent_workspace.domain.skills import FILE_MAX_BYTES, MAX_FILES, SKILL_MD_MAX_BYTES
from agent_workspace.local.stack import seed
from agent_workspace.services import accounts
from agent_workspace.store import keys
from tests.support import Agent, call, connected

pytestmark = pytest.mark.anyio

RELEASE = "skill://release-notes"
RELEASE_MD = f"{RELEASE}/SKILL.md"


def skill_md(description: str = "Write release notes from merged PRs.", body: str = "# Release notes\n") -> str:
    return f"---\ndescription: {description}\n---\n{body}"


async def skills_answer(agent: Agent, action: str, **payload) -> str:
    """A `skills` action that must succeed: its text (skills answers in text, not JSON)."""
    text, is_error = await agent("skills", action, **payload)
    assert not is_error, text
    return text


async def assert_owners_release_notes(agent: Agent, description: str, a_md: str) -> None:
    """The skill as its owner loads it: SKILL.md with `description`, and the one file a.md holding `a_md`."""
    assert await loaded(agent, RELEASE) == {
        "uri": RELEASE_MD,
        "content": skill_md(description),
        "files": [f"{RELEASE}/a.md"],
    }
    assert (await loaded(agent, f"{RELEASE}/a.md"))["content"] == a_md


async def loaded(agent: Agent, uri: str) -> dict:
    return json.loads(await skills_answer(agent, "load", uri=uri))


async def skills_refusal(agent: Agent, action: str, *words: str, **payload) -> str:
    """A `skills` action that must fail with an error naming the action and every one of `words`: its text."""
    text, is_error = await agent("skills", action, **payload)
    assert is_error, text
    assert text.startswith(f"skills {action}: "), text
    for word in words:
        assert word in text, text
    return text


async def names(agent: Agent, **payload) -> list[str]:
    return [hit["name"] for hit in json.loads(await skills_answer(agent, "search", **payload))["skills"]]


def share(live, seeded, workspace_id: str, name: str, target: str) -> httpx.Response:
    return httpx.post(
        f"{live.url}/api/workspaces/{workspace_id}/skills/{name}/shares",
        json={"workspaceId": target},
        headers={"authorization": f"Bearer {seeded.human_token}"},
    )


def partition(runtime, skill_id: str) -> list[str]:
    """The sort keys left in a skill's own partition, read straight from the table."""
    response = runtime.clients.dynamodb.query(
        TableName=runtime.settings.table_name,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": keys.skill_pk(skill_id)}},
    )
    return [item["SK"]["S"] for item in response["Items"]]


def fill(runtime, seeded, name: str, files: int) -> None:
    """`files` more small files in a skill of the seeded workspace, written straight to the table as
    `skills save` stores them (one transaction each would take moto minutes); the tests watch the MCP path."""
    db, table = runtime.clients.dynamodb, runtime.settings.table_name
    pk = keys.skill_pk(keys.skill_home_id(seeded.workspace_id, name))
    paths = [f"fill/{number:03d}.md" for number in range(files)]
    items = [
        {
            "PK": {"S": pk},
            "SK": {"S": keys.skill_file_sk(path)},
            "path": {"S": path},
            "content": {"S": path},
            "updatedAt": {"S": "2026-01-01T00:00:00.000Z"},
        }
        for path in paths
    ]
    for start in range(0, len(items), 25):
        batch = [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]
        db.batch_write_item(RequestItems={table: batch})
    db.update_item(
        TableName=table,
        Key={"PK": {"S": pk}, "SK": {"S": keys.SKILL_SK}},
        UpdateExpression="ADD files :paths",
        ConditionExpression="attribute_exists(PK)",
        ExpressionAttributeValues={":paths": {"SS": paths}},
    )


# -- save and load ------------------------------------------------------------------------------


async def test_saving_skill_md_creates_the_skill_and_load_reads_it_with_the_uris_of_its_other_files(agent):
    assert await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md()) == (
        f"{RELEASE_MD} saved: skill release-notes created"
    )
    assert await skills_answer(agent, "save", uri=f"{RELEASE}/templates/entry.md", content="## {version}\n") == (
        f"{RELEASE}/templates/entry.md saved"
    )
    await skills_answer(agent, "save", uri=f"{RELEASE}/checklist.md", content="- [ ] links")

    skill = await loaded(agent, RELEASE)
    assert skill == {
        "uri": RELEASE_MD,
        "content": skill_md(),
        "files": [f"{RELEASE}/checklist.md", f"{RELEASE}/templates/entry.md"],
    }
    assert await loaded(agent, RELEASE_MD) == skill
    assert await loaded(agent, f"{RELEASE}/templates/entry.md") == {
        "uri": f"{RELEASE}/templates/entry.md",
        "content": "## {version}\n",
    }


async def test_save_replaces_a_file_completely(agent):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md(body="first, long version\n" * 20))
    await skills_answer(agent, "save", uri=f"{RELEASE}/a.md", content="old text that is longer")
    assert await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md(body="second")) == f"{RELEASE_MD} saved"
    await skills_answer(agent, "save", uri=f"{RELEASE}/a.md", content="new")
    assert (await loaded(agent, RELEASE))["content"] == skill_md(body="second")
    assert (await loaded(agent, f"{RELEASE}/a.md"))["content"] == "new"
    assert (await loaded(agent, RELEASE))["files"] == [f"{RELEASE}/a.md"]


async def test_a_missing_skill_or_file_loads_as_nothing_there_not_as_an_error(agent):
    text = await skills_answer(agent, "load", uri="skill://nothing-here")
    assert text.startswith("nothing at skill://nothing-here/SKILL.md: this workspace has no skill nothing-here")
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md())
    text = await skills_answer(agent, "load", uri=f"{RELEASE}/missing.md")
    assert text.startswith(f"nothing at {RELEASE}/missing.md: skill release-notes has no file missing.md")


async def test_another_file_of_a_skill_that_does_not_exist_is_refused_until_skill_md_is_written(agent):
    await skills_refusal(agent, "save", "write skill://drafts/SKILL.md first", uri="skill://drafts/a.md", content="x")
    assert await names(agent) == []
    await skills_answer(agent, "save", uri="skill://drafts/SKILL.md", content=skill_md())
    assert await skills_answer(agent, "save", uri="skill://drafts/a.md", content="x") == "skill://drafts/a.md saved"


async def test_save_needs_a_file_not_just_the_skill(agent):
    await skills_refusal(
        agent, "save", "names the whole skill", "skill://x/SKILL.md", uri="skill://x", content=skill_md()
    )


# -- names, URIs and content rules -----------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["Release", "release_notes", "release notes", "-release", "release-", "release--notes", "é", "a" * 65, ""]
)
async def test_bad_skill_names_are_refused_with_the_rule_by_every_action(agent, name):
    uri = f"skill://{name}"
    rule = "skill names are lowercase letters and digits joined by single hyphens, at most 64 characters"
    await skills_refusal(agent, "save", rule, uri=f"{uri}/SKILL.md", content=skill_md())
    await skills_refusal(agent, "load", rule, uri=uri)
    await skills_refusal(agent, "delete", rule, uri=uri)
    assert await names(agent) == []


async def test_a_64_character_name_of_letters_and_digits_is_accepted(agent):
    name = "v2-" + "a" * 61
    await skills_answer(agent, "save", uri=f"skill://{name}/SKILL.md", content=skill_md())
    assert await names(agent) == [name]


@pytest.mark.parametrize(
    "uri",
    [
        "release-notes/SKILL.md",
        "https://example.com/SKILL.md",
        "SKILL://release-notes/SKILL.md",
        "skill://release-notes/",
        "skill://release-notes//a.md",
        "skill://release-notes/a//b.md",
        "skill://release-notes/../other/SKILL.md",
        "skill://release-notes/./a.md",
        "skill://release-notes/a/..",
        "skill://release-notes/a b.md",
        "skill://release-notes/a\\b.md",
        "skill://release-notes/a.md?x=1",
        "skill://release-notes/" + "a" * 201,
    ],
)
async def test_bad_uris_are_refused_by_every_action(agent, uri):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md())
    for action, payload in [("save", {"content": "x"}), ("load", {}), ("delete", {})]:
        text = await skills_refusal(agent, action, uri=uri, **payload)
        assert "uri" in text and ("skill://" in text), text
    assert (await loaded(agent, RELEASE))["files"] == []


async def test_a_path_of_200_characters_in_folders_is_accepted(agent):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md())
    path = "a" * 99 + "/" + "b" * 100
    await skills_answer(agent, "save", uri=f"{RELEASE}/{path}", content="deep")
    assert (await loaded(agent, f"{RELEASE}/{path}"))["content"] == "deep"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("# Release notes\nNo frontmatter.", "SKILL.md must start with YAML frontmatter"),
        ("\n---\ndescription: late\n---\n", "SKILL.md must start with YAML frontmatter"),
        ("---\ndescription: never closed\n# body", "never closed by a line '---'"),
        ("---\nname: release-notes\n---\n# body", "the frontmatter has no description"),
        ("---\n- description\n---\n", "the frontmatter has no description"),
        ("---\n---\n# body", "the frontmatter has no description"),
        ("---\ndescription: ''\n---\n", "description must not be empty"),
        ("---\ndescription: 42\n---\n", "description must be a string"),
        ("---\ndescription: [unclosed\n---\n", "the frontmatter is not valid YAML"),
        ("---\ndescription: a: b: c\n---\n", "the frontmatter is not valid YAML"),
        (skill_md("x" * 1025), "description is 1,025 characters; at most 1,024"),
    ],
)
async def test_skill_md_without_a_frontmatter_description_is_refused_and_nothing_is_created(agent, content, expected):
    await skills_refusal(agent, "save", expected, uri=RELEASE_MD, content=content)
    assert await names(agent) == []


async def test_a_description_of_1024_characters_in_yaml_is_accepted_as_parsed(agent):
    description = "d" * 1024
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md(description))
    assert json.loads(await skills_answer(agent, "search"))["skills"][0]["description"] == description
    folded = '---\ndescription: >\n  Write release notes\n  from merged PRs.\nname: "release-notes"\n---\n'
    await skills_answer(agent, "save", uri="skill://folded/SKILL.md", content=folded)
    hits = json.loads(await skills_answer(agent, "search", q="folded"))["skills"]
    assert hits[0]["description"] == "Write release notes from merged PRs."


async def test_skill_md_of_exactly_96_kib_is_kept_and_one_byte_more_is_refused_leaving_the_old(agent):
    head = skill_md()
    exact = head + "€" * ((SKILL_MD_MAX_BYTES - len(head)) // 3) + "x" * ((SKILL_MD_MAX_BYTES - len(head)) % 3)
    assert len(exact.encode()) == SKILL_MD_MAX_BYTES == 98_304
    await skills_answer(agent, "save", uri=RELEASE_MD, content=exact)
    assert (await loaded(agent, RELEASE))["content"] == exact

    await skills_refusal(
        agent, "save", "content is 98,305 bytes of UTF-8", "at most 98,304", uri=RELEASE_MD, content=exact + "y"
    )
    assert (await loaded(agent, RELEASE))["content"] == exact


async def test_a_file_of_exactly_64_kib_is_kept_and_one_byte_more_is_refused_leaving_the_old(agent):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md())
    exact = "é" * (FILE_MAX_BYTES // 2)
    assert len(exact.encode()) == FILE_MAX_BYTES == 65_536
    await skills_answer(agent, "save", uri=f"{RELEASE}/big.md", content=exact)

    await skills_refusal(
        agent, "save", "content is 65,537 bytes", "at most 65,536", uri=f"{RELEASE}/big.md", content=exact + "!"
    )
    assert (await loaded(agent, f"{RELEASE}/big.md"))["content"] == exact
    await skills_refusal(agent, "save", "at most 65,536", uri=f"{RELEASE}/new.md", content=exact + "!")
    assert (await loaded(agent, RELEASE))["files"] == [f"{RELEASE}/big.md"]


@pytest.mark.parametrize(
    ("content", "what"),
    [
        ("binary\x00data", "control character U+0000"),
        ("bell\x07", "control character U+0007"),
        ("escape \x1b[31m", "control character U+001B"),
        ("delete \x7f", "control character U+007F"),
        ("next line \x85", "control character U+0085"),
    ],
)
async def test_content_that_is_not_utf8_text_is_refused(agent, content, what):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md())
    await skills_refusal(agent, "save", "content must be UTF-8 text", what, uri=f"{RELEASE}/a.md", content=content)
    await skills_refusal(agent, "save", "content must be UTF-8 text", uri=RELEASE_MD, content=skill_md() + content)
    assert await loaded(agent, RELEASE) == {"uri": RELEASE_MD, "content": skill_md(), "files": []}


async def test_a_lone_surrogate_which_json_can_carry_but_utf8_cannot_is_refused(runtime, seeded):
    # The SDK's client cannot even send one, so this goes through the dispatcher as the endpoint calls it.
    await call(
        runtime, seeded.agent_token, "skills", {"action": "save", "payload": {"uri": RELEASE_MD, "content": skill_md()}}
    )
    outcome = await call(
        runtime,
        seeded.agent_token,
        "skills",
        {"action": "save", "payload": {"uri": f"{RELEASE}/a.md", "content": "bad \ud800 half"}},
    )
    assert outcome.is_error and "content must be UTF-8 text: a lone surrogate at character 4" in outcome.text


async def test_text_with_tabs_newlines_and_any_script_is_kept_exactly(agent):
    text = "tab\there\r\nwindows line\nunicode: é € 😀 日本語 \u200b\n"
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md(body=text))
    await skills_answer(agent, "save", uri=f"{RELEASE}/t.txt", content=text)
    assert (await loaded(agent, RELEASE))["content"] == skill_md(body=text)
    assert (await loaded(agent, f"{RELEASE}/t.txt"))["content"] == text


async def test_content_must_be_a_json_string(agent):
    await skills_refusal(agent, "save", "field 'content' must be a string", uri=RELEASE_MD, content=["---"])


async def test_a_skill_holds_256_files_and_the_257th_is_refused_with_nothing_half_written(agent, runtime, seeded):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md())
    fill(runtime, seeded, "release-notes", MAX_FILES - 2)  # SKILL.md and 254 others
    assert await skills_answer(agent, "save", uri=f"{RELEASE}/last.md", content="256th") == f"{RELEASE}/last.md saved"
    assert len((await loaded(agent, RELEASE))["files"]) == MAX_FILES - 1

    await skills_refusal(
        agent, "save", "already has 256 files (SKILL.md included)", uri=f"{RELEASE}/one-more.md", content="257th"
    )
    assert "nothing at" in await skills_answer(agent, "load", uri=f"{RELEASE}/one-more.md")
    listed = (await loaded(agent, RELEASE))["files"]
    assert len(listed) == MAX_FILES - 1 and f"{RELEASE}/one-more.md" not in listed
    assert len(partition(runtime, keys.skill_home_id(seeded.workspace_id, "release-notes"))) == MAX_FILES

    # A full skill still takes new versions of its files, and a new file once one is deleted.
    await skills_answer(agent, "save", uri=f"{RELEASE}/last.md", content="replaced")
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md(body="still fine"))
    await skills_answer(agent, "delete", uri=f"{RELEASE}/last.md")
    await skills_answer(agent, "save", uri=f"{RELEASE}/one-more.md", content="now it fits")


async def test_agents_racing_for_the_last_files_never_pass_256(live, runtime, seeded, agent):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md())
    fill(runtime, seeded, "release-notes", MAX_FILES - 1 - 3)  # three places left
    outcomes: list[tuple[str, bool]] = []

    async def write(number: int) -> None:
        async with connected(live.url, seeded.agent_token) as writer:
            outcomes.append(await writer("skills", "save", uri=f"{RELEASE}/race-{number}.md", content="x"))

    async with anyio.create_task_group() as group:
        for number in range(8):
            group.start_soon(write, number)

    assert sum(1 for _, is_error in outcomes if not is_error) == 3
    assert all("already has 256 files" in text for text, is_error in outcomes if is_error)
    assert len((await loaded(agent, RELEASE))["files"]) == MAX_FILES - 1
    assert len(partition(runtime, keys.skill_home_id(seeded.workspace_id, "release-notes"))) == MAX_FILES


# -- search --------------------------------------------------------------------------------------


async def test_search_lists_all_without_q_and_matches_name_or_description_in_any_case(agent):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md("Write release notes from merged PRs."))
    await skills_answer(
        agent, "save", uri="skill://deploy/SKILL.md", content=skill_md("Ship it, then tag the RELEASE.")
    )
    await skills_answer(agent, "save", uri="skill://code-review/SKILL.md", content=skill_md("Review a pull request."))

    everything = json.loads(await skills_answer(agent, "search"))
    assert everything == {
        "skills": [
            {"name": "code-review", "uri": "skill://code-review/SKILL.md", "description": "Review a pull request."},
            {
                "name": "deploy",
                "uri": "skill://deploy/SKILL.md",
                "description": "Ship it, then tag the RELEASE.",
            },
            {"name": "release-notes", "uri": RELEASE_MD, "description": "Write release notes from merged PRs."},
        ]
    }
    assert await names(agent, q="release") == ["deploy", "release-notes"]  # a name, and a description in capitals
    assert await names(agent, q="NOTES") == ["release-notes"]
    assert await names(agent, q="pull request") == ["code-review"]
    assert await names(agent, q="e-r") == ["code-review"]
    assert await names(agent, q="kubernetes") == []


@pytest.mark.parametrize("q", ["", "ab", "  ab  ", "é€"])
async def test_search_refuses_a_q_shorter_than_3_characters(agent, q):
    await skills_refusal(agent, "search", "q must be at least 3 characters; leave it out to list every skill", q=q)


async def test_a_new_description_shows_in_search(agent):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md("Old words."))
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md("Fresh words."))
    assert await names(agent, q="old words") == []
    assert await names(agent, q="fresh") == ["release-notes"]


# -- delete ----------------------------------------------------------------------------------------


async def test_skill_md_alone_cannot_be_deleted(agent):
    await skills_refusal(
        agent, "delete", "SKILL.md cannot be deleted on its own", "skill://release-notes", uri=RELEASE_MD
    )
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md())
    await skills_refusal(agent, "delete", "SKILL.md cannot be deleted on its own", uri=RELEASE_MD)
    assert (await loaded(agent, RELEASE))["content"] == skill_md()


async def test_deleting_a_file_removes_it_from_the_skill_and_missing_ones_are_not_an_error(agent):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md())
    await skills_answer(agent, "save", uri=f"{RELEASE}/a.md", content="a")
    await skills_answer(agent, "save", uri=f"{RELEASE}/b.md", content="b")
    assert await skills_answer(agent, "delete", uri=f"{RELEASE}/a.md") == f"{RELEASE}/a.md deleted"
    assert (await loaded(agent, RELEASE))["files"] == [f"{RELEASE}/b.md"]
    assert "nothing at" in await skills_answer(agent, "load", uri=f"{RELEASE}/a.md")
    assert await skills_answer(agent, "delete", uri=f"{RELEASE}/a.md") == f"nothing at {RELEASE}/a.md; nothing deleted"
    assert (
        await skills_answer(agent, "delete", uri="skill://ghost/a.md")
        == "this workspace has no skill ghost; nothing deleted"
    )
    assert (
        await skills_answer(agent, "delete", uri="skill://ghost")
        == "this workspace has no skill ghost; nothing deleted"
    )


async def test_deleting_a_whole_unshared_skill_deletes_it_and_every_file(agent, runtime, seeded):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md())
    for number in range(30):
        await skills_answer(agent, "save", uri=f"{RELEASE}/f{number}.md", content=f"{number}")
    skill_id = keys.skill_home_id(seeded.workspace_id, "release-notes")
    assert len(partition(runtime, skill_id)) == 31

    assert (
        await skills_answer(agent, "delete", uri=RELEASE) == "skill release-notes deleted: no other workspace used it"
    )
    assert partition(runtime, skill_id) == []
    assert await names(agent) == []
    assert "nothing at" in await skills_answer(agent, "load", uri=RELEASE)
    assert "nothing at" in await skills_answer(agent, "load", uri=f"{RELEASE}/f1.md")

    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md("Again."))  # the name is free again
    assert await loaded(agent, RELEASE) == {"uri": RELEASE_MD, "content": skill_md("Again."), "files": []}


# -- isolation and sharing -----------------------------------------------------------------------------


async def test_skills_belong_to_their_workspace_and_account(live, runtime, seeded, agent):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md("secret recipe"))
    await skills_answer(agent, "save", uri=f"{RELEASE}/a.md", content="secret file")
    _, other = accounts.create_workspace(runtime.accounts, seeded.account_id, "Other", "")
    for token in (other.token, seed(runtime).agent_token):
        async with connected(live.url, token) as stranger:
            assert await names(stranger) == []
            assert await names(stranger, q="secret") == []
            for uri in (RELEASE, f"{RELEASE}/a.md"):
                text = await skills_answer(stranger, "load", uri=uri)
                assert text.startswith("nothing at") and "secret" not in text
            await skills_refusal(
                stranger,
                "save",
                "write skill://release-notes/SKILL.md first",
                uri=f"{RELEASE}/a.md",
                content="overwrite",
            )
            assert "no skill" in await skills_answer(stranger, "delete", uri=f"{RELEASE}/a.md")
            assert "no skill" in await skills_answer(stranger, "delete", uri=RELEASE)
            # Its own skill of the same name is a different skill.
            await skills_answer(stranger, "save", uri=RELEASE_MD, content=skill_md("mine"))
            assert (await loaded(stranger, RELEASE))["content"] == skill_md("mine")
    await assert_owners_release_notes(agent, "secret recipe", "secret file")


async def test_a_shared_skill_is_visible_and_read_only_where_it_is_shared(live, runtime, seeded, agent):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md("Write release notes."))
    await skills_answer(agent, "save", uri=f"{RELEASE}/a.md", content="a")
    target, issued = accounts.create_workspace(runtime.accounts, seeded.account_id, "Target", "")
    assert share(live, seeded, seeded.workspace_id, "release-notes", target.id).status_code == 201

    async with connected(live.url, issued.token) as guest:
        assert json.loads(await skills_answer(guest, "search", q="release"))["skills"] == [
            {"name": "release-notes", "uri": RELEASE_MD, "description": "Write release notes.", "readOnly": True}
        ]
        assert await loaded(guest, RELEASE) == {
            "uri": RELEASE_MD,
            "content": skill_md("Write release notes."),
            "files": [f"{RELEASE}/a.md"],
            "readOnly": True,
        }
        assert await loaded(guest, f"{RELEASE}/a.md") == {"uri": f"{RELEASE}/a.md", "content": "a", "readOnly": True}
        for action, payload in [
            ("save", {"uri": RELEASE_MD, "content": skill_md("Hijacked.")}),
            ("save", {"uri": f"{RELEASE}/a.md", "content": "changed"}),
            ("save", {"uri": f"{RELEASE}/new.md", "content": "new"}),
            ("delete", {"uri": f"{RELEASE}/a.md"}),
        ]:
            await skills_refusal(guest, action, "read-only here", **payload)

        # The owner's changes show where the skill is shared.
        await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md("Write better release notes."))
        await skills_answer(agent, "save", uri=f"{RELEASE}/b.md", content="b")
        assert await names(guest, q="better") == ["release-notes"]
        assert (await loaded(guest, RELEASE))["files"] == [f"{RELEASE}/a.md", f"{RELEASE}/b.md"]

    assert await loaded(agent, f"{RELEASE}/a.md") == {"uri": f"{RELEASE}/a.md", "content": "a"}
    assert "readOnly" not in json.loads(await skills_answer(agent, "search"))["skills"][0]


async def test_deleting_a_shared_skill_takes_it_out_of_one_workspace_and_the_last_one_deletes_it(
    live, runtime, seeded, agent
):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md("Original."))
    await skills_answer(agent, "save", uri=f"{RELEASE}/a.md", content="a")
    first, first_token = accounts.create_workspace(runtime.accounts, seeded.account_id, "First", "")
    second, second_token = accounts.create_workspace(runtime.accounts, seeded.account_id, "Second", "")
    for target in (first, second):
        assert share(live, seeded, seeded.workspace_id, "release-notes", target.id).status_code == 201
    original = keys.skill_home_id(seeded.workspace_id, "release-notes")

    async with (
        connected(live.url, first_token.token) as guest_one,
        connected(live.url, second_token.token) as guest_two,
    ):
        assert await skills_answer(guest_one, "delete", uri=RELEASE) == (
            "skill release-notes removed from this workspace; it stays in the 2 other workspaces that use it"
        )
        assert await names(guest_one) == []
        assert await skills_answer(agent, "delete", uri=RELEASE) == (
            "skill release-notes removed from this workspace; it stays in the 1 other workspace that uses it"
        )
        assert await names(agent) == []
        # Still whole, and still read-only, where it is left.
        assert (await loaded(guest_two, RELEASE))["content"] == skill_md("Original.")
        assert (await loaded(guest_two, f"{RELEASE}/a.md"))["content"] == "a"
        await skills_refusal(guest_two, "save", "read-only here", uri=f"{RELEASE}/a.md", content="mine now?")

        # The owner may make a new skill of that name; it is a different skill.
        await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md("Rewritten."))
        assert await skills_answer(agent, "save", uri=f"{RELEASE}/a.md", content="new a") == f"{RELEASE}/a.md saved"
        assert (await loaded(guest_two, f"{RELEASE}/a.md"))["content"] == "a"

        assert (
            await skills_answer(guest_two, "delete", uri=RELEASE)
            == "skill release-notes deleted: no other workspace used it"
        )
        assert partition(runtime, original) == []
    await assert_owners_release_notes(agent, "Rewritten.", "new a")


async def test_the_owner_deleting_an_unshared_skill_after_unsharing_deletes_it(live, runtime, seeded, agent):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md())
    target, _ = accounts.create_workspace(runtime.accounts, seeded.account_id, "Target", "")
    share(live, seeded, seeded.workspace_id, "release-notes", target.id)
    response = httpx.delete(
        f"{live.url}/api/workspaces/{seeded.workspace_id}/skills/release-notes/shares/{target.id}",
        headers={"authorization": f"Bearer {seeded.human_token}"},
    )
    assert response.status_code == 204
    assert (
        await skills_answer(agent, "delete", uri=RELEASE) == "skill release-notes deleted: no other workspace used it"
    )
    assert partition(runtime, keys.skill_home_id(seeded.workspace_id, "release-notes")) == []


async def test_racing_skill_md_saves_all_land_and_every_workspace_shows_the_final_description(
    live, runtime, seeded, agent
):
    await skills_answer(agent, "save", uri=RELEASE_MD, content=skill_md("Start."))
    guests = [accounts.create_workspace(runtime.accounts, seeded.account_id, f"Guest {n}", "") for n in range(2)]
    for workspace, _ in guests:
        assert share(live, seeded, seeded.workspace_id, "release-notes", workspace.id).status_code == 201
    outcomes: list[tuple[str, bool]] = []

    async def write(number: int) -> None:
        async with connected(live.url, seeded.agent_token) as writer:
            saved = await writer("skills", "save", uri=RELEASE_MD, content=skill_md(f"Version {number}."))
            outcomes.append(saved)

    async with anyio.create_task_group() as group:
        for number in range(5):
            group.start_soon(write, number)

    assert outcomes == [(f"{RELEASE_MD} saved", False)] * 5
    final = (await loaded(agent, RELEASE))["content"]
    description = final.split("\n")[1].removeprefix("description: ")
    for _, issued in guests:
        async with connected(live.url, issued.token) as reader:
            assert json.loads(await skills_answer(reader, "search"))["skills"][0]["description"] == description
    assert json.loads(await skills_answer(agent, "search"))["skills"][0]["description"] == description


# -- old names and strict decoding ---------------------------------------------------------------------


async def test_old_tool_names_reach_the_skills_actions(agent):
    text, is_error = await agent.raw("saveSkill", {"uri": RELEASE_MD, "content": skill_md()})
    assert (text, is_error) == (f"{RELEASE_MD} saved: skill release-notes created", False)
    text, _ = await agent.raw("searchSkills", {"q": "release"})
    assert [hit["name"] for hit in json.loads(text)["skills"]] == ["release-notes"]
    text, _ = await agent.raw("searchSkills", {})
    assert len(json.loads(text)["skills"]) == 1
    text, _ = await agent.raw("loadSkill", {"uri": RELEASE})
    assert json.loads(text)["content"] == skill_md()
    text, is_error = await agent.raw("deleteSkill", {"uri": RELEASE})
    assert (text, is_error) == ("skill release-notes deleted: no other workspace used it", False)
    flat, is_error = await agent.raw("skills", {"action": "search", "q": "release"})
    assert (json.loads(flat), is_error) == ({"skills": []}, False)


@pytest.mark.parametrize("action", ["search", "load", "save", "delete"])
async def test_every_action_refuses_unknown_fields_by_name(agent, action):
    payload = {"uri": RELEASE, "content": "x"} if action == "save" else {"uri": RELEASE} if action != "search" else {}
    text, is_error = await agent("skills", action, verbose=True, **payload)
    assert is_error and text.startswith(f"skills {action}: ") and "unknown field 'verbose'" in text


@pytest.mark.parametrize(
    ("action", "payload", "expected"),
    [
        ("load", {}, "skills load: missing required field 'uri'"),
        ("save", {"uri": RELEASE_MD}, "skills save: missing required field 'content'"),
        ("delete", {}, "skills delete: missing required field 'uri'"),
        ("search", {"q": 3}, "skills search: field 'q' must be a string"),
    ],
)
async def test_missing_and_mistyped_fields_are_refused_by_name(agent, action, payload, expected):
    text, is_error = await agent("skills", action, **payload)
    assert is_error and text.startswith(expected), text
