"""What a request needs from the process: settings and the repositories, built once per cold start."""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from agent_workspace.config import Settings
from agent_workspace.domain.errors import Unavailable
from agent_workspace.store.clients import AwsClients

if TYPE_CHECKING:  # each store is imported by the property that builds it: a function loads only what it uses
    from agent_workspace.store.accounts import AccountStore
    from agent_workspace.store.agent_briefs import AgentBriefStore
    from agent_workspace.store.agent_memory import AgentMemoryStore
    from agent_workspace.store.agents import AgentStore
    from agent_workspace.store.blobs import BlobStore
    from agent_workspace.store.board import BoardStore
    from agent_workspace.store.channel import ChannelStore
    from agent_workspace.store.elicitations import ElicitationStore
    from agent_workspace.store.events import EventStore
    from agent_workspace.store.memory import MemoryStore
    from agent_workspace.store.notifications import Mailer, NotificationStore, PushSubscriptions, StackSecret
    from agent_workspace.store.oauth import OAuthStore
    from agent_workspace.store.pano import PanoStore
    from agent_workspace.store.push import ConnectionPoster, PushStore
    from agent_workspace.store.queue import EventQueue
    from agent_workspace.store.schedules import ScheduleStore
    from agent_workspace.store.site_tools import SiteToolStore
    from agent_workspace.store.skills import SkillStore
    from agent_workspace.store.tasks import TaskStore
    from agent_workspace.store.waits import WaitStore


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Runtime:
    settings: Settings
    clients: AwsClients
    clock: Callable[[], datetime] = field(default=_utc_now)  # tests move time forward instead of sleeping
    # How OAuth client metadata documents are fetched: None is `services.client_metadata`'s bounded fetcher; the
    # tests, which cannot reach the internet, put the documents here.
    fetch_client_metadata: Callable[[str], dict[str, Any]] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> "Runtime":
        """At init: the DynamoDB client too, since every request's token lookup needs it."""
        runtime = cls(settings=settings, clients=AwsClients(settings.aws_region, settings.aws_endpoint_url))
        runtime.clients.dynamodb  # noqa: B018 - built now, outside the first request (and into a SnapStart snapshot)
        return runtime

    @cached_property
    def accounts(self) -> "AccountStore":
        from agent_workspace.store.accounts import AccountStore

        return AccountStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def tasks(self) -> "TaskStore":
        from agent_workspace.store.tasks import TaskStore

        return TaskStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def agents(self) -> "AgentStore":
        from agent_workspace.store.agents import AgentStore

        return AgentStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def agent_memory(self) -> "AgentMemoryStore":
        from agent_workspace.store.agent_memory import AgentMemoryStore

        return AgentMemoryStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def agent_briefs(self) -> "AgentBriefStore":
        from agent_workspace.store.agent_briefs import AgentBriefStore

        return AgentBriefStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def channel(self) -> "ChannelStore":
        from agent_workspace.store.channel import ChannelStore

        return ChannelStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def board(self) -> "BoardStore":
        from agent_workspace.store.board import BoardStore

        return BoardStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def blobs(self) -> "BlobStore":
        from agent_workspace.store.blobs import BlobStore

        return BlobStore(self.clients.s3, self.settings.attachments_bucket)

    @cached_property
    def elicitations(self) -> "ElicitationStore":
        from agent_workspace.store.elicitations import ElicitationStore

        return ElicitationStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def memory(self) -> "MemoryStore":
        from agent_workspace.store.memory import MemoryStore

        return MemoryStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def skills(self) -> "SkillStore":
        from agent_workspace.store.skills import SkillStore

        return SkillStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def events(self) -> "EventStore":
        from agent_workspace.store.events import EventStore

        return EventStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def queue(self) -> "EventQueue":
        from agent_workspace.store.queue import EventQueue

        return EventQueue(self.clients.sqs, self.settings.events_queue_url)

    @cached_property
    def schedules(self) -> "ScheduleStore":
        from agent_workspace.store.schedules import ScheduleStore, ScheduleTarget

        target = ScheduleTarget(
            self.settings.schedule_target_arn, self.settings.scheduler_role_arn, self.settings.schedule_dead_letter_arn
        )
        return ScheduleStore(self.clients.scheduler, self.settings.schedule_group, target)

    @cached_property
    def pano(self) -> "PanoStore":
        from agent_workspace.store.pano import PanoStore

        return PanoStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def site_tools(self) -> "SiteToolStore":
        from agent_workspace.store.site_tools import SiteToolStore

        return SiteToolStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def waits(self) -> "WaitStore":
        from agent_workspace.store.waits import WaitStore

        return WaitStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def notifications(self) -> "NotificationStore":
        from agent_workspace.store.notifications import NotificationStore

        return NotificationStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def notification_secret(self) -> "StackSecret":
        from agent_workspace.store.notifications import StackSecret

        return StackSecret(self.clients.secretsmanager, self.settings.notification_secret_arn)

    @cached_property
    def mailer(self) -> "Mailer":
        from agent_workspace.store.notifications import Mailer

        return Mailer(self.clients.sesv2, self.settings.notification_sender)

    @cached_property
    def push_subscriptions(self) -> "PushSubscriptions":
        from agent_workspace.store.notifications import PushSubscriptions

        return PushSubscriptions(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def push(self) -> "PushStore":
        from agent_workspace.store.push import PushStore

        return PushStore(self.clients.dynamodb, self.settings.table_name)

    @cached_property
    def push_poster(self) -> "ConnectionPoster":
        """Posts to the WebSocket API's connections (the events function); tests hand in their own."""
        from agent_workspace.store.push import ConnectionPoster

        endpoint = self.settings.push_endpoint
        if endpoint is None and self.settings.aws_endpoint_url is None:
            raise Unavailable("push is not configured: no WebSocket API to post to (WORKSPACE_PUSH_URL)")
        return ConnectionPoster(self.clients.connections(endpoint or ""))

    @cached_property
    def oauth(self) -> "OAuthStore":
        from agent_workspace.store.oauth import OAuthStore

        return OAuthStore(self.clients.dynamodb, self.settings.table_name)
