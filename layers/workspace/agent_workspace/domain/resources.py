"""MCP resources: what a listing says of one, the bounds on a URI and on what one read returns, and the cursor of
the one listing that walks every kind.

A workspace's resources are its skills' files (`skill://`), its memories (`memory://`), its account's pano docs
(`pano://`) and its tasks' attachments (`task://`, read through the template only: listing them would mean
reading every task). Each kind is read with the rules of the tool action that reads it, in its own service.
"""

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.paging import ANSWER_MAX
from agent_workspace.domain.tasks import MAX_ATTACHMENT_BYTES
from agent_workspace.domain.text import echo

# The longest URI a resource of ours has: a task:// attachment whose 128-character id is percent-encoded (up to 12
# characters for each of its characters: 1,536), after the task's reference.
URI_MAX = 1600
# The largest content one `resources/read` returns as a blob: the largest an attachment can be. Its base64
# (5,592,408 characters) fits one response (domain.paging.ANSWER_MAX) with room for the envelope.
BLOB_MAX = MAX_ATTACHMENT_BYTES
assert (BLOB_MAX + 2) // 3 * 4 + 64 * 1024 <= ANSWER_MAX
CURSOR_MAX = 4096  # far above any cursor the listing hands out
SECTIONS = ("skills", "memory", "pano")  # the order `resources/list` walks the kinds in


@dataclass(frozen=True)
class ResourceInfo:
    """One resource as `resources/list` shows it."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None

    def public(self) -> dict[str, Any]:
        """As the listing's JSON carries it (what a page's size is measured on)."""
        shown = {
            "uri": self.uri,
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "mimeType": self.mime_type,
            "size": self.size,
        }
        return {key: value for key, value in shown.items() if value is not None}


def check_uri(uri: str) -> str:
    """A URI short enough to be one of ours, else `PayloadError`."""
    if len(uri) > URI_MAX:
        raise PayloadError(f"uri is {len(uri):,} characters; no resource here has one over {URI_MAX:,}", field="uri")
    return uri


def unknown_scheme(uri: str) -> PayloadError:
    scheme, separator, _ = uri.partition("://")
    what = f"scheme {echo(scheme)!r}" if separator and scheme else "no scheme"
    return PayloadError(
        f"uri {echo(uri)!r} has {what}: this server's resources are skill://, memory://, pano:// and task:// "
        "(resources/templates/list shows their forms)",
        field="uri",
    )


def check_blob_size(what: str, size: int) -> None:
    if size > BLOB_MAX:
        raise PayloadError(
            f"{what} is {size:,} bytes; resources/read returns at most {BLOB_MAX:,} bytes (4 MiB) of content",
            field="uri",
        )


# -- the listing's cursor ---------------------------------------------------------------------------


def listing_cursor(section: str, inner: str | None) -> str:
    """Where `resources/list` resumes: a section (one kind) and that kind's own cursor (None: its start)."""
    raw = json.dumps([section, inner], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def read_listing_cursor(cursor: str | None) -> tuple[str, str | None]:
    """The section and inner cursor a `listing_cursor` holds (no cursor: the first section's start)."""
    if cursor is None:
        return SECTIONS[0], None
    try:
        if len(cursor) > CURSOR_MAX:
            raise ValueError
        decoded = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        section, inner = decoded
        if section not in SECTIONS or not (inner is None or isinstance(inner, str)):
            raise ValueError
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise PayloadError("cursor is not one this listing returned", field="cursor") from None
    return section, inner


def next_section(section: str) -> str | None:
    index = SECTIONS.index(section) + 1
    return SECTIONS[index] if index < len(SECTIONS) else None
