"""Claude Code's agent files as bundle fields (import_agent, export_agent, checkout_agent's helper mode).

A subagent file (`.claude/agents/<name>.md`) and a memory file are Markdown under YAML frontmatter. They come
from people's disks, so the frontmatter is read by hand, not by a YAML library: a '---' line, `key: value`
lines, a '---' line. A value is plain, single- or double-quoted (JSON's escapes), an inline list `[a, b]` or
indented `- item` lines. Keys this module does not use are listed, not read (a `hooks:` block is skipped
whole); anything else is refused naming the field. Every scan is linear in a bounded input.
"""

import json
import re
from typing import Any

from agent_workspace.domain.agents import (
    MEMORY_BODY_MAX,
    MEMORY_DESCRIPTION_MAX,
    MEMORY_TYPES,
    check_description,
    check_memory_name,
    check_prompt,
    check_settings,
    check_slug,
    slug_of,
)
from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.text import check_plain, echo

SUBAGENT_CHARS_MAX = 200_000  # a 128,000-character prompt and its frontmatter, with room to spare
MEMORY_CHARS_MAX = 70_000  # a 64,000-character body and its frontmatter
# The order Claude Code's documentation lists a subagent's fields in; all of them are claude-code settings.
SUBAGENT_SETTINGS = ("tools", "disallowedTools", "model", "effort", "permissionMode", "maxTurns", "skills", "color")

Value = str | bool | None | list[str]

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
# A string YAML reads back as itself unquoted: no spaces, no indicator or reserved word.
_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.,/@()+-]{0,399}")
_RESERVED = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n"})
_KEYWORDS: dict[str, bool | None] = {"true": True, "false": False, "null": None, "~": None}
# What YAML does not allow raw in a double-quoted scalar, or a reader might show misleadingly.
_ESCAPE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufeff]")


def _refuse(field: str, where: str, problem: str) -> PayloadError:
    return PayloadError(f"{field}: {where}: {problem}", field=field)


def _rest_is_comment(rest: str) -> bool:
    return not rest.strip() or (rest[:1] in " \t" and rest.lstrip().startswith("#"))


def _quoted(raw: str, field: str, where: str) -> tuple[str, str]:
    """A quoted scalar at the start of `raw`, and what follows it."""
    if raw[0] == '"':
        try:
            value, end = json.JSONDecoder().raw_decode(raw)
        except ValueError:
            raise _refuse(field, where, 'a "-quoted value must be closed and use JSON escapes') from None
        return value, raw[end:]
    parts, start = [], 1
    while (close := raw.find("'", start)) >= 0:
        if raw.startswith("''", close):  # '' is one quote inside '-quotes
            parts.append(raw[start : close + 1])
            start = close + 2
            continue
        parts.append(raw[start:close])
        return "".join(parts), raw[close + 1 :]
    raise _refuse(field, where, "a '-quoted value is never closed")


def _item(raw: str, field: str, where: str) -> str:
    """One list item: a quoted or plain string, no structure."""
    if raw[:1] in "\"'":
        value, rest = _quoted(raw, field, where)
        if rest.strip():
            raise _refuse(field, where, "a quoted list item must stand alone (no commas inside it)")
        return value
    if not raw or raw[0] in "[]{}&*!|>%@`-?" or ": " in raw:
        raise _refuse(field, where, "a list item must be plain text or quoted; nested structures are not read")
    return raw


def _value(raw: str, field: str, where: str) -> Value:
    """What follows `key: `: a scalar or an inline list; block scalars, maps, anchors and tags are refused."""
    if not raw or raw[0] == "#":
        return None
    if raw[0] in "\"'":
        value, rest = _quoted(raw, field, where)
        if not _rest_is_comment(rest):
            raise _refuse(field, where, "only a comment may follow a quoted value")
        return value
    if raw[0] == "[":
        close = raw.find("]")
        if close < 0 or not _rest_is_comment(raw[close + 1 :]) or "[" in raw[1:close] or "{" in raw[1:close]:
            raise _refuse(field, where, "an inline list must be one line [a, b] holding no nested structures")
        items = [part.strip() for part in raw[1:close].split(",")]
        if items[-1] == "":  # [] or a trailing comma
            items.pop()
        return [_item(item, field, where) for item in items]
    if raw[0] in "{|>&*!%@`" or raw == "-" or raw.startswith("- "):
        raise _refuse(field, where, "maps, block scalars (| >), anchors, aliases and tags are not read")
    comment = raw.find(" #")
    plain = (raw if comment < 0 else raw[:comment]).rstrip()
    return _KEYWORDS.get(plain.lower(), plain)


def read_frontmatter(
    text: str, field: str, known: frozenset[str], limit: int
) -> tuple[dict[str, Value], str, list[str]]:
    """The known keys' values, the body, and the other keys (unread): `({}, text, [])` without frontmatter."""
    if len(text) > limit:
        raise PayloadError(f"{field} is {len(text):,} characters; at most {limit:,}", field=field)
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    if lines[0].rstrip() != "---":
        return {}, "\n".join(lines), []
    end = next((at for at in range(1, len(lines)) if lines[at].rstrip() == "---"), None)
    if end is None:
        raise PayloadError(f"{field}: the frontmatter is never closed by a line '---'", field=field)
    fields: dict[str, Value] = {}
    unknown: list[str] = []
    seen: set[str] = set()  # a set, so many keys cost linear time
    listing: str | None = None  # a known key given no value, whose `- item` lines may follow
    skipping = False  # inside an unknown key's indented lines
    for number in range(1, end):
        line, where = lines[number], f"frontmatter line {number + 1}"
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            item = line.strip()
            if skipping:
                continue
            if listing is None or not (item == "-" or item.startswith("- ")):
                raise _refuse(field, where, "an indented line must be a '- item' of a list; nested maps are not read")
            held = fields[listing]
            if not isinstance(held, list):
                held = fields[listing] = []
            held.append(_item(item[1:].strip(), field, where))
            continue
        key, colon, rest = line.partition(":")
        if not colon or not _KEY.fullmatch(key) or rest[:1] not in ("", " ", "\t"):
            raise _refuse(field, where, f"expected 'key: value', got {echo(line, 40)!r}")
        if key in seen:
            raise _refuse(field, where, f"{key} is given twice")
        seen.add(key)
        skipping, listing = key not in known, None
        if skipping:
            unknown.append(key)
            continue
        fields[key] = _value(rest.strip(), field, where)
        if fields[key] is None:
            listing = key
    return fields, "\n".join(lines[end + 1 :]), unknown


def _body(body: str) -> str:
    """The Markdown after the frontmatter, without the blank line that separates them or trailing newlines."""
    return body.removeprefix("\n").rstrip("\n")


def _text(fields: dict[str, Value], key: str, field: str) -> str | None:
    value = fields.get(key)
    if value is not None and not isinstance(value, str):
        raise PayloadError(f"{field}: {key} must be text (quote it)", field=field)
    return value


def parse_subagent(text: str, field: str = "subagent") -> dict[str, Any]:
    """A Claude Code subagent file as import_agent's name, description, prompt and claude-code profile."""
    fields, body, unknown = read_frontmatter(
        text, field, frozenset({"name", "description", *SUBAGENT_SETTINGS}), SUBAGENT_CHARS_MAX
    )
    name = _text(fields, "name", field)
    settings: dict[str, Any] = {}
    for key in SUBAGENT_SETTINGS:
        value = fields.get(key)
        if value is not None:  # a list (tools: [Read, Grep]) is the comma-separated string profiles hold
            settings[key] = ", ".join(value) if isinstance(value, list) else value
    try:
        check_plain(name or "", "name")
        description = check_description(_text(fields, "description", field) or "")
        prompt = check_prompt(_body(body), "prompt")
        check_settings("claude-code", settings)
    except PayloadError as refused:
        raise PayloadError(f"{field}: {refused.message}", field=field) from None
    return {"name": name, "description": description, "prompt": prompt, "settings": settings, "unknown": unknown}


def _kebab(name: str) -> str:
    """A memory's name as given when it is kebab-case already, else the slug its words make."""
    try:
        return check_memory_name(name)
    except PayloadError:
        return check_memory_name(slug_of(name))


def parse_memory_file(text: str, field: str) -> dict[str, Any]:
    """A Claude Code memory file as one of import_agent's memories: a kebab-case name, type, description, body."""
    fields, body, _ = read_frontmatter(text, field, frozenset({"name", "type", "description"}), MEMORY_CHARS_MAX)
    name, kind = _text(fields, "name", field), _text(fields, "type", field)
    description = _text(fields, "description", field)
    if not name or not description or kind is None:
        raise PayloadError(f"{field}: the frontmatter must give name, description and type", field=field)
    if kind not in MEMORY_TYPES:
        raise PayloadError(f"{field}: type must be one of {', '.join(MEMORY_TYPES)}", field=field)
    if len(description) > MEMORY_DESCRIPTION_MAX:
        raise PayloadError(f"{field}: description is at most {MEMORY_DESCRIPTION_MAX} characters", field=field)
    body = _body(body)
    if len(body) > MEMORY_BODY_MAX:
        raise PayloadError(f"{field}: the body is at most {MEMORY_BODY_MAX:,} characters", field=field)
    try:
        check_plain(description, "description")
        kebab = _kebab(name)
    except PayloadError as refused:
        raise PayloadError(f"{field}: {refused.message}", field=field) from None
    return {"name": kebab, "type": kind, "description": description, "body": body}


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines included) as one space: a frontmatter description."""
    return " ".join(text.split())


def quote(text: str) -> str:
    """`text` as a double-quoted YAML scalar: JSON's quoting, with what YAML forbids raw escaped too."""
    return _ESCAPE.sub(lambda found: f"\\u{ord(found.group()):04x}", json.dumps(text, ensure_ascii=False))


def _scalar(text: str) -> str:
    return text if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED else quote(text)


def render_frontmatter(fields: dict[str, Value], quoted: frozenset[str] = frozenset({"description"})) -> str:
    """Frontmatter read_frontmatter (and YAML) reads back as `fields`; None values are left out, and the
    `quoted` keys' text is always quoted, as a description's prose may hold anything."""
    lines = ["---"]
    for key, value in fields.items():
        if isinstance(value, bool):
            lines.append(f"{key}: {'true' if value else 'false'}")
        elif isinstance(value, list):
            lines.append(f"{key}: [{', '.join(quote(item) if ',' in item else _scalar(item) for item in value)}]")
        elif value is not None:
            lines.append(f"{key}: {quote(value) if key in quoted else _scalar(value)}")
    return "\n".join([*lines, "---", ""])


def _with_body(head: str, body: str) -> str:
    return f"{head}\n{body.rstrip(chr(10))}\n"


def render_subagent(slug: str, description: str, prompt: str, settings: dict[str, Any]) -> str:
    """A Claude Code subagent file parse_subagent reads back as these fields (the description on one line)."""
    check_settings("claude-code", settings)
    head: dict[str, Value] = {"name": check_slug(slug), "description": one_line(description)}
    head |= {key: settings.get(key) for key in SUBAGENT_SETTINGS}
    return _with_body(render_frontmatter(head), prompt)


def render_memory_file(memory: dict[str, Any]) -> str:
    """A memory as the file parse_memory_file reads back."""
    head: dict[str, Value] = {key: memory[key] for key in ("name", "description", "type")}
    return _with_body(render_frontmatter({**head, "description": one_line(memory["description"])}), memory["body"])
