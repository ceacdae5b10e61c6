"""checkout_agent's operations (domain/agent_checkout.py), applied to a directory the way the reference tells an
agent to apply them: every harness and mode leaves a pointer, never the prompt or a credential."""

import json
import re
from pathlib import Path, PurePosixPath

import pytest
import yaml

from agent_workspace.domain.agent_bundle import parse_subagent, read_frontmatter
from agent_workspace.domain.agent_checkout import BEGIN, END, CheckoutAgent, Snapshot, checkout
from agent_workspace.domain.agents import HARNESSES, PROFILE_SETTINGS
from agent_workspace.domain.errors import PayloadError

SERVER_URL = "https://omr.example/mcp"
CAPTAIN = CheckoutAgent(
    id="d3a1f0c2-6b4e-4a1d-9c7e-5e8f2b1a9d44",
    slug="release-captain",
    name="Release Captain",
    description='Ships releases: "tags" them,\nthen announces',
)
SCRIBE = CheckoutAgent(id="7e1c9a52-0f3b-4d68-b2a4-9c5d1e8f3a60", slug="scribe", name="Scribe", description="Notes")
PROMPT = "You are the release captain. SECRET-PROMPT-TEXT"
SNAPSHOT = Snapshot(
    prompt=PROMPT,
    prompt_version=7,
    memories=[
        {"name": "zeta-user", "type": "user", "description": "Who", "body": "Prefers short notes."},
        {"name": "alpha-checklist", "type": "project", "description": "Steps", "body": "Run the smoke test."},
    ],
    briefs=[{"name": "deploy", "description": "How we deploy", "body": "make deploy"}],
)
CLAUDE_CODE_SETTINGS = {
    "model": "opus",
    "effort": "high",
    "tools": "Read, Grep",
    "disallowedTools": "Write",
    "permissionMode": "plan",
    "maxTurns": "10",
    "color": "teal",
    "skills": "release-notes",
}
# The file each harness reads in primary mode (claude.ai reads none).
PRIMARY_FILES = {
    "claude-code": "CLAUDE.md",
    "codex": "AGENTS.md",
    "other": "AGENTS.md",
    "cursor": ".cursor/rules/agent-workspace.mdc",
    "copilot": ".github/copilot-instructions.md",
    "gemini-cli": "GEMINI.md",
    "windsurf": ".windsurf/rules/agent-workspace.md",
    "zed": ".rules",
    "claude-ai": None,
}
TOKEN_LIKE = re.compile(r"aw_[A-Za-z0-9]|Bearer [A-Za-z0-9_\-.]{8,}")


def settings_for(harness: str) -> dict:
    if harness == "claude-code":
        return dict(CLAUDE_CODE_SETTINGS)
    return {name: f"{name}-value" for name in sorted(PROFILE_SETTINGS[harness])}


def run(agent=CAPTAIN, harness="claude-code", mode="primary", pin=None, settings=None, snapshot=None, apply=False):
    chosen = settings_for(harness) if settings is None else settings
    return checkout(agent, harness, mode, pin, SERVER_URL, chosen, snapshot, apply)


# -- the applier an agent is told to be ---------------------------------------------------------


def upsert(text: str, begin: str, end: str, content: str) -> str:
    lines = text.splitlines(keepends=True)
    bare = [line.rstrip("\n") for line in lines]
    if begin in bare and end in bare[bare.index(begin) :]:
        first = bare.index(begin)
        last = bare.index(end, first)
        return "".join(lines[: first + 1]) + content + "".join(lines[last:])
    before = text if not text or text.endswith("\n") else text + "\n"
    return f"{before}{chr(10) if before else ''}{begin}\n{content}{end}\n"


def merge(into: dict, value: dict) -> dict:
    for key, item in value.items():
        into[key] = merge(into.get(key, {}), item) if isinstance(item, dict) else item
    return into


def apply(root: Path, result: dict) -> None:
    for operation in result["operations"]:
        relative = PurePosixPath(operation["path"])
        assert not relative.is_absolute() and ".." not in relative.parts and "\\" not in operation["path"]
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        old = target.read_text() if target.exists() else None
        if operation["op"] == "write":
            assert set(operation) == {"op", "path", "content"}
            target.write_text(operation["content"])
        elif operation["op"] == "upsertSection":
            assert set(operation) == {"op", "path", "begin", "end", "content"}
            target.write_text(upsert(old or "", operation["begin"], operation["end"], operation["content"]))
        elif operation["op"] == "mergeJson":
            assert set(operation) == {"op", "path", "value"}
            target.write_text(json.dumps(merge(json.loads(old or "{}"), operation["value"]), indent=2))
        else:
            pytest.fail(f"unknown operation {operation['op']}")


def files(root: Path) -> dict[str, str]:
    return {path.relative_to(root).as_posix(): path.read_text() for path in root.rglob("*") if path.is_file()}


# -- every harness, both modes --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["primary", "helper"])
@pytest.mark.parametrize("harness", HARNESSES)
def test_every_harness_gets_a_pointer_and_nothing_private(tmp_path, harness, mode):
    result = run(harness=harness, mode=mode)
    apply(tmp_path, result)
    written = files(tmp_path)
    helper = mode == "helper" and harness == "claude-code"
    pointer_path = ".omr/helpers/release-captain.json" if helper else ".omr/agent.json"
    agent_file = ".claude/agents/release-captain.md" if helper else PRIMARY_FILES[harness]

    assert result["operations"][0]["path"] == pointer_path
    assert set(written) == {pointer_path} | ({agent_file} if agent_file else set())
    assert json.loads(written[pointer_path]) == {
        "agent": CAPTAIN.id,
        "slug": "release-captain",
        "name": "Release Captain",
        "server": SERVER_URL,
        "harness": harness,
        "mode": "helper" if helper else "primary",
    }
    instruction = (
        f"call the `load_agent` tool (or `agent` with action `load`) with agent={CAPTAIN.id}, harness={harness}"
    )
    carrier = written[agent_file] if agent_file else result["connect"]
    assert instruction in carrier and SERVER_URL in carrier
    for text in [*written.values(), result["connect"]]:
        assert "SECRET-PROMPT-TEXT" not in text and not TOKEN_LIKE.search(text)
    assert SERVER_URL in result["connect"] and "console" in result["connect"]
    assert result["mode"] == ("helper" if helper else "primary")
    if mode == "primary":
        assert "note" not in result
    else:  # a helper elsewhere falls back; Claude Code's subagent is told its tools list must allow loading
        assert ("no subagent files" if harness != "claude-code" else "mcp__agent-workspace__agent") in result["note"]


@pytest.mark.parametrize("harness", [h for h in HARNESSES if PRIMARY_FILES[h]])
def test_a_second_agent_replaces_the_first_and_keeps_what_the_people_wrote(tmp_path, harness):
    path = tmp_path / PRIMARY_FILES[harness]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Project\n\nRun `make test` before pushing.\n")
    apply(tmp_path, run(harness=harness))
    path.write_text(path.read_text() + "\n## Style\n\nShort lines.\n")  # someone edits below the section

    apply(tmp_path, run(agent=SCRIBE, harness=harness))
    text = path.read_text()

    assert SCRIBE.id in text and CAPTAIN.id not in text
    assert json.loads((tmp_path / ".omr/agent.json").read_text())["agent"] == SCRIBE.id
    if harness in ("cursor", "windsurf"):  # a whole rule file of ours, replaced
        assert len(list(path.parent.iterdir())) == 1
    else:
        assert text.count(BEGIN) == 1 and text.count(END) == 1
        assert text.startswith("# Project\n\nRun `make test` before pushing.\n\n" + BEGIN)
        assert text.endswith(END + "\n\n## Style\n\nShort lines.\n")


@pytest.mark.parametrize("harness", ["cursor", "windsurf"])
def test_a_rule_file_s_frontmatter_is_yaml_with_the_description_on_one_quoted_line(tmp_path, harness):
    apply(tmp_path, run(harness=harness))
    text = (tmp_path / PRIMARY_FILES[harness]).read_text()

    front = yaml.safe_load(text.split("---\n")[1])
    fields, body, _ = read_frontmatter(text, "rule", frozenset({"description", "alwaysApply", "trigger"}), 10_000)

    assert front["description"] == fields["description"] == 'Ships releases: "tags" them, then announces'
    assert front.get("alwaysApply", front.get("trigger")) in (True, "always_on")
    assert f"agent={CAPTAIN.id}" in body


# -- helper mode ------------------------------------------------------------------------------------


def test_a_claude_code_helper_is_a_subagent_carrying_the_profile_and_leaving_the_primary_pointer(tmp_path):
    apply(tmp_path, run(agent=SCRIBE))
    result = run(mode="helper", apply=True)
    apply(tmp_path, result)

    subagent = parse_subagent((tmp_path / ".claude/agents/release-captain.md").read_text())

    assert subagent["name"] == "release-captain"
    assert subagent["description"] == 'Ships releases: "tags" them, then announces'
    assert subagent["settings"] == CLAUDE_CODE_SETTINGS
    assert f"agent={CAPTAIN.id}, harness=claude-code and adopt" in subagent["prompt"]
    assert json.loads((tmp_path / ".omr/agent.json").read_text())["agent"] == SCRIBE.id
    assert SCRIBE.id in (tmp_path / "CLAUDE.md").read_text()
    assert result["withheld"] == [] and not (tmp_path / ".claude/settings.json").exists()
    assert "mcp__agent-workspace__agent" in result["note"] and "applyProjectSettings" in result["note"]


def test_a_harness_without_subagents_falls_back_to_primary_and_says_so():
    result = run(harness="gemini-cli", mode="helper")

    assert result["mode"] == "primary" and "no subagent files" in result["note"]
    assert [operation["path"] for operation in result["operations"]] == [".omr/agent.json", "GEMINI.md"]


# -- settings ---------------------------------------------------------------------------------------


def test_claude_md_withholds_every_setting_and_names_apply_project_settings_for_the_model():
    withheld = {entry["setting"]: entry["reason"] for entry in run()["withheld"]}

    assert set(withheld) == set(CLAUDE_CODE_SETTINGS)
    assert "applyProjectSettings" in withheld["model"] and "committed for everyone" in withheld["model"]
    assert "helper mode" in withheld["effort"]


def test_apply_project_settings_merges_the_model_into_claude_settings_and_keeps_what_is_there(tmp_path):
    settings_file = tmp_path / ".claude/settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(json.dumps({"model": "haiku", "permissions": {"allow": ["Bash(make test)"]}}))
    result = run(apply=True)

    apply(tmp_path, result)

    assert json.loads(settings_file.read_text()) == {"model": "opus", "permissions": {"allow": ["Bash(make test)"]}}
    assert {entry["setting"] for entry in result["withheld"]} == set(CLAUDE_CODE_SETTINGS) - {"model"}
    assert [op["op"] for op in result["operations"]] == ["write", "upsertSection", "mergeJson"]


def test_codex_settings_are_withheld_as_toml_even_when_asked_to_apply(tmp_path):
    result = run(harness="codex", apply=True)
    apply(tmp_path, result)

    reasons = {entry["setting"]: entry["reason"] for entry in result["withheld"]}

    assert set(reasons) == set(PROFILE_SETTINGS["codex"]) and "TOML" in reasons["model"]
    assert 'model = "model-value"' in reasons["model"]
    assert set(files(tmp_path)) == {".omr/agent.json", "AGENTS.md"}


@pytest.mark.parametrize("harness", ["cursor", "copilot", "gemini-cli", "windsurf", "zed", "claude-ai"])
def test_other_harnesses_withhold_the_model_for_want_of_a_settings_file(harness):
    result = run(harness=harness, apply=True)

    [only] = result["withheld"]

    assert only["setting"] == "model" and "no project settings file this checkout writes" in only["reason"]
    assert all(operation["op"] != "mergeJson" for operation in result["operations"])


def test_null_settings_are_no_settings():
    result = run(settings={"model": None, "effort": "low"}, apply=True)

    assert [entry["setting"] for entry in result["withheld"]] == ["effort"]
    assert all(operation["op"] != "mergeJson" for operation in result["operations"])


# -- snapshot and pin -----------------------------------------------------------------------------


def test_a_snapshot_writes_prompt_briefs_and_memories_and_keeps_them_out_of_git(tmp_path):
    (tmp_path / ".gitignore").write_text("node_modules/")
    apply(tmp_path, run(snapshot=SNAPSHOT))
    apply(tmp_path, run(snapshot=SNAPSHOT))  # twice: still one entry

    written = files(tmp_path)
    copy = written[".omr/snapshot/release-captain.md"]

    assert [name for name, text in written.items() if "SECRET-PROMPT-TEXT" in text] == [
        ".omr/snapshot/release-captain.md"
    ]
    assert "## Prompt (version 7)" in copy and "make deploy" in copy
    assert copy.index("alpha-checklist (project)") < copy.index("zeta-user (user)")
    assert "Prefers short notes." in copy and "Run the smoke test." in copy
    assert written[".gitignore"].count(".omr/snapshot/") == 1 and written[".gitignore"].startswith("node_modules/\n")
    assert ".omr/snapshot/release-captain.md" in written["CLAUDE.md"]


def test_a_helper_s_snapshot_is_named_in_its_subagent_and_nowhere_else_holds_the_prompt(tmp_path):
    apply(tmp_path, run(mode="helper", snapshot=SNAPSHOT))
    written = files(tmp_path)

    assert ".omr/snapshot/release-captain.md" in written[".claude/agents/release-captain.md"]
    assert "SECRET-PROMPT-TEXT" not in written[".claude/agents/release-captain.md"]
    assert set(written) == {
        ".omr/helpers/release-captain.json",
        ".claude/agents/release-captain.md",
        ".gitignore",
        ".omr/snapshot/release-captain.md",
    }


def test_a_pin_is_in_the_instruction_and_the_pointer(tmp_path):
    result = run(harness="codex", pin=4)
    apply(tmp_path, result)

    assert f"agent={CAPTAIN.id}, harness=codex, version=4 and adopt" in (tmp_path / "AGENTS.md").read_text()
    assert json.loads((tmp_path / ".omr/agent.json").read_text())["version"] == 4


def test_the_output_depends_on_the_arguments_alone():
    shuffled = dict(reversed(list(CLAUDE_CODE_SETTINGS.items())))

    assert run(snapshot=SNAPSHOT) == run(settings=shuffled, snapshot=SNAPSHOT)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"harness": "emacs", "settings": {}}, "harness"),
        ({"mode": "sidekick"}, "mode"),
        ({"pin": 0}, "pin"),
        ({"agent": CheckoutAgent(id="x", slug="../etc", name="n", description="")}, "slug"),
        ({"agent": CheckoutAgent(id="../x", slug="a", name="n", description="")}, "agent"),
    ],
)
def test_arguments_that_would_make_unsafe_files_are_refused(change, field):
    with pytest.raises(PayloadError) as refused:
        run(**change)

    assert refused.value.field == field
