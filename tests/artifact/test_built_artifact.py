"""What `make build` produces would load on the declared Lambda runtime and architecture, and answer.

The ELF check reads the real built binaries; the load check runs the built handlers in a clean interpreter
of the runtime's Python version whose sys.path holds only the function, the layer and the standard library.
"""

import json
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

import botocore
import pytest
from artifact_check import artifact_problems, elf_files, elf_problems
from lambda_target import LambdaTarget

from agent_workspace.local.gate import CREDENTIALS
from agent_workspace.local.template import load_template
from agent_workspace.store.clients import AwsClients
from tests.support import FUNCTION_NAMES, ROOT, function_environment

FUNCTIONS = {"api": "ApiFunction", "schedule": "ScheduleFunction", "events": "EventsFunction", "push": "PushFunction"}
RUNNER = Path(__file__).with_name("invoke_built.py")
TOKEN_PLACEHOLDER = "REPLACE_WITH_TOKEN"
CPU_FLOOR_MB = 256  # the least any function gets: less memory is less CPU for a cold start someone waits on


def _event(name: str, token: str | None = None) -> dict[str, Any]:
    text = (ROOT / "events" / name).read_text()
    return json.loads(text.replace(TOKEN_PLACEHOLDER, token) if token else text)


def invoke_built(built, layer: Path, folder: str, runtime, events: list[dict]) -> tuple[list[dict], dict]:
    """Every event through the built handler of `folder`, in one warm process; (answers, interpreter facts)."""
    env = {
        **function_environment(folder, runtime),
        **CREDENTIALS,  # the session's moto answers only requests signed with this process's secret
        "POWERTOOLS_SERVICE_NAME": "agent-workspace", "POWERTOOLS_METRICS_NAMESPACE": "AgentWorkspace",
        "POWERTOOLS_TRACE_DISABLED": "true", "POWERTOOLS_METRICS_DISABLED": "true",
        "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8",
    }  # fmt: skip
    done = subprocess.run(
        [built.interpreter, "-I", "-S", str(RUNNER), str(built.function(FUNCTIONS[folder])), str(layer),
         FUNCTION_NAMES[folder]],
        input="".join(json.dumps(event) + "\n" for event in events),
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    *answers, facts = [json.loads(line) for line in done.stdout.splitlines()]
    for answer in answers:
        assert "error" not in answer, answer["error"]
    return [answer["response"] for answer in answers], facts


def test_the_built_template_runs_every_function_on_the_declared_runtime_and_architecture(built):
    template = load_template(built.root / "template.yaml")
    function = template["Globals"]["Function"]
    assert (function["Runtime"], function["Architectures"]) == (built.target.runtime, [built.target.architecture])
    assert tuple(map(int, built.target.python_version.split("."))) >= (3, 13)
    layer = template["Resources"]["WorkspaceLayer"]["Properties"]
    assert layer["CompatibleRuntimes"] == [built.target.runtime]
    assert layer["CompatibleArchitectures"] == [built.target.architecture]


def test_every_shared_object_in_the_artifact_loads_on_the_runtime(built):
    assert list(elf_files(built.layer)), "the layer should hold compiled extensions"
    assert artifact_problems(built.root, built.target) == []


def test_the_check_names_an_extension_built_for_another_architecture_or_python(built):
    other = "x86_64" if built.target.architecture == "arm64" else "arm64"
    target = LambdaTarget(built.target.runtime, other)
    (core,) = (built.layer / "pydantic_core").glob("_pydantic_core*.so")

    problems = elf_problems(core, target, set(), built.root)

    assert any(f"the runtime is {other}" in problem and "_pydantic_core" in problem for problem in problems)


def test_the_check_names_an_extension_needing_a_newer_glibc_than_amazon_linux_2(built):
    old = LambdaTarget("python3.11", built.target.architecture)
    (rust,) = (built.layer / "cryptography" / "hazmat" / "bindings").glob("_rust*.so")

    problems = elf_problems(rust, old, set(), built.root)

    assert any("needs GLIBC_2." in p and "Amazon Linux 2 under python3.11 has glibc 2.26" in p for p in problems)


def test_every_module_of_the_package_ships_its_pyc_for_the_runtime(built):
    pyc = list((built.layer / "agent_workspace").rglob(f"*.cpython-{built.target.python_version.replace('.', '')}.pyc"))
    sources = list((built.layer / "agent_workspace").rglob("*.py"))
    assert len(pyc) == len(sources) > 50


def _client_services() -> set[str]:
    """The services store/clients.py makes clients of, as the layer's Makefile reads them."""
    source = (ROOT / "layers" / "workspace" / "agent_workspace" / "store" / "clients.py").read_text()
    return set(re.findall(r'_client\("([a-z0-9-]+)"', source))


def test_the_layer_keeps_botocore_models_of_exactly_the_services_the_store_uses(built):
    data = built.layer / "botocore" / "data"
    kept = {path.name for path in data.iterdir() if path.is_dir()}

    # and xray: the X-Ray SDK's sampling client, which the Tracer makes when it starts
    assert kept == _client_services() | {"xray"} and {"dynamodb", "s3", "sqs", "scheduler", "xray"} <= kept
    assert {"endpoints.json", "partitions.json", "sdk-default-configuration.json", "_retry.json"} <= {
        path.name for path in data.iterdir()
    }
    endpoints = json.loads((data / "endpoints.json").read_text())
    aws = next(partition for partition in endpoints["partitions"] if partition["partition"] == "aws")
    # by endpoint prefix (sesv2 is email), each that botocore's own endpoints.json lists
    full = json.loads((Path(botocore.__file__).parent / "data" / "endpoints.json").read_text())
    listed = next(partition for partition in full["partitions"] if partition["partition"] == "aws")["services"]
    prefixes = {"dynamodb", "s3", "sqs", "scheduler", "email", "secretsmanager", "execute-api", "xray"}
    assert set(aws["services"]) == prefixes & set(listed) and {"dynamodb", "email", "xray"} <= set(aws["services"])
    assert len(endpoints["partitions"]) > 1 and all(partition["regions"] for partition in endpoints["partitions"])


_MAKE_CLIENTS = """
import json, sys
sys.path[:] = [sys.argv[1], *[p for p in sys.path if p.startswith(sys.base_prefix)]]
from agent_workspace.store.clients import AwsClients
clients = AwsClients("us-east-1")
made = {name: getattr(clients, name) for name in sys.argv[2:]}
made["connections"] = clients.connections("https://abc.execute-api.us-east-1.amazonaws.com/live")
print(json.dumps({name: [type(client).__name__, client.meta.endpoint_url] for name, client in made.items()}))
"""


def test_every_client_the_store_makes_is_made_from_the_built_layer(built, loadable_layer):
    names = ["dynamodb", "s3", "sqs", "scheduler", "sesv2", "secretsmanager"]
    assert set(names) | {"apigatewaymanagementapi"} == _client_services()
    env = {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [built.interpreter, "-I", "-S", "-c", _MAKE_CLIENTS, str(loadable_layer), *names],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-4000:]
    made = json.loads(done.stdout)
    assert made["dynamodb"][0] == "DynamoDB" and made["connections"][0] == "ApiGatewayManagementApi"
    assert set(made) == {*names, "connections"}
    # each at the endpoint botocore resolves with all its data (this process's, unslimmed)
    full = AwsClients("us-east-1")
    assert {name: url for name, (_, url) in made.items() if name != "connections"} == {
        name: getattr(full, name).meta.endpoint_url for name in names
    }
    assert made["dynamodb"][1] == "https://dynamodb.us-east-1.amazonaws.com"


@pytest.fixture
def loaded_api(built, loadable_layer, runtime, seeded):
    events = [
        _event("health.json"),
        _event("mcp_initialize.json", seeded.agent_token),
        _event("mcp_tools_list.json", seeded.agent_token),
        _event("mcp_tools_call_help.json", seeded.agent_token),
        _event("mcp_tools_call_modern.json", seeded.agent_token),
        _event("mcp_get.json", seeded.agent_token),
        _event("api_list_workspaces.json", seeded.human_token),
        _event("mcp_tools_call_help.json", "aw_agent_not-a-token"),
        _event("oauth_server_metadata.json"),
        _event("oauth_register.json"),
    ]
    return invoke_built(built, loadable_layer, "api", runtime, events)


def test_the_built_api_handler_answers_the_sample_events_warm(loaded_api, seeded):
    answers, _ = loaded_api
    statuses = [answer["statusCode"] for answer in answers]
    assert statuses == [200, 200, 200, 200, 200, 405, 200, 401, 200, 201]
    bodies = [json.loads(answer["body"]) if answer.get("body") else None for answer in answers]
    assert bodies[1]["result"]["serverInfo"]["name"] == "agent-workspace"
    assert {tool["name"] for tool in bodies[2]["result"]["tools"]} >= {"task", "memory", "help"}
    assert bodies[3]["result"]["isError"] is False
    modern = bodies[4]["result"]["content"][0]["text"]
    assert json.loads(modern)["id"] == seeded.workspace_id
    assert seeded.workspace_id in {workspace["id"] for workspace in bodies[6]}
    issuer = bodies[8]["issuer"]  # sign-in behind the Function URL: the issuer is the public URL
    assert issuer.startswith("https://") and bodies[8]["token_endpoint"] == f"{issuer}/token"
    assert bodies[9]["client_name"] == "Claude Code" and bodies[9]["client_id"]


def test_the_built_handlers_see_only_the_function_the_layer_and_the_standard_library(built, loadable_layer, loaded_api):
    _, facts = loaded_api
    function, layer = facts["sys_path"][:2]
    assert function == str(built.function("ApiFunction"))
    assert layer == str(loadable_layer)
    assert facts["sys_path"][2:] and all(entry.startswith(facts["base_prefix"]) for entry in facts["sys_path"][2:])
    assert not any("site-packages" in entry for entry in facts["sys_path"])
    for name in ("agent_workspace", "pydantic_core", "mcp", "boto3", "botocore", "fastapi"):
        assert facts["origins"][name].startswith(layer), (name, facts["origins"][name])
    assert facts["origins"]["app"].startswith(function)
    elsewhere = {name: origin for name, origin in facts["origins"].items() if not origin.startswith((function, layer))}
    assert elsewhere == {}


def test_the_built_api_handler_serves_without_the_local_servers_modules(built, loaded_api):
    """uvicorn (the MCP SDK's, for serving itself) is left out of the layer, and with it click: a Lambda never runs
    a server, and sse_starlette imports uvicorn only where it is installed."""
    _, facts = loaded_api
    assert not {"uvicorn", "click"} & set(facts["origins"])
    assert not list(built.layer.glob("uvicorn*"))


def test_the_built_schedule_and_events_handlers_answer_their_sample_events(built, loadable_layer, runtime, seeded):
    (fired,), _ = invoke_built(built, loadable_layer, "schedule", runtime, [_event("schedule_fired.json")])
    assert isinstance(fired, dict)

    answers, _ = invoke_built(
        built, loadable_layer, "events", runtime, [_event("sqs_event_published.json"), _event("sqs_event_push.json")]
    )
    assert answers == [{"batchItemFailures": []}] * 2


def _push_events() -> list[dict]:
    # A made-up ticket: the built handler refuses the socket (401) after one conditional delete finds nothing.
    connect = _event("push_connect.json")
    connect["queryStringParameters"]["ticket"] = "aw_ticket_not-minted"
    return [connect, _event("push_ping.json"), _event("push_disconnect.json")]


def test_the_built_push_handler_answers_the_websocket_routes(built, loadable_layer, runtime):
    answers, _ = invoke_built(built, loadable_layer, "push", runtime, _push_events())

    assert answers == [{"statusCode": 401}, {"statusCode": 200, "body": '{"type":"pong"}'}, {"statusCode": 200}]


def test_the_load_check_ran_the_real_binaries_where_the_host_can(built, loadable_layer):
    """On an arm64 host the load check imports the very layer that ships; elsewhere only its binaries differ."""
    assert (loadable_layer == built.layer) == (platform.machine() == built.target.machine)


def test_each_function_has_memory_for_its_measured_peak_and_not_many_times_more(
    built, loadable_layer, loaded_api, runtime
):
    """Lambda bills memory x time: room for the measured peak (plus the runtime's own, and a 6 MB body's
    copies for the API), but not the flat 1024 MB every function had. Memory also buys CPU (a sixth of a vCPU at
    256 MB): the workers' cold starts keep that much even where their peak is under a quarter of it."""
    _, api = loaded_api
    _, schedule = invoke_built(built, loadable_layer, "schedule", runtime, [_event("schedule_fired.json")])
    _, events = invoke_built(built, loadable_layer, "events", runtime, [_event("sqs_event_published.json")])
    _, push = invoke_built(built, loadable_layer, "push", runtime, _push_events())
    template = load_template(built.root / "template.yaml")
    measured = [
        ("ApiFunction", api),
        ("ScheduleFunction", schedule),
        ("EventsFunction", events),
        ("PushFunction", push),
    ]
    for logical_id, facts in measured:
        memory = template["Resources"][logical_id]["Properties"].get(
            "MemorySize", template["Globals"]["Function"].get("MemorySize", 128)
        )
        peak = facts["peak_rss_mb"]
        assert 1.5 * peak <= memory <= max(4 * peak, CPU_FLOOR_MB), (logical_id, memory, peak)
