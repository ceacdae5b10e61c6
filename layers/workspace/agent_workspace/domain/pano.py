"""The Pano: markdown docs shared by every workspace of an account, with linked and attached files.

A linked file must be linked from the markdown by its filename (`[text](name)` or `![alt](name)`);
one the markdown stops linking is dropped on the next save. An attached file needs no link.
"""

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.ids import is_id
from agent_workspace.domain.markdown_links import link_targets
from agent_workspace.domain.tasks import AttachmentRef
from agent_workspace.domain.text import check_plain, echo

COLORS = ("yellow", "pink", "green", "blue", "orange", "purple", "amber")
DEFAULT_COLOR = "yellow"  # a new doc's color; a replace that names none keeps the doc's
TITLE_MAX = 200
MARKDOWN_MAX = 64 * 1024
COMMENT_MAX = 4000
COMMENTS_MAX = 500
TTL_DAYS_DEFAULT = 30
TTL_DAYS_MAX = 365
FILES_MAX = 50  # linked and attached together, per doc
SCHEME = "pano://"  # a doc's markdown as an MCP resource: pano://<docId>


@dataclass(frozen=True)
class PanoFile:
    """A file of a doc: `linked` ones are referenced by the markdown, the others were attached."""

    ref: AttachmentRef
    linked: bool

    @property
    def name(self) -> str:
        return self.ref.filename


@dataclass(frozen=True)
class Comment:
    id: str
    text: str
    workspace_id: str | None  # None when the human wrote it
    created_at: str

    def public(self) -> dict[str, Any]:
        return {"id": self.id, "comment": self.text, "by": self.workspace_id or "human", "createdAt": self.created_at}


@dataclass(frozen=True)
class Doc:
    id: str
    title: str
    markdown: str
    color: str
    ttl_days: int
    author_workspace_id: str
    updated_by: str
    created_at: str
    updated_at: str
    expires_at: str
    revision: int = 1
    files: tuple[PanoFile, ...] = field(default_factory=tuple)
    comment_count: int = 0

    def summary(self) -> dict[str, Any]:
        """The doc without its markdown: what `save` returns and listings show."""
        return {
            "id": self.id,
            "title": self.title,
            "color": self.color,
            "ttlDays": self.ttl_days,
            "author": self.author_workspace_id,
            "updatedBy": self.updated_by,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "expiresAt": self.expires_at,
            "linkedFiles": [f.name for f in self.files if f.linked],
            "attachmentCount": sum(1 for f in self.files if not f.linked),
            "commentCount": self.comment_count,
        }


def uri_of(doc_id: str) -> str:
    return f"{SCHEME}{doc_id}"


def doc_id_of_uri(uri: str) -> str:
    """The doc `pano://<docId>` names, else `PayloadError`."""
    doc_id = uri.removeprefix(SCHEME)
    if not is_id(doc_id):
        raise PayloadError(
            f"uri {echo(uri)!r} names no pano doc: use {uri_of('<docId>')}, the id as pano save returned it "
            "(e.g. pano://0kGpezGeuxt)",
            field="uri",
        )
    return doc_id


def linked_names(markdown: str) -> set[str]:
    """Every link target of the markdown, as written and percent-decoded (`my%20plan.png` links `my plan.png`)."""
    targets = set(link_targets(markdown))
    return targets | {unquote(target) for target in targets}


def check_doc(title: str, markdown: str, color: str, ttl_days: int) -> None:
    if not title.strip():
        raise PayloadError("title must not be empty", field="title")
    if len(title) > TITLE_MAX:
        raise PayloadError(f"title is {len(title)} characters; at most {TITLE_MAX}", field="title")
    check_plain(title, "title")
    if len(markdown.encode()) > MARKDOWN_MAX:
        raise PayloadError(f"markdown is {len(markdown.encode()):,} bytes; at most {MARKDOWN_MAX:,}", field="markdown")
    if color not in COLORS:
        raise PayloadError(f"color must be one of {', '.join(COLORS)}; got {color!r}", field="color")
    if not 1 <= ttl_days <= TTL_DAYS_MAX:
        raise PayloadError(f"ttlDays must be 1-{TTL_DAYS_MAX}; got {ttl_days}", field="ttlDays")


def check_links(markdown: str, names: list[str]) -> None:
    """Every file sent with `save` must be linked by its filename; the first that is not is refused."""
    linked = linked_names(markdown)
    for index, name in enumerate(names):
        if name not in linked:
            raise PayloadError(
                f"files[{index}] {name!r} is not linked from the markdown; link it as [text]({name}) or "
                f"![alt]({name}), or use attach for files that need no link",
                field=f"files[{index}].filename",
            )
