"""moto as a server on loopback, provisioned from template.yaml and seeded with one workspace.

A server rather than in-process mocks: presigned S3 links must work for real clients, and mock_aws
does not intercept every HTTP library. Data lives as long as the process.
"""

import logging
import os
import secrets
from dataclasses import dataclass

from agent_workspace.config import Settings
from agent_workspace.local.provision import provision
from agent_workspace.runtime import Runtime
from agent_workspace.services import accounts
from agent_workspace.store.clients import AwsClients

# moto accepts any credentials; set them so boto3 never looks for real ones.
_FAKE_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_SESSION_TOKEN": "local"}


@dataclass(frozen=True)
class Seed:
    account_id: str
    workspace_id: str
    agent_token: str
    human_token: str


class MotoServer:
    """A moto server on a free loopback port, for the life of this object."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per AWS call drowns the server's own log
        for name, value in _FAKE_CREDENTIALS.items():
            os.environ.setdefault(name, value)
        self._server = ThreadedMotoServer(ip_address=host, port=port, verbose=False)
        self._server.start()
        bound_host, bound_port = self._server.get_host_and_port()
        self.endpoint_url = f"http://{bound_host}:{bound_port}"

    def stop(self) -> None:
        self._server.stop()


def local_runtime(endpoint_url: str, clients: AwsClients | None = None, **overrides: object) -> Runtime:
    """A runtime on fresh resources at `endpoint_url`, named uniquely so several can share one moto."""
    suffix = secrets.token_hex(4)
    settings = Settings(
        aws_endpoint_url=endpoint_url,
        aws_region="us-east-1",
        table_name=f"agent-workspace-{suffix}",
        attachments_bucket=f"agent-workspace-attachments-{suffix}",
        **overrides,
    )
    clients = clients or AwsClients(settings.aws_region, endpoint_url)
    made = provision(clients, settings.table_name, settings.attachments_bucket)
    settings = settings.model_copy(update={"events_queue_url": made.queue_url})
    return Runtime(settings=settings, clients=clients)


def seed(runtime: Runtime, agent_token: str | None = None, human_token: str | None = None) -> Seed:
    account_id, human = accounts.create_account(runtime.accounts, "Local account", human_token)
    workspace, agent = accounts.create_workspace(
        runtime.accounts, account_id, "Local workspace", "Try the workspace out locally.", agent_token
    )
    return Seed(account_id, workspace.id, agent.token, human.token)
