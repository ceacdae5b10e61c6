"""Runs blocking store calls without stalling the event loop, at the least cost where that is free.

Under uvicorn one event loop serves many requests, so a boto3 call goes to a worker thread. A
Lambda process serves one request at a time: there the call runs inline, sparing a thread start
per invocation (anyio stops its idle workers when each invocation's loop run ends).
"""

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import anyio.to_thread

from agent_workspace.config import RUNNING_IN_LAMBDA

P = ParamSpec("P")
T = TypeVar("T")


async def run_blocking(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    if RUNNING_IN_LAMBDA:
        return fn(*args, **kwargs)
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))
