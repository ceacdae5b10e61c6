"""The one Logger, Tracer and Metrics every entry point shares (service name from POWERTOOLS_SERVICE_NAME)."""

import os
import warnings

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger()
tracer = Tracer()
# Powertools flushes every 100 data points even outside a handler (the local server) and refuses to
# serialise without a namespace; the template sets one, this fallback covers everything else.
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "AgentWorkspace")

# Most requests (help, reads) publish no business metric; Powertools would warn on each of them.
warnings.filterwarnings("ignore", message="No application metrics to publish")


def count(event: str) -> None:
    """Record one business event (task created, workspace created, ...)."""
    metrics.add_metric(name=event, unit=MetricUnit.Count, value=1)
