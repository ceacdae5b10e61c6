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

(c) Push (scripts/bench_push.py): the idle cost of a connected client per month at list prices, goal <= $0.05, and
    publish -> client over the local WebSocket, goal <= 1 s at the median, nothing lost or doubled across a reconnect.

Each goal is printed met or not at the end, and the exit status is 1 when one is missed by more than the run's own
noise (scripts/bench_goals.py says how that margin is taken); `--ci` runs the cheap part. What is deterministic is a
test with its goal asserted: AWS requests per action in tests/integration/test_request_budget.py, the reads of a waiting
`task elicit` in tests/integration/test_elicit_reads.py.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import io
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench_goals import Goal, chunks, spread, summary

ROOT = Path(__file__).resolve().parents[1]
HANDLER_FILE = ROOT / "functions" / "api" / "app.py"
EVENTS = ROOT / "events"
FIRST_PARTY = {"agent_workspace", "lambda_handler"}

IMPORT_GOAL = 1.15
LATENCY_GOAL = 1.30
WORKER_SHARE_GOAL = 0.25  # the events and schedule functions: first-party part of their cold import
WORKER_FUNCTIONS = {"events": "EventsFunction", "schedule": "ScheduleFunction"}  # folder: logical id

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


def built_import_path(function_id: str = "ApiFunction") -> ImportPath:
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
    function = BUILD_DIR / function_id
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
    pair_ratios: list[float]  # handler / deps of each interleaved pair of fresh interpreters: the run's noise

    @property
    def ratio(self) -> float:
        return self.handler / self.deps

    @property
    def first_party_share(self) -> float:
        """What the handler's own code is of its whole import: 1 - deps / handler."""
        return 1 - self.deps / self.handler

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
        pair_ratios=[h[1] / d[1] for h, d in zip(handler_samples, deps_samples, strict=True)],
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
    chunk_ratios: list[float]  # handler (token from memory) / bare, per fifth of the interleaved calls: the noise
    bare_alone: float  # the bare server measured on its own, as the token-from-memory calls are, instead

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
        samples["no_ddb"], samples["bare_alone"] = [], []
        store.admit = lambda token_hash, window, limit: principal
        try:
            for _ in range(warmup):
                timed(ours, ours_event, overview)
            for _ in range(calls):
                samples["no_ddb"].append(timed(ours, ours_event, overview))
            for _ in range(calls):  # on its own, as the token-from-memory calls were: no moto work between
                samples["bare_alone"].append(timed(bare, bare_event, "pong"))
        finally:
            del store.admit

    return LatencyFigures(
        handler=statistics.median(samples["ours"]),
        bare=statistics.median(samples["bare"]),
        handler_without_ddb=statistics.median(samples["no_ddb"]),
        ddb_calls=observed,
        calls_measured=calls,
        bare_alone=statistics.median(samples["bare_alone"]),
        chunk_ratios=[
            statistics.median(ours) / statistics.median(bare)
            for ours, bare in zip(chunks(samples["no_ddb"]), chunks(samples["bare"]), strict=True)
        ],
    )


# -- report -----------------------------------------------------------------------------------


def verdict(ratio: float, goal: float) -> str:
    return "meets goal" if ratio <= goal else "ABOVE goal"


def report_imports(runs: int, path: ImportPath = SOURCE, untraced: bool = True) -> list[Goal]:
    where = f"{path.handler_file.parent.relative_to(ROOT)} on {path.executable}"
    print(f"(a) cold import from {where}, median of {runs} fresh interpreters per side (goal <= {IMPORT_GOAL:.2f}x)")
    imports = [measure_imports(runs, tracing=True, path=path)]
    if untraced:
        imports.append(measure_imports(runs, tracing=False, path=path))
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
    only_traced = sorted(set(imports[0].packages) - set(imports[-1].packages))
    if only_traced:
        print(f"    imported only because the Tracer patches libraries: {', '.join(only_traced)}")
    traced = imports[0]
    return [Goal(f"cold import, {traced.label}", traced.ratio, IMPORT_GOAL, spread(traced.pair_ratios), kind="import")]


def report_worker_imports(runs: int, built: bool = False) -> list[Goal]:
    """The events and schedule functions (256 MB, no SnapStart): what their own code is of their cold import, from
    source and (`built`) from the artifact Lambda runs."""
    print(f"(a') cold import of the functions without SnapStart, median of {runs} fresh interpreters per side "
          f"(goal: first-party <= {WORKER_SHARE_GOAL:.0%} of the whole)")  # fmt: skip
    goals = []
    for name, function_id in WORKER_FUNCTIONS.items():
        paths = [replace(SOURCE, handler_file=ROOT / "functions" / name / "app.py")]
        paths += [built_import_path(function_id)] if built else []
        for path in paths:
            fig = measure_imports(runs, tracing=True, path=path)
            shares = [1 - 1 / ratio for ratio in fig.pair_ratios]
            where = f"functions/{name}/app.py" if path.label == "source" else f"built {function_id}"
            print(
                f"    {where} ({path.runtime}): {fig.handler * 1e3:.1f}ms CPU, its libraries alone "
                f"{fig.deps * 1e3:.1f}ms: first-party {fig.first_party_share:.0%}  "
                f"{verdict(fig.first_party_share, WORKER_SHARE_GOAL)}"
            )
            label = f"{name} function{'' if path.label == 'source' else ', built'}, first-party share of its import"
            goals.append(Goal(label, fig.first_party_share, WORKER_SHARE_GOAL, spread(shares), "%", "share"))
    return goals


def report_latency(calls: int, warmup: int) -> list[Goal]:
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
    print(
        f"    the bare server measured on its own, as the token-from-memory calls are: "
        f"{latency.bare_alone * 1e3:.2f}ms, {latency.handler_without_ddb / latency.bare_alone:.2f}x "
        "(the goal's baseline is the bare server between "
        "the DynamoDB-backed calls, as when the goal was set; between moto's work it runs slower)"
    )
    ratio = latency.handler_without_ddb / latency.bare
    return [Goal("warm tools/call help vs the bare SDK server (token from memory)", ratio, LATENCY_GOAL,
                 spread(latency.chunk_ratios), kind="latency")]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="fresh interpreters per side for (a); at least 7")
    parser.add_argument("--calls", type=int, default=300, help="timed calls per side for (b); at least 200")
    parser.add_argument("--warmup", type=int, default=50, help="untimed calls per side before (b)")
    parser.add_argument(
        "--quick", action="store_true", help="fewer samples for (a) and (b) (3 interpreters, 100 calls): rougher ratios"
    )
    parser.add_argument("--sections", default="abc", help="which sections to run, e.g. 'b' (default 'abc')")
    parser.add_argument("--events", type=int, default=100, help="channel events pushed for (c2); at least 30")
    parser.add_argument(
        "--ci",
        action="store_true",
        help="the cheap part, for CI: the ratios from source with tracing on (5 interpreters), the functions without "
        "SnapStart, 300 warm calls, the idle cost; no built artifact, no local stack",
    )
    args = parser.parse_args()
    if args.ci:  # five interpreters and 300 calls a side: the CI's verdicts wobbled across the goals with 3 and 100
        runs, calls, warmup = 5, 300, 50
    elif args.quick:
        runs, calls, warmup = 3, 100, 20
    else:
        runs, calls, warmup = max(args.runs, 7), max(args.calls, 200), args.warmup

    print(f"Python {sys.version.split()[0]} on {sys.platform}; handler {HANDLER_FILE.relative_to(ROOT)}")
    goals: list[Goal] = []
    if "a" in args.sections:
        print()
        goals += report_imports(runs, SOURCE, untraced=not args.ci)
        if not args.ci:
            print()
            goals += report_imports(runs, built_import_path())
        print()
        goals += report_worker_imports(runs, built=not args.ci)
    if "b" in args.sections:
        print()
        goals += report_latency(calls, warmup)
    if "c" in args.sections:
        import bench_push  # beside this script: issue 36's figures, push instead of waiting

        print()
        goals += bench_push.report_cost()
        if not args.ci:
            print()
            goals += bench_push.report_latency(30 if args.quick else max(args.events, 30))
    return summary(goals)


if __name__ == "__main__":
    sys.exit(main())
