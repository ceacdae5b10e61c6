"""`make bench` (c): what waiting costs now that clients hold a WebSocket instead of a Lambda (issue 36).

(c1) The idle cost of one connected client (channel bridge, extension, console tab) per month at list prices
     (us-east-1, arm64), from the design's own figures: the socket, its pings, the push function invocation each
     ping makes, a new ticket and socket every `RECONNECT_SECONDS`, and whatever the client itself still reads over
     REST while nothing happens. Goal <= $0.05, from about $14 for a long-polling browser.
(c2) Publish -> client locally: the stack as `make serve` runs it (moto, the local WebSocket gateway, the queue
     driver), one socket on a workspace's channel, real channel events stored and published one after another;
     the time from the publish to the frame's arrival, median and 90th percentile. Goal <= 1 s at the median. Then
     the socket is cut, events are stored during the gap, a new socket opens and the client catches up over REST
     from its cursor: every event is counted exactly once.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import random
import statistics
import threading
import time
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from typing import Any

from bench_goals import Goal, chunks, spread

COST_GOAL = 0.05  # dollars per idle connected client per month
LATENCY_GOAL = 1.0  # seconds, median publish -> client
HOURS_PER_MONTH = 730

# List prices, us-east-1 (December 2026).
CONNECTION_MINUTE = 0.25 / 1e6  # API Gateway WebSocket
MESSAGE = 1.00 / 1e6  # API Gateway WebSocket, per 32 KB, either direction
LAMBDA_REQUEST = 0.20 / 1e6
LAMBDA_GB_SECOND = 0.0000133334  # arm64
WRITE_UNIT = 0.625 / 1e6  # DynamoDB on demand
READ_UNIT = 0.125 / 1e6
# The template's sizes, and what one invocation bills (Lambda rounds up to the millisecond; these are generous).
PUSH_FUNCTION_GB, PUSH_CALL_SECONDS = 0.25, 0.010
API_FUNCTION_GB, API_CALL_SECONDS = 0.375, 0.050
# A reconnect: the ticket (a rate counter and the ticket written, the token read), $connect (the ticket spent, the
# token read, the connection and its listener written), $disconnect (both deleted).
RECONNECT_WRITES, RECONNECT_READS = 6, 2

# What each client reads over REST while nothing happens and its socket is open: the bridge and the extension
# nothing (channel/…/push.py; extension/lib/push.js, its online state is its open socket); a console tab on screen a
# safety round every 15 minutes (console/static/core/refresh.js SAFETY_MS) of three reads, the board's nine every
# third (counted here as nine each), none while hidden.
IDLE_REST_CALLS_PER_HOUR = {
    "channel bridge (Claude Code)": 0,
    "extension (browser bridge)": 0,
    "console tab, on screen all month": 4 * 9,
    "console tab, in the background": 0,
}


@dataclass(frozen=True)
class Line:
    what: str
    dollars: float


def idle_cost(rest_calls_per_hour: float) -> list[Line]:
    from agent_workspace.domain import push as rules

    minutes = HOURS_PER_MONTH * 60
    pings = HOURS_PER_MONTH * 3600 / rules.PING_SECONDS
    reconnects = HOURS_PER_MONTH * 3600 / rules.RECONNECT_SECONDS
    invocation = LAMBDA_REQUEST + PUSH_FUNCTION_GB * PUSH_CALL_SECONDS * LAMBDA_GB_SECOND
    api_call = LAMBDA_REQUEST + API_FUNCTION_GB * API_CALL_SECONDS * LAMBDA_GB_SECOND
    reconnect = api_call + 2 * invocation + RECONNECT_WRITES * WRITE_UNIT + RECONNECT_READS * READ_UNIT
    rest = rest_calls_per_hour * HOURS_PER_MONTH
    return [
        Line(f"socket held all month ({minutes:,.0f} connection-minutes)", minutes * CONNECTION_MINUTE),
        Line(
            f"a ping every {rules.PING_SECONDS // 60} min and its pong ({2 * pings:,.0f} messages)", 2 * pings * MESSAGE
        ),
        Line(f"the push function answering each ping ({pings:,.0f} invocations)", pings * invocation),
        Line(
            f"a new ticket and socket every {rules.RECONNECT_SECONDS // 60} min ({reconnects:,.0f})",
            reconnects * reconnect,
        ),
        Line(f"REST reads while idle ({rest:,.0f})", rest * (api_call + READ_UNIT)),
    ]


def report_cost() -> list[Goal]:
    print(f"(c1) idle cost of one connected client per month at list prices (goal <= ${COST_GOAL:.2f})")
    goals = []
    for client, calls in IDLE_REST_CALLS_PER_HOUR.items():
        lines = idle_cost(calls)
        total = sum(line.dollars for line in lines)
        verdict = "meets goal" if total <= COST_GOAL else "ABOVE goal"
        print(f"    {client:<40}${total:>8.4f}  {verdict}")
        goals.append(Goal(f"idle cost a month: {client}", total, COST_GOAL, 0.0, "$", "exact"))
    print("    of which, for every client:")
    for line in idle_cost(0)[:-1]:
        print(f"        {line.what:<72}${line.dollars:>8.4f}")
    return goals


# -- (c2) publish -> client ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LatencyFigures:
    samples: list[float]
    delivered: int
    published: int
    duplicates: int
    lost_across_reconnect: int


@contextmanager
def local_stack() -> Any:
    """The stack as `make serve` runs it, on a free port, for the life of the block."""
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    import socket

    import uvicorn

    from agent_workspace.app import create_app
    from agent_workspace.local import push_gateway
    from agent_workspace.local.drivers import Drivers
    from agent_workspace.local.stack import MotoServer, local_runtime, seed

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    moto = MotoServer()
    runtime = local_runtime(moto.endpoint_url)
    push_gateway.configure(runtime, f"127.0.0.1:{port}")
    with redirect_stdout(io.StringIO()):
        seeded = seed(runtime)
    app = push_gateway.PushGateway(create_app(runtime), runtime)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws=push_gateway.UVICORN_WS)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    drivers = Drivers(runtime).start()
    try:
        yield runtime, seeded, app, f"http://127.0.0.1:{port}"
    finally:
        drivers.stop()
        server.should_exit = True
        thread.join(timeout=10)
        moto.stop()


def measure_latency(events: int) -> LatencyFigures:
    import httpx
    import websockets

    from agent_workspace.services import channel

    with local_stack() as (runtime, seeded, gateway, base), redirect_stdout(io.StringIO()):
        headers = {"Authorization": f"Bearer {seeded.agent_token}"}

        def ticket() -> str:
            answer = httpx.post(f"{base}/api/push/tickets", json={"topic": "channel"}, headers=headers, timeout=10)
            answer.raise_for_status()
            return answer.json()["url"]

        def publish(n: int) -> None:
            channel.push(runtime, seeded.workspace_id, "reply", None, f"event {n}")

        async def scenario() -> LatencyFigures:
            seen: list[str] = []
            samples: list[float] = []
            async with websockets.connect(ticket()) as socket:
                for n in range(events):
                    await asyncio.sleep(random.uniform(0, 0.1))  # not in step with the queue driver's passes
                    started = time.perf_counter()
                    await asyncio.to_thread(publish, n)
                    message = json.loads(await asyncio.wait_for(socket.recv(), 10))
                    samples.append(time.perf_counter() - started)
                    seen.append(message["cursor"])
            # The socket is cut (as API Gateway cuts one); events are stored while no socket listens.
            gap = 5
            for n in range(gap):
                await asyncio.to_thread(publish, events + n)
            async with websockets.connect(ticket()) as socket:
                # The client's catch-up from its cursor; a push of a gap event may still arrive on the new socket
                # (it was queued before this socket opened): the client drops what it already has, by id.
                caught = httpx.get(
                    f"{base}/api/channel/events", params={"cursor": seen[-1]}, headers=headers, timeout=10
                ).json()["events"]
                seen.extend(event["id"] for event in caught)
                await asyncio.to_thread(publish, events + gap)
                last = runtime.channel.events_after(seeded.workspace_id, seen[-1], 10)[-1].id
                on_this_socket: list[str] = []
                while last not in on_this_socket:
                    on_this_socket.append(json.loads(await asyncio.wait_for(socket.recv(), 10))["cursor"])
                twice_here = len(on_this_socket) - len(set(on_this_socket))
                seen.extend(cursor for cursor in on_this_socket if cursor not in seen)
            stored = [event.id for event in runtime.channel.events_after(seeded.workspace_id, "0", 1000)]
            return LatencyFigures(
                samples=samples,
                delivered=len(set(seen) & set(stored)),
                published=len(stored),
                duplicates=len(seen) - len(set(seen)) + twice_here,
                lost_across_reconnect=len(set(stored) - set(seen)),
            )

        return asyncio.run(scenario())


def report_latency(events: int) -> list[Goal]:
    figures = measure_latency(events)
    median = statistics.median(figures.samples)
    p90 = statistics.quantiles(figures.samples, n=10)[-1]
    verdict = "meets goal" if median <= LATENCY_GOAL else "ABOVE goal"
    print(f"(c2) publish -> client over the local WebSocket, {events} channel events (goal: median <= 1 s)")
    print(f"    median {median * 1e3:.0f} ms, 90th percentile {p90 * 1e3:.0f} ms  {verdict}")
    whole = figures.delivered == figures.published and not figures.duplicates and not figures.lost_across_reconnect
    print(
        f"    delivered {figures.delivered}/{figures.published} exactly once across a cut socket "
        f"(twice on one socket {figures.duplicates}, lost {figures.lost_across_reconnect})  "
        f"{'meets goal' if whole else 'MISSES goal'}"
    )
    lost_or_twice = figures.published - figures.delivered + figures.duplicates + figures.lost_across_reconnect
    return [
        Goal(
            "publish -> client, median, local WebSocket",
            median,
            LATENCY_GOAL,
            spread([statistics.median(part) for part in chunks(figures.samples)]),
            "s",
        ),
        Goal("events lost or delivered twice across a cut socket", float(lost_or_twice), 0.0, 0.0, "n", "exact"),
    ]
