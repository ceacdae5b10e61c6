"""The layer's build step that cuts botocore's data down to the services the functions call (issue 37)."""

import gzip
import importlib.util
import json

import pytest

from tests.support import ROOT

_SPEC = importlib.util.spec_from_file_location("slim_botocore", ROOT / "layers" / "workspace" / "slim_botocore.py")
assert _SPEC is not None and _SPEC.loader is not None
slim_botocore = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(slim_botocore)


def _model(data, service: str, prefix: str, packed: bool = True, version: str = "2020-01-01") -> None:
    folder = data / service / version
    folder.mkdir(parents=True)
    text = json.dumps({"metadata": {"endpointPrefix": prefix}}).encode()
    if packed:
        (folder / "service-2.json.gz").write_bytes(gzip.compress(text))
    else:
        (folder / "service-2.json").write_bytes(text)


@pytest.fixture
def data(tmp_path):
    _model(tmp_path, "dynamodb", "dynamodb")
    _model(tmp_path, "sesv2", "email", packed=False)
    _model(tmp_path, "sesv2", "email-old", version="2010-01-01")  # an older model: botocore reads the newest
    _model(tmp_path, "ec2", "ec2")
    partition = {"partition": "aws", "regions": {"us-east-1": {}}, "defaults": {"hostname": "{service}.{region}"}}
    endpoints = {
        "version": 3,
        "partitions": [
            {**partition, "services": {"dynamodb": {"a": 1}, "email": {"b": 2}, "email-old": {}, "ec2": {"c": 3}}},
            {**partition, "partition": "aws-cn", "services": {"ec2": {}, "dynamodb": {"d": 4}}},
        ],
    }
    (tmp_path / "endpoints.json").write_text(json.dumps(endpoints))
    return tmp_path


def test_only_the_services_named_keep_their_models_and_their_endpoints(data):
    slim_botocore.slim(data, {"dynamodb", "sesv2"})

    assert sorted(path.name for path in data.iterdir() if path.is_dir()) == ["dynamodb", "sesv2"]
    endpoints = json.loads((data / "endpoints.json").read_text())
    assert [p["services"] for p in endpoints["partitions"]] == [
        {"dynamodb": {"a": 1}, "email": {"b": 2}},
        {"dynamodb": {"d": 4}},
    ]
    assert [p["regions"] for p in endpoints["partitions"]] == [{"us-east-1": {}}] * 2  # a partition's own data stays
    assert endpoints["version"] == 3


def test_a_service_without_a_model_stops_the_build_and_removes_nothing(data):
    with pytest.raises(SystemExit, match="botocore has no model of sqs"):
        slim_botocore.slim(data, {"dynamodb", "sqs"})

    assert (data / "ec2").is_dir()


def test_the_services_are_read_from_the_stores_client_calls(tmp_path):
    assert slim_botocore.clients_made(ROOT / "layers/workspace/agent_workspace/store/clients.py") >= {"dynamodb", "s3"}
    empty = tmp_path / "clients.py"
    empty.write_text("def nothing(): ...\n")
    with pytest.raises(SystemExit, match="makes no client"):
        slim_botocore.clients_made(empty)
