"""What a request needs from the process: settings and the repositories, built once per cold start."""

from dataclasses import dataclass
from functools import cached_property

from agent_workspace.config import Settings
from agent_workspace.store.accounts import AccountStore
from agent_workspace.store.clients import AwsClients


@dataclass
class Runtime:
    settings: Settings
    clients: AwsClients

    @classmethod
    def from_settings(cls, settings: Settings) -> "Runtime":
        return cls(settings=settings, clients=AwsClients(settings.aws_region, settings.aws_endpoint_url))

    @cached_property
    def accounts(self) -> AccountStore:
        return AccountStore(self.clients.dynamodb, self.settings.table_name)
