"""moto as a server on loopback, provisioned from template.yaml and seeded with one workspace.

A server rather than in-process mocks: presigned S3 links must work for real clients, and mock_aws
does not intercept every HTTP library. Data lives as long as the process. Only this process's own
clients get through to it (`local.gate`): a web page that finds its port gets 403.
"""

import ipaddress
import logging
import os
import secrets
import threading
from dataclasses import dataclass
from typing import Any

from agent_workspace.config import Settings
from agent_workspace.local.gate import CREDENTIALS, Gate
from agent_workspace.local.provision import provision
from agent_workspace.runtime import Runtime
from agent_workspace.services import accounts
from agent_workspace.store.clients import AwsClients


@dataclass(frozen=True)
class Seed:
    account_id: str
    workspace_id: str
    agent_token: str
    human_token: str


class MotoServer:
    """A moto server on a free loopback port, for the life of this object.

    moto checks a write's condition and applies it in separate steps, so two threads could both pass
    the same condition. DynamoDB applies each write atomically; here one lock around every request
    gives the same guarantee, so the local stack and the tests see real concurrency semantics.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        from moto.core.model_instances import reset_model_data
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError(f"moto serves loopback only, not {host}: it holds every token of the local stack")
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per AWS call drowns the server's own log
        # This process's clients sign with its own secret (boto3 reads these first), never with real credentials.
        os.environ.update(CREDENTIALS)
        for name in ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"):
            os.environ.pop(name, None)
        moto_app = DomainDispatcherApplication(create_backend_app)
        lock = threading.Lock()

        def one_request_at_a_time(environ: dict, start_response: Any) -> list[bytes]:
            with lock:
                try:
                    return list(moto_app(environ, start_response))
                finally:
                    # moto keeps every model object it ever made for its dashboard, including the copy of
                    # the whole table each TransactWriteItems takes: memory grew by the table's size per
                    # transaction (a 32-agent soak run reached 24 GB). Drop those references.
                    reset_model_data()

        gate = Gate(one_request_at_a_time)
        self._server = make_server(host, port, gate, threaded=True, request_handler=MotoRequestHandler)
        bound_port = self._server.server_address[1]
        netloc = f"[{host}]:{bound_port}" if ":" in host else f"{host}:{bound_port}"
        gate.allow_hosts({netloc, f"localhost:{bound_port}"})
        self._thread = threading.Thread(target=self._server.serve_forever, name="moto-server", daemon=True)
        self._thread.start()
        self.endpoint_url = f"http://{netloc}"

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join(timeout=10)


def local_runtime(endpoint_url: str, clients: AwsClients | None = None, **overrides: object) -> Runtime:
    """A runtime on fresh resources at `endpoint_url`, named uniquely so several can share one moto."""
    suffix = secrets.token_hex(4)
    values: dict[str, Any] = {
        "aws_endpoint_url": endpoint_url,
        "AWS_REGION": "us-east-1",  # the field's alias: the only name the settings model accepts for it
        "table_name": f"agent-workspace-{suffix}",
        "attachments_bucket": f"agent-workspace-attachments-{suffix}",
        **overrides,
    }
    settings = Settings(**values)
    clients = clients or AwsClients(settings.aws_region, endpoint_url)
    made = provision(clients, settings.table_name, settings.attachments_bucket)
    settings = settings.model_copy(update=made.settings())
    return Runtime(settings=settings, clients=clients)


def seed(runtime: Runtime, agent_token: str | None = None, human_token: str | None = None) -> Seed:
    account_id, human = accounts.create_account(runtime.accounts, "Local account", human_token)
    workspace, agent = accounts.create_workspace(
        runtime.accounts, account_id, "Local workspace", "Try the workspace out locally.", agent_token
    )
    return Seed(account_id, workspace.id, agent.token, human.token)
