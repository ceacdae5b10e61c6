"""boto3 clients from one Session: DynamoDB's made with the runtime at init, the others on first use.

Every request needs DynamoDB (its token lookup), so building that client at init moves ~0.4 s out of the
first request and, under SnapStart, into the snapshot. Building a client makes no connection, so nothing
stale is captured. S3, SQS and Scheduler wait until a request needs them.
"""

import threading
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

# Buckets made since 2020 refuse SigV2, which botocore still uses to presign GETs unless told otherwise; and
# path-style addressing is deprecated on AWS. A local endpoint (moto on loopback) cannot resolve bucket
# subdomains, so it keeps path-style; the signature is SigV4 everywhere.
S3_SIGNATURE = "s3v4"


def s3_config(endpoint_url: str | None) -> Config:
    addressing = "path" if endpoint_url else "virtual"
    return _CONFIG.merge(Config(signature_version=S3_SIGNATURE, s3={"addressing_style": addressing}))


class AwsClients:
    def __init__(self, region: str | None, endpoint_url: str | None = None) -> None:
        """`region` None leaves it to boto3's own chain (AWS_DEFAULT_REGION, the profile)."""
        import boto3  # deferred to here: a module that only imports this one pays nothing

        self._region = region
        self._endpoint_url = endpoint_url
        self._session = boto3.session.Session()
        self._lock = threading.Lock()  # a boto3 Session is not safe to make clients from two threads at once

    def _client(self, service: str, config: Config = _CONFIG) -> Any:
        with self._lock:
            return self._session.client(
                service, region_name=self._region, endpoint_url=self._endpoint_url, config=config
            )

    @cached_property
    def dynamodb(self) -> Any:
        return self._client("dynamodb")

    @cached_property
    def s3(self) -> Any:
        return self._client("s3", s3_config(self._endpoint_url))

    @cached_property
    def sqs(self) -> Any:
        return self._client("sqs")

    @cached_property
    def scheduler(self) -> Any:
        return self._client("scheduler")

    @cached_property
    def sesv2(self) -> Any:
        return self._client("sesv2")

    @cached_property
    def secretsmanager(self) -> Any:
        return self._client("secretsmanager")
