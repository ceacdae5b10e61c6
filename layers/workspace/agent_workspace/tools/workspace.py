"""The `workspace` tool: this workspace, and publishing its events."""

from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.domain.events import ANSWER_MAX, FAQ_MAX, PAYLOAD_MAX, QUESTION_MAX
from agent_workspace.domain.models import Actor
from agent_workspace.services import events
from agent_workspace.services.accounts import workspace_of
from agent_workspace.tool_registry import Action, Call, NoPayload, Payload, Tool
from agent_workspace.tools.answers.workspace import WorkspaceAnswer


class FaqEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    q: str = Field(description=f"A question subscribers may have (at most {QUESTION_MAX} characters)")
    a: str = Field(description=f"Its answer (at most {ANSWER_MAX} characters)")


class PublishEventPayload(Payload):
    name: str = Field(description="The event's name, copied exactly from the task's publishEvent instruction")
    taskId: str | None = Field(
        None,
        description=(
            "The workflow run being continued, copied exactly from the instruction; leaving it out can strand the run"
        ),
    )
    payload: str = Field(
        description=f"What happened, in free text, for the subscribers (at most {PAYLOAD_MAX} characters)"
    )
    faq: list[FaqEntry] = Field(
        default_factory=list,
        description=f"Optional questions and answers for the subscribers: [{{q, a}}], at most {FAQ_MAX}",
    )


def get(call: Call, payload: NoPayload) -> dict:
    workspace = workspace_of(call.runtime.accounts, call.principal)
    return {
        "id": workspace.id,
        "title": workspace.title,
        "mission": workspace.mission,
        "taskCounts": workspace.task_counts,
    }


def publish_event(call: Call, payload: PublishEventPayload) -> str:
    new = events.NewPublication(
        name=payload.name,
        payload=payload.payload,
        task_id=payload.taskId,
        faq=tuple((entry.q, entry.a) for entry in payload.faq),
    )
    events.publish(call.runtime, Actor.of(call.principal), new)
    return f'event "{payload.name}" published'


TOOL = Tool(
    name="workspace",
    title="Workspace",
    summary="This workspace, and publishing its events.",
    actions=(
        Action(
            name="get",
            summary="Get this workspace's title, mission description and task counts by status.",
            payload=NoPayload,
            handler=get,
            read_only=True,
            result=WorkspaceAnswer,
        ),
        Action(
            name="publishEvent",
            summary=(
                "Publish a named event, so subscriber workspaces get their trigger tasks. Does not wait for them. "
                "When a task carries a publishEvent instruction, copy its name and taskId exactly."
            ),
            payload=PublishEventPayload,
            handler=publish_event,
            example={
                "name": "deploy_done",
                "taskId": "0kGogHmaqvZ",
                "payload": "v0.9.20 is live on production.",
                "faq": [{"q": "Which commit?", "a": "a0b8ab0"}],
            },
        ),
    ),
)
