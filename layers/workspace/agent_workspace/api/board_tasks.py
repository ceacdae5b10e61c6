"""Human REST API: the board's side of a workspace's tasks (decision 0008), its cycles, and what needs the human.

The same use cases agents reach through the `task` tool's board actions (`services.task_board`), plus the
human's own: triage, review, unblocking, suggestions and cycles. AgentRQ's `/tasks` routes stay as they are.
"""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.api.deps import HumanDep, RuntimeDep, human_actor
from agent_workspace.api.errors import problem_responses
from agent_workspace.domain.board import GOAL_MAX
from agent_workspace.domain.tasks import TEXT_MAX
from agent_workspace.domain.text import BODY_MAX, TITLE_MAX
from agent_workspace.services import board, elicitations, site_tools, task_board
from agent_workspace.services.task_board import QUESTIONS_MAX, FieldsIn, Filters

router = APIRouter(
    prefix="/api/workspaces/{workspace_id}/board",
    tags=["board"],
    responses=problem_responses(401, 403, 404, 409, 422, 503),
)

NEEDS_YOU_EACH = 50  # items per kind in the "needs you" list (the console's inbox)


class BoardTaskIn(FieldsIn):
    title: str = Field(description="One line of plain text.", json_schema_extra={"maxLength": TITLE_MAX})
    description: str = Field("", description="Markdown.", json_schema_extra={"maxLength": BODY_MAX})
    column: Literal["triage", "backlog", "ready"] = Field("ready", description="Where the task starts.")


class BoardTaskEdit(FieldsIn):
    title: str | None = Field(None, json_schema_extra={"maxLength": TITLE_MAX})
    description: str | None = Field(None, json_schema_extra={"maxLength": BODY_MAX})
    column: Literal["triage", "backlog", "ready"] | None = Field(
        None, description="Move between the planning columns; work in flight moves by claim, complete and release."
    )


class DecisionIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    comment: str | None = Field(None, json_schema_extra={"maxLength": TEXT_MAX})


class TriageIn(DecisionIn):
    decision: Literal["backlog", "ready", "decline"] = Field(description="Accept into a column, or decline.")


class ReviewIn(DecisionIn):
    decision: Literal["approve", "send_back"] = Field(description="Approve (done), or send back to ready.")


class UnblockIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    answers: list[str] = Field(
        default_factory=list,
        description=(
            "One answer per question of the blocker, in the questions' order; an empty one (or one left off the "
            "end) leaves its question unanswered. Each is bounded as a comment is."
        ),
        json_schema_extra={"maxItems": QUESTIONS_MAX},
    )
    comment: str | None = Field(
        None,
        description="More for the agent, after the answers. At least one answer or a comment is needed.",
        json_schema_extra={"maxLength": TEXT_MAX},
    )


class ArchiveIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    reason: str = Field(json_schema_extra={"maxLength": 2000})


class LinkIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["blocks", "relates_to", "duplicate_of"] = Field(description="'this task <type> otherTaskId'.")
    otherTaskId: str


class CommentIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    text: str = Field(json_schema_extra={"maxLength": TEXT_MAX})


class CycleIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    title: str = Field(json_schema_extra={"maxLength": TITLE_MAX})
    goal: str = Field("", json_schema_extra={"maxLength": GOAL_MAX})
    endDate: str | None = Field(None, description="YYYY-MM-DD")
    active: bool = Field(False, description="Make it the active cycle (the one active before ends).")


class ActiveCycleIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    cycleId: str | None = Field(description="The cycle to make active; null: none is.")


Limit = Annotated[int, Query(ge=1, le=100, description="Tasks per page, 1-100; a page may hold fewer.")]


@router.get("/tasks")
def list_board_tasks(
    workspace_id: str,
    human: HumanDep,
    rt: RuntimeDep,
    query: str | None = None,
    status: str | None = Query(None, description="A status or a board column."),
    epicId: str | None = None,  # noqa: N803 (the wire's name)
    label: str | None = None,
    assignee: str | None = None,
    cycleId: str | None = Query(None, description="A cycle's id, or 'active'."),  # noqa: N803
    projectId: str | None = None,  # noqa: N803
    includeArchived: bool = False,  # noqa: N803
    cursor: str | None = None,
    limit: Limit = 50,
) -> dict[str, Any]:
    """The board's tasks with every filter; read on while nextCursor is set (each call reads a bounded slice)."""
    filters = Filters(query, status, epicId, label, assignee, False, cycleId, projectId, includeArchived)
    return task_board.list_tasks(rt, human_actor(rt, human, workspace_id), filters, limit, cursor)


@router.post("/tasks", status_code=201)
def create_board_task(workspace_id: str, payload: BoardTaskIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """A task with the board's fields, in the planning column asked for."""
    actor = human_actor(rt, human, workspace_id)
    fields = payload.fields()
    return task_board.create(rt, actor, payload.title, payload.description, fields, payload.column).public()


@router.get("/tasks/{task_id}")
def show_board_task(workspace_id: str, task_id: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """One task in full (id or WS-<n>): criteria, links, suggestions, activity and comments."""
    return task_board.show(rt, human_actor(rt, human, workspace_id), task_id)


@router.patch("/tasks/{task_id}")
def edit_board_task(
    workspace_id: str, task_id: str, payload: BoardTaskEdit, human: HumanDep, rt: RuntimeDep
) -> dict[str, Any]:
    """Edit fields (null clears one) and move between triage, backlog and ready."""
    actor = human_actor(rt, human, workspace_id)
    fields = payload.fields()
    return task_board.update(rt, actor, task_id, payload.title, payload.description, fields, payload.column).public()


@router.post("/tasks/{task_id}/triage")
def triage_task(workspace_id: str, task_id: str, payload: TriageIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Accept an agent's proposal into the backlog or ready, or decline it (rejected)."""
    actor = human_actor(rt, human, workspace_id)
    return task_board.triage(rt, actor, task_id, payload.decision, payload.comment).public()


@router.post("/tasks/{task_id}/review")
def review_task(workspace_id: str, task_id: str, payload: ReviewIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Approve a delivery in review (done; lists what it unblocked) or send it back to ready with a comment."""
    return task_board.review(rt, human_actor(rt, human, workspace_id), task_id, payload.decision, payload.comment)


@router.post("/tasks/{task_id}/unblock")
def unblock_task(
    workspace_id: str, task_id: str, payload: UnblockIn, human: HumanDep, rt: RuntimeDep
) -> dict[str, Any]:
    """Answer a blocker and end it in one write: a comment pairing each question with its answer, the task back in
    progress under the claim it had (the same agent continues), its questions cleared; 409 unless still blocked.
    Answers the task, with the comment posted."""
    actor = human_actor(rt, human, workspace_id)
    return task_board.unblock(rt, actor, task_id, payload.answers, payload.comment)


@router.post("/tasks/{task_id}/release")
def release_task(workspace_id: str, task_id: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Take a claim back from an agent: the task returns to ready."""
    return task_board.release(rt, human_actor(rt, human, workspace_id), task_id).public()


@router.post("/tasks/{task_id}/archive")
def archive_task(
    workspace_id: str, task_id: str, payload: ArchiveIn, human: HumanDep, rt: RuntimeDep
) -> dict[str, Any]:
    """Archive with a reason: out of lists and the queue; nothing is deleted."""
    return task_board.archive(rt, human_actor(rt, human, workspace_id), task_id, payload.reason).public()


@router.post("/tasks/{task_id}/links", status_code=201)
def link_tasks(workspace_id: str, task_id: str, payload: LinkIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Relate this task to another ('this blocks other': the other waits until this is done)."""
    actor = human_actor(rt, human, workspace_id)
    return task_board.link(rt, actor, task_id, payload.type, payload.otherTaskId)


@router.delete("/tasks/{task_id}/links/{link_type}/{other_task_id}")
def unlink_tasks(
    workspace_id: str,
    task_id: str,
    link_type: Literal["blocks", "relates_to", "duplicate_of"],
    other_task_id: str,
    human: HumanDep,
    rt: RuntimeDep,
) -> dict[str, Any]:
    """Undo 'this <type> other' on both tasks; `removed` false when there was no such link."""
    return task_board.unlink(rt, human_actor(rt, human, workspace_id), task_id, link_type, other_task_id)


@router.post("/tasks/{task_id}/comments", status_code=201)
def comment_task(
    workspace_id: str, task_id: str, payload: CommentIn, human: HumanDep, rt: RuntimeDep
) -> dict[str, Any]:
    """A comment on the board's side of the task (the conversation is `/tasks/{id}/messages`)."""
    return task_board.comment(rt, human_actor(rt, human, workspace_id), task_id, payload.text)


@router.post("/tasks/{task_id}/suggestions/{suggestion_id}/accept")
def accept_suggestion(
    workspace_id: str, task_id: str, suggestion_id: str, human: HumanDep, rt: RuntimeDep
) -> dict[str, Any]:
    """An agent's proposed summary and criteria become the task's."""
    actor = human_actor(rt, human, workspace_id)
    return task_board.decide_suggestion(rt, actor, task_id, suggestion_id, accept=True).public()


@router.delete("/tasks/{task_id}/suggestions/{suggestion_id}", status_code=204)
def discard_suggestion(
    workspace_id: str, task_id: str, suggestion_id: str, human: HumanDep, rt: RuntimeDep
) -> Response:
    """Discard an agent's proposal."""
    task_board.decide_suggestion(rt, human_actor(rt, human, workspace_id), task_id, suggestion_id, accept=False)
    return Response(status_code=204)


@router.get("/cycles")
def list_cycles(workspace_id: str, human: HumanDep, rt: RuntimeDep) -> list[dict[str, Any]]:
    """The workspace's cycles, oldest first, the active one marked."""
    return board.cycles(rt, human_actor(rt, human, workspace_id).workspace_id)


@router.post("/cycles", status_code=201)
def create_cycle(workspace_id: str, payload: CycleIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """A time-box; agents' claims join the active one, and the queue ranks its tasks first."""
    actor = human_actor(rt, human, workspace_id)
    return board.create_cycle(rt, actor, payload.title, payload.goal, payload.endDate, payload.active)


@router.put("/cycles/active")
def set_active_cycle(workspace_id: str, payload: ActiveCycleIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Make one cycle the active one, or none."""
    return board.activate_cycle(rt, human_actor(rt, human, workspace_id), payload.cycleId)


@router.get("/needs-you")
def needs_you(workspace_id: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """What waits on the human, most urgent first: agents' questions, blockers, site calls to approve, proposals
    to triage and deliveries to review (each kind its newest 50)."""
    actor = human_actor(rt, human, workspace_id)

    def column(name: str) -> list[dict[str, Any]]:
        return task_board.list_tasks(rt, actor, Filters(status=name), NEEDS_YOU_EACH, None)["tasks"]

    return {
        "questions": elicitations.open_questions(rt, workspace_id, "pending")[:NEEDS_YOU_EACH],
        "blockers": column("blocked"),
        "siteCalls": site_tools.calls_of(rt, workspace_id, "pending")[:NEEDS_YOU_EACH],
        "triage": column("triage"),
        "reviews": column("in_review"),
    }
