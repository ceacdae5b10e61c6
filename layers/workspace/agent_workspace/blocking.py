"""Runs blocking store calls without stalling the event loop, and bounds how long one request may wait.

Under uvicorn one event loop serves many requests, so a boto3 call goes to a worker thread. A
Lambda process serves one request at a time: there the call runs inline, sparing a thread start
per invocation (anyio stops its idle workers when each invocation's loop run ends).

A long wait (an `elicit`, a bridge long-poll) keeps a Lambda billing for as long as it lasts, and
a client that gives up first (the TypeScript MCP SDK does at 60 s) leaves it waiting for nobody:
each wait is therefore cut at a configured cap, after which the caller is told to come back.
"""

import functools
import time
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

import anyio.to_thread

from agent_workspace.config import RUNNING_IN_LAMBDA

P = ParamSpec("P")
T = TypeVar("T")


async def run_blocking(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    if RUNNING_IN_LAMBDA:
        return fn(*args, **kwargs)
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))


def invocation_deadline(scope: Mapping[str, Any]) -> float | None:
    """When the Lambda invocation serving this ASGI request ends, on the monotonic clock; None outside Lambda."""
    lambda_context = scope.get("aws.context")
    remaining = getattr(lambda_context, "get_remaining_time_in_millis", None)
    return time.monotonic() + remaining() / 1000 if remaining else None


def wait_ends_at(cap_seconds: float, deadline: float | None, margin_seconds: float) -> float:
    """The monotonic time a request's wait must end: after `cap_seconds`, and `margin_seconds` before `deadline`."""
    ends = time.monotonic() + cap_seconds
    return ends if deadline is None else min(ends, deadline - margin_seconds)
