"""Claude Code's subagent and memory files as bundle fields (domain/agent_bundle.py): round trips, quoting, and
hostile input refused by field rather than misread."""

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_workspace.domain import agent_bundle
from agent_workspace.domain.agent_bundle import (
    parse_memory_file,
    parse_subagent,
    read_frontmatter,
    render_memory_file,
    render_subagent,
)
from agent_workspace.domain.agents import PROFILE_SETTINGS
from agent_workspace.domain.errors import PayloadError

TRICKY = "Reviews PRs: \"strict\" on tests,\nlenient on style # not a comment \u202e and 'quotes'"
SETTINGS = {
    "model": "opus",
    "effort": "high",
    "tools": "Read, Grep, Bash(git diff:*)",
    "disallowedTools": "Write",
    "permissionMode": "plan",
    "maxTurns": "10",
    "color": "yes",  # a word YAML 1.1 reads as a boolean: it must come back as text
    "skills": "release-notes",
}


def frontmatter_of(text: str) -> dict:
    return yaml.safe_load(text.split("---\n")[1])


def test_subagent_settings_are_exactly_claude_code_s_profile_settings():
    assert frozenset(agent_bundle.SUBAGENT_SETTINGS) == PROFILE_SETTINGS["claude-code"]


def test_a_rendered_subagent_parses_back_to_its_fields_with_the_description_on_one_line():
    text = render_subagent("code-reviewer", TRICKY, "You review code.\n\n## Rules\n- be kind", SETTINGS)

    parsed = parse_subagent(text)

    assert parsed == {
        "name": "code-reviewer",
        "description": " ".join(TRICKY.split()),
        "prompt": "You review code.\n\n## Rules\n- be kind",
        "settings": SETTINGS,
        "unknown": [],
    }


def test_a_rendered_subagent_is_yaml_that_reads_as_the_same_values():
    text = render_subagent("code-reviewer", TRICKY, "Body", SETTINGS | {"maxTurns": None})

    front = frontmatter_of(text)

    assert front["name"] == "code-reviewer" and front["description"] == " ".join(TRICKY.split())
    assert front["color"] == "yes" and front["tools"] == SETTINGS["tools"]
    assert "maxTurns" not in front  # a null setting is not written
    assert text.count("\n---\n") == 1 and "\u202e" not in text  # one line each, the override escaped


@settings(max_examples=300, deadline=None, database=None)
@given(
    description=st.text(max_size=200),
    value=st.text(st.characters(exclude_categories=("Cs", "Cc", "Cf", "Zl", "Zp")), min_size=1, max_size=400),
    prompt=st.text(max_size=200).map(lambda text: text.replace("\r", "").rstrip("\n")),
)
def test_any_description_setting_and_prompt_survive_the_round_trip(description, value, prompt):
    """Line endings are read as \\n (a file saved on Windows reads the same), so the prompt holds no \\r."""
    parsed = parse_subagent(render_subagent("a", description, prompt, {"model": value}))

    assert (parsed["description"], parsed["settings"], parsed["prompt"]) == (
        " ".join(description.split()),
        {"model": value},
        prompt,
    )


def test_a_hand_written_subagent_reads_lists_quotes_comments_and_lists_keys_it_does_not_use():
    text = (
        "---\n"
        "# written by hand\n"
        "name: 'it''s-me'\n"
        'description: "Use when: reviewing.\\nAlways."\n'
        "tools: [Read, 'Grep', \"Bash\"]\n"
        "model: sonnet # the cheaper one\n"
        "skills:\n"
        "  - api-conventions\n"
        "  - 'errors'\n"
        "hooks:\n"
        "  PreToolUse:\n"
        "    - matcher: Bash\n"
        "mcpServers: {weird: [nested]}\n"
        "---\r\n"
        "\n"
        "You are a reviewer.\n\n"
    )

    parsed = parse_subagent(text.replace("\n", "\r\n"))

    assert parsed["name"] == "it's-me"
    assert parsed["description"] == "Use when: reviewing.\nAlways."
    assert parsed["settings"] == {"tools": "Read, Grep, Bash", "model": "sonnet", "skills": "api-conventions, errors"}
    assert parsed["prompt"] == "You are a reviewer."
    assert parsed["unknown"] == ["hooks", "mcpServers"]


def test_a_file_without_frontmatter_is_all_prompt():
    assert parse_subagent("Just do the thing.\n---\nname: x\n") == {
        "name": None,
        "description": "",
        "prompt": "Just do the thing.\n---\nname: x",
        "settings": {},
        "unknown": [],
    }


def test_null_and_empty_settings_set_nothing_and_booleans_stay_booleans():
    parsed = parse_subagent("---\nmodel: ~\neffort:\ncolor: true\n---\nx")

    assert parsed["settings"] == {"color": True}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\nname: a\ndescription: b\n", "never closed"),
        ("---\nname a\n---\n", "expected 'key: value'"),
        ("---\nname:a\n---\n", "expected 'key: value'"),
        ("---\n'name': a\n---\n", "expected 'key: value'"),
        ("---\nmodel:\n  provider: x\n---\n", "nested maps are not read"),
        ("---\nmodel: opus\n  - x\n---\n", "nested maps are not read"),
        ("---\ntools:\n  - - Read\n---\n", "nested structures are not read"),
        ("---\ntools:\n  - name: Read\n---\n", "nested structures are not read"),
        ("---\ntools: {Read: true}\n---\n", "maps, block scalars"),
        ("---\ntools: [[Read]]\n---\n", "no nested structures"),
        ("---\ntools: [Read, {a: b}]\n---\n", "no nested structures"),
        ("---\ntools: [Read\n---\n", "inline list must be one line"),
        ("---\ndescription: |\n  text\n---\n", "block scalars"),
        ("---\nmodel: *alias\n---\n", "anchors, aliases and tags"),
        ("---\nmodel: !!str opus\n---\n", "anchors, aliases and tags"),
        ('---\ndescription: "unclosed\n---\n', "must be closed"),
        ('---\ndescription: "\\x41"\n---\n', "JSON escapes"),
        ("---\ndescription: 'unclosed\n---\n", "never closed"),
        ('---\ndescription: "a" trailing\n---\n', "only a comment may follow"),
        ("---\nmodel: a\nmodel: b\n---\n", "given twice"),
        ("---\nname: [a, b]\n---\n", "name must be text"),
        ('---\nname: "a\\u202eb"\n---\n', "one line of plain text"),
        (f"---\nmodel: {'x' * 401}\n---\n", "at most 400"),
        (f"---\n---\n{'x' * 128_001}", "at most 128,000"),
        ("x" * 10_000_000, "at most 200,000"),
    ],
)
def test_hostile_subagent_files_are_refused_naming_the_field(text, problem):
    with pytest.raises(PayloadError, match=problem) as refused:
        parse_subagent(text, field="agents[2].subagent")

    assert refused.value.field == "agents[2].subagent"
    assert len(refused.value.message) < 300  # an error never echoes the hostile input back


def test_unknown_keys_are_not_read_so_their_content_cannot_refuse_the_file():
    parsed = parse_subagent("---\nname: a\nx-extra: {[|*&\n  - - deep: [\n---\nbody")

    assert parsed["unknown"] == ["x-extra"] and parsed["prompt"] == "body"


def test_a_large_bounded_frontmatter_is_read_in_one_pass():
    many = "".join(f"k{number}: v\n" for number in range(15_000))  # 133,890 characters of keys
    quotes = "'" + "''" * 30_000 + "'"

    fields, body, unknown = read_frontmatter(f"---\n{many}name: {quotes}\n---\nbody", "f", frozenset({"name"}), 200_000)

    assert fields == {"name": "'" * 30_000} and body == "body" and len(unknown) == 15_000


MEMORY = {
    "name": "release-checklist",
    "type": "project",
    "description": 'Steps: "smoke test", then tag',
    "body": "Run the smoke test.\n\nThen tag the release.",
}


def test_a_memory_file_round_trips():
    text = render_memory_file(MEMORY)

    assert parse_memory_file(text, "memories[0].file") == MEMORY
    assert frontmatter_of(text) == {k: MEMORY[k] for k in ("name", "description", "type")}


def test_a_memory_name_that_is_not_kebab_case_becomes_its_slug():
    text = "---\nname: Release Checklist (v2)\ndescription: Steps\ntype: project\n---\n\nBody"

    assert parse_memory_file(text, "memories[0].file")["name"] == "release-checklist-v2"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\nname: a\ndescription: b\ntype: opinion\n---\nx", "type must be one of feedback, user, project"),
        ("---\nname: a\ndescription: b\n---\nx", "must give name, description and type"),
        ("---\nname: a\ntype: user\n---\nx", "must give name, description and type"),
        ("no frontmatter at all", "must give name, description and type"),
        ("---\nname: '!!!'\ndescription: b\ntype: user\n---\nx", "give a slug"),
        (f"---\nname: a\ndescription: {'d' * 201}\ntype: user\n---\nx", "at most 200"),
        (f"---\nname: a\ndescription: b\ntype: user\n---\n{'x' * 64_001}", "at most 64,000"),
        ("---\nname: a\ndescription: b\ntype: user\nmetadata:\n  type: x\n", "never closed"),
        ("y" * 70_001, "at most 70,000"),
    ],
)
def test_bad_memory_files_are_refused_naming_the_file(text, problem):
    with pytest.raises(PayloadError, match=problem) as refused:
        parse_memory_file(text, "memories[3].file")

    assert refused.value.field == "memories[3].file"
