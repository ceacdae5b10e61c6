"""What the `pano` tool answers."""

from agent_workspace.tool_registry import Answer


class DocSummary(Answer):
    """A doc without its markdown, as save and attach answer it."""

    id: str
    title: str
    color: str
    ttlDays: int
    author: str
    updatedBy: str
    createdAt: str
    updatedAt: str
    expiresAt: str
    linkedFiles: list[str]
    attachmentCount: int
    commentCount: int


class DocFile(Answer):
    """A file of a doc, with a link that expires."""

    name: str
    mimeType: str
    size: int
    url: str


class DocComment(Answer):
    """A comment on a doc; by is the workspace that wrote it, or human."""

    id: str
    comment: str
    by: str
    createdAt: str


class Doc(DocSummary):
    """A doc as read answers it: attachments and comments only when asked for."""

    markdown: str
    files: list[DocFile]
    attachments: list[DocFile] | None = None
    comments: list[DocComment] | None = None
