"""Lambda entry point of the events function: SQS delivers published events in batches."""

from typing import Any

from agent_workspace.config import get_settings
from agent_workspace.observability import logger, metrics, tracer
from agent_workspace.runtime import Runtime
from agent_workspace.workers import fan_out

_runtime = Runtime.from_settings(get_settings())


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> fan_out.PartialItemFailureResponse:
    return fan_out.handle(event, context, _runtime)
