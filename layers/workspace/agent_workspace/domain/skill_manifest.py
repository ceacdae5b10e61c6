"""A skill as MCP serves it (resources and the Agent Skills extension, SEP-2640): the bytes of each file, the
SKILL.md's frontmatter as a client parses it, and each file's digest.

The served SKILL.md always names its skill. The Agent Skills format requires `name` in the frontmatter, equal to
the skill's directory (here: the name in `skill://<name>/SKILL.md`), but a stored SKILL.md needs only a
`description`. So the server serves each SKILL.md in one of three forms, the same in `resources/read`,
`skills/list` and `skills/get` (a digest is always of the bytes `resources/read` serves):

- as stored, when its frontmatter already holds `name: <the skill's name>`;
- as stored with one line `name: "<name>"` added right after the opening `---`, when it holds no `name`;
- rewritten, when neither can be served faithfully: the frontmatter becomes one line of JSON (a YAML flow
  mapping) holding every field, `name` set to the skill's name, and the body stays as stored. That is a
  frontmatter naming another `name`; one that YAML 1.2 parsers may read apart or JSON cannot carry (aliases,
  duplicate or non-string keys, explicit tags such as `!!binary`, `.nan`, a lone surrogate, U+2028 or U+0085);
  or one whose `---` lines a client would not find (lines ending in a lone CR).

The frontmatter a listing advertises is parsed from the served bytes with YAML 1.2's core schema, as the
JavaScript `yaml` package (which the MCP Inspector uses) reads it, so listing and file always agree.
"""

import base64
import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from agent_workspace.domain.skills import FRONTMATTER_DEPTH_MAX, SKILL_MD
from agent_workspace.domain.text import utf8_text

SKILL_MD_MIME = "text/markdown"
# A skill holds text only (domain.skills.check_text); the type a client sees comes from the file's extension,
# fixed here rather than read from the platform's mime.types, so every deployment answers alike.
_MIME_BY_EXTENSION = {
    "md": "text/markdown",
    "markdown": "text/markdown",
    "txt": "text/plain",
    "json": "application/json",
    "yaml": "application/yaml",
    "yml": "application/yaml",
    "toml": "application/toml",
    "xml": "application/xml",
    "html": "text/html",
    "csv": "text/csv",
    "py": "text/x-python",
    "sh": "text/x-shellscript",
    "js": "text/javascript",
    "mjs": "text/javascript",
}
_VALUES_MAX = 10_000  # values (scalars, lists, maps) one frontmatter may expand to: aliases can multiply them

# The JavaScript `yaml` package's split of a skill file (the MCP Inspector's `splitSkillFile`): an opening line
# `---` ending in LF or CRLF, then the first line `---` after it. JavaScript's `^`/`$` in multiline mode also
# break at CR, U+2028 and U+2029, so those count as line ends here too.
_OPENING = re.compile(r"---[ \t]*\r?\n")
_CLOSING = re.compile(r"(?:^|(?<=[\n\r\u2028\u2029]))---[ \t]*\r?(?=[\n\r\u2028\u2029]|\Z)")
# Line breaks to YAML 1.1 (PyYAML) but not to YAML 1.2: a frontmatter holding one is read two ways.
_BREAKS_TO_YAML_1_1 = re.compile("[\x85\u2028\u2029]")
# What YAML may not hold unescaped even in a double-quoted string (its c-printable set), and the 1.1 line breaks.
_NOT_YAML_PRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ufffe\uffff]")


@dataclass(frozen=True)
class ServedFile:
    """One file of a skill as served: its URI's path within the skill, its text, and what a manifest says of it."""

    path: str
    text: str
    mime_type: str

    @property
    def data(self) -> bytes:
        return self.text.encode("utf-8")

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def digest(self) -> str:
        return digest_of(self.data)


def digest_of(data: bytes) -> str:
    """SEP-2640's digest: `sha256:` and 64 lowercase hex digits of exactly the bytes served."""
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


def mime_type_of(path: str) -> str:
    if path == SKILL_MD:
        return SKILL_MD_MIME
    _, dot, extension = path.rpartition("/")[2].rpartition(".")
    return _MIME_BY_EXTENSION.get(extension.lower(), "text/plain") if dot else "text/plain"


def served_file(name: str, path: str, stored: str) -> ServedFile:
    """A file of skill `name` as `resources/read` serves it: SKILL.md naming its skill, every other file as stored."""
    text = served_skill_md(name, stored) if path == SKILL_MD else stored
    return ServedFile(path, text, mime_type_of(path))


def served_skill_md(name: str, stored: str) -> str:
    """The SKILL.md of skill `name` as served (see the module's docstring for the three forms)."""
    split = split_skill_file(stored)
    fields = _portable_fields(split.frontmatter) if split is not None else None
    if fields is not None:
        if fields.get("name") == name:
            return stored
        if "name" not in fields:
            opening = _OPENING.match(stored)
            assert opening is not None  # split_skill_file found it
            newline = "\r\n" if opening.group().endswith("\r\n") else "\n"  # as the file's own lines end
            added = f"{stored[: opening.end()]}name: {json.dumps(name)}{newline}{stored[opening.end() :]}"
            reread = split_skill_file(added)
            if reread is not None and _portable_fields(reread.frontmatter) == {"name": name, **fields}:
                return added
    return _rewritten(name, stored, fields)


def frontmatter(served: str) -> dict[str, Any]:
    """The frontmatter of a served SKILL.md, as a YAML 1.2 (core schema) parser reads it: what `skills/list` lists."""
    split = split_skill_file(served)
    fields = _portable_fields(split.frontmatter) if split is not None else None
    return fields if fields is not None else {}


@dataclass(frozen=True)
class _Split:
    frontmatter: str
    body: str


def split_skill_file(text: str) -> _Split | None:
    """The frontmatter and body of a skill file exactly as the MCP Inspector splits them; None without one."""
    opening = _OPENING.match(text)
    if opening is None:
        return None
    rest = text[text.index("\n") + 1 :]
    closing = _CLOSING.search(rest)
    if closing is None:
        return None
    front = re.sub(r"\r?\n\Z", "", rest[: closing.start()])
    after = rest[closing.start() :]
    newline = after.find("\n")
    body = "" if newline == -1 else re.sub(r"\A\r?\n", "", after[newline + 1 :])
    return _Split(front, body)


# -- YAML 1.2, core schema ------------------------------------------------------------------------


class _Unportable(Exception):
    """The frontmatter cannot be listed as a YAML 1.2 parser would read it, so the SKILL.md is served rewritten."""


class _CoreLoader(yaml.SafeLoader):
    """PyYAML reading YAML 1.2's core schema, as the JavaScript `yaml` package does by default: `yes` and `on` are
    strings, `012` is twelve, `0o12` is ten, a date is a string. It refuses what that package refuses or reads
    otherwise (duplicate keys, aliases beyond a few) and nests at most FRONTMATTER_DEPTH_MAX levels."""

    yaml_implicit_resolvers: dict[Any, Any] = {}  # replaced below: YAML 1.1's are PyYAML's default
    yaml_constructors: dict[Any, Any] = {}

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self.aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
        self._depth += 1
        try:
            if self._depth > FRONTMATTER_DEPTH_MAX:
                raise _Unportable("too deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, yaml.MappingNode):
            raise _Unportable("not a mapping")
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str) or key in mapping:
                raise _Unportable("a key that is not a string, or a key given twice")
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


_CORE_SCALARS: tuple[tuple[str, str, str], ...] = (
    ("tag:yaml.org,2002:null", r"~|null|Null|NULL|", "~nN"),
    ("tag:yaml.org,2002:bool", r"true|True|TRUE|false|False|FALSE", "tTfF"),
    ("tag:yaml.org,2002:int", r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"[-+]?(?:(?:\.[0-9]+|[0-9]+\.[0-9]*)(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
        "-+.0123456789",
    ),
)
_CORE_PATTERNS = {tag: re.compile(f"(?:{pattern})\\Z") for tag, pattern, _ in _CORE_SCALARS}  # match: from the start
for _tag, _, _first in _CORE_SCALARS:
    _CoreLoader.add_implicit_resolver(_tag, _CORE_PATTERNS[_tag], [*_first, *([""] if "~" in _first else [])])


def _core_scalar(construct: Callable[[_CoreLoader, Any], Any]) -> Callable[[_CoreLoader, Any], Any]:
    """A core-schema scalar constructor: a value its tag's pattern does not match (an explicit `!!float 3`,
    `!!bool yes`) is one the JavaScript `yaml` package leaves a string, so it cannot be listed as read here."""

    def constructed(loader: _CoreLoader, node: Any) -> Any:
        if not _CORE_PATTERNS[node.tag].match(loader.construct_scalar(node)):
            raise _Unportable(f"{node.tag} of a value YAML 1.2 does not read as one")
        return construct(loader, node)

    return constructed


def _core_int(loader: _CoreLoader, node: Any) -> int:
    value = loader.construct_scalar(node)
    if value.startswith("0o"):
        return int(value[2:], 8)
    if value.startswith("0x"):
        return int(value[2:], 16)
    return int(value, 10)


def _core_float(loader: _CoreLoader, node: Any) -> float:
    value = loader.construct_scalar(node).lower()
    if value.lstrip("+-") == ".inf" or value == ".nan":
        raise _Unportable("JSON has no infinity or NaN")
    return float(value)


_CONSTRUCTORS: dict[str, Callable[..., Any]] = {
    "tag:yaml.org,2002:null": _core_scalar(yaml.SafeLoader.construct_yaml_null),
    "tag:yaml.org,2002:bool": _core_scalar(lambda loader, node: loader.construct_scalar(node).lower() == "true"),
    "tag:yaml.org,2002:int": _core_scalar(_core_int),
    "tag:yaml.org,2002:float": _core_scalar(_core_float),
    "tag:yaml.org,2002:str": yaml.SafeLoader.construct_yaml_str,
    "tag:yaml.org,2002:seq": yaml.SafeLoader.construct_yaml_seq,
    "tag:yaml.org,2002:map": yaml.SafeLoader.construct_yaml_map,
}
for _tag, _constructor in _CONSTRUCTORS.items():
    _CoreLoader.add_constructor(_tag, _constructor)


def _unknown_tag(loader: _CoreLoader, node: Any) -> Any:
    raise _Unportable(f"tag {node.tag} has no JSON value")


_CoreLoader.add_constructor(None, _unknown_tag)


def _portable_fields(text: str) -> dict[str, Any] | None:
    """The frontmatter's fields as YAML 1.2 reads them, if JSON carries them unchanged and any client's YAML
    parser agrees; None when the SKILL.md must be served rewritten."""
    if _BREAKS_TO_YAML_1_1.search(text):
        return None
    loader = _CoreLoader(text)
    try:
        value = loader.get_single_data()
        if loader.aliases:
            return None
        fields = _json_value(value, [0]) if value is not None else {}
    except (yaml.YAMLError, _Unportable, RecursionError, ValueError):
        return None
    finally:
        loader.dispose()
    return fields if isinstance(fields, dict) else None


def _json_value(value: Any, counted: list[int], depth: int = 0) -> Any:
    """`value` as JSON carries it unchanged, or `_Unportable`; bounded in depth and size (aliases multiply)."""
    counted[0] += 1
    if counted[0] > _VALUES_MAX or depth > FRONTMATTER_DEPTH_MAX:
        raise _Unportable("too large")
    if isinstance(value, str):
        value.encode("utf-8")  # a lone surrogate from a "\ud800" escape: no UTF-8, no JSON a client can read
        return value
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Unportable("JSON has no infinity or NaN")
        return value
    if isinstance(value, list):
        return [_json_value(item, counted, depth + 1) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: _json_value(item, counted, depth + 1) for key, item in value.items()}
    raise _Unportable(f"a {type(value).__name__} has no JSON value")


# -- the rewritten form -----------------------------------------------------------------------------


def _rewritten(name: str, stored: str, portable: dict[str, Any] | None) -> str:
    """SKILL.md with its frontmatter as one line of JSON, `name` first and set to the skill's name; body as stored.
    The fields are those YAML 1.2 reads (`portable`) when it reads them all, else what PyYAML read at the save."""
    lines = stored.splitlines(keepends=True)
    end = next((i for i, line in enumerate(lines[1:], start=1) if line.rstrip() == "---"), None)
    front_text = "".join(lines[1:end]) if end is not None else ""
    body = "".join(lines[end + 1 :]) if end is not None else stored
    read = portable if portable is not None else _lenient_fields(front_text)
    fields = {key: value for key, value in read.items() if key != "name"}
    front = _NOT_YAML_PRINTABLE.sub(
        lambda found: f"\\u{ord(found.group()):04x}", json.dumps({"name": name, **fields}, ensure_ascii=False)
    )
    return f"---\n{front}\n---\n{body}"


def _lenient_fields(text: str) -> dict[str, Any]:
    """What PyYAML (the parser that accepted the SKILL.md when it was saved) reads in the frontmatter, made JSON:
    dates as ISO text, binary as base64 text, sets as lists, non-finite numbers and surrogates as text."""
    try:
        value = yaml.load(text, Loader=_SavedLoader)  # noqa: S506 (a SafeLoader)
    except (yaml.YAMLError, RecursionError, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    try:
        made = _lenient_value(value, [0])
    except _Unportable:
        made = {key: _lenient_value(value[key], [0]) for key in ("description",) if isinstance(value.get(key), str)}
    return made if isinstance(made, dict) else {}


class _SavedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with the nesting bound the save used (domain.skills._FrontmatterLoader's)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > FRONTMATTER_DEPTH_MAX:
                raise yaml.YAMLError("too deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _lenient_value(value: Any, counted: list[int], depth: int = 0) -> Any:
    counted[0] += 1
    if counted[0] > _VALUES_MAX or depth > FRONTMATTER_DEPTH_MAX:
        raise _Unportable("too large")
    if isinstance(value, str):
        return utf8_text(value)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [_lenient_value(item, counted, depth + 1) for item in items]
    if isinstance(value, dict):
        return {_lenient_key(key): _lenient_value(item, counted, depth + 1) for key, item in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def _lenient_key(key: Any) -> str:
    if isinstance(key, str):
        return utf8_text(key)
    return json.dumps(key) if key is None or isinstance(key, bool) else str(key)
