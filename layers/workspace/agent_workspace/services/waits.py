"""How many waits one token and one account may have in flight, across Lambda instances.

A wait (a bridge long-poll, `task elicit`, a `siteTools call`) holds a Lambda invocation for as long as it lasts,
and the API function's reserved concurrency is shared by every account: without a bound, one token opening waits
in parallel would hold every invocation and everyone else would be throttled. So a wait takes a lease in
`rt.waits` before it sleeps (a refusal is `RateLimited`: 429 with Retry-After, or a tool error) and lets it go when
it ends; a lease lasts the wait's cap plus `_LEASE_SLACK`, so a Lambda killed mid-wait frees its slot by then.
"""

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from agent_workspace.blocking import pause, run_blocking
from agent_workspace.domain.errors import RateLimited, WorkspaceError
from agent_workspace.domain.ids import new_id
from agent_workspace.observability import count, logger
from agent_workspace.runtime import Runtime
from agent_workspace.store.waits import Lease

_LEASE_SLACK = 30  # seconds past a wait's cap: its last store reads, its answer; a Lambda ends by then (timeout)


class Wait:
    """One request's wait: its slot is taken at the first `pause` (or `take`), so an answer found at once costs none."""

    def __init__(self, rt: Runtime, account_id: str, token_id: str, seconds: float) -> None:
        self._rt = rt
        self._account_id = account_id
        self._token_id = token_id
        self._seconds = seconds
        self.lease: Lease | None = None

    async def take(self) -> None:
        if self.lease is not None:
            return
        rt, settings = self._rt, self._rt.settings
        per_account = settings.account_waits_cap
        per_token = min(settings.waits_per_token, per_account)
        now = rt.clock().timestamp()
        lease = Lease(self._token_id, new_id(), math.ceil(now + self._seconds + _LEASE_SLACK))
        held = None if per_token < 1 else await run_blocking(rt.waits.take, self._account_id, lease, int(now),
                                                              per_token, per_account)  # fmt: skip
        if per_token < 1 or held is not None:
            count("WaitRefused")
            raise _refusal(held or [], self._token_id, int(now), per_token, per_account)
        self.lease = lease

    async def pause(self, seconds: float) -> None:
        await self.take()
        await pause(seconds)


@asynccontextmanager
async def waiting(rt: Runtime, account_id: str, token_id: str, seconds: float) -> AsyncIterator[Wait]:
    """A wait of at most `seconds`; its slot, once taken, is let go however the block ends (a hang-up too)."""
    wait = Wait(rt, account_id, token_id, seconds)
    try:
        yield wait
    finally:
        if wait.lease is not None:
            with anyio.CancelScope(shield=True):  # a cancelled request still lets its slot go
                await _let_go(rt, account_id, wait.lease)


async def _let_go(rt: Runtime, account_id: str, lease: Lease) -> None:
    try:
        await run_blocking(rt.waits.let_go, account_id, lease)
    except WorkspaceError as error:  # the answer stands; the lease expires on its own
        logger.warning("wait slot not let go", extra={"error": error.message})


def _refusal(held: list[Lease], token_id: str, now: int, per_token: int, per_account: int) -> RateLimited:
    mine = [lease for lease in held if lease.token_id == token_id]
    if per_token < 1:
        return RateLimited("waits are off: the API's reserved concurrency leaves no room for one; ask with wait 0",
                           retry_after=60)  # fmt: skip
    if len(mine) >= per_token:
        what, most, full = "this token", per_token, mine
    else:
        what, most, full = "this account", per_account, held
    soonest = min((lease.expires - _LEASE_SLACK for lease in full), default=now + 1)
    retry = max(1, soonest - now)
    return RateLimited(
        f"{len(full)} waits already in flight for {what}, its most at once ({most}); retry when one ends "
        f"(within {retry} s)",
        retry_after=retry,
    )
