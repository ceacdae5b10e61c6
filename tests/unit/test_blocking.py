"""Blocking store calls leave the event loop free under uvicorn and run inline in a Lambda process."""

import threading
import time

import pytest

from agent_workspace import blocking

pytestmark = pytest.mark.anyio


async def test_outside_lambda_a_blocking_call_runs_in_a_worker_thread(monkeypatch):
    monkeypatch.setattr(blocking, "RUNNING_IN_LAMBDA", False)
    loop_thread = threading.get_ident()
    assert await blocking.run_blocking(threading.get_ident) != loop_thread


async def test_in_lambda_a_blocking_call_runs_inline(monkeypatch):
    monkeypatch.setattr(blocking, "RUNNING_IN_LAMBDA", True)
    assert await blocking.run_blocking(threading.get_ident) == threading.get_ident()


async def test_arguments_and_errors_pass_through(monkeypatch):
    for inline in (True, False):
        monkeypatch.setattr(blocking, "RUNNING_IN_LAMBDA", inline)
        assert await blocking.run_blocking(divmod, 7, 2) == (3, 1)
        with pytest.raises(ZeroDivisionError):
            await blocking.run_blocking(divmod, 1, 0)


def test_a_wait_ends_at_its_cap_or_a_margin_before_the_invocation_ends_whichever_comes_first():
    now = time.monotonic()
    assert blocking.wait_ends_at(45, None, 10) == pytest.approx(now + 45, abs=0.5)  # uvicorn: the cap alone
    assert blocking.wait_ends_at(45, now + 900, 10) == pytest.approx(now + 45, abs=0.5)
    assert blocking.wait_ends_at(45, now + 20, 10) == pytest.approx(now + 10, abs=0.5)


def test_the_invocation_deadline_comes_from_the_lambda_context_mangum_puts_in_the_scope():
    class Context:
        def get_remaining_time_in_millis(self) -> int:
            return 30_000

    assert blocking.invocation_deadline({"aws.context": Context()}) == pytest.approx(time.monotonic() + 30, abs=0.5)
    assert blocking.invocation_deadline({}) is None
