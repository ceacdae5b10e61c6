"""The clients as a deployed stack builds them (no endpoint override): what AWS itself would accept."""

import random
import sys
import types
from urllib.parse import parse_qs, urlsplit

import pytest

from agent_workspace import snapstart
from agent_workspace.config import Settings
from agent_workspace.runtime import Runtime
from agent_workspace.store.blobs import BlobStore
from agent_workspace.store.clients import AwsClients


@pytest.fixture
def aws_credentials(monkeypatch):
    """Presigning signs locally: any key will do, and no request is made."""
    for name, value in {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)


@pytest.mark.parametrize("region", ["us-east-1", "eu-central-1"])
def test_presigned_links_on_aws_are_sigv4_and_virtual_hosted(aws_credentials, region):
    blobs = BlobStore(AwsClients(region).s3, "acme-attachments")

    url = blobs.link("workspaces/w/tasks/t/a", "report final.pdf", 900)

    parts = urlsplit(url)
    query = parse_qs(parts.query)
    assert parts.scheme == "https"
    assert parts.hostname.startswith("acme-attachments.s3.") and parts.hostname.endswith(".amazonaws.com")
    assert parts.path == "/workspaces/w/tasks/t/a"
    assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]
    assert query["X-Amz-Credential"][0].split("/")[2:4] == [region, "s3"]
    assert query["X-Amz-Expires"] == ["900"]
    assert "AWSAccessKeyId" not in query and "Signature" not in query
    assert query["response-content-disposition"] == ["attachment; filename*=UTF-8''report%20final.pdf"]


def test_a_local_endpoint_keeps_path_style_with_sigv4(aws_credentials):
    url = BlobStore(AwsClients("us-east-1", "http://127.0.0.1:5000").s3, "bucket").link("k", "f", 60)

    assert url.startswith("http://127.0.0.1:5000/bucket/k?")
    assert parse_qs(urlsplit(url).query)["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]


def test_the_runtime_builds_the_dynamodb_client_at_init_and_the_others_on_first_use(aws_credentials):
    runtime = Runtime.from_settings(Settings(aws_region="us-east-1"))

    built = set(vars(runtime.clients))
    assert "dynamodb" in built
    assert not {"s3", "sqs", "scheduler"} & built


def test_after_a_snapstart_restore_each_instance_draws_its_own_random_numbers(monkeypatch):
    hooks = []
    fake = types.ModuleType("snapshot_restore_py")
    fake.register_after_restore = hooks.append
    fake.register_before_snapshot = lambda hook: None
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", fake)
    assert snapstart.register() is True
    (hook,) = hooks

    random.seed(7)  # the state every instance restored from one snapshot would share
    shared = random.random()
    random.seed(7)
    hook()

    assert random.random() != shared


def test_what_a_cold_start_defers_is_built_before_the_snapshot(monkeypatch):
    before, after = [], []
    fake = types.ModuleType("snapshot_restore_py")
    fake.register_before_snapshot = before.append
    fake.register_after_restore = after.append
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", fake)
    built = []

    assert snapstart.register(before_snapshot=(lambda: built.append("rest"),)) is True
    for hook in before:
        hook()

    assert built == ["rest"] and after == [snapstart.reseed_after_restore]


def test_without_the_snapstart_runtime_nothing_is_registered(monkeypatch):
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", None)  # import fails, as outside Lambda

    assert snapstart.register() is False
