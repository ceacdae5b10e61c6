"""Shared fixtures: one moto server for the session, a fresh table and seeded workspace per test."""

import io
import logging
import os
from pathlib import Path

os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "1")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "agent-workspace")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "AgentWorkspace")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")  # no metric blobs in the test output
# Every tool answer in every test is checked against its tool's outputSchema (AnswerMismatch if it is not).
os.environ.setdefault("WORKSPACE_CHECK_ANSWERS", "1")

import pytest  # noqa: E402

from agent_workspace.local.stack import MotoServer, Seed, local_runtime, seed  # noqa: E402
from agent_workspace.observability import logger  # noqa: E402
from agent_workspace.runtime import Runtime  # noqa: E402
from agent_workspace.store.clients import AwsClients  # noqa: E402
from tests.support import Clock, LiveServer  # noqa: E402


@pytest.fixture(scope="session")
def moto_endpoint() -> str:
    server = MotoServer()
    yield server.endpoint_url
    server.stop()


@pytest.fixture(scope="session")
def aws_clients(moto_endpoint: str) -> AwsClients:
    """One set of clients for the session: loading botocore's service models is the slow part."""
    return AwsClients("us-east-1", moto_endpoint)


@pytest.fixture
def runtime(moto_endpoint: str, aws_clients: AwsClients) -> Runtime:
    return local_runtime(moto_endpoint, clients=aws_clients)


@pytest.fixture
def seeded(runtime: Runtime) -> Seed:
    return seed(runtime)


@pytest.fixture
def clock(runtime: Runtime) -> Clock:
    """The runtime's clock in the test's hands: real time until the test sets it or moves it on."""
    clock = Clock()
    runtime.clock = clock
    return clock


@pytest.fixture
def live(runtime: Runtime) -> LiveServer:
    """The app under uvicorn on a free loopback port."""
    with LiveServer(runtime) as server:
        yield server


@pytest.fixture
def pushing(runtime: Runtime) -> LiveServer:
    """The app as `make serve` runs it: the local WebSocket gateway in front, published pushes delivered."""
    with LiveServer(runtime, push=True) as server:
        yield server


@pytest.fixture
def logged():
    """What the service logger writes during the test, through its own JSON formatter."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    std_logger = logging.getLogger(logger.service)
    std_logger.addHandler(handler)
    yield stream
    std_logger.removeHandler(handler)


_SUITE_MARKS = {"e2e": "browser", "conformance": "node", "load": "load", "artifact": "artifact"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test of a slow suite by its folder, so `-m "not browser and not node"` leaves it out."""
    tests = Path(__file__).parent
    for item in items:
        suite = item.path.relative_to(tests).parts[0]
        if suite in _SUITE_MARKS:
            item.add_marker(_SUITE_MARKS[suite])
