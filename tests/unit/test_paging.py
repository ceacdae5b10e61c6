"""A page ends before its bytes would pass the budget, measured as the items reach Lambda's response limit."""

import json

import mcp_types as types
import pytest
from pydantic import ValidationError

from agent_workspace.config import Settings
from agent_workspace.domain import paging
from agent_workspace.domain.errors import TooLarge
from agent_workspace.mcp_server.dispatch import render

# What makes JSON grow on its way out: quotes and backslashes (doubled at each string level), non-ASCII
# (\uXXXX in the runtime's ASCII JSON), a character outside the BMP (a surrogate pair), control characters.
AWKWARD = [
    'say "hi" \\ bye',
    "é" * 10,
    "漢字" * 5,
    "😀",
    "\x01\n\t",
    {"nested": ['"q"', "ü"], "n": 1.5, "ok": True, "none": None},
    "",
]


def lambda_payload(body: str) -> int:
    """Bytes of the runtime's JSON of a Function URL response carrying `body` (python3.11: ASCII, default spacing)."""
    return len(json.dumps({"statusCode": 200, "headers": {}, "body": body, "isBase64Encoded": False}))


def mcp_answer(text: str) -> str:
    """A tools/call answer carrying `text` and its object as structured content, serialised by the MCP SDK's models."""
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=json.loads(text), is_error=False
    )
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": "RESULT"}).replace(
        '"RESULT"', result.model_dump_json(by_alias=True, exclude_unset=True)
    )


def rest_answer(value: object) -> str:
    """A REST answer as Starlette's JSONResponse writes it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def listed(values: list) -> dict:
    return {"items": values, "nextCursor": None}


def test_wire_size_is_exactly_what_each_item_adds_to_an_mcp_answer_in_the_lambda_response():
    empty = lambda_payload(mcp_answer(render(listed([]))))
    full = lambda_payload(mcp_answer(render(listed(AWKWARD))))
    separators = (len(", ") + len(",")) * (len(AWKWARD) - 1)  # in the text, and in the compact structured content

    assert full - empty == sum(paging.wire_size(value) for value in AWKWARD) + separators


def test_a_rest_answer_never_takes_more_than_the_wire_size():
    empty = lambda_payload(rest_answer(listed([])))
    for value in AWKWARD:
        assert lambda_payload(rest_answer(listed([value]))) - empty <= paging.wire_size(value)


def test_non_ascii_and_quotes_count_several_times_their_utf8_bytes():
    # In the text: "a" in the tool text, \"a\" in the answer, \\\"a\\\" in the runtime's JSON (9); in the
    # structured content: "a" in the answer, \"a\" in the runtime's JSON (5).
    assert paging.wire_size("a") == 9 + 5
    assert paging.wire_size("é") - paging.wire_size("") == 6 + 6  # \u00e9, twice
    assert paging.wire_size("😀") - paging.wire_size("") == 12 + 12  # \ud83d\ude00, twice
    assert paging.wire_size('"') - paging.wire_size("") == 8 + 4  # \" then \\\" then \\\\\\\"; and \" then \\\"


# -- filling a page --------------------------------------------------------------------------------


def fill(items: list[str], budget: int, next_cursor: str | None = None, reserved: int = 0):
    return paging.fill(
        items,
        next_cursor,
        budget=budget,
        reserved=reserved,
        shown=str.upper,
        cursor_after=lambda item: f"after-{item}",
        name=lambda item: f"item {item}",
        read_alone=lambda item: f"GET /items/{item}",
    )


ITEMS = ["a" * 10, "b" * 20, "c" * 30]
SIZES = [paging.wire_size(item.upper()) for item in ITEMS]


def test_a_page_exactly_at_the_budget_keeps_every_item_and_the_stores_cursor():
    assert fill(ITEMS, sum(SIZES), next_cursor="store-cursor") == ([i.upper() for i in ITEMS], "store-cursor")
    assert fill(ITEMS, sum(SIZES) + 1, next_cursor=None) == ([i.upper() for i in ITEMS], None)


def test_one_byte_under_moves_the_last_item_to_the_next_page():
    shown, cursor = fill(ITEMS, sum(SIZES) - 1, next_cursor="store-cursor")

    assert shown == [ITEMS[0].upper(), ITEMS[1].upper()]
    assert cursor == f"after-{ITEMS[1]}"  # resumes at the item left out: nothing skipped, nothing repeated


def test_the_reserved_bytes_count_against_the_budget():
    assert fill(ITEMS, sum(SIZES) + 5, reserved=5)[1] is None
    assert fill(ITEMS, sum(SIZES) + 5, reserved=6)[1] == f"after-{ITEMS[1]}"


def test_an_empty_page_passes_the_stores_cursor_through():
    assert fill([], 1, next_cursor="store-cursor") == ([], "store-cursor")


def test_a_first_item_that_fits_no_page_names_it_how_to_read_it_and_the_cursor_past_it():
    with pytest.raises(TooLarge) as raised:
        fill(ITEMS, SIZES[0] - 1)

    error = raised.value
    assert error.http_status == 422
    assert error.cursor == f"after-{ITEMS[0]}"
    assert error.message == (
        f"item {ITEMS[0]} takes {SIZES[0]:,} bytes, more than one response may carry ({SIZES[0] - 1:,} bytes); "
        f"read it on its own: GET /items/{ITEMS[0]}; to list what follows it, pass cursor after-{ITEMS[0]}"
    )


def test_a_first_item_too_large_beside_the_reserved_bytes_says_both():
    with pytest.raises(TooLarge, match=f"takes {SIZES[0]:,} bytes besides the 100 of the rest of the answer"):
        fill(ITEMS, SIZES[0] + 99, reserved=100)


def test_a_later_item_too_large_for_any_page_ends_the_page_before_it_and_fails_only_when_first():
    huge = "h" * 1000
    budget = SIZES[0] + 10

    shown, cursor = fill([ITEMS[0], huge, ITEMS[1]], budget)
    assert (shown, cursor) == ([ITEMS[0].upper()], f"after-{ITEMS[0]}")
    with pytest.raises(TooLarge) as raised:
        fill([huge, ITEMS[1]], budget)
    assert raised.value.cursor == f"after-{huge}"


def test_the_budget_setting_defaults_to_the_page_bytes_and_can_only_be_lowered():
    assert Settings().page_bytes == paging.PAGE_BYTES == 5 * 1024 * 1024
    assert paging.PAGE_BYTES < paging.RESPONSE_MAX == 6_291_456
    assert Settings(page_bytes=1000).page_bytes == 1000
    with pytest.raises(ValidationError):
        Settings(page_bytes=paging.PAGE_BYTES + 1)
