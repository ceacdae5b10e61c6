"""`make bench`: what the Lambda handler costs beyond the libraries it stands on.

(a) Cold import of functions/api/app.py against importing, alone, every third-party module that import
    pulls in (the list is read from sys.modules after importing the handler, not written by hand). Each
    sample is a fresh interpreter with a Lambda-like environment; medians, goal <= 1.15x. Measured twice:
    from source on this venv's Python, and as Lambda imports it, from what `make build` made (the built
    function and layer, their .pyc, on the runtime's Python version; built first when missing).
(b) Warm in-process latency of `tools/call help` through the deployed handler (Powertools decorators,
    Mangum, FastAPI, host guard, bearer auth on DynamoDB, dispatch) on moto's in-process mock, against
    a bare low-level MCP `Server` with one trivial tool behind the same FastAPI + per-request
    StreamableHTTPSessionManager + Mangum path without auth; medians, goal <= 1.3x.
(c) AWS requests per tools/call, through the same handler on moto: every request the handler's clients
    send (botocore `before-call`), by service and operation, the bearer-token lookup apart from the
    action's own. Goals for the action's own: create 1 write (+ 1 S3 PutObject per attachment), get by
    id <= 2 reads, dequeue <= 2 requests whatever the backlog (10 vs 10,000 queued tasks, seeded in
    bulk from the store's own items; seeding is not measured).
(d) DynamoDB reads per minute while `task elicit` waits for an answer (goal <= 60, one per second),
    on the real wait loop with time simulated.

A script, not a test: it prints figures and exits 0 whatever they are.
"""

from __future__ import annotations

import argparse
import base64
import copy
import importlib.util
import io
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HANDLER_FILE = ROOT / "functions" / "api" / "app.py"
EVENTS = ROOT / "events"
FIRST_PARTY = {"agent_workspace", "lambda_handler"}

IMPORT_GOAL = 1.15
LATENCY_GOAL = 1.30

# What the Lambda runtime and template.yaml put in the environment. LAMBDA_TASK_ROOT makes Powertools
# believe it runs on Lambda, so the Tracer is enabled and patches libraries at import, as it does there.
# Nothing here reaches the network: AWS clients are created on first use, and importing sends nothing.
_LAMBDA_ENV = {
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_LAMBDA_FUNCTION_NAME": "agent-workspace-ApiFunction-bench",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
    "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
    "AWS_LAMBDA_LOG_GROUP_NAME": "/aws/lambda/agent-workspace-ApiFunction-bench",
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_SESSION_TOKEN": "bench",
    "POWERTOOLS_SERVICE_NAME": "agent-workspace",
    "POWERTOOLS_METRICS_NAMESPACE": "AgentWorkspace",
    "POWERTOOLS_LOG_LEVEL": "INFO",
    "POWERTOOLS_LOGGER_LOG_EVENT": "false",
    "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false",
    "WORKSPACE_TABLE_NAME": "agent-workspace-bench",
    "WORKSPACE_ATTACHMENTS_BUCKET": "agent-workspace-attachments-bench",
    "WORKSPACE_EVENTS_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/agent-workspace-bench-events",
    "WORKSPACE_ALLOWED_ORIGINS": "",
}


@dataclass(frozen=True)
class ImportPath:
    """Where (a) imports the handler from: an interpreter, the handler's file, and what sys.path holds."""

    label: str
    executable: str
    handler_file: Path
    runtime: str
    only_paths: tuple[str, ...] = ()  # when set, sys.path is these and the standard library, as on Lambda

    @property
    def flags(self) -> list[str]:
        return ["-I", "-S"] if self.only_paths else []

    @property
    def preamble(self) -> str:
        if not self.only_paths:
            return ""
        return (
            "import sys\n"
            f"sys.path[:] = [*{list(self.only_paths)!r}, *(p for p in sys.path if p.startswith(sys.base_prefix))]\n"
        )


SOURCE = ImportPath("source", sys.executable, HANDLER_FILE, f"python{sys.version_info.major}.{sys.version_info.minor}")


def built_import_path() -> ImportPath:
    """The artifact `make build` made, loaded the way Lambda loads it (building it first if it is missing)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from artifact_check import BUILD_DIR, loadable_layer
    from lambda_target import find_interpreter, lambda_target

    if not (BUILD_DIR / "template.yaml").exists():
        subprocess.run(["make", "build"], cwd=ROOT, check=True)
    target = lambda_target()
    interpreter = find_interpreter(target.python_version)
    if interpreter is None:
        raise SystemExit(f"python{target.python_version} is needed on this host to import the built artifact")
    function = BUILD_DIR / "ApiFunction"
    layer = loadable_layer(BUILD_DIR / "WorkspaceLayer" / "python", target, interpreter, BUILD_DIR.parent / "bench")
    return ImportPath("built", interpreter, function / "app.py", target.runtime, (str(function), str(layer)))


def lambda_env(tracing: bool, path: ImportPath = SOURCE) -> dict[str, str]:
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG", "TMPDIR") if key in os.environ}
    env.update(_LAMBDA_ENV)
    env["AWS_EXECUTION_ENV"] = f"AWS_Lambda_{path.runtime}"
    env["LAMBDA_TASK_ROOT"] = str(path.handler_file.parent)
    if not tracing:
        env["POWERTOOLS_TRACE_DISABLED"] = "true"
    return env


# -- (a) cold import --------------------------------------------------------------------------

_LOAD_HANDLER = """
import importlib.util, sys
_spec = importlib.util.spec_from_file_location("lambda_handler", {handler_file!r})
_module = importlib.util.module_from_spec(_spec)
sys.modules["lambda_handler"] = _module
_spec.loader.exec_module(_module)
"""

_TIMED = """
import time as _time
_t0, _c0 = _time.perf_counter(), _time.process_time()
{body}
print("ELAPSED", _time.perf_counter() - _t0, _time.process_time() - _c0)
"""

_LIST_THIRD_PARTY = """
import json, sys
_mods = []
for _name, _mod in list(sys.modules.items()):
    _top = _name.partition(".")[0]
    if _mod is None or _top in sys.stdlib_module_names or _top in {first_party!r} or _top == "__main__":
        continue
    _mods.append(_name)
print("MODULES", json.dumps(_mods))
"""

_IMPORT_ALL = """
import importlib, json
_failed = []
for _name in json.loads({modules!r}):
    try:
        importlib.import_module(_name)
    except Exception:
        _failed.append(_name)
"""


def run_python(code: str, env: dict[str, str], *flags: str, path: ImportPath) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [path.executable, *path.flags, *flags, "-c", path.preamble + code],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"child interpreter failed:\n{done.stderr}")
    return done


def tagged(output: str, tag: str) -> str:
    for line in output.splitlines():
        if line.startswith(tag + " "):
            return line[len(tag) + 1 :]
    raise RuntimeError(f"no {tag} line in child output:\n{output}")


def load_handler(path: ImportPath) -> str:
    return _LOAD_HANDLER.format(handler_file=str(path.handler_file))


def third_party_modules(env: dict[str, str], path: ImportPath) -> list[str]:
    code = load_handler(path) + _LIST_THIRD_PARTY.format(first_party=FIRST_PARTY)
    return json.loads(tagged(run_python(code, env, path=path).stdout, "MODULES"))


def timed_import(code: str, env: dict[str, str], path: ImportPath) -> tuple[float, float]:
    """(wall, CPU) seconds the child spent on `code`."""
    wall, cpu = tagged(run_python(_TIMED.format(body=code), env, path=path).stdout, "ELAPSED").split()
    return float(wall), float(cpu)


def split_import(deps_code: str, env: dict[str, str], path: ImportPath) -> tuple[float, float]:
    """CPU seconds for the deps, then for the handler on top of them, in one interpreter."""
    code = _TIMED.format(body=deps_code) + _TIMED.format(body=load_handler(path))
    output = run_python(code, env, path=path).stdout
    deps, handler = (float(line.split()[2]) for line in output.splitlines() if line.startswith("ELAPSED "))
    return deps, handler


def import_breakdown(env: dict[str, str], path: ImportPath) -> tuple[dict[str, float], Counter[str]]:
    """Self time (s) per origin and per top-level package, from one `-X importtime` run of the handler import."""
    stderr = run_python(load_handler(path), env, "-X", "importtime", path=path).stderr
    totals: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
        top = name.partition(".")[0]
        origin = "first-party" if top in FIRST_PARTY else "stdlib" if top in sys.stdlib_module_names else "third-party"
        totals[origin] += int(self_us) / 1e6
        packages[top] += int(self_us) / 1e6
    return dict(totals), packages


@dataclass
class ImportFigures:
    label: str
    handler: float  # CPU seconds: what a busy machine disturbs least
    deps: float
    handler_wall: float
    deps_wall: float
    on_top: float  # CPU seconds the handler adds when its deps are already imported (same interpreter)
    on_top_ratio: float  # median over interpreters of (deps + on_top) / deps
    packages: list[str]
    module_count: int
    breakdown: dict[str, float]
    heaviest: Counter[str]

    @property
    def ratio(self) -> float:
        return self.handler / self.deps

    @property
    def wall_ratio(self) -> float:
        return self.handler_wall / self.deps_wall


def measure_imports(runs: int, tracing: bool, path: ImportPath = SOURCE) -> ImportFigures:
    env = lambda_env(tracing, path)
    modules = third_party_modules(env, path)
    deps_code = _IMPORT_ALL.format(modules=json.dumps(modules))
    handler_samples, deps_samples, splits = [], [], []
    handler = load_handler(path)
    timed_import(handler, env, path)  # first run pays for cold .pyc and page cache; not counted
    timed_import(deps_code, env, path)
    for _ in range(runs):  # interleaved, so drift on the machine hits both sides alike
        handler_samples.append(timed_import(handler, env, path))
        deps_samples.append(timed_import(deps_code, env, path))
        splits.append(split_import(deps_code, env, path))
    packages = sorted({name.partition(".")[0] for name in modules if not name.startswith("_")})
    breakdown, heaviest = import_breakdown(env, path)
    return ImportFigures(
        label=f"{path.label} {path.runtime}, " + ("tracing on (as on Lambda)" if tracing else "tracing off"),
        handler=statistics.median(cpu for _, cpu in handler_samples),
        deps=statistics.median(cpu for _, cpu in deps_samples),
        handler_wall=statistics.median(wall for wall, _ in handler_samples),
        deps_wall=statistics.median(wall for wall, _ in deps_samples),
        on_top=statistics.median(extra for _, extra in splits),
        on_top_ratio=statistics.median((deps + extra) / deps for deps, extra in splits),
        packages=packages,
        module_count=len(modules),
        breakdown=breakdown,
        heaviest=heaviest,
    )


# -- (b) warm latency -------------------------------------------------------------------------


@dataclass
class LambdaContext:
    aws_request_id: str = "5e1f6173-a02c-4d34-8f65-607182930415"
    function_name: str = "agent-workspace-ApiFunction-bench"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:agent-workspace-ApiFunction-bench"


def help_event(token: str | None, tool: str = "help") -> dict[str, Any]:
    event = json.loads((EVENTS / "mcp_tools_call_help.json").read_text())
    if token is None:
        event["headers"].pop("authorization")
    else:
        event["headers"]["authorization"] = f"Bearer {token}"
    body = json.loads(event["body"])
    body["params"]["name"] = tool
    event["body"] = json.dumps(body)
    return event


def bare_handler() -> Any:
    """The SDK's own minimum on the same path: FastAPI, a per-request stateless manager, Mangum."""
    import mcp_types as types
    from fastapi import FastAPI
    from mangum import Mangum
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.routing import Route

    tool = types.Tool(name="ping", description="Answers pong.", input_schema={"type": "object", "properties": {}})

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text="pong")])

    server = Server("bare", version="0", on_list_tools=list_tools, on_call_tool=call_tool)
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)

    class Endpoint:  # an ASGI callable, not a function: Starlette would wrap a function as GET-only
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            manager = StreamableHTTPSessionManager(
                server, json_response=True, stateless=True, security_settings=security
            )
            async with manager.run():
                await manager.handle_request(scope, receive, send)

    app = FastAPI()
    app.router.routes.append(Route("/mcp", Endpoint(), methods=None))
    asgi = Mangum(app, lifespan="off")
    return lambda event, context: asgi(event, context)


def check_reply(response: dict[str, Any], expected_text: str | None = None) -> None:
    if response["statusCode"] != 200:
        raise RuntimeError(f"call failed: {response}")
    result = json.loads(response["body"])["result"]
    text = "".join(block["text"] for block in result["content"])
    if result.get("isError") or (expected_text is not None and text != expected_text):
        raise RuntimeError(f"unexpected answer: {result}")


@dataclass
class LatencyFigures:
    handler: float
    bare: float
    handler_without_ddb: float
    ddb_calls: Counter[str]
    calls_measured: int

    @property
    def ratio(self) -> float:
        return self.handler / self.bare


@dataclass
class HandlerStack:
    module: Any  # functions/api/app.py, loaded as on Lambda
    runtime: Any  # the handler's own Runtime: its clients are the ones to watch
    seeded: Any  # the seeded account, workspace and tokens


@contextmanager
def handler_on_moto() -> Iterator[HandlerStack]:
    """The deployed handler, loaded fresh inside moto's in-process mock, with one seeded workspace."""
    for name, value in _LAMBDA_ENV.items():
        os.environ[name] = value
    os.environ["POWERTOOLS_TRACE_DISABLED"] = "true"  # no X-Ray daemon here: nothing may try to reach one
    os.environ.pop("LAMBDA_TASK_ROOT", None)
    os.environ.pop("WORKSPACE_AWS_ENDPOINT_URL", None)

    from moto import mock_aws

    with mock_aws():
        from agent_workspace.config import get_settings
        from agent_workspace.local.provision import provision
        from agent_workspace.local.stack import seed
        from agent_workspace.runtime import Runtime
        from agent_workspace.store.clients import AwsClients

        get_settings.cache_clear()
        settings = get_settings()
        made = provision(AwsClients(settings.aws_region, None), settings.table_name, settings.attachments_bucket)
        for name, value in made.settings().items():  # the queue and the schedule group it made
            os.environ[f"WORKSPACE_{name.upper()}"] = value
        get_settings.cache_clear()
        with redirect_stdout(io.StringIO()):  # the seed's business metrics
            seeded = seed(Runtime.from_settings(get_settings()))

        spec = importlib.util.spec_from_file_location("lambda_handler", HANDLER_FILE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        with redirect_stdout(io.StringIO()):  # the cold-start metric is printed once
            spec.loader.exec_module(module)
        try:
            yield HandlerStack(module=module, runtime=module._asgi.app.state.runtime, seeded=seeded)
        finally:
            get_settings.cache_clear()


def measure_latency(calls: int, warmup: int) -> LatencyFigures:
    with handler_on_moto() as stack:
        from agent_workspace.domain.tokens import hash_token
        from agent_workspace.mcp_server import help_text
        from agent_workspace.tools import REGISTRY

        module, runtime, seeded = stack.module, stack.runtime, stack.seeded
        ddb_calls: Counter[str] = Counter()
        runtime.clients.dynamodb.meta.events.register(
            "before-call.dynamodb", lambda model, **_: ddb_calls.update([model.name])
        )

        overview = help_text.overview(REGISTRY)
        ours, ours_event = module.handler, help_event(seeded.agent_token)
        bare, bare_event = bare_handler(), help_event(None, tool="ping")
        context = LambdaContext()
        with redirect_stdout(io.StringIO()):
            for _ in range(warmup):
                check_reply(ours(copy.deepcopy(ours_event), context), overview)
                check_reply(bare(copy.deepcopy(bare_event), context), "pong")
        ddb_calls.clear()

        store = runtime.accounts
        principal = store.resolve_token(hash_token(seeded.agent_token))
        ddb_calls.clear()
        sink = io.StringIO()

        def timed(handler: Any, event: dict[str, Any], expected: str) -> float:
            event = copy.deepcopy(event)  # outside the timed region
            with redirect_stdout(sink):
                start = time.perf_counter()
                response = handler(event, context)
                elapsed = time.perf_counter() - start
            check_reply(response, expected)
            return elapsed

        samples: dict[str, list[float]] = {"ours": [], "bare": []}
        for _ in range(calls):  # interleaved, so drift on the machine hits both sides alike
            samples["ours"].append(timed(ours, ours_event, overview))
            samples["bare"].append(timed(bare, bare_event, "pong"))
        observed = Counter(ddb_calls)

        # The same handler with the token lookup answered from memory: everything but the DynamoDB call.
        samples["no_ddb"] = []
        store.admit = lambda token_hash, window, limit: principal
        try:
            for _ in range(warmup):
                timed(ours, ours_event, overview)
            for _ in range(calls):
                samples["no_ddb"].append(timed(ours, ours_event, overview))
        finally:
            del store.admit

    return LatencyFigures(
        handler=statistics.median(samples["ours"]),
        bare=statistics.median(samples["bare"]),
        handler_without_ddb=statistics.median(samples["no_ddb"]),
        ddb_calls=observed,
        calls_measured=calls,
    )


# -- (c) AWS requests per action ----------------------------------------------------------------

DDB_READS = {"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"}
DDB_WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}
_ATTACHMENT_DATA = base64.b64encode(b"bench attachment\n" * 8).decode("ascii")


class RequestLog:
    """The AWS requests the handler's clients send while `active`, as "<service> <operation>".

    One entry per API call (`before-call`; moto never asks for a retry, so that is one request each),
    kept apart for the bearer-token lookup ('auth') and everything else the call does ('action').
    """

    def __init__(self) -> None:
        self.active = False
        self.phase = "action"
        self.auth: Counter[str] = Counter()
        self.action: Counter[str] = Counter()
        self.transact_items: list[int] = []  # items of each TransactWriteItems the action sends
        self.query_counts: list[int] = []  # items each DynamoDB Query of the action returns
        self.aws_seconds = 0.0  # before-call to after-call: moto's work and botocore's, not the handler's
        self._started: float | None = None

    def watch(self, client: Any) -> None:
        events = client.meta.events
        events.register("before-call", self._before_call)
        events.register("after-call", self._after_call)
        events.register("before-parameter-build.dynamodb.TransactWriteItems", self._transact)

    def reset(self) -> None:
        self.auth, self.action = Counter(), Counter()
        self.transact_items, self.query_counts = [], []
        self.aws_seconds = 0.0

    def _before_call(self, model: Any, **_: Any) -> None:
        if self.active:
            (self.auth if self.phase == "auth" else self.action)[f"{model.service_model.service_id} {model.name}"] += 1
            self._started = time.perf_counter()

    def _after_call(self, model: Any, parsed: dict[str, Any], **_: Any) -> None:
        if not self.active or self._started is None:
            return
        self.aws_seconds += time.perf_counter() - self._started
        self._started = None
        if self.phase == "action" and model.service_model.service_name == "dynamodb" and model.name == "Query":
            self.query_counts.append(int(parsed.get("Count", 0)))

    def _transact(self, params: dict[str, Any], **_: Any) -> None:
        if self.active and self.phase == "action":
            self.transact_items.append(len(params.get("TransactItems", [])))


@dataclass
class CallRecord:
    auth: Counter[str]
    action: Counter[str]
    transact_items: list[int]
    query_counts: list[int]
    seconds: float
    aws_seconds: float
    text: str

    @property
    def requests(self) -> int:
        return sum(self.action.values())


def call_event(token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    event = help_event(token, tool)
    body = json.loads(event["body"])
    body["params"]["arguments"] = arguments
    event["body"] = json.dumps(body)
    return event


def answer_text(response: dict[str, Any]) -> str:
    if response["statusCode"] != 200:
        raise RuntimeError(f"call failed: {response}")
    result = json.loads(response["body"])["result"]
    text = "".join(block["text"] for block in result["content"])
    if result.get("isError"):
        raise RuntimeError(f"tool error: {text}")
    return text


class Invoker:
    """One tools/call through the handler, with the AWS requests it sent."""

    def __init__(self, handler: Any, log: RequestLog) -> None:
        self._handler = handler
        self._log = log
        self._context = LambdaContext()
        self._sink = io.StringIO()

    def __call__(self, token: str, tool: str, arguments: dict[str, Any]) -> CallRecord:
        event = call_event(token, tool, arguments)
        log = self._log
        log.reset()
        log.active = True
        try:
            with redirect_stdout(self._sink):
                start = time.perf_counter()
                response = self._handler(event, self._context)
                elapsed = time.perf_counter() - start
        finally:
            log.active = False
        self._sink.seek(0)
        self._sink.truncate()
        return CallRecord(
            Counter(log.auth),
            Counter(log.action),
            list(log.transact_items),
            list(log.query_counts),
            elapsed,
            log.aws_seconds,
            answer_text(response),
        )


@dataclass(frozen=True)
class Goal:
    text: str
    met: Callable[[Counter[str]], bool]


def _ddb(requests: Counter[str]) -> Counter[str]:
    return Counter({name.split(" ", 1)[1]: n for name, n in requests.items() if name.startswith("DynamoDB ")})


def one_write(puts: int = 0) -> Goal:
    def met(requests: Counter[str]) -> bool:
        ddb = _ddb(requests)
        others = Counter({name: n for name, n in requests.items() if not name.startswith("DynamoDB ")})
        return (
            sum(ddb.values()) == 1
            and set(ddb) <= DDB_WRITES
            and others == Counter({"S3 PutObject": puts} if puts else {})
        )

    return Goal(f"1 write + {puts} S3 PutObject" if puts else "1 write", met)


def reads_at_most(limit: int) -> Goal:
    def met(requests: Counter[str]) -> bool:
        ddb = _ddb(requests)
        return sum(ddb.values()) == sum(requests.values()) <= limit and set(ddb) <= DDB_READS

    return Goal(f"<= {limit} reads", met)


def requests_at_most(limit: int) -> Goal:
    return Goal(f"<= {limit} requests", lambda requests: sum(requests.values()) <= limit)


def describe(requests: Counter[str], transact_items: list[int] | None = None) -> str:
    """'DynamoDB GetItem + TransactWriteItems[2 items]; S3 PutObject x2', or '-' for none."""
    by_service: dict[str, list[str]] = {}
    sizes = iter(transact_items or [])
    for name, n in sorted(requests.items()):
        service, operation = name.split(" ", 1)
        if operation == "TransactWriteItems" and transact_items:
            listed = [f"{operation}[{next(sizes, '?')} items]" for _ in range(n)]
        else:
            listed = [operation if n == 1 else f"{operation} x{n}"]
        by_service.setdefault(service, []).extend(listed)
    return "; ".join(f"{service} {' + '.join(ops)}" for service, ops in by_service.items()) or "-"


@dataclass
class ActionRow:
    label: str
    goal: Goal | None
    calls: list[CallRecord]  # the measured ones, after one untimed warm-up call
    error: str | None = None


@dataclass
class BacklogFigures:
    backlog: int
    calls: list[CallRecord]
    seed_seconds: float


@dataclass
class RequestFigures:
    rows: list[ActionRow]
    backlogs: list[BacklogFigures]
    reps: int


class _TransactRecorder:
    """Stands in for the DynamoDB client under a TaskStore: keeps the transactions instead of sending them."""

    def __init__(self) -> None:
        self.transactions: list[list[dict[str, Any]]] = []

    def transact_write_items(self, TransactItems: list[dict[str, Any]]) -> dict[str, Any]:  # noqa: N803 (boto3's name)
        self.transactions.append(TransactItems)
        return {}


class QueueFiller:
    """Queued agent tasks made exactly as `task create` makes them, written in bulk.

    `services.tasks.create_task` builds each Task and `TaskStore.create` its transaction (task item with
    its queue keys, workspace count); the puts then go out with BatchWriteItem and the count updates as
    one summed update, since moto copies the whole table for every transaction (minutes at 10,000).
    Its own clients: nothing it sends reaches the RequestLog.
    """

    def __init__(self, runtime: Any, actor: Any) -> None:
        from agent_workspace.runtime import Runtime
        from agent_workspace.store.clients import AwsClients
        from agent_workspace.store.tasks import TaskStore

        self._recorder = _TransactRecorder()
        self._table = runtime.settings.table_name
        self._staging = Runtime(settings=runtime.settings, clients=runtime.clients, clock=runtime.clock)
        self._staging.tasks = TaskStore(self._recorder, self._table)  # type: ignore[misc]
        self._db = AwsClients(runtime.settings.aws_region, None).dynamodb
        self._actor = actor

    def add(self, count: int) -> None:
        from agent_workspace.services.tasks import NewTask, create_task

        with redirect_stdout(io.StringIO()):  # Powertools prints the TaskCreated metric every 100
            for n in range(count):
                create_task(self._staging, self._actor, NewTask(title=f"queued {n}", body="Seeded by bench.py."))
        transactions, self._recorder.transactions = self._recorder.transactions, []
        puts: list[dict[str, Any]] = []
        updates: dict[str, dict[str, Any]] = {}
        for items in transactions:
            for entry in items:
                if "Put" in entry:
                    puts.append({"PutRequest": {"Item": entry["Put"]["Item"]}})
                elif "Update" in entry:  # the workspace's task counts: ADD deltas, summed per target
                    update = entry["Update"]
                    shape = json.dumps(
                        {k: v for k, v in update.items() if k != "ExpressionAttributeValues"}, sort_keys=True
                    )
                    if shape not in updates:
                        updates[shape] = copy.deepcopy(update)
                        continue
                    summed = updates[shape]["ExpressionAttributeValues"]
                    for name, value in update["ExpressionAttributeValues"].items():
                        summed[name] = {"N": str(int(summed[name]["N"]) + int(value["N"]))}
                else:
                    raise RuntimeError(f"TaskStore.create sent an item QueueFiller cannot batch: {sorted(entry)}")
        for start in range(0, len(puts), 25):
            pending: dict[str, Any] = {self._table: puts[start : start + 25]}
            while pending:
                pending = self._db.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
        for update in updates.values():
            self._db.update_item(**update)


def measure_requests(reps: int, dequeues: int, backlog: int) -> RequestFigures:
    with handler_on_moto() as stack:
        from agent_workspace.services import accounts
        from agent_workspace.services import skills as skill_service
        from agent_workspace.services.tasks import Actor

        runtime, seeded = stack.runtime, stack.seeded
        log = RequestLog()
        for client in (runtime.clients.dynamodb, runtime.clients.s3, runtime.clients.sqs, runtime.clients.scheduler):
            log.watch(client)
        store = runtime.accounts
        admit = store.admit

        def admit_as_auth(token_hash: str, window: int, limit: int) -> Any:
            log.phase = "auth"
            try:
                return admit(token_hash, window, limit)
            finally:
                log.phase = "action"

        store.admit = admit_as_auth
        invoke = Invoker(stack.module.handler, log)
        rows: list[ActionRow] = []

        def run(
            label: str,
            goal: Goal | None,
            tool: str,
            arguments: Callable[[int], dict[str, Any]],
            token: str = seeded.agent_token,
            expect: Callable[[str], bool] | None = None,
        ) -> list[CallRecord]:
            """reps + 1 calls (call 0 is an untimed warm-up), each with `arguments(i)`."""
            records: list[CallRecord] = []
            try:
                for i in range(reps + 1):
                    record = invoke(token, tool, arguments(i))
                    if expect is not None and not expect(record.text):
                        raise RuntimeError(f"unexpected answer: {record.text[:200]}")
                    records.append(record)
            except Exception as error:  # a row that fails is reported; the others still run
                rows.append(ActionRow(label, goal, records[1:], f"{type(error).__name__}: {error}"[:300]))
                return records
            rows.append(ActionRow(label, goal, records[1:]))
            return records

        def created_ids(records: list[CallRecord]) -> list[str]:
            return [m.group(1) for r in records if (m := re.search(r"id=(\S+)", r.text))]

        def task(action: str, **payload: Any) -> dict[str, Any]:
            return {"action": action, "payload": payload}

        def attachments(*ids: str) -> list[dict[str, str]]:
            return [{"id": i, "filename": f"{i}.txt", "mimeType": "text/plain", "data": _ATTACHMENT_DATA} for i in ids]

        def dequeued(text: str) -> bool:
            return text != "null"

        run("help", None, "help", lambda i: {})
        run("workspace get", None, "workspace", lambda i: {"action": "get"})
        plain = created_ids(
            run("task create", one_write(), "task", lambda i: task("create", title=f"plain {i}", body="b"))
        )
        with_files = created_ids(
            run(
                "task create, 2 attachments",
                one_write(puts=2),
                "task",
                lambda i: task("create", title=f"files {i}", body="b", attachments=attachments("a1", "a2")),
            )
        )
        run(
            "task create, cronSchedule",
            requests_at_most(2),
            "task",
            lambda i: task("create", title=f"hourly {i}", body="b", cronSchedule="30 * * * *"),
        )
        run(
            "workspace publishEvent",
            requests_at_most(2),
            "workspace",
            lambda i: {"action": "publishEvent", "payload": {"name": "bench_done", "payload": f"run {i}"}},
        )
        run("task reply", None, "task", lambda i: task("reply", taskId=plain[i], text="On it."))
        run(
            "task reply, 2 attachments",
            None,
            "task",
            lambda i: task("reply", taskId=with_files[i], text="Files.", attachments=attachments("r1", "r2")),
        )
        run("task get by id", reads_at_most(2), "task", lambda i: task("get", taskId=plain[i]))
        run(
            "task get by id, includeConversation",
            reads_at_most(2),
            "task",
            lambda i: task("get", taskId=with_files[i], includeConversation=True),
        )
        run("task get (dequeue)", requests_at_most(2), "task", lambda i: task("get"), expect=dequeued)
        run(
            "task get (dequeue), includeConversation",
            None,
            "task",
            lambda i: task("get", includeConversation=True),
            expect=dequeued,
        )
        run("task updateStatus", None, "task", lambda i: task("updateStatus", taskId=plain[i], status="ongoing"))
        run(
            "task getAttachment, url",
            None,
            "task",
            lambda i: task("getAttachment", taskId=with_files[i], attachmentId="a1", format="url"),
        )
        run(
            "task getAttachment, base64",
            None,
            "task",
            lambda i: task("getAttachment", taskId=with_files[i], attachmentId="a2", format="base64"),
        )

        run(
            "memory save",
            requests_at_most(2),
            "memory",
            lambda i: {"action": "save", "payload": {"name": "bench.md", "content": f"revision {i}"}},
        )
        run(
            "memory save, expectedRevision",
            requests_at_most(2),
            "memory",
            lambda i: {"action": "save", "payload": {"name": "checked.md", "content": f"v{i}", "expectedRevision": i}},
        )
        run("memory load", reads_at_most(1), "memory", lambda i: {"action": "load", "payload": {"name": "bench.md"}})
        run(
            "memory load, a revision",
            reads_at_most(1),
            "memory",
            lambda i: {"action": "load", "payload": {"name": "bench.md", "revision": i + 1}},
        )

        def skills(action: str, **payload: Any) -> dict[str, Any]:
            return {"action": action, "payload": payload}

        def skill_md(description: str, i: int) -> str:
            return f"---\ndescription: {description}\n---\n# Bench skill\nSaved {i} times.\n"

        run(
            "skills save SKILL.md, new skill",
            requests_at_most(2),
            "skills",
            lambda i: skills("save", uri=f"skill://bench-{i}/SKILL.md", content=skill_md("A bench skill.", i)),
        )
        run(
            "skills save SKILL.md",
            requests_at_most(2),
            "skills",
            lambda i: skills("save", uri="skill://bench-0/SKILL.md", content=skill_md("A bench skill.", i)),
        )
        run(
            "skills save another file",
            requests_at_most(2),
            "skills",
            lambda i: skills("save", uri=f"skill://bench-0/notes/{i}.md", content=f"note {i}"),
        )
        run("skills load", reads_at_most(1), "skills", lambda i: skills("load", uri="skill://bench-0"))
        run(
            "skills load a file",
            reads_at_most(1),
            "skills",
            lambda i: skills("load", uri=f"skill://bench-0/notes/{i}.md"),
        )
        run("skills search", reads_at_most(1), "skills", lambda i: skills("search", q="bench"))
        run(
            "skills delete a file",
            requests_at_most(2),
            "skills",
            lambda i: skills("delete", uri=f"skill://bench-0/notes/{i}.md"),
        )
        with redirect_stdout(io.StringIO()):
            guest, guest_token = accounts.create_workspace(store, seeded.account_id, "Guest", "bench.py's shared skill")
            skill_service.share(runtime, seeded.workspace_id, "bench-0", guest.id)
        run(
            "skills load, shared into the workspace",
            reads_at_most(2),
            "skills",
            lambda i: skills("load", uri="skill://bench-0"),
            token=guest_token.token,
        )
        run(
            "skills save SKILL.md, 1 share, new desc.",
            None,
            "skills",
            lambda i: skills("save", uri="skill://bench-0/SKILL.md", content=skill_md(f"Description {i}.", i)),
        )

        # The queue on its own: a second workspace whose queue holds exactly the backlog.
        with redirect_stdout(io.StringIO()):
            workspace, issued = accounts.create_workspace(store, seeded.account_id, "Backlog", "bench.py's queue")
        actor = Actor("agent", seeded.account_id, workspace.id, issued.record.id)
        token = issued.token
        run(
            "task get (dequeue), queue empty",
            requests_at_most(2),
            "task",
            lambda i: task("get"),
            token=token,
            expect=lambda text: text == "null",
        )
        filler = QueueFiller(runtime, actor)
        backlogs: list[BacklogFigures] = []
        available = 0
        for size in sorted({10, backlog}):
            start = time.perf_counter()
            filler.add(size - available)
            available = size
            seed_seconds = time.perf_counter() - start
            records: list[CallRecord] = []
            try:
                for i in range(2 + dequeues):  # two untimed warm-up dequeues
                    record = invoke(token, "task", task("get"))
                    if record.text == "null":
                        raise RuntimeError("the queue ran dry")
                    filler.add(1)  # untimed: the backlog stays at `size`
                    if i >= 2:
                        records.append(record)
            except Exception as error:
                rows.append(
                    ActionRow(f"task get (dequeue), backlog {size:,}", None, [], f"{type(error).__name__}: {error}")
                )
            backlogs.append(BacklogFigures(size, records, seed_seconds))
        del store.admit
    return RequestFigures(rows, backlogs, reps)


# -- report -----------------------------------------------------------------------------------


def verdict(ratio: float, goal: float) -> str:
    return "meets goal" if ratio <= goal else "ABOVE goal"


def report_imports(runs: int, path: ImportPath = SOURCE) -> None:
    where = f"{path.handler_file.parent.relative_to(ROOT)} on {path.executable}"
    print(f"(a) cold import from {where}, median of {runs} fresh interpreters per side (goal <= {IMPORT_GOAL:.2f}x)")
    imports = [measure_imports(runs, tracing=True, path=path), measure_imports(runs, tracing=False, path=path)]
    header = f"{'environment':<44}{'clock':<6}{'handler':>10}{'deps alone':>12}{'ratio':>8}  {'':<11}3rd-party modules"
    print(f"    {header}")
    for fig in imports:
        print(
            f"    {fig.label:<44}{'CPU':<6}{fig.handler * 1e3:>8.1f}ms{fig.deps * 1e3:>10.1f}ms{fig.ratio:>7.2f}x  "
            f"{verdict(fig.ratio, IMPORT_GOAL):<11}{fig.module_count}"
        )
        print(
            f"    {'':<44}{'wall':<6}{fig.handler_wall * 1e3:>8.1f}ms{fig.deps_wall * 1e3:>10.1f}ms"
            f"{fig.wall_ratio:>7.2f}x  {verdict(fig.wall_ratio, IMPORT_GOAL)}"
        )
    for fig in imports:
        print(
            f"    {fig.label}: with its deps already imported, the handler adds {fig.on_top * 1e3:.1f}ms CPU "
            f"-> {fig.on_top_ratio:.2f}x (median of per-interpreter ratios; steadier on a busy machine)"
        )
    for fig in imports:
        parts = ", ".join(f"{origin} {seconds * 1e3:.1f}ms" for origin, seconds in sorted(fig.breakdown.items()))
        print(f"    self time by origin, {fig.label} (one -X importtime run): {parts}")
    heaviest = ", ".join(f"{name} {seconds * 1e3:.0f}ms" for name, seconds in imports[0].heaviest.most_common(8))
    print(f"    heaviest packages by self time (tracing on): {heaviest}")
    print(f"    third-party packages the handler imports (tracing on): {', '.join(imports[0].packages)}")
    only_traced = sorted(set(imports[0].packages) - set(imports[1].packages))
    if only_traced:
        print(f"    imported only because the Tracer patches libraries: {', '.join(only_traced)}")


def report_latency(calls: int, warmup: int) -> None:
    latency = measure_latency(calls, warmup)
    print(
        f"(b) warm tools/call, median of {latency.calls_measured} in-process calls per side after "
        f"{warmup} warm-up calls (goal <= {LATENCY_GOAL:.2f}x)"
    )
    rows = [
        ("handler: help {}, token looked up in DynamoDB (moto mock_aws)", latency.handler),
        ("handler: help {}, token lookup answered from memory", latency.handler_without_ddb),
        ("bare SDK Server: one trivial tool, no auth", latency.bare),
    ]
    print(f"    {'path':<64}{'median':>10}{'vs bare':>9}")
    for label, seconds in rows:
        ratio = seconds / latency.bare
        print(f"    {label:<64}{seconds * 1e3:>8.2f}ms{ratio:>8.2f}x  {verdict(ratio, LATENCY_GOAL)}")
    per_call = {op: count / latency.calls_measured for op, count in sorted(latency.ddb_calls.items())}
    listing = ", ".join(f"{op} x{n:g}" for op, n in per_call.items()) or "none"
    print(f"    DynamoDB round trips per tools/call help: {sum(per_call.values()):g} ({listing})")
    print(
        f"    the DynamoDB round trip costs {(latency.handler - latency.handler_without_ddb) * 1e3:.2f}ms here "
        "(moto in-process); on AWS a GetItem is a network round trip instead"
    )


def _typical(records: list[CallRecord], field: str) -> tuple[Counter[str], str]:
    """The requests every call sent, or the most common set and how the totals varied."""
    seen = [getattr(record, field) for record in records]
    common = Counter(json.dumps(sorted(c.items())) for c in seen).most_common(1)[0][0]
    typical = Counter(dict(json.loads(common)))
    totals = sorted({sum(c.values()) for c in seen})
    return typical, "" if len(totals) == 1 else f" (varies {totals[0]}-{totals[-1]})"


def report_requests(reps: int, dequeues: int, backlog: int) -> None:
    figures = measure_requests(reps, dequeues, backlog)
    print(
        f"(c) AWS requests per tools/call through the handler (moto mock_aws), per call: {figures.reps} calls "
        "each after one warm-up; 'token' is the bearer-token lookup, 'own' the action's requests"
    )
    own_header = "the action's own requests"
    print(f"    {'call':<42}{'token':>5}{'own':>5}  {own_header:<66}{'goal (own)':<25}{'':<12}{'median':>8}")
    for row in figures.rows:
        if row.error is not None and not row.calls:
            print(f"    {row.label:<42}  FAILED: {row.error}")
            continue
        auth, auth_varies = _typical(row.calls, "auth")
        own, own_varies = _typical(row.calls, "action")
        transact = next((r.transact_items for r in row.calls if r.action == own), [])
        token = str(sum(auth.values())) if auth == Counter({"DynamoDB GetItem": 1}) else describe(auth)
        goal, met = ("-", "") if row.goal is None else (row.goal.text, all(row.goal.met(r.action) for r in row.calls))
        mark = "" if row.goal is None else "meets goal" if met else "MISSES goal"
        median = statistics.median(r.seconds for r in row.calls) * 1e3
        print(
            f"    {row.label:<42}{token + auth_varies:>5}{sum(own.values()):>5}  "
            f"{describe(own, transact) + own_varies:<66}{goal:<25}{mark:<12}{median:>6.1f}ms"
        )
        if row.error is not None:
            print(f"    {'':<42}  FAILED after {len(row.calls)} calls: {row.error}")
    print(
        "    token: 1 = one DynamoDB UpdateItem on the token's hash, on every request: it resolves the token"
        " and counts the request against its rate limit (2 when it opens a new minute)"
    )

    print()
    print(
        f"    dequeue against the backlog: median of {dequeues} `task get` (no taskId) after 2 warm-up calls; "
        "each dequeued task is replaced (untimed) so the backlog stays put"
    )
    print(
        f"    {'queued tasks':>14}  {'own requests per call':<34}{'goal':<16}{'':<12}"
        f"{'Query items':>12}{'median':>9}{'in AWS calls':>14}{'rest':>8}"
    )
    goal = requests_at_most(2)
    measured = [fig for fig in figures.backlogs if fig.calls]
    for fig in figures.backlogs:
        if not fig.calls:
            print(f"    {fig.backlog:>14,}  FAILED (see above)")
            continue
        own, varies = _typical(fig.calls, "action")
        met = all(goal.met(r.action) for r in fig.calls)
        items = sorted({n for r in fig.calls for n in r.query_counts})
        item_text = (
            "-".join(str(n) for n in (items[0], items[-1])) if len(items) > 1 else str(items[0] if items else "-")
        )
        median = statistics.median(r.seconds for r in fig.calls)
        aws = statistics.median(r.aws_seconds for r in fig.calls)
        rest = statistics.median(r.seconds - r.aws_seconds for r in fig.calls)
        print(
            f"    {fig.backlog:>14,}  {f'{sum(own.values())}: {describe(own)}{varies}':<34}{goal.text:<16}"
            f"{'meets goal' if met else 'MISSES goal':<12}{item_text:>12}{median * 1e3:>7.1f}ms{aws * 1e3:>12.1f}ms"
            f"{rest * 1e3:>6.1f}ms"
        )
    if len(measured) == 2:
        small, large = measured
        same = {json.dumps(sorted(r.action.items())) for f in measured for r in f.calls}
        print(
            f"    requests per dequeue {'independent of' if len(same) == 1 else 'DEPEND ON'} the backlog "
            f"({small.backlog:,} vs {large.backlog:,} queued; seeding {large.backlog - small.backlog:,} took "
            f"{large.seed_seconds:.1f}s, not measured)"
        )
        print(
            "    'in AWS calls' is moto's time (before-call to after-call): its Query on an index filters every item\n"
            "    of the table, so it grows with the table; DynamoDB reads only the page it returns ('Query items').\n"
            "    'rest' is the handler's own time, which is what must not grow"
        )


# -- (d) elicit: reads while waiting ---------------------------------------------------------------


def report_elicit_reads(wait_seconds: int) -> None:
    """Reads a waiting `task elicit` makes per minute, on the real wait loop with time simulated.

    The loop sleeps on `anyio.sleep` and reads the clock from the runtime; both are replaced by a
    virtual clock, so an hour of waiting takes a moment and every read is counted by botocore.
    """
    from datetime import UTC, datetime, timedelta

    import anyio

    from agent_workspace.domain.tokens import hash_token
    from agent_workspace.services import elicitations
    from agent_workspace.services.tasks import Actor, NewTask, create_task

    print(f"(d) task elicit: DynamoDB reads while waiting {wait_seconds // 60} min for an answer that never comes")
    with handler_on_moto() as stack, redirect_stdout(io.StringIO()):
        runtime, seeded = stack.runtime, stack.seeded
        principal = runtime.accounts.resolve_token(hash_token(seeded.agent_token))
        actor = Actor.of(principal)
        task = create_task(runtime, actor, NewTask(title="question", body=""))
        question = elicitations.ask(
            runtime, actor, task.id, "Which branch?", "url", None, "https://example.com", wait_seconds
        )
        now = [datetime.now(UTC)]
        runtime.clock = lambda: now[0]
        reads_at: list[float] = []
        started = now[0]
        runtime.clients.dynamodb.meta.events.register(
            "before-call.dynamodb.GetItem", lambda **_: reads_at.append((now[0] - started).total_seconds())
        )

        class VirtualTime:
            @staticmethod
            async def sleep(seconds: float) -> None:
                now[0] += timedelta(seconds=seconds)

        real_anyio = elicitations.anyio
        elicitations.anyio = VirtualTime  # type: ignore[assignment]
        try:
            outcome = anyio.run(elicitations.wait_for_answer, runtime, question, None)
        finally:
            elicitations.anyio = real_anyio
    per_minute = Counter(int(at // 60) for at in reads_at)
    minutes = max(wait_seconds // 60, 1)
    print(f"    outcome: {outcome}; {len(reads_at)} reads in {wait_seconds} s of waiting")
    print(
        f"    reads per minute: first {per_minute[0]}, then {per_minute[1]} (average {len(reads_at) / minutes:.1f};"
        f" goal <= 60, one per second)"
    )
    gaps = [b - a for a, b in zip(reads_at, reads_at[1:], strict=False)]
    print(f"    longest gap between reads: {max(gaps):.2f} s (the most an answer waits to be noticed)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="fresh interpreters per side for (a); at least 7")
    parser.add_argument("--calls", type=int, default=300, help="timed calls per side for (b); at least 200")
    parser.add_argument("--warmup", type=int, default=50, help="untimed calls per side before (b)")
    parser.add_argument("--reps", type=int, default=5, help="calls per action for (c), after one warm-up call")
    parser.add_argument("--dequeues", type=int, default=20, help="timed dequeues per backlog size for (c)")
    parser.add_argument("--backlog", type=int, default=10_000, help="the large backlog for (c); the small one is 10")
    parser.add_argument(
        "--quick", action="store_true", help="fewer samples for (a) and (b) (3 interpreters, 100 calls): rougher ratios"
    )
    parser.add_argument("--sections", default="abcd", help="which sections to run, e.g. 'c' (default 'abcd')")
    args = parser.parse_args()
    if args.quick:
        runs, calls, warmup = 3, 100, 20
    else:
        runs, calls, warmup = max(args.runs, 7), max(args.calls, 200), args.warmup
    reps, dequeues, backlog = max(args.reps, 1), max(args.dequeues, 1), max(args.backlog, 10)

    print(f"Python {sys.version.split()[0]} on {sys.platform}; handler {HANDLER_FILE.relative_to(ROOT)}")
    if "a" in args.sections:
        print()
        report_imports(runs, SOURCE)
        print()
        report_imports(runs, built_import_path())
    if "b" in args.sections:
        print()
        report_latency(calls, warmup)
    if "c" in args.sections:
        print()
        report_requests(reps, dequeues, backlog)
    if "d" in args.sections:
        print()
        report_elicit_reads(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
