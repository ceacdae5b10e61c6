"""The MCP Inspector's CLI (`@modelcontextprotocol/inspector`, pinned in package.json beside this file) against the
app under uvicorn: resources as it lists and reads them, the Agent Skills extension (SEP-2640) as its `--verify`
checks it, and every tool's `structuredContent` against the tool's `outputSchema`.

Installed with the conformance suite by test_conformance.py's `install()` (the Node 22 there, at least 22.19, is the
one the Inspector needs). The seeded workspace is furnished (tests/support.py `furnish`), plus a skill whose
SKILL.md names itself and one whose frontmatter a YAML 1.2 parser reads otherwise than PyYAML (served rewritten:
domain/skill_manifest.py).
"""

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator

from tests.conformance.test_conformance import NODE, NODE_DIR, install
from tests.support import DOC, TASK, call, furnish, resolved
from tests.unit.test_skill_manifest import CASES as SKILL_MD_CASES

INSPECTOR = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "cli" / "build" / "index.js"
NODE_AT_LEAST = (22, 19)  # the Inspector's `engines`
TIMEOUT = 120
EXIT_OK, EXIT_FAILED = 0, 1  # the CLI's EXIT_CODES.OK, and its exit for an error answer
SKILLS = ["skill://named/SKILL.md", "skill://release-notes/SKILL.md", "skill://rewritten/SKILL.md"]
# One read-only action per tool whose answers the outputSchema check reads; a tool not named here is checked
# with its `help` action, which every tool has.
READ_ONLY_CALLS: dict[str, dict[str, Any]] = {
    "workspace": {"action": "get"},
    "memory": {"action": "load"},
    "task": {"action": "list"},
    "skills": {"action": "search"},
    "siteTools": {"action": "search"},
    "pano": {"action": "read", "payload": {"id": DOC}},
    "board": {"action": "context"},
    "agent": {"action": "list"},
}


@pytest.fixture(scope="module")
def inspector_cli() -> None:
    install()
    assert INSPECTOR.is_file(), f"{INSPECTOR} is missing after installing tests/conformance/package-lock.json"
    version = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, check=True, timeout=30)
    found = tuple(int(part) for part in version.stdout.strip().lstrip("v").split(".")[:2])
    assert found >= NODE_AT_LEAST, f"the Inspector needs Node >= 22.19; package.json pins {version.stdout.strip()}"


@pytest.fixture
def ids(runtime, seeded) -> dict[str, str]:
    """The furnished workspace's ids by name (task, doc, ...), and the two more skills."""
    return {key.strip("⟪⟫"): value for key, value in anyio.run(_furnished, runtime, seeded).items()}


async def _furnished(runtime, seeded) -> dict[str, str]:
    furnished = await furnish(runtime, seeded)
    for uri, content in (
        ("skill://named/SKILL.md", "---\nname: named\ndescription: Names itself.\nmetadata:\n  tags: [a, b]\n---\nx\n"),
        ("skill://rewritten/SKILL.md", "---\nname: other\ndescription: YAML 1.1 reads yes.\nflag: yes\n---\nbody\n"),
        ("skill://rewritten/notes/a.md", "é\n"),
    ):
        saved = await call(
            runtime, seeded.agent_token, "skills", {"action": "save", "payload": {"uri": uri, "content": content}}
        )
        assert not saved.is_error, saved.text
    return furnished


@pytest.fixture
def inspect(inspector_cli, live, seeded, tmp_path: Path):
    """Run the CLI against the live server as the seeded workspace's agent: (exit code, stdout, stderr)."""

    def run(*args: str, token: str | None = None) -> tuple[int, str, str]:
        command = [
            str(NODE),
            str(INSPECTOR),
            "--cli",
            f"{live.url}/mcp",
            "--transport",
            "http",
            "--header",
            f"Authorization: Bearer {token or seeded.agent_token}",
            *args,
        ]
        env = {**os.environ, "HOME": str(tmp_path), "NO_COLOR": "1"}  # its catalog and stored auth go under HOME
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=tmp_path)
        return done.returncode, done.stdout, done.stderr

    return run


def answered(outcome: tuple[int, str, str]) -> dict[str, Any]:
    """`--format json`'s result object, the run having exited 0."""
    code, stdout, stderr = outcome
    assert code == EXIT_OK, f"exit {code}\n{stdout}\n{stderr}"
    return json.loads(stdout)["result"]


def reports(outcome: tuple[int, str, str]) -> list[dict[str, Any]]:
    """`--verify`'s reports (one JSON line per skill), the run having exited 0."""
    code, stdout, stderr = outcome
    assert code == EXIT_OK, f"exit {code}\n{stdout}\n{stderr}"
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def assert_verified(lines: list[dict[str, Any]], uris: list[str]) -> None:
    assert [report["uri"] for report in lines] == uris
    for report in lines:
        assert (report["outcome"], report["ok"], report["conformance"], report["frontmatter"]) == (
            "verified",
            True,
            [],
            [],
        ), report
        assert report["files"] and all(file["status"] == "verified" for file in report["files"]), report


# -- resources ---------------------------------------------------------------------------------------------------


def test_the_inspector_lists_every_resource(inspect, ids):
    listed = answered(inspect("--method", "resources/list", "--format", "json"))
    assert [resource["uri"] for resource in listed["resources"]] == [
        "skill://named/SKILL.md",
        "skill://release-notes/SKILL.md",
        "skill://release-notes/templates/entry.md",
        "skill://rewritten/SKILL.md",
        "skill://rewritten/notes/a.md",
        "memory://deploys.md",
        f"pano://{ids['doc']}",
    ]
    assert all(resource["name"] for resource in listed["resources"])


def test_the_inspector_lists_the_templates(inspect):
    listed = answered(inspect("--method", "resources/templates/list", "--format", "json"))
    assert [template["uriTemplate"] for template in listed["resourceTemplates"]] == [
        "skill://{name}/SKILL.md",
        "skill://{name}/{+path}",
        "memory://{name}",
        "pano://{docId}",
        "task://{taskId}/attachments/{attachmentId}",
    ]


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        (
            "skill://release-notes/SKILL.md",
            {"mimeType": "text/markdown", "text": '---\nname: "release-notes"\ndescription: Notes.\n---\n# N\n'},
        ),
        ("skill://release-notes/templates/entry.md", {"mimeType": "text/markdown", "text": "- entry\n"}),
        ("memory://deploys.md", {"mimeType": "text/markdown", "text": "# Deploys\n"}),
        ("pano://{doc}", {"mimeType": "text/markdown", "text": "# Plan\n\n[log](deploy.log)"}),
        ("task://{task}/attachments/log", {"mimeType": "text/plain", "blob": base64.b64encode(b"ok").decode()}),
    ],
)
def test_the_inspector_reads_every_kind(inspect, ids, uri, expected):
    uri = uri.format(**ids)
    read = answered(inspect("--method", "resources/read", "--uri", uri, "--format", "json"))
    assert read["contents"] == [{"uri": uri, **expected}]


def test_the_inspector_gets_an_error_naming_the_problem_for_an_unknown_uri(inspect, ids):
    code, stdout, stderr = inspect("--method", "resources/read", "--uri", "file:///etc/passwd", "--format", "json")
    assert code == EXIT_FAILED, (stdout, stderr)
    error = json.loads(stderr.strip().splitlines()[-1])["error"]
    assert error["message"].startswith("resources/read: uri 'file:///etc/passwd' has scheme 'file'"), error


# -- the Agent Skills extension (SEP-2640) ----------------------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_every_skill_verifies(inspect, ids, era):
    assert_verified(reports(inspect("--method", "skills/list", "--verify", "--protocol-era", era)), SKILLS)


def test_every_skill_verifies_with_digests_required(inspect, ids):
    assert_verified(reports(inspect("--method", "skills/list", "--verify", "--require-digests")), SKILLS)


@pytest.mark.parametrize("uri", SKILLS)
def test_each_skill_verifies_on_its_own(inspect, ids, uri):
    assert_verified(reports(inspect("--method", "skills/get", "--uri", uri, "--verify")), [uri])


def test_the_listing_names_each_skill_as_its_uri_does(inspect, ids):
    listed = answered(inspect("--method", "skills/list", "--format", "json"))
    assert [(skill["uri"], skill["frontmatter"]["name"]) for skill in listed["skills"]] == [
        (uri, uri.split("/")[2]) for uri in SKILLS
    ]
    assert listed["skills"][2]["frontmatter"] == {
        "name": "rewritten",
        "description": "YAML 1.1 reads yes.",
        "flag": "yes",
    }


def test_every_form_a_skill_md_is_served_in_verifies(inspect, runtime, seeded):
    """Each stored SKILL.md of the unit tests' cases, served in its form (as stored, a line added, rewritten):
    the Inspector's YAML parser reads in the bytes served the frontmatter the listing gives."""
    stored = {
        f"form-{number}": content.replace("\\udc00", "x")  # a lone surrogate escape: the save itself refuses it
        for number, (content, _, _) in enumerate(SKILL_MD_CASES.values())
    }

    async def save_all() -> None:
        for name, content in stored.items():
            payload = {"uri": f"skill://{name}/SKILL.md", "content": content}
            saved = await call(runtime, seeded.agent_token, "skills", {"action": "save", "payload": payload})
            assert not saved.is_error, (name, saved.text)

    anyio.run(save_all)
    uris = [f"skill://{name}/SKILL.md" for name in sorted(stored)]
    assert_verified(reports(inspect("--method", "skills/list", "--verify", "--require-digests")), uris)


# -- tools: structuredContent against outputSchema ------------------------------------------------------------


def test_every_structured_answer_matches_its_tools_output_schema(inspect, ids):
    tools = answered(inspect("--method", "tools/list", "--format", "json"))["tools"]
    checked = []
    for tool in tools:
        schema = tool.get("outputSchema")
        if schema is None:
            continue
        Draft202012Validator.check_schema(schema)
        arguments = READ_ONLY_CALLS.get(tool["name"], {"action": "help"})
        arguments = resolved(arguments, {DOC: ids["doc"], TASK: ids["task"]})
        result = answered(
            inspect(
                "--method",
                "tools/call",
                "--tool-name",
                tool["name"],
                "--tool-args-json",
                json.dumps(arguments),
                "--format",
                "json",
            )
        )
        assert result.get("isError") is not True, (tool["name"], result)
        assert "structuredContent" in result, (tool["name"], result)
        errors = sorted(Draft202012Validator(schema).iter_errors(result["structuredContent"]), key=str)
        assert not errors, (tool["name"], [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]])
        checked.append(tool["name"])
    assert {"workspace", "memory"} <= set(checked), f"no outputSchema on workspace or memory; checked {checked}"
