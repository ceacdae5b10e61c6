"""Schemas from outside (a website's tools, an agent's question) never make the server fetch, hang or give up.

Every class of bug is tried on both paths and at both moments: when the schema is stored (the browser's report,
the agent's question) and when it is used (an agent's arguments, the human's answer) with a schema stored before
these checks existed, handed here straight to the domain objects. A refusal names the field at fault.
"""

# Work is timed as this process's CPU time (`time.process_time`), which other processes on a busy machine
# (tests run in parallel) do not inflate; unbounded work still shows, as it costs CPU here.

import time
from collections.abc import Callable
from typing import Any

import pytest

from agent_workspace.domain.elicitations import Elicitation, check_requested_schema, validate_answer
from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.patterns import Deadline, PatternTimeout, compile_pattern, unrolled_size
from agent_workspace.domain.schemas import WORK_MAX
from agent_workspace.domain.site_tools import SiteTool, check_arguments, parse_sites
from tests.outbound import SECRET, outbound, within

SLOW = "^(a|aa)+$"  # fast to refuse in `regex` for most texts, but exponential on many a's and a final '!'
SLOW_TEXT = "a" * 40 + "!"


@pytest.fixture
def reach(tmp_path, monkeypatch):
    with outbound(tmp_path, monkeypatch) as reached:
        yield reached


# -- the four places a schema is checked: stored and used, on each path -------------------------------------------


def store_site_tool(schema: dict, value: Any) -> None:
    parse_sites([{"origin": "https://a.example", "tools": [{"name": "t", "inputSchema": schema}]}])


def use_site_tool(schema: dict, value: Any) -> None:
    check_arguments(SiteTool("t", "", schema), {"x": value})


def ask(schema: dict, value: Any) -> None:
    check_requested_schema(schema)


def answer(schema: dict, value: Any) -> None:
    question = Elicitation("q", "w", "t", "Which?", "form", "pending", "2026-01-01", "2026-01-02", schema)
    validate_answer(question, "accept", {"x": value})


PLACES: dict[str, tuple[Callable[[dict, Any], None], str]] = {
    "site tool reported": (store_site_tool, "sites[0].tools[0].inputSchema"),
    "site tool called": (use_site_tool, "inputSchema"),
    "question asked": (ask, "requestedSchema"),
    "question answered": (answer, "requestedSchema"),
}
USES = {name: place for name, place in PLACES.items() if name in ("site tool called", "question answered")}
USE_FIELDS = {"site tool called": "arguments", "question answered": "content"}


def schema_refusal(place: str, schema: dict, value: Any = "v", seconds: float = 10) -> PayloadError:
    """What the check at `place` refuses `schema` (and `value`) with, within `seconds`."""
    check, _ = PLACES[place]
    with pytest.raises(PayloadError) as caught:
        within(seconds, check, schema, value)
    return caught.value


def form(x: dict, **rest: Any) -> dict:
    """A schema both paths take: an object whose `x` is a string (a question's fields must be primitive)."""
    return {"type": "object", "properties": {"x": {"type": "string", **x}}, **rest}


# -- 1. references to anything outside the schema ---------------------------------------------------------------

POSITIONS: dict[str, Callable[[str], dict]] = {
    "properties.x.$ref": lambda ref: form({"$ref": ref}),
    "$defs.d.$ref": lambda ref: form({"$ref": "#/$defs/d"}, **{"$defs": {"d": {"$ref": ref}}}),
    "x-unknown.d.$ref": lambda ref: form({"$ref": "#/x-unknown/d"}, **{"x-unknown": {"d": {"$ref": ref}}}),
    "properties.x.$dynamicRef": lambda ref: form({"$dynamicRef": ref}),
}
REF_FORMS = [
    "http", "https", "never answers", "file", "data", "urn", "relative", "relative path", "scheme-relative",
    "http with fragment",
]  # fmt: skip


@pytest.mark.parametrize("position", list(POSITIONS))
@pytest.mark.parametrize("form_of_ref", REF_FORMS)
@pytest.mark.parametrize("place", list(PLACES))
def test_a_reference_outside_the_schema_is_refused_naming_it_and_nothing_is_read(reach, place, form_of_ref, position):
    schema = POSITIONS[position](reach.refs()[form_of_ref])
    error = schema_refusal(place, schema)
    assert error.field == f"{PLACES[place][1]}.{position}", error.message
    assert "must refer within the schema" in error.message and SECRET not in error.message
    assert reach.touched == 0, (reach.http.requests, reach.opened)


@pytest.mark.parametrize("place", list(PLACES))
def test_an_id_naming_a_url_changes_nothing_a_local_reference_reads_its_own_schema(reach, place):
    schema = form(
        {"$ref": "#/$defs/s"}, **{"$id": f"http://127.0.0.1:{reach.http.port}/s.json", "$defs": {"s": {"minLength": 2}}}
    )
    check, _ = PLACES[place]
    within(10, check, schema, "ok")
    if place in USES:
        with pytest.raises(PayloadError, match="too short"):
            within(10, check, schema, "k")
    assert reach.touched == 0


# -- 2. references that loop ------------------------------------------------------------------------------------

LOOPS = {
    "$ref": form({}, **{"$ref": "#"}),
    "allOf[0].$ref": form({}, allOf=[{"$ref": "#"}]),
    "$defs.b.anyOf[0].$ref": form(
        {}, **{"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}}
    ),
    "properties.x.not.$ref": form({"not": {"$ref": "#/properties/x"}}),
    "properties.x.if.then.$ref": form({"if": {"then": {"$ref": "#/properties/x/if"}}}),
    "allOf[0].$dynamicRef": form({}, **{"$dynamicAnchor": "top", "allOf": [{"$dynamicRef": "#top"}]}),
}


@pytest.mark.parametrize("where", list(LOOPS))
@pytest.mark.parametrize("place", list(PLACES))
def test_a_schema_that_refers_back_to_itself_without_end_is_refused_naming_the_reference(place, where):
    error = schema_refusal(place, LOOPS[where])
    assert error.field == f"{PLACES[place][1]}.{where}", error.message
    assert "would never end" in error.message


@pytest.mark.parametrize("place", list(PLACES))
def test_recursion_that_goes_into_the_value_is_a_schema_like_any_other(place):
    tree = form({}, additionalProperties={"$ref": "#"})  # each value further in is the same form again
    check, _ = PLACES[place]
    within(10, check, tree, "v")


@pytest.mark.parametrize("place", list(PLACES))
def test_a_chain_that_doubles_its_work_at_each_level_is_refused(place):
    definitions = {"a0": {"type": "string"}}
    for level in range(1, 20):
        definitions[f"a{level}"] = {"allOf": [{"$ref": f"#/$defs/a{level - 1}"}, {"$ref": f"#/$defs/a{level - 1}"}]}
    error = schema_refusal(place, form({"$ref": "#/$defs/a19"}, **{"$defs": definitions}))
    assert "more than 10,000 subschemas" in error.message, error.message


@pytest.mark.parametrize("place", list(PLACES))
def test_a_reference_to_nothing_or_to_no_schema_is_refused_naming_it(place):
    nothing = schema_refusal(place, form({"$ref": "#/$defs/missing"}))
    assert nothing.field == f"{PLACES[place][1]}.properties.x.$ref" and "points to nothing" in nothing.message
    hidden = schema_refusal(place, form({"$ref": "#/x-data/0"}, **{"x-data": [{"type": 5}]}))
    assert hidden.field.startswith(f"{PLACES[place][1]}.properties.x.$ref"), hidden.message


# -- 3. patterns ------------------------------------------------------------------------------------------------

BAD_PATTERNS = {
    "((": "not a valid regular expression",
    "(?:a{9999}){999}": "too large once its repeats are unrolled",  # 16 characters, 2.7 GB in `regex`
    "(?=a{9999}){999}": "too large once its repeats are unrolled",
    "(" * 40 + ")" * 40: "nests groups more than 32 deep",
}


@pytest.mark.parametrize("pattern", list(BAD_PATTERNS))
@pytest.mark.parametrize("keyword", ["pattern", "patternProperties"])
@pytest.mark.parametrize("place", list(PLACES))
def test_a_pattern_the_bounded_engine_cannot_take_is_refused_naming_it(place, keyword, pattern):
    schema = form({"pattern": pattern}) if keyword == "pattern" else form({"patternProperties": {pattern: {}}})
    error = schema_refusal(place, schema)
    where = "pattern" if keyword == "pattern" else f"patternProperties.{pattern}"
    assert error.field == f"{PLACES[place][1]}.properties.x.{where}", error.message
    assert BAD_PATTERNS[pattern] in error.message


SLOW_SCHEMAS = {  # each applies SLOW to the answer's x, or to a key
    "pattern": (form({"pattern": SLOW}), {"x": SLOW_TEXT}, ".x"),
    "draft-07, through a $ref to the root": (
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
         "properties": {"x": {"type": "string"}, "y": {"$ref": "#/definitions/slow"}},
         "definitions": {"slow": {"type": "string", "pattern": SLOW}}},
        {"x": "v", "y": SLOW_TEXT},
        ".y",
    ),
    "patternProperties": (form({}, patternProperties={SLOW: {}}), {"x": "v", SLOW_TEXT: 1}, f".{SLOW_TEXT}"),
    "additionalProperties": (
        form({}, patternProperties={SLOW: {}}, additionalProperties=False), {"x": "v", SLOW_TEXT: 1}, f".{SLOW_TEXT}"
    ),
    "300 patterns": (
        {"type": "object", "properties": {f"p{i}": {"type": "string", "pattern": "^(a|aa)+$"} for i in range(300)}},
        {f"p{i}": "a" * 24 + "!" for i in range(300)},  # ~15 ms each: 4.5 s in all, unbounded
        "",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(SLOW_SCHEMAS))
@pytest.mark.parametrize("place", list(USES))
def test_a_catastrophic_pattern_answers_within_a_second_naming_the_field(place, case):
    schema, value, where = SLOW_SCHEMAS[case]
    prefix = USE_FIELDS[place]
    started = time.process_time()
    with pytest.raises(PayloadError) as caught:
        within(10, lambda: check_whole(place, schema, value))
    assert time.process_time() - started < 3
    assert "takes too long to evaluate" in caught.value.message, caught.value.message
    assert caught.value.field.startswith(prefix + where), caught.value.field


def check_whole(place: str, schema: dict, value: dict) -> None:
    """The whole arguments or answer (not just its x), for patterns applied to keys and to other properties."""
    if place == "site tool called":
        check_arguments(SiteTool("t", "", schema), value)
    else:
        question = Elicitation("q", "w", "t", "Which?", "form", "pending", "2026-01-01", "2026-01-02", schema)
        validate_answer(question, "accept", value)


def test_the_search_engine_s_patterns_are_bounded_alike():
    assert unrolled_size("a{9999}a{9999}") == 19_998  # added, not multiplied
    assert unrolled_size("[(]{999}x{99}") == 999 + 99  # a set holds no group
    assert unrolled_size(r"\p{L}{5}") == 5
    compiled = compile_pattern("(a|aa)+$", "pattern")
    ticks = iter(range(1000))
    deadline = Deadline(seconds=3, clock=lambda: next(ticks))  # each evaluation costs one "second"
    assert deadline.search(compiled, "aa") and deadline.search(compiled, "aaa")
    with pytest.raises(PatternTimeout):
        deadline.search(compiled, "aaaa")


# -- 4. the work of applying a schema ---------------------------------------------------------------------------


@pytest.mark.parametrize("place", list(USES))
def test_unique_items_of_thousands_of_objects_is_checked_in_one_pass(place):
    schema = form({}, additionalProperties={"type": "array", "uniqueItems": True})
    objects = [{"a": i} for i in range(5000)]  # 49 KB; comparing every pair took 30 s
    started = time.process_time()
    within(10, check_whole, place, schema, {"x": "v", "y": objects})
    assert time.process_time() - started < 3
    with pytest.raises(PayloadError, match="non-unique"):
        check_whole(place, schema, {"x": "v", "y": [{"a": 1}, {"a": 1.0}]})


@pytest.mark.parametrize(
    "schema",
    [
        form({}, additionalProperties={"type": "array", "items": {"enum": [f"v{i}" for i in range(20_000)]}}),
        form({}, additionalProperties={"type": "array", "items": {"anyOf": [{"const": i} for i in range(9000)]}}),
    ],
    ids=["large enum", "wide anyOf"],
)
@pytest.mark.parametrize("place", list(USES))
def test_a_schema_that_takes_too_much_work_to_apply_is_refused_within_seconds(place, schema):
    started = time.process_time()
    with pytest.raises(PayloadError) as caught:
        within(20, check_whole, place, schema, {"x": "v", "y": ["v19999"] * 2000})
    assert time.process_time() - started < 6  # the wide anyOf is checked when used too (some 1.5 s), then applied
    assert f"over {WORK_MAX:,} steps" in caught.value.message


# -- 5. what is stored: dialects, sizes, nesting, numbers -------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "where", "says"),
    [
        (form({}, **{"$schema": "http://evil.example/schema"}), "$schema", "must name JSON Schema"),
        (form({}, **{"$schema": 7}), "$schema", "must name JSON Schema"),
        (form({}, **{"$schema": "http://json-schema.org/draft-03/schema#"}), "$schema", "must name JSON Schema"),
        (
            form({"$schema": "http://json-schema.org/draft-07/schema#"}),
            "properties.x.$schema",
            "only the schema's root",
        ),
        (form({"maximum": 10**40}), "properties.x.maximum", "DynamoDB cannot store"),
        (form({"minimum": 1e-200}), "properties.x.minimum", "DynamoDB cannot store"),
        (form({"description": "\ud800"}), "properties.x.description", "lone surrogate"),
    ],
)
@pytest.mark.parametrize("place", ["site tool reported", "question asked"])
def test_a_schema_the_store_cannot_hold_or_apply_is_refused_naming_where(place, schema, where, says):
    error = schema_refusal(place, schema)
    assert error.field == f"{PLACES[place][1]}.{where}", error.message
    assert says in error.message


@pytest.mark.parametrize("place", ["site tool reported", "question asked"])
def test_a_schema_nested_deeper_than_the_store_takes_is_refused(place):
    nested: dict = {"type": "string"}
    for _ in range(30):
        nested = {"not": nested}
    error = schema_refusal(place, form(nested))
    assert "nests more than 24" in error.message and error.field.startswith(PLACES[place][1])


def test_a_question_schema_over_64_kib_and_an_answer_over_64_kib_are_refused_naming_them():
    error = schema_refusal("question asked", form({"description": "d" * 500_000}))
    assert error.field == "requestedSchema" and "at most 65,536" in error.message
    error = schema_refusal("question answered", form({}), "a" * 500_000)
    assert error.field == "content" and "at most 65,536" in error.message
    deep: Any = "v"
    for _ in range(40):
        deep = {"a": deep}
    with pytest.raises(PayloadError, match="nests more than 16") as caught:
        check_whole("question answered", form({}), {"x": "v", "y": deep})
    assert caught.value.field.startswith("content.y")
    with pytest.raises(PayloadError, match="DynamoDB cannot store") as caught:
        check_whole("question answered", form({}), {"x": "v", "n": 10**40})
    assert caught.value.field == "content.n"


def test_a_site_tool_s_annotations_and_text_are_held_to_what_the_store_takes():
    deep: Any = True
    for _ in range(10):
        deep = {"a": deep}
    for tool, field in [
        ({"name": "t", "annotations": {"readOnlyHint": deep}}, "sites[0].tools[0].annotations.readOnlyHint"),
        ({"name": "t", "annotations": {"n": 10**40}}, "sites[0].tools[0].annotations.n"),
        ({"name": "t", "description": "\udfff"}, "sites[0].tools[0].description"),
    ]:
        with pytest.raises(PayloadError) as caught:
            parse_sites([{"origin": "https://a.example", "tools": [tool]}])
        assert caught.value.field.startswith(field), caught.value.message


def test_arguments_nested_deeper_than_validation_should_recurse_are_refused():
    deep: Any = "v"
    for _ in range(40):
        deep = [deep]
    with pytest.raises(PayloadError, match="nest more than 32") as caught:
        check_arguments(SiteTool("t", "", {"type": "object"}), {"x": deep})
    assert caught.value.field == "arguments"
