"""Request handlers whose module is imported by the first request that needs it.

A cold start serves an agent's first call; the resources, skills and prompts it may never ask for (and the services,
rules and YAML parser behind them) need not be built for it. Under SnapStart every module is imported before the
snapshot (`mcp_server.server.build_all`), so a restored instance pays nothing on the first call either.
"""

import importlib
from collections.abc import Awaitable, Callable
from typing import Any

Handler = Callable[[Any, Any], Awaitable[Any]]


def deferred(module: str, name: str, *bound: Any) -> Handler:
    """The request handler `module.name` (given `bound` before the request's own two arguments), imported when it is
    first called; after that, a lookup in sys.modules."""

    async def handler(ctx: Any, params: Any) -> Any:
        return await getattr(importlib.import_module(module), name)(*bound, ctx, params)

    handler.__qualname__ = f"deferred:{module}.{name}"
    return handler
