"""Issue 15: hostile text fuzzed into every field of every action that works on something real.

The calls are VALID's from tests/integration/test_hostile_input.py (each succeeds as it is); one string in one
of them is then made hostile: a trailing newline or CR/LF, a control or bidirectional-formatting character at
any position, a MIME type or filename that would break a header, or a 4 MB value. And SKILL.md frontmatters
nested up to thousands of levels, or holding dates and numbers Python cannot read.

The property: the answer is the action's result or a refusal that names the field (or the thing it could
not find), never "internal error"; a name field never takes such a character; no error text grows with the
input. `FUZZ_EXAMPLES` sets the examples per test, as in test_tools_fuzz.py.
"""

import json
import re
import uuid
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from agent_workspace.mcp_server.dispatch import ToolOutcome
from tests.fuzz.test_tools_fuzz import FUZZ, assert_tool_answer
from tests.integration.test_hostile_input import BODIES, EXEMPT, VALID, changed, leaves

ERROR_TEXT_MAX = 4096  # five validation problems with their fields and messages capped (domain.text) fit in this


# -- hostile characters and values -----------------------------------------------------------------------------

# fmt: off
C0 = [chr(c) for c in range(0x20)]
C1 = [chr(c) for c in range(0x7F, 0xA0)]  # DEL too
BIDI = ["\u061c", "\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))]
SEPARATORS = ["\u2028", "\u2029"]
LINE_BREAKS = ["\n", "\r", "\r\n", "\n\r", "\x85", "\u2028"]
# fmt: on
unsafe_char = st.sampled_from([*C0, *C1, *BIDI, *SEPARATORS])


@st.composite
def made_hostile(draw: st.DrawFn, value: str) -> str:
    """`value` with a trailing line break, or one unsafe character (or a few) somewhere in it."""
    how = draw(st.sampled_from(["trailing", "inserted", "several"]))
    if how == "trailing":
        return value + draw(st.sampled_from(LINE_BREAKS))
    for _ in range(1 if how == "inserted" else draw(st.integers(2, 4))):
        at = draw(st.integers(0, len(value)))
        value = value[:at] + draw(unsafe_char) + value[at:]
    return value


CASES = sorted(VALID)


def _strings(case: str) -> list[tuple[tuple[Any, ...], str]]:
    return leaves(VALID[case])


def _tool_action(case: str) -> tuple[str, str]:
    tool, action = case.split(" ")[0].split(".")
    return tool, action


def _arguments(case: str, payload: Any) -> dict[str, Any]:
    return {"action": _tool_action(case)[1], "payload": payload}


def _named(text: str, field: str) -> bool:
    """The refusal names the field (its last part: `attachments[].id` → id), or the thing it could not find."""
    _, _, reason = text.partition(": ")
    reason = re.sub(r"\[\d+\]", "[]", reason)  # labels[0] is the field labels[]
    last = field.rsplit(".", 1)[-1]
    return last in reason or reason.startswith("no ")


def assert_answer(tool: str, arguments: dict[str, Any], outcome: ToolOutcome) -> None:
    """assert_tool_answer (a result, or an error naming tool and action, nothing leaked), and bounded."""
    assert_tool_answer(tool, arguments, outcome)
    if outcome.is_error:
        assert len(outcome.text) <= ERROR_TEXT_MAX, f"{len(outcome.text):,} characters: {outcome.text[:500]}"


# -- the properties ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
@FUZZ
@given(data=st.data())
def test_a_control_or_bidi_character_in_any_field_is_refused_by_a_name_and_never_an_internal_error(world, case, data):
    where, field = data.draw(st.sampled_from(_strings(case)), label="field")
    original = VALID[case]
    hostile = data.draw(made_hostile(_value_at(original, where)), label="value")
    payload = changed(original, where, lambda _: hostile)
    tool, action = _tool_action(case)
    outcome = world.call(tool, _arguments(case, payload))
    assert_answer(tool, _arguments(case, payload), outcome)
    kind = "body" if field in BODIES else "exempt" if f"{case.split(' ')[0]}.{field}" in EXEMPT else "name"
    event(f"{kind}: {'refused' if outcome.is_error else 'taken'}")
    if kind == "name":
        assert outcome.is_error, f"{case} took {field}={hostile!r}: {outcome.text[:500]}"
        assert _named(outcome.text, field), outcome.text[:500]


def _value_at(payload: Any, where: tuple[Any, ...]) -> str:
    for key in where:
        payload = payload[key]
    return payload


# Everything that becomes a header: the MIME type is S3's Content-Type, the filename its Content-Disposition.
ATTACHING = [case for case in CASES if any(f.endswith(("].mimeType", "].filename")) for _, f in _strings(case))]
MIME_TYPES = ["text/plain", "image/png", "text/plain; charset=utf-8", 'multipart/x; boundary="a b"', 'a/b;c="\\""']
FILENAMES = ["deploy.log", 'résumé "final"; x=1.txt', "a%0d%0ab.txt", "\U0001f469\u200d\U0001f4bb.png", "שחרור.md"]
# Half of each is valid, so that the other one alone decides, and some calls are taken.
mime_types = st.one_of(
    st.sampled_from(MIME_TYPES),
    st.sampled_from(MIME_TYPES),
    st.sampled_from(MIME_TYPES).flatmap(made_hostile),
    st.text(st.characters(codec="utf-8"), max_size=40),
    st.text(st.sampled_from('text/plain;= "\\\r\n\t\x00'), max_size=30),
)
filenames = st.one_of(
    st.sampled_from(FILENAMES),
    st.sampled_from(FILENAMES),
    st.sampled_from(FILENAMES).flatmap(made_hostile),
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=40),
)
PRINTABLE_ASCII = re.compile(r"[ -~]+")


@pytest.mark.parametrize("case", ATTACHING)
@FUZZ
@given(mime=mime_types, filename=filenames)
def test_no_line_break_or_control_character_reaches_a_header(world, case, mime, filename):
    payload = json.loads(json.dumps(VALID[case]))
    files = payload.get("attachments") or payload.get("files")
    # A fresh id and (for attach) name: ones taken by an earlier example would be refused for that.
    files[0].update(id=uuid.uuid4().hex, mimeType=mime, filename=filename)
    if case == "pano.attach":
        files[0]["filename"] = filename = f"{uuid.uuid4().hex[:6]}{filename}"
    if "markdown" in payload:  # a linked file must be linked, or the save is refused for that
        payload["markdown"] = f"[x](<{filename}>)"
    tool, _ = _tool_action(case)
    outcome = world.call(tool, _arguments(case, payload))
    assert_answer(tool, _arguments(case, payload), outcome)
    event("refused" if outcome.is_error else "taken")
    if outcome.is_error:
        assert re.search(r"(attachments|files)\[0\]", outcome.text), outcome.text[:500]
    else:  # taken: nothing a header could not carry
        assert PRINTABLE_ASCII.fullmatch(mime) and not {"\r", "\n"} & set(mime), repr(mime)
        assert not any(c in filename for c in [*C0, *C1, *BIDI, *SEPARATORS]), repr(filename)


# Oversized and deeply nested: frontmatters the YAML parser would recurse on, values Python cannot read.
def _frontmatter(shape: str, depth: int, leaf: str) -> str:
    if shape == "flow list":
        return f"description: d\nmeta: {'[' * depth}{leaf}{']' * depth}"
    if shape == "flow map":
        return f"description: d\nmeta: {'{a: ' * depth}{leaf}{'}' * depth}"
    if shape == "block":
        return (
            "".join(f"{' ' * level}k{level}:\n" for level in range(depth)) + f"{' ' * depth}x: {leaf}\ndescription: d"
        )
    return f"description: {leaf}"


frontmatters = st.builds(
    _frontmatter,
    st.sampled_from(["flow list", "flow map", "block", "scalar"]),
    st.one_of(st.integers(1, 40), st.sampled_from([31, 32, 33, 300, 1000, 5000])),
    st.one_of(
        st.sampled_from(
            ["x", "2024-13-45", "2024-02-30 25:61:61", "9" * 5000, "0x" + "f" * 5000, "1e99999", "!!binary x"]
        ),
        st.text(st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"]), max_size=20),
    ),
)


@FUZZ
@given(frontmatter=frontmatters)
def test_a_skill_md_frontmatter_of_any_depth_or_value_is_read_or_refused_naming_content(world, frontmatter):
    arguments = {"action": "save", "payload": {"uri": "skill://deep/SKILL.md", "content": f"---\n{frontmatter}\n---\n"}}
    outcome = world.call("skills", arguments)
    assert_answer("skills", arguments, outcome)
    event("refused" if outcome.is_error else "taken")
    if outcome.is_error:
        assert outcome.text.startswith("skills save: content"), outcome.text[:500]


HUGE_UNITS = ["x", "\n", "\u202e", "é", "\U0001f600", "'", "\x00"]
huge = st.builds(lambda unit, size: unit * size, st.sampled_from(HUGE_UNITS), st.sampled_from([10_000, 4_000_000]))


@pytest.mark.parametrize("case", CASES)
@FUZZ
@given(data=st.data())
def test_no_error_text_grows_with_a_huge_value_name_or_field(world, case, data):
    tool, action = _tool_action(case)
    value = data.draw(huge, label="value")
    where, _ = data.draw(st.sampled_from(_strings(case)), label="field")
    arguments = data.draw(
        st.sampled_from(
            [
                _arguments(case, changed(VALID[case], where, lambda _: value)),  # a value
                _arguments(case, {**VALID[case], value: 1}),  # a field name
                {"action": value, "payload": VALID[case]},  # an action name
                {**_arguments(case, VALID[case]), value: 1},  # a flat field name
            ]
        ),
        label="arguments",
    )
    name = data.draw(st.sampled_from([tool, tool, value]), label="tool")  # and a tool name
    outcome = world.call(name, arguments)
    assert_answer(name, arguments, outcome)
    event("refused" if outcome.is_error else "taken")
