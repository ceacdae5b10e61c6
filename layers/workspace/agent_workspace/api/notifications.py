"""Human REST API: notification settings (the account's, a workspace's override), and the answer links a
notification carries, and the link that confirms the e-mail address.

An answer link is its own credential: a signed, expiring token for one answer to one question. Opening it
(GET) only shows what it would answer, since mail scanners and chat unfurlers open links; the page's button
(POST) answers, once: the question's own conditional write refuses a second answer.
"""

from html import escape
from typing import Annotated, Any

from fastapi import APIRouter, Path, Response, status
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.api.deps import HumanDep, RuntimeDep
from agent_workspace.api.errors import problem_responses
from agent_workspace.domain.errors import WorkspaceError
from agent_workspace.domain.notifications import LINK_MAX, TRIGGERS
from agent_workspace.services import accounts, answer_links, notification_settings, web_push

router = APIRouter(tags=["notifications"], responses=problem_responses(401, 403, 404, 409, 422, 503))

TokenPath = Annotated[str, Path(max_length=LINK_MAX)]


class QuietHoursIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    start: str = Field(description="HH:MM, in timeZone.")
    end: str = Field(description="HH:MM; before start crosses midnight.")
    timeZone: str = Field(description="An IANA zone, e.g. 'Europe/Istanbul'.")


class SettingsIn(BaseModel):
    """Only the fields sent change; null clears one."""

    model_config = ConfigDict(extra="forbid", strict=True)
    email: str | None = Field(
        None,
        description=(
            "Where e-mails go (SES); null: no e-mail. A new address gets one confirmation mail and nothing else "
            "until its link is used."
        ),
    )
    slackWebhookUrl: str | None = Field(
        None, description="A Slack incoming-webhook URL (https://hooks.slack.com/services/…); kept sealed, never shown."
    )
    triggers: list[str] | None = Field(None, description=f"What to hear about: {', '.join(TRIGGERS)}.")
    quietHours: QuietHoursIn | None = Field(None, description="Held during this daily window, sent when it ends.")


class SettingsOut(BaseModel):
    email: str | None
    emailConfirmed: bool = Field(
        description="The address's confirmation link was used; until then nothing but that one mail goes to it."
    )
    slack: bool = Field(description="A Slack webhook is set.")
    triggers: list[str]
    quietHours: dict[str, str] | None
    revision: int
    updatedAt: str | None


class WorkspaceSettingsIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    muted: bool = Field(False, description="Nothing from this workspace.")
    triggers: list[str] | None = Field(None, description="Only these, from this workspace; null: the account's.")


class WorkspaceSettingsOut(BaseModel):
    muted: bool
    triggers: list[str] | None


@router.get("/api/notifications", response_model=SettingsOut)
def get_settings(human: HumanDep, rt: RuntimeDep) -> dict:
    return notification_settings.settings_of(rt, human.account_id)


@router.patch("/api/notifications", response_model=SettingsOut, responses=problem_responses(429))
def change_settings(payload: SettingsIn, human: HumanDep, rt: RuntimeDep) -> dict:
    """Where and when the human hears that an agent waits for them."""
    return notification_settings.update(rt, human.account_id, _given(payload))


@router.get("/api/workspaces/{workspace_id}/notifications", response_model=WorkspaceSettingsOut)
def get_workspace_settings(workspace_id: str, human: HumanDep, rt: RuntimeDep) -> dict:
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return notification_settings.workspace_of(rt, human.account_id, workspace_id)


@router.put("/api/workspaces/{workspace_id}/notifications", response_model=WorkspaceSettingsOut)
def set_workspace_settings(workspace_id: str, payload: WorkspaceSettingsIn, human: HumanDep, rt: RuntimeDep) -> dict:
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return notification_settings.set_workspace(rt, human.account_id, workspace_id, payload.muted, payload.triggers)


class PushKeyOut(BaseModel):
    publicKey: str = Field(description="The stack's VAPID public key: PushManager.subscribe's applicationServerKey.")


class PushKeysIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    p256dh: str
    auth: str


class PushSubscriptionIn(BaseModel):
    """A browser's PushSubscription, as its toJSON() gives it."""

    model_config = ConfigDict(extra="forbid", strict=True)
    endpoint: str = Field(description="The browser's push service URL (FCM, Mozilla, WNS or Apple).")
    expirationTime: float | None = None
    keys: PushKeysIn


class PushSubscriptionOut(BaseModel):
    id: str
    createdAt: str


@router.get("/api/notifications/push-key", response_model=PushKeyOut)
def get_push_key(human: HumanDep, rt: RuntimeDep) -> dict:
    return {"publicKey": web_push.push_key(rt)}


@router.get("/api/notifications/push-subscriptions", response_model=list[PushSubscriptionOut])
def list_push_subscriptions(human: HumanDep, rt: RuntimeDep) -> list[dict]:
    return web_push.subscriptions_of(rt, human.account_id)


@router.post("/api/notifications/push-subscriptions", status_code=status.HTTP_201_CREATED,
             response_model=PushSubscriptionOut)  # fmt: skip
def add_push_subscription(payload: PushSubscriptionIn, human: HumanDep, rt: RuntimeDep) -> dict:
    """This browser gets Web Push notifications (the console subscribes it)."""
    keys = payload.keys
    return web_push.subscribe(rt, human.account_id, payload.endpoint, keys.p256dh, keys.auth)


@router.delete("/api/notifications/push-subscriptions/{subscription_id}", status_code=status.HTTP_204_NO_CONTENT)
def remove_push_subscription(subscription_id: str, human: HumanDep, rt: RuntimeDep) -> Response:
    web_push.unsubscribe(rt, human.account_id, subscription_id[:64])
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _given(payload: SettingsIn) -> dict[str, Any]:
    return payload.model_dump(exclude_unset=True)


# -- answer links ----------------------------------------------------------------------------------


@router.get("/answer/{token}", response_class=HTMLResponse, include_in_schema=False)
def show_answer_link(token: TokenPath, rt: RuntimeDep) -> HTMLResponse:
    try:
        found = answer_links.read_answer_link(rt, token)
    except WorkspaceError as error:
        return _page("This link cannot answer", error.message, status=error.http_status)
    if not found["waiting"]:
        return _page("Already answered", "This was answered, decided or has expired; nothing more to do.", 409)
    form = (
        f'<form method="post" action="/answer/{escape(token)}">'
        f'<button type="submit">{escape(_answer_label(found["claims"]))}</button></form>'
    )
    return _page("An agent waits for you", found["text"], 200, form)


@router.post("/answer/{token}", response_class=HTMLResponse, include_in_schema=False)
def use_answer_link(token: TokenPath, rt: RuntimeDep) -> HTMLResponse:
    try:
        claims = answer_links.use_answer_link(rt, token)
    except WorkspaceError as error:
        if error.http_status == 409:
            return _page("Already answered", "This was answered, decided or has expired; nothing more to do.", 409)
        return _page("This link cannot answer", error.message, status=error.http_status)
    return _page("Answered", f"{_answer_label(claims)}: the agent has your answer.", 200)


# -- confirming the e-mail address ------------------------------------------------------------------


@router.get("/confirm-email/{token}", response_class=HTMLResponse, include_in_schema=False)
def show_confirmation_link(token: TokenPath, rt: RuntimeDep) -> HTMLResponse:
    """Shows what the link confirms; only its button confirms (mail scanners open links)."""
    try:
        address = notification_settings.confirm_email(rt, token, use=False)
    except WorkspaceError as error:
        return _page("This link cannot confirm", error.message, status=error.http_status)
    form = f'<form method="post" action="/confirm-email/{escape(token)}"><button type="submit">Confirm</button></form>'
    return _page("Confirm your address", f"Send Agent Workspace notifications to {address}?", 200, form)


@router.post("/confirm-email/{token}", response_class=HTMLResponse, include_in_schema=False)
def use_confirmation_link(token: TokenPath, rt: RuntimeDep) -> HTMLResponse:
    try:
        address = notification_settings.confirm_email(rt, token, use=True)
    except WorkspaceError as error:
        return _page("This link cannot confirm", error.message, status=error.http_status)
    return _page("Confirmed", f"Notifications will be sent to {address}.", 200)


def _answer_label(claims: dict[str, Any]) -> str:
    return f"Answer “{claims.get('l', 'OK')}”"


def _page(title: str, text: str, status: int, form: str = "") -> HTMLResponse:
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{escape(title)} · Agent Workspace</title><link rel="stylesheet" href="/console/style.css"></head>'
        f'<body><main class="answer-link"><h1>{escape(title)}</h1><p>{escape(text)}</p>{form}</main></body></html>'
    )
    return HTMLResponse(
        body, status_code=status, headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
    )
