"""How a skill's files are served over MCP (domain/skill_manifest.py): a SKILL.md always names its skill, the
frontmatter listed is what YAML 1.2 reads in the bytes served, and a digest is of exactly those bytes.
tests/conformance/test_inspector.py checks the same frontmatters with the JavaScript parser the Inspector uses."""

import hashlib

import pytest

from agent_workspace.domain.skill_manifest import (
    digest_of,
    frontmatter,
    mime_type_of,
    served_file,
    served_skill_md,
    split_skill_file,
)

SCALARS = "description: d\nflag: yes\nwhen: 2024-01-01\nn: 012\no: 0o17\nh: 0x1f\ne: 1e3\nnothing: ~\n"
# Stored SKILL.md → (served, listed frontmatter), for the skill named "notes".
CASES = {
    "no name: one line added": (
        "---\ndescription: Notes.\n---\n# N\n",
        '---\nname: "notes"\ndescription: Notes.\n---\n# N\n',
        {"name": "notes", "description": "Notes."},
    ),
    "its own name: as stored": (
        "---\nname: notes\ndescription: Notes.\n---\nbody\n",
        "---\nname: notes\ndescription: Notes.\n---\nbody\n",
        {"name": "notes", "description": "Notes."},
    ),
    "CRLF lines: the added line ends alike": (
        "---\r\ndescription: Notes.\r\n---\r\nbody\r\n",
        '---\r\nname: "notes"\r\ndescription: Notes.\r\n---\r\nbody\r\n',
        {"name": "notes", "description": "Notes."},
    ),
    "YAML 1.2 scalars: yes, dates and 012 as a JavaScript parser reads them": (
        f"---\n{SCALARS}---\n",
        f'---\nname: "notes"\n{SCALARS}---\n',
        {
            "name": "notes",
            "description": "d",
            "flag": "yes",
            "when": "2024-01-01",
            "n": 12,
            "o": 15,
            "h": 31,
            "e": 1000.0,
            "nothing": None,
        },
    ),
    "another name: rewritten with the skill's": (
        "---\nname: other\ndescription: Notes.\nflag: yes\n---\nbody\n",
        '---\n{"name": "notes", "description": "Notes.", "flag": "yes"}\n---\nbody\n',
        {"name": "notes", "description": "Notes.", "flag": "yes"},
    ),
    "an alias: rewritten, expanded": (
        "---\ndescription: d\na: &x [1]\nb: *x\n---\nbody",
        '---\n{"name": "notes", "description": "d", "a": [1], "b": [1]}\n---\nbody',
        {"name": "notes", "description": "d", "a": [1], "b": [1]},
    ),
    "a flow mapping: rewritten, since a line cannot be added to it": (
        "---\n{description: flow}\n---\nbody\n",
        '---\n{"name": "notes", "description": "flow"}\n---\nbody\n',
        {"name": "notes", "description": "flow"},
    ),
    "lone CRs: rewritten, since a client finds no frontmatter": (
        "---\rdescription: Notes.\r---\rbody\r",
        '---\n{"name": "notes", "description": "Notes."}\n---\nbody\r',
        {"name": "notes", "description": "Notes."},
    ),
    "what JSON cannot carry: as text": (
        '---\ndescription: "\\ud83d\\ude00 \\udc00"\nnan: .nan\nbin: !!binary aGk=\n1: one\n---\nb',
        '---\n{"name": "notes", "description": "\U0001f600 \ufffd", "nan": "nan", "bin": "aGk=", "1": "one"}\n---\nb',
        {"name": "notes", "description": "\U0001f600 \ufffd", "nan": "nan", "bin": "aGk=", "1": "one"},
    ),
    "a U+2028 in the frontmatter: rewritten escaped, a line break only to YAML 1.1": (
        '---\ndescription: "a\u2028b"\n---\n',
        '---\n{"name": "notes", "description": "a\\u2028b"}\n---\n',
        {"name": "notes", "description": "a\u2028b"},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_skill_md_is_served_naming_its_skill_and_listed_as_served(case):
    stored, served, listed = CASES[case]
    assert served_skill_md("notes", stored) == served
    assert frontmatter(served) == listed


def test_a_name_that_yaml_would_read_as_a_number_is_served_quoted():
    served = served_skill_md("1e3", "---\ndescription: d\n---\n")
    assert frontmatter(served) == {"name": "1e3", "description": "d"}


def test_a_frontmatter_expanding_past_its_bound_is_served_with_name_and_description_only():
    aliases = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(5)
    )
    served = served_skill_md("notes", f"---\ndescription: d\n{aliases}---\nbody\n")
    assert frontmatter(served) == {"name": "notes", "description": "d"}
    assert served.endswith("---\nbody\n")


def test_the_split_is_the_inspectors():
    split = split_skill_file("---  \ndescription: d\n---\t\n\nbody --- not\n---\n")
    assert split is not None and (split.frontmatter, split.body) == ("description: d", "body --- not\n---\n")
    assert split_skill_file("no frontmatter\n") is None
    assert split_skill_file("---\nnever closed\n") is None


def test_a_digest_and_size_are_of_the_utf8_bytes_served():
    text = "é\n"
    file = served_file("notes", "templates/entry.md", text)
    assert (file.size, file.digest) == (3, f"sha256:{hashlib.sha256(text.encode()).hexdigest()}")
    assert digest_of(b"") == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert served_file("notes", "SKILL.md", "---\ndescription: d\n---\n").text.startswith('---\nname: "notes"\n')


@pytest.mark.parametrize(
    ("path", "mime_type"),
    [
        ("SKILL.md", "text/markdown"),
        ("templates/a.MD", "text/markdown"),
        ("data/x.json", "application/json"),
        ("scripts/run.py", "text/x-python"),
        ("Makefile", "text/plain"),
        ("a/.env", "text/plain"),
        ("notes.unknown", "text/plain"),
    ],
)
def test_a_files_mime_type_comes_from_its_extension_alone(path, mime_type):
    assert mime_type_of(path) == mime_type
