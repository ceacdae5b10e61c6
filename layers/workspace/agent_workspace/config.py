"""Settings, read once from the environment at start-up."""

import os
from functools import lru_cache
from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from agent_workspace.domain.paging import PAGE_BYTES
from agent_workspace.domain.site_tools import SITE_TIMEOUT_SECONDS

# The bridge protocol's longest `wait` (api/bridge.py refuses more): a browser need never hold a request longer.
BRIDGE_POLL_MAX_SECONDS = 25


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="WORKSPACE_", extra="ignore")

    table_name: str = Field("agent-workspace", description="DynamoDB table holding every item.")
    attachments_bucket: str = Field("agent-workspace-attachments", description="S3 bucket for attachment content.")
    events_queue_url: str = Field(
        "", description="SQS queue that fans out published events and carries notifications to send."
    )
    notification_secret_arn: str = Field(
        "",
        description=(
            "Secrets Manager secret the notification keys derive from (answer links, the sealed Slack URL); "
            "notifications are off while unset."
        ),
    )
    notification_sender: str = Field(
        "", description="SES identity notification e-mails are sent from (verified in SES); e-mail is off while unset."
    )
    schedule_group: str = Field("agent-workspace", description="EventBridge Scheduler group of the cron schedules.")
    schedule_target_arn: str = Field("", description="The function a cron schedule invokes when it fires.")
    scheduler_role_arn: str = Field("", description="The role EventBridge Scheduler assumes to invoke it.")
    schedule_dead_letter_arn: str = Field("", description="SQS queue for firings Scheduler could not deliver.")
    rate_limit_per_minute: int = Field(
        3000,
        gt=0,
        description=(
            "Requests one token may make per minute (MCP and REST alike); more are refused with 429 and Retry-After."
        ),
    )
    site_call_approval_seconds: int = Field(
        600, gt=0, description="How long a site-tool call waits for the human's decision before it expires."
    )
    site_timeout_seconds: int = Field(
        SITE_TIMEOUT_SECONDS,
        gt=0,
        le=SITE_TIMEOUT_SECONDS,
        description=(
            "How long the human's browser has to answer a site-tool call once it may run; the reference's 60 s, or "
            "shorter (a test, a deployment that wants calls to fail sooner)."
        ),
    )
    event_retention_days: int = Field(30, gt=0, description="Days a published event's record is kept (its TTL).")
    aws_region: str = Field(
        "us-east-1",
        validation_alias="AWS_REGION",
        description="Region of the table, bucket, queues and schedules; Lambda sets AWS_REGION itself.",
    )
    aws_endpoint_url: str | None = Field(
        None, description="Send every AWS call here (the local stack's moto server); unset on AWS."
    )
    public_url: str | None = Field(
        None,
        description=(
            "Base URL clients use, for the OAuth resource metadata and WWW-Authenticate; derived from the request "
            "(Host, X-Forwarded-Proto) if unset."
        ),
    )
    allowed_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Browser origins allowed to call the server besides its own; any other Origin gets 403.",
    )
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host headers accepted (empty: any, as behind a Function URL); others get 421.",
    )
    check_answers: bool = Field(
        False,
        description=(
            "Check every tool answer against its tool's outputSchema and fail the call loudly on a mismatch; "
            "the tests turn it on."
        ),
    )
    max_request_bytes: int = Field(
        6 * 1024 * 1024, description="Request bodies above this are refused with 413 before they are read."
    )
    page_bytes: int = Field(
        PAGE_BYTES,
        gt=0,
        le=PAGE_BYTES,
        description=(
            "A listing's page ends before its items take this many bytes (and `nextCursor` goes on), so no answer "
            "passes Lambda's 6 MB response limit; lower only."
        ),
    )
    claim_lease_seconds: int = Field(
        1800, gt=0, description="A dequeued task not set ongoing (or later) within this returns to the queue."
    )
    attachment_url_seconds: int = Field(900, gt=0, le=604800, description="Lifetime of presigned attachment links.")
    lambda_return_margin_seconds: float = Field(
        10,
        ge=0,
        description=(
            "A long wait (`task elicit`, `siteTools call`, a bridge poll) ends this long before the Lambda invocation "
            "would time out."
        ),
    )
    agent_wait_seconds: float = Field(
        45,
        gt=0,
        le=900,
        description=(
            "Longest one agent call waits for the human (`task elicit`, `siteTools call`) before answering `pending` "
            "(the question or call stays open and the agent calls again); under the 60 s request timeout of "
            "TypeScript-SDK clients."
        ),
    )
    bridge_poll_seconds: float = Field(
        BRIDGE_POLL_MAX_SECONDS,
        gt=0,
        le=BRIDGE_POLL_MAX_SECONDS,
        description="Longest one bridge long-poll (`GET /api/bridge/calls`) waits, whatever its `wait` asks.",
    )
    waits_per_token: int = Field(
        5,
        gt=0,
        description=(
            "Most waits one token may have in flight at once (a bridge long-poll, `task elicit`, a `siteTools call`), "
            "counted across Lambda instances; one more is refused with 429 / a tool error until one ends."
        ),
    )
    waits_per_account: int = Field(
        12,
        gt=0,
        description=(
            "Most waits one account's tokens may have in flight at once; held to half of `WORKSPACE_API_CONCURRENCY` "
            "at most, so one account's waits never take more than half the API's invocations."
        ),
    )
    api_concurrency: int | None = Field(
        None,
        gt=0,
        description="The API function's reserved concurrency (the template's `ApiReservedConcurrency`); unset: none.",
    )
    attachment_retention_days: int = Field(
        30, gt=0, description="Days attachments are kept (the bucket's lifecycle rule); older ones are expired."
    )
    push_url: str | None = Field(
        None,
        description=(
            "The WebSocket API's wss:// URL a client opens with a ticket (`POST /api/push/tickets`). Unset: push is "
            "off on this stack (a ticket is refused with 503, nothing is published) and clients long-poll."
        ),
    )
    push_callback_url: str | None = Field(
        None,
        description=(
            "Where the events function posts pushes: the WebSocket API's https:// connection URL (`@connections`). "
            "Unset: the push URL's own, over https."
        ),
    )

    @field_validator("api_concurrency", "push_url", "push_callback_url", mode="before")
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        """The template passes `ApiReservedConcurrency` as it is, and empty there means no cap."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("push_url")
    @classmethod
    def _a_websocket_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("wss://", "ws://")):
            raise ValueError("the push URL is a WebSocket URL: wss://… (ws:// on loopback)")
        return value.rstrip("/") if value else value

    @property
    def push_endpoint(self) -> str | None:
        """The `@connections` API's base URL: the callback URL, else the push URL's own host and stage over https."""
        if self.push_callback_url:
            return self.push_callback_url.rstrip("/")
        if self.push_url and self.push_url.startswith("wss://"):
            return "https://" + self.push_url.removeprefix("wss://")
        return None

    @property
    def account_waits_cap(self) -> int:
        """`waits_per_account`, held to half the reserved concurrency: one account's waits (each holds an invocation)
        leave at least half the API to every other account and to the account's own short requests."""
        if self.api_concurrency is None:
            return self.waits_per_account
        return min(self.waits_per_account, self.api_concurrency // 2)

    @field_validator("allowed_origins", "allowed_hosts", mode="before")
    @classmethod
    def _split_commas(cls, value: object) -> object:
        if isinstance(value, str):
            return [item.strip().rstrip("/") for item in value.split(",") if item.strip()]
        return value


# Set by the Lambda runtime, not by the operator: a Lambda process serves one request at a time.
RUNNING_IN_LAMBDA = bool(os.environ.get("AWS_LAMBDA_FUNCTION_NAME"))


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
