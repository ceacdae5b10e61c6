"""Runs blocking store calls without stalling the event loop, and bounds how long one request may wait.

Under uvicorn one event loop serves many requests, so a boto3 call goes to a worker thread. A
Lambda process serves one request at a time: there the call runs inline, sparing a thread start
per invocation (anyio stops its idle workers when each invocation's loop run ends).

A long wait (an `elicit`, a bridge long-poll) keeps a Lambda billing for as long as it lasts, and
a client that gives up first (the TypeScript MCP SDK does at 60 s) leaves it waiting for nobody:
each wait is therefore cut at a configured cap, after which the caller is told to come back. Where
the server can tell that the client hung up (under uvicorn: `api.hangup`), the wait ends then.
"""

import functools
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ParamSpec, Protocol, TypeVar

import anyio
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


class Hangup(Protocol):
    """The client of the request being served: whether it hung up, and a way to wait until it does."""

    @property
    def gone(self) -> bool: ...

    def wait(self) -> Awaitable[None]: ...


# Set for the request a wait serves (tasks it starts inherit it, so the MCP SDK's tool handlers see it too).
_HANGUP: ContextVar[Hangup | None] = ContextVar("hangup", default=None)


@contextmanager
def watching(hangup: Hangup) -> Iterator[None]:
    """Within this block (and the tasks it starts), `client_gone` and `pause` watch `hangup`."""
    token = _HANGUP.set(hangup)
    try:
        yield
    finally:
        _HANGUP.reset(token)


def client_gone() -> bool:
    """True once the client of the request being served hung up; a wait then stops, since no one reads its answer."""
    hangup = _HANGUP.get()
    return hangup is not None and hangup.gone


async def pause(seconds: float) -> None:
    """A wait's sleep between store reads, cut short when the client hangs up (see `client_gone`)."""
    hangup = _HANGUP.get()
    if hangup is None:
        await anyio.sleep(seconds)
        return
    with anyio.move_on_after(seconds):
        await hangup.wait()
