"""Blocking store calls leave the event loop free under uvicorn and run inline in a Lambda process."""

import threading

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
