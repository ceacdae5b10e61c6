"""Human REST API: the account's events, the workspaces subscribed to them, and what was published.

The wiring of workflows across workspaces: a workspace subscribed to an event gets a trigger task
each time an agent publishes it (`workspace publishEvent`, or completing a task with `eventId`).
"""

from typing import Annotated

from fastapi import APIRouter, Query, Response, status
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.api.deps import HumanDep, RuntimeDep
from agent_workspace.api.errors import problem_responses
from agent_workspace.domain.events import DESCRIPTION_MAX, NAME_MAX, SUBSCRIPTION_BODY_MAX, SUBSCRIPTION_TITLE_MAX
from agent_workspace.services import accounts, events

router = APIRouter(tags=["events"], responses=problem_responses(401, 403, 404, 422, 503))


class EventIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str = Field(
        description="Unique in the account: letters, digits and _ . : -, e.g. 'deploy_done'.",
        json_schema_extra={"maxLength": NAME_MAX},
    )
    description: str = Field("", description="What the event means.", json_schema_extra={"maxLength": DESCRIPTION_MAX})


class EventOut(BaseModel):
    id: str
    name: str
    description: str
    createdAt: str
    subscriptionCount: int


class SubscriptionIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    eventId: str = Field(description="The event that triggers a task here.")
    title: str = Field(
        description="Title of each trigger task.", json_schema_extra={"maxLength": SUBSCRIPTION_TITLE_MAX}
    )
    body: str = Field(
        description="What the agent should do; the published payload, FAQ and workflow run's taskId follow it.",
        json_schema_extra={"maxLength": SUBSCRIPTION_BODY_MAX},
    )


class SubscriptionOut(BaseModel):
    id: str
    eventId: str
    workspaceId: str
    title: str
    body: str
    createdAt: str


class FaqOut(BaseModel):
    q: str
    a: str


class PublicationOut(BaseModel):
    id: str
    name: str | None = Field(description="The event's name (resolved on delivery when published by a task's eventId).")
    eventId: str | None = Field(description="The event's id; null when no event of that name is defined.")
    workspaceId: str = Field(description="The publishing workspace.")
    taskId: str | None = Field(description="The workflow run it continues.")
    payload: str
    faq: list[FaqOut]
    publishedAt: str
    state: str = Field(description="'queued' until the fan-out has run, then 'delivered'.")
    triggeredTasks: int = Field(description="Trigger tasks created for it.")
    sourceTaskId: str | None = Field(None, description="The task whose completion published it.")


class PublicationPage(BaseModel):
    publications: list[PublicationOut] = Field(description="Newest first.")
    nextCursor: str | None


# -- events ----------------------------------------------------------------------------------------


@router.post(
    "/api/events", status_code=status.HTTP_201_CREATED, response_model=EventOut, responses=problem_responses(409)
)
def define_event(payload: EventIn, human: HumanDep, rt: RuntimeDep) -> dict:
    """Define an event for the whole account; its name must be unused (409 otherwise)."""
    return events.define_event(rt, human.account_id, payload.name, payload.description).public()


@router.get("/api/events", response_model=list[EventOut])
def list_events(human: HumanDep, rt: RuntimeDep) -> list[dict]:
    return [event.public() for event in rt.events.list_events(human.account_id)]


@router.get("/api/events/{event_id}", response_model=EventOut)
def get_event(event_id: str, human: HumanDep, rt: RuntimeDep) -> dict:
    return events.get_event(rt, human.account_id, event_id).public()


@router.delete("/api/events/{event_id}", status_code=status.HTTP_204_NO_CONTENT, responses=problem_responses(409))
def delete_event(event_id: str, human: HumanDep, rt: RuntimeDep) -> Response:
    """Delete an event nobody subscribes to; with subscriptions left it is a 409."""
    events.get_event(rt, human.account_id, event_id)
    rt.events.delete(human.account_id, event_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/api/published-events", response_model=PublicationPage)
def list_publications(
    human: HumanDep,
    rt: RuntimeDep,
    limit: Annotated[int, Query(ge=1, le=200, description="Items per page, 1-200.")] = 50,
    cursor: Annotated[str | None, Query(description="nextCursor of the previous page.")] = None,
) -> dict:
    """Events published in this account, kept for the configured retention (30 days by default)."""
    return events.list_publications(rt, human.account_id, limit, cursor)


# -- subscriptions ---------------------------------------------------------------------------------

_SUBSCRIPTIONS = "/api/workspaces/{workspace_id}/subscriptions"


@router.post(_SUBSCRIPTIONS, status_code=status.HTTP_201_CREATED, response_model=SubscriptionOut)
def subscribe(workspace_id: str, payload: SubscriptionIn, human: HumanDep, rt: RuntimeDep) -> dict:
    """Subscribe this workspace to an event of the account: each publication creates a trigger task here."""
    return events.subscribe(rt, human.account_id, workspace_id, payload.eventId, payload.title, payload.body).public()


@router.get(_SUBSCRIPTIONS, response_model=list[SubscriptionOut])
def list_subscriptions(workspace_id: str, human: HumanDep, rt: RuntimeDep) -> list[dict]:
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return [s.public() for s in rt.events.list_subscriptions(workspace_id)]


@router.get(_SUBSCRIPTIONS + "/{subscription_id}", response_model=SubscriptionOut)
def get_subscription(workspace_id: str, subscription_id: str, human: HumanDep, rt: RuntimeDep) -> dict:
    return events.get_subscription(rt, human.account_id, workspace_id, subscription_id).public()


@router.delete(_SUBSCRIPTIONS + "/{subscription_id}", status_code=status.HTTP_204_NO_CONTENT)
def unsubscribe(workspace_id: str, subscription_id: str, human: HumanDep, rt: RuntimeDep) -> Response:
    events.get_subscription(rt, human.account_id, workspace_id, subscription_id)
    rt.events.unsubscribe(human.account_id, workspace_id, subscription_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
