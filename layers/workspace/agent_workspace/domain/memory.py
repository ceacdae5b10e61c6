"""Memories: markdown notes a workspace's agents share, one index (`MEMORY.md`) linking the rest."""

import re
from dataclasses import dataclass
from typing import Any

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.text import echo

INDEX = "MEMORY.md"
SCHEME = "memory://"  # the URI of a memory, as the memory tool names it in its answers and MCP resources serve it
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


def uri_of(name: str) -> str:
    return f"{SCHEME}{name}"


def name_of_uri(uri: str) -> str:
    """The memory `memory://<name>` names: MEMORY.md (the index) or a memory's name, else `PayloadError`."""
    name = uri.removeprefix(SCHEME)
    if name != INDEX and (len(name) > NAME_MAX or not _NAME.fullmatch(name)):
        raise PayloadError(
            f"uri {echo(uri)!r} names no memory: {uri_of(INDEX)} is the index, {uri_of('<name>')} a memory, "
            f"<name> being {NAME_RULE}",
            field="uri",
        )
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
