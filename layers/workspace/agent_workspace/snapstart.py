"""What a SnapStart snapshot must not carry into the instances restored from it.

Lambda runs init once, snapshots the memory, and resumes many execution environments from that one image:
anything random drawn at init would be the same in all of them. IDs and tokens come from `secrets`
(os.urandom, fresh per call), but the `random` module's state is in the snapshot, so every restored
instance would draw the same back-off jitter and the same dequeue candidates, and collide together.
Reseeding after restore gives each its own. No connection is opened at init (building a boto3 client
makes none), so nothing else goes stale.

The hooks module exists only in Lambda's Python runtime (3.12 and later); elsewhere this is a no-op.


What a cold start defers (the REST API's routers, built on the first request that needs them: `app.LazyRestApp`)
is built before the snapshot instead, by the `before_snapshot` hooks: a restored instance has it all, as if it had
been imported eagerly, and a function without SnapStart pays only for what its requests use.
"""

import random
from collections.abc import Callable


def reseed_after_restore() -> None:
    random.seed()  # from os.urandom, in this restored instance


def register(before_snapshot: tuple[Callable[[], None], ...] = ()) -> bool:
    """Register the runtime hooks; False where there is no SnapStart runtime (tests, the local stack)."""
    try:
        from snapshot_restore_py import register_after_restore, register_before_snapshot
    except ImportError:
        return False
    for build in before_snapshot:
        register_before_snapshot(build)
    register_after_restore(reseed_after_restore)
    return True
