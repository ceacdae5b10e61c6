"""Memories: markdown notes a workspace's agents share, one index (`MEMORY.md`) linking the rest."""

import re
from dataclasses import dataclass
from typing import Any

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.text import echo

INDEX = "MEMORY.md"
NAME_MAX = 32
CONTENT_MAX_BYTES = 16 * 1024
REVISIONS_KEPT = 20
_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*\.md")  # fullmatch only: `$` would also match before a final newline
NAME_RULE = (
    f"lowercase words joined by single hyphens and ending in .md, at most {NAME_MAX} characters "
    f"(e.g. release-notes.md), or {INDEX}"
)


@dataclass(frozen=True)
class Memory:
    name: str
    content: str
    revision: int
    updated_at: str
    updated_by: str | None = None

    def public(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "uri": f"memory://{self.name}",
            "revision": self.revision,
            "updatedAt": self.updated_at,
            "content": self.content,
        }


def check_name(name: str | None) -> str:
    """The memory's name; no name means the index."""
    if name is None or name == INDEX:
        return INDEX
    if len(name) > NAME_MAX or not _NAME.fullmatch(name):
        raise PayloadError(f"name {echo(name)!r} is not a memory name: use {NAME_RULE}", field="name")
    return name


def check_content(content: str) -> str:
    size = len(content.encode("utf-8"))
    if size > CONTENT_MAX_BYTES:
        raise PayloadError(
            f"content is {size:,} bytes; a memory holds at most {CONTENT_MAX_BYTES:,} (16 KiB): split it and link "
            f"the parts from {INDEX}",
            field="content",
        )
    return content
