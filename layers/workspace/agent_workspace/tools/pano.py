"""The `pano` tool: markdown docs every workspace of the account shares."""

from typing import Literal

from pydantic import Field

from agent_workspace.domain.models import Actor
from agent_workspace.domain.pano import COMMENT_MAX, FILES_MAX, MARKDOWN_MAX, TITLE_MAX, TTL_DAYS_DEFAULT, TTL_DAYS_MAX
from agent_workspace.domain.tasks import AttachmentIn
from agent_workspace.services import pano
from agent_workspace.tool_registry import Action, Call, Payload, Tool
from agent_workspace.tools.answers.pano import Doc, DocSummary

_ID = Field(description="The doc's id, as save returned it")
Color = Literal["yellow", "pink", "green", "blue", "orange", "purple", "amber"]


class SavePayload(Payload):
    id: str | None = Field(None, description="The doc to replace. Leave out to create a doc.")
    title: str = Field(description=f"The doc's title (at most {TITLE_MAX} characters)")
    markdown: str = Field(description=f"The whole doc, replacing what was there (at most {MARKDOWN_MAX // 1024} KiB)")
    color: Color | None = Field(
        None,
        description=(
            "yellow (the default), pink, green, blue, orange, purple or amber; a replace without it keeps the doc's"
        ),
    )
    ttlDays: int | None = Field(
        None, description=f"Days the doc lives after this save, 1-{TTL_DAYS_MAX}. Default is {TTL_DAYS_DEFAULT}."
    )
    files: list[AttachmentIn] = Field(
        default_factory=list,
        description=(
            "Linked files [{id, filename, mimeType, data}] with base64 data: each must be linked from the markdown by "
            "its filename, as [text](name) or ![alt](name). A linked file the markdown stops linking is dropped. "
            f"At most {FILES_MAX} files per doc."
        ),
    )


class ReadPayload(Payload):
    id: str = _ID
    includeComments: bool = Field(False, description="Add the doc's comments, oldest first.")
    includeAttachments: bool = Field(False, description="Add the files attached without a link.")


class CommentPayload(Payload):
    id: str = _ID
    comment: str = Field(description=f"The comment (at most {COMMENT_MAX} characters)")


class AttachPayload(Payload):
    id: str = _ID
    files: list[AttachmentIn] = Field(
        description="Files [{id, filename, mimeType, data}] with base64 data that the markdown need not link"
    )


class DeletePayload(Payload):
    id: str = _ID


def save(call: Call, payload: SavePayload) -> dict:
    doc = pano.save(
        call.runtime,
        Actor.of(call.principal),
        payload.id,
        payload.title,
        payload.markdown,
        payload.color,
        payload.ttlDays,
        list(payload.files),
    )
    return doc.summary()


def read(call: Call, payload: ReadPayload) -> dict:
    return pano.read(
        call.runtime, call.principal.account_id, payload.id, payload.includeComments, payload.includeAttachments
    )


def comment(call: Call, payload: CommentPayload) -> str:
    principal = call.principal
    added = pano.comment(call.runtime, principal.account_id, principal.workspace_id, payload.id, payload.comment)
    return f"comment added to doc {payload.id} with id={added.id}"


def attach(call: Call, payload: AttachPayload) -> dict:
    return pano.attach(call.runtime, Actor.of(call.principal), payload.id, list(payload.files)).summary()


def delete(call: Call, payload: DeletePayload) -> str:
    pano.delete(call.runtime, call.principal.account_id, payload.id)
    return f"doc {payload.id} deleted"


TOOL = Tool(
    name="pano",
    title="Pano docs",
    summary="Markdown docs every workspace of the account shares.",
    actions=(
        Action(
            name="save",
            summary=(
                "Create a doc (no id) or replace one's title and markdown completely. Returns the doc, with its id, "
                "without its markdown."
            ),
            payload=SavePayload,
            handler=save,
            result=DocSummary,
            example={"title": "Release plan", "markdown": "# Release plan\n\n- [ ] Tag v0.9.20", "color": "green"},
        ),
        Action(
            name="read",
            summary="Read a doc with its linked files; includeComments and includeAttachments add those.",
            payload=ReadPayload,
            handler=read,
            read_only=True,
            result=Doc,
            example={"id": "0kGpezGeuxt", "includeComments": True},
        ),
        Action(
            name="comment",
            summary="Add a comment to a doc.",
            payload=CommentPayload,
            handler=comment,
            example={"id": "0kGpezGeuxt", "comment": "Done on our side."},
        ),
        Action(
            name="attach",
            summary="Add files to a doc that its markdown need not link.",
            payload=AttachPayload,
            handler=attach,
            result=DocSummary,
            example={
                "id": "0kGpezGeuxt",
                "files": [{"id": "log", "filename": "deploy.log", "mimeType": "text/plain", "data": "b2s="}],
            },
        ),
        Action(
            name="delete",
            summary="Delete a doc, with its comments and files.",
            payload=DeletePayload,
            handler=delete,
            destructive=True,
            idempotent=True,
            example={"id": "0kGpezGeuxt"},
        ),
    ),
)
