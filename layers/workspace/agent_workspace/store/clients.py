"""boto3 clients, created on first use so a cold start that never needs S3 never pays for it."""

from functools import cached_property
from typing import Any

from botocore.config import Config

_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 3},  # bounded retries with backoff on throttling and 5xx
    connect_timeout=3,
    read_timeout=10,
    # One request at a time on Lambda; the local stack and the tests serve many at once from one process.
    max_pool_connections=64,
)


class AwsClients:
    def __init__(self, region: str | None, endpoint_url: str | None = None) -> None:
        """`region` None leaves it to boto3's own chain (AWS_DEFAULT_REGION, the profile)."""
        self._region = region
        self._endpoint_url = endpoint_url

    def _client(self, service: str) -> Any:
        import boto3  # deferred: importing boto3 and loading a service model is the costliest part of a cold start

        return boto3.session.Session().client(
            service, region_name=self._region, endpoint_url=self._endpoint_url, config=_CONFIG
        )

    @cached_property
    def dynamodb(self) -> Any:
        return self._client("dynamodb")

    @cached_property
    def s3(self) -> Any:
        return self._client("s3")

    @cached_property
    def sqs(self) -> Any:
        return self._client("sqs")

    @cached_property
    def scheduler(self) -> Any:
        return self._client("scheduler")
