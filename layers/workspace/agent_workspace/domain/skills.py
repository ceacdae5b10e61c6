"""Skills: a `SKILL.md` and the files it points to, addressed `skill://<name>/<path>`.

The rules here hold whoever stores a skill: the shape of names and URIs, the frontmatter a
`SKILL.md` starts with, and the size of each file and of a skill.
"""

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.text import SEGMENT_RULE, echo, is_segment

SCHEME = "skill://"
SKILL_MD = "SKILL.md"
NAME_MAX = 64
PATH_MAX = 200
DESCRIPTION_MAX = 1024
SKILL_MD_MAX_BYTES = 96 * 1024  # 98,304
FILE_MAX_BYTES = 64 * 1024  # 65,536
MAX_FILES = 256  # per skill, SKILL.md included
MAX_WORKSPACES = 50  # the owner and the workspaces a skill is shared into; bounds one save's transaction
QUERY_MIN = 3
FRONTMATTER_DEPTH_MAX = 32  # lists and maps within each other; a real frontmatter needs 2 or 3

_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")  # fullmatch only: `$` would also match before a final newline
NAME_RULE = f"lowercase letters and digits joined by single hyphens, at most {NAME_MAX} characters (e.g. release-notes)"
PATH_RULE = (
    f"a relative path of at most {PATH_MAX} characters: segments of {SEGMENT_RULE}, joined by single '/' "
    "(e.g. templates/entry.md)"
)
FRONTMATTER_RULE = (
    f"{SKILL_MD} must start with YAML frontmatter holding a description of 1 to {DESCRIPTION_MAX:,} characters: "
    "a line '---', then e.g. 'description: Write release notes from merged PRs.', then a line '---'"
)
# Unicode's control characters (category Cc) but \t \n \r, and surrogates, which are no UTF-8 text.
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


@dataclass(frozen=True)
class SkillUri:
    """`skill://<name>` (path None: the whole skill) or `skill://<name>/<path>` (one file)."""

    name: str
    path: str | None = None

    @property
    def file(self) -> str:
        """The file this URI reads: `skill://<name>` alone means its SKILL.md."""
        return self.path or SKILL_MD


def file_uri(name: str, path: str) -> str:
    return f"{SCHEME}{name}/{path}"


@dataclass(frozen=True)
class SkillRef:
    """A skill as one workspace sees it: its own, or shared into it (then read-only)."""

    workspace_id: str
    name: str
    skill_id: str
    owner_workspace_id: str
    description: str
    created_at: str

    @property
    def read_only(self) -> bool:
        return self.owner_workspace_id != self.workspace_id


@dataclass(frozen=True)
class Skill:
    """The skill itself: its SKILL.md, the paths of its other files and the workspaces that use it."""

    id: str
    account_id: str
    name: str
    owner_workspace_id: str
    description: str
    content: str  # SKILL.md
    revision: int  # bumped by every SKILL.md save and every share change
    created_at: str
    updated_at: str
    files: frozenset[str] = field(default_factory=frozenset)  # other files than SKILL.md
    used_by: frozenset[str] = field(default_factory=frozenset)  # workspaces with a reference to it

    def file_uris(self) -> list[str]:
        return [file_uri(self.name, path) for path in sorted(self.files)]


@dataclass(frozen=True)
class SkillFile:
    path: str
    content: str
    updated_at: str


class _FrontmatterLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing nesting deeper than FRONTMATTER_DEPTH_MAX: its composer recurses once per
    level, so `[[[[...` 5,000 deep in a 96 KiB SKILL.md would end in a RecursionError instead of an answer."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > FRONTMATTER_DEPTH_MAX:
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(
                    None, None, f"it nests deeper than {FRONTMATTER_DEPTH_MAX} levels", mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


# -- rules ------------------------------------------------------------------------------------


def parse_uri(uri: str) -> SkillUri:
    if not uri.startswith(SCHEME):
        raise PayloadError(
            f"uri {_shown(uri)} must start with {SCHEME}: skill://<name> or skill://<name>/<path>", field="uri"
        )
    rest = uri[len(SCHEME) :]
    name, slash, path = rest.partition("/")
    check_name(name, f"uri {_shown(uri)}")
    if not slash:
        return SkillUri(name)
    if len(path) > PATH_MAX or not all(is_segment(segment) for segment in path.split("/")):
        raise PayloadError(f"uri {_shown(uri)}: the path after the skill's name must be {PATH_RULE}", field="uri")
    return SkillUri(name, path)


def check_name(name: str, where: str = "name", field_name: str = "uri") -> str:
    if len(name) > NAME_MAX or not _NAME.fullmatch(name):
        raise PayloadError(f"{where}: skill names are {NAME_RULE}", field=field_name)
    return name


def check_content(path: str, content: str) -> str | None:
    """Refuse what a skill cannot hold; for SKILL.md, return the description of its frontmatter."""
    check_text(content)
    size = len(content.encode("utf-8"))
    if path == SKILL_MD and size > SKILL_MD_MAX_BYTES:
        raise PayloadError(
            f"content is {size:,} bytes of UTF-8; {SKILL_MD} holds at most {SKILL_MD_MAX_BYTES:,} (96 KiB): move "
            f"parts into other files of the skill and point to them from {SKILL_MD}",
            field="content",
        )
    if path != SKILL_MD and size > FILE_MAX_BYTES:
        raise PayloadError(
            f"content is {size:,} bytes of UTF-8; a file of a skill holds at most {FILE_MAX_BYTES:,} (64 KiB): "
            "split it into several files",
            field="content",
        )
    return description_of(content) if path == SKILL_MD else None


def check_text(content: str) -> None:
    """UTF-8 text only: no control characters but newline, carriage return and tab, no lone surrogates."""
    found = _NOT_TEXT.search(content)
    if found is not None:
        char = found.group()
        what = "a lone surrogate" if "\ud800" <= char <= "\udfff" else f"control character U+{ord(char):04X}"
        raise PayloadError(
            f"content must be UTF-8 text: {what} at character {found.start():,}; control characters other than "
            "newline, carriage return and tab (and so binary data) cannot be stored in a skill",
            field="content",
        )


def description_of(content: str) -> str:
    """The `description` of a SKILL.md's YAML frontmatter, parsed with a YAML library."""
    lines = content.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        raise PayloadError(f"content: {FRONTMATTER_RULE}", field="content")
    end = next((i for i, line in enumerate(lines[1:], start=1) if line.rstrip() == "---"), None)
    if end is None:
        raise PayloadError(
            f"content: the frontmatter is never closed by a line '---'; {FRONTMATTER_RULE}", field="content"
        )
    try:
        front: Any = yaml.load("".join(lines[1:end]), Loader=_FrontmatterLoader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        at = f" (line {where.line + 2})" if where is not None else ""
        problem = getattr(error, "problem", None) or "cannot be parsed"
        raise PayloadError(f"content: the frontmatter is not valid YAML{at}: {problem}", field="content") from None
    except ValueError:  # a scalar YAML resolves but Python refuses: 2024-13-45, an int of 5,000 digits
        raise PayloadError(
            "content: the frontmatter holds a date or number that cannot be read (such as 2024-13-45, or thousands "
            "of digits); quote it to make it a string",
            field="content",
        ) from None
    if not isinstance(front, dict) or "description" not in front:
        raise PayloadError(f"content: the frontmatter has no description; {FRONTMATTER_RULE}", field="content")
    description = front["description"]
    if not isinstance(description, str):
        raise PayloadError(
            "content: the frontmatter's description must be a string (quote it if YAML reads it as something else)",
            field="content",
        )
    description = description.strip()
    if not description:
        raise PayloadError("content: the frontmatter's description must not be empty", field="content")
    if len(description) > DESCRIPTION_MAX:
        raise PayloadError(
            f"content: the frontmatter's description is {len(description):,} characters; at most {DESCRIPTION_MAX:,}",
            field="content",
        )
    return description


def check_query(q: str | None) -> str | None:
    if q is None:
        return None
    if len(q.strip()) < QUERY_MIN:
        raise PayloadError(f"q must be at least {QUERY_MIN} characters; leave it out to list every skill", field="q")
    return q.strip()


def matches(q: str | None, name: str, description: str) -> bool:
    """Case-insensitive: q is part of the name or of the description."""
    if q is None:
        return True
    needle = q.casefold()
    return needle in name.casefold() or needle in description.casefold()


def _shown(uri: str) -> str:
    return repr(echo(uri))
