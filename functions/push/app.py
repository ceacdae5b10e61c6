"""Lambda entry point of the push function: the WebSocket API's $connect, $disconnect and $default routes."""

from typing import Any

from agent_workspace.config import get_settings
from agent_workspace.observability import logger, metrics, tracer
from agent_workspace.runtime import Runtime
from agent_workspace.workers import sockets

_runtime = Runtime.from_settings(get_settings())


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return sockets.handle(event, _runtime)
