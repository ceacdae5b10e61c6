"""Lambda entry point of the API function: Function URL (payload 2.0) → Mangum → the FastAPI app."""

from aws_lambda_powertools.logging import correlation_paths
from mangum import Mangum
from mangum.adapter import DEFAULT_TEXT_MIME_TYPES
from mangum.types import LambdaContext

from agent_workspace import snapstart
from agent_workspace.app import create_app
from agent_workspace.config import get_settings
from agent_workspace.observability import logger, metrics, tracer
from agent_workspace.runtime import Runtime

_app = create_app(Runtime.from_settings(get_settings()))
# This function runs with SnapStart (agent_workspace/snapstart.py): what a cold start defers until a request needs
# it (the REST routers, each tool's models, the listings) is built before the snapshot is taken.
snapstart.register(before_snapshot=(_app.build_deferred,))

# lifespan="off": Mangum would otherwise run the app's lifespan on every invocation. Problem JSON is
# text too: without it Mangum would base64-encode every error body.
_asgi = Mangum(
    _app,
    lifespan="off",
    text_mime_types=[*DEFAULT_TEXT_MIME_TYPES, "application/problem+json"],
)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.LAMBDA_FUNCTION_URL, log_event=False)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict, context: LambdaContext) -> dict:
    return _asgi(event, context)
