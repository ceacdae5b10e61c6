"""Text that names something, and text an error repeats back: the rules every entry point shares.

A name, title, filename or id is shown where people and agents decide what to trust (a task list,
a download dialog, a header), so it is one plain line: a right-to-left override (U+202E) makes
`report<U+202E>fdp.exe` read as `reportexe.pdf`, and a trailing newline makes a second `notes.md`.
Bodies (markdown, messages, memory) keep their newlines and are not checked here.
"""

import re
from typing import Any

from agent_workspace.domain.errors import PayloadError

# C0 and C1 controls (newline and tab included), DEL, Unicode's Bidi_Control characters, the line and
# paragraph separators (newlines to many renderers) and lone surrogates (no UTF-8 at all).
_NOT_PLAIN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# A path segment every URL, REST route and console link carries unchanged (RFC 3986's unreserved
# characters but '~'); '.' and '..' are refused apart, since URL parsers remove them as dot segments.
_SEGMENT = re.compile(r"[A-Za-z0-9._-]+")
SEGMENT_RULE = "letters, digits, '.', '_' and '-', not '.' or '..'"
TITLE_MAX = 500  # a task's, a project's or an epic's title
BODY_MAX = 64 * 1024  # its markdown body
ECHO_MAX = 100  # a value an error repeats: a name, an id, a field path
DETAIL_MAX = 500  # a validator's own message, which may quote the value it refused


def check_plain(value: str, field_name: str) -> str:
    """`value` if it is one line of plain text, else `PayloadError` naming the field and the character."""
    found = _NOT_PLAIN.search(value)
    if found is None:
        return value
    char = found.group()
    what = "a lone surrogate" if "\ud800" <= char <= "\udfff" else f"U+{ord(char):04X}"
    raise PayloadError(
        f"{field_name} must be one line of plain text: {what} at character {found.start():,} is a control, "
        "line-break or bidirectional-formatting character",
        field=field_name,
    )


def is_segment(value: str) -> bool:
    """Whether `value` can be one segment of a URL path as it is (an attachment id, a skill file's path part)."""
    return _SEGMENT.fullmatch(value) is not None and value not in (".", "..")


def utf8_text(text: str) -> str:
    """`text` as JSON can carry it to a client: surrogate pairs joined, a lone surrogate (which a YAML or JSON
    escape can make) replaced by U+FFFD."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def echo(value: Any, limit: int = ECHO_MAX) -> str:
    """`value` as an error text repeats it: whole when short, else its first `limit` characters and its length,
    so a 4 MB name never comes back (or goes into a log) in full."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text):,} characters)"


def check_text(value: str, field_name: str, maximum: int, *, required: bool = True, plain: bool = False) -> str:
    """A bounded text; `plain` for a title, which must also be one line of plain text (`check_plain`)."""
    if required and not value.strip():
        raise PayloadError(f"{field_name} must not be empty", field=field_name)
    if len(value) > maximum:
        raise PayloadError(f"{field_name} is {len(value)} characters; at most {maximum}", field=field_name)
    return check_plain(value, field_name) if plain else value
