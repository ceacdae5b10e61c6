"""Pages bounded by bytes as well as by count: the one place a listing decides where its page ends.

Lambda refuses a response over 6 MB and the Function URL then answers 502, so a count alone bounds
nothing: 200 tasks with 64 KiB bodies make 13 MB. Every listing fills its page here, item by item,
measured as it travels, and stops before the budget; the cursor it hands out resumes at the first
item left out, so following cursors returns every item exactly once.
"""

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from agent_workspace.domain.errors import TooLarge

RESPONSE_MAX = 6 * 1024 * 1024  # 6,291,456: Lambda's limit on one response payload
# What one page's items (and what goes with them, such as a task above its conversation) may take.
# The rest, over a megabyte, is the margin for the envelope: keys, separators, the cursor, headers.
PAGE_BYTES = 5 * 1024 * 1024
# The most one answer's own text or body may take: what is left of the limit once the envelope (status,
# headers, JSON-RPC framing) is counted generously. Past it the caller gets an error, never a 502.
ANSWER_MAX = RESPONSE_MAX - 64 * 1024

T = TypeVar("T")


def wire_size(value: Any) -> int:
    """The bytes `value` adds to a Lambda response, measured along the longest way it travels.

    That way is MCP, where a tool result carries the value twice. Once as its JSON text (as
    `dispatch.render` writes it): that text as a string in the JSON-RPC answer, and that answer as the
    string body of the runtime's JSON of the response, which may escape every non-ASCII character as
    \\uXXXX. Each string level doubles a quote or backslash and the last one makes "é" six bytes, so the
    raw JSON size alone would undercount by 2 to 8 times. And once as `structuredContent`, a JSON value
    in the answer, one string level down. The REST API's answer (compact JSON, one string level) is
    never larger than this.
    """
    text = json.dumps(value, ensure_ascii=False)
    return text_wire_size(text) + structured_wire_size(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def text_wire_size(text: str) -> int:
    """The bytes a tool result's `text` adds to a Lambda response (see `wire_size`)."""
    in_answer = json.dumps(text, ensure_ascii=False)[1:-1]  # the enclosing quotes belong to the envelope
    return len(json.dumps(in_answer)) - 2  # ASCII only: characters are bytes


def structured_wire_size(text: str) -> int:
    """The bytes a tool result's `structuredContent`, whose compact JSON is `text`, adds to a Lambda response."""
    return len(json.dumps(text)) - 2  # one string level, ASCII only; the enclosing quotes belong to the envelope


def body_wire_size(body: bytes) -> int:
    """The bytes an HTTP response `body` takes in the runtime's JSON of the response (one string level)."""
    return len(json.dumps(body.decode("utf-8", errors="replace")))


def fill(
    items: Sequence[T],
    next_cursor: str | None,
    *,
    budget: int,
    shown: Callable[[T], Any],
    cursor_after: Callable[[T], str],
    name: Callable[[T], str],
    read_alone: Callable[[T], str] | None = None,
    reserved: int = 0,
) -> tuple[list[Any], str | None]:
    """As many of a page's `items` as fit in `budget` bytes, shown, and the cursor to the rest.

    `items` and `next_cursor` are the page as the store read it, bounded by count only. Items are
    taken in order while their `wire_size`s, plus the `reserved` bytes of what the answer carries
    besides them, stay within `budget` (a page exactly at the budget fits). The first item left out
    ends the page: `cursor_after` the last one taken resumes exactly there. A first item that fits no
    page is a `TooLarge` naming it (`name`), saying how to read it on its own (`read_alone`), and
    giving the cursor past it, so one large item never blocks the rest of a listing.
    """
    page: list[Any] = []
    used = reserved
    for index, item in enumerate(items):
        value = shown(item)
        size = wire_size(value)
        if used + size > budget:
            if index == 0:
                raise _too_large(
                    name(item), read_alone(item) if read_alone else None, size, reserved, budget, cursor_after(item)
                )
            return page, cursor_after(items[index - 1])
        page.append(value)
        used += size
    return page, next_cursor


def _too_large(what: str, how: str | None, size: int, reserved: int, budget: int, skip: str) -> TooLarge:
    besides = f" besides the {reserved:,} of the rest of the answer" if reserved else ""
    text = f"{what} takes {size:,} bytes{besides}, more than one response may carry ({budget:,} bytes)"
    if how:
        text += f"; read it on its own: {how}"
    return TooLarge(f"{text}; to list what follows it, pass cursor {skip}", cursor=skip)
