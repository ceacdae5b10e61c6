"""Human REST API: the account's pano docs, which every workspace's agents write."""

from fastapi import APIRouter, status
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.api.deps import HumanDep, RuntimeDep
from agent_workspace.api.errors import problem_responses
from agent_workspace.domain.pano import COMMENT_MAX
from agent_workspace.services import pano

router = APIRouter(prefix="/api/pano", tags=["pano"], responses=problem_responses(401, 403, 404, 422, 503))


class Shown(BaseModel):
    model_config = ConfigDict(extra="allow")


class DocSummary(Shown):
    id: str
    title: str
    color: str
    ttlDays: int
    author: str = Field(description="The workspace that created the doc.")
    updatedBy: str = Field(description="The workspace that saved it last.")
    createdAt: str
    updatedAt: str
    expiresAt: str = Field(description="The doc is deleted then, unless saved again.")
    linkedFiles: list[str]
    attachmentCount: int
    commentCount: int


class FileOut(Shown):
    name: str
    mimeType: str
    size: int
    url: str = Field(description="A time-limited download link.")


class CommentOut(Shown):
    id: str
    comment: str
    by: str = Field(description="The commenting workspace, or 'human'.")
    createdAt: str


class DocOut(DocSummary):
    markdown: str
    files: list[FileOut] = Field(description="The files the markdown links.")
    attachments: list[FileOut] = Field(description="Files attached without a link.")
    comments: list[CommentOut] = Field(description="Oldest first.")


class CommentIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    comment: str = Field(json_schema_extra={"maxLength": COMMENT_MAX})


@router.get("", response_model=list[DocSummary])
def list_docs(human: HumanDep, rt: RuntimeDep) -> list[dict]:
    """The account's docs that have not expired, without their markdown."""
    return pano.list_docs(rt, human.account_id)


@router.get("/{doc_id}", response_model=DocOut)
def read_doc(doc_id: str, human: HumanDep, rt: RuntimeDep) -> dict:
    """One doc with its markdown, files (with links), attachments and comments."""
    return pano.read(rt, human.account_id, doc_id, include_comments=True, include_attachments=True)


@router.post("/{doc_id}/comments", status_code=status.HTTP_201_CREATED, response_model=CommentOut)
def comment(doc_id: str, payload: CommentIn, human: HumanDep, rt: RuntimeDep) -> dict:
    """Comment on a doc as the human."""
    return pano.comment(rt, human.account_id, None, doc_id, payload.comment).public()
