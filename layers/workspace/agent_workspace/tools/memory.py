"""The `memory` tool: notes that outlive a task, shared by every agent of the workspace."""

from pydantic import Field

from agent_workspace.domain.memory import CONTENT_MAX_BYTES, INDEX, NAME_RULE, REVISIONS_KEPT
from agent_workspace.domain.models import Actor
from agent_workspace.services import memory
from agent_workspace.tool_registry import Action, Call, Payload, Tool
from agent_workspace.tools.answers.memory import MemoryAnswer

_NAME = Field(None, description=f"The memory: {NAME_RULE}. Leave out for {INDEX}, the index.")


class LoadPayload(Payload):
    name: str | None = _NAME
    revision: int | None = Field(
        None,
        ge=1,
        description=f"Read an earlier revision instead of the current one (the last {REVISIONS_KEPT} are kept).",
    )


class SavePayload(Payload):
    name: str | None = _NAME
    content: str = Field(
        description=f"The full new content (markdown), replacing the old; at most {CONTENT_MAX_BYTES:,} bytes (16 KiB)."
    )
    expectedRevision: int | None = Field(
        None,
        ge=0,
        description=(
            "The revision you loaded (0 for a new memory). If another agent saved since, the save is refused "
            "with the current revision and content so you can merge. Leave out to overwrite whatever is there."
        ),
    )


class DeletePayload(Payload):
    name: str | None = _NAME


def load(call: Call, payload: LoadPayload) -> dict | str:
    return memory.load(call.runtime, Actor.of(call.principal).workspace_id, payload.name, payload.revision)


def save(call: Call, payload: SavePayload) -> str:
    saved = memory.save(call.runtime, Actor.of(call.principal), payload.name, payload.content, payload.expectedRevision)
    return f"memory://{saved.name} saved (revision {saved.revision})"


def delete(call: Call, payload: DeletePayload) -> str:
    return memory.delete(call.runtime, Actor.of(call.principal).workspace_id, payload.name)


TOOL = Tool(
    name="memory",
    title="Memory",
    summary="Notes that outlive a task, shared by every agent here.",
    actions=(
        Action(
            name="load",
            summary=f"Read a memory; with no name, the {INDEX} index. Shows its revision.",
            payload=LoadPayload,
            handler=load,
            read_only=True,
            result=MemoryAnswer,
            text_too=True,
            example={"name": "deploys.md"},
        ),
        Action(
            name="save",
            summary="Write a memory, replacing it completely; expectedRevision refuses to overwrite another's save.",
            payload=SavePayload,
            handler=save,
            example={"name": "deploys.md", "content": "# How we ship\n\nTag main, then ...", "expectedRevision": 3},
        ),
        Action(
            name="delete",
            summary=f"Delete a memory; with no name, {INDEX} itself (not the memories it links).",
            payload=DeletePayload,
            handler=delete,
            destructive=True,
            idempotent=True,
            example={"name": "deploys.md"},
        ),
    ),
)
