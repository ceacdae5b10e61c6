"""boto3 clients from one Session: DynamoDB's made with the runtime at init, the others on first use.

Every request needs DynamoDB (its token lookup), so building that client at init moves ~0.4 s out of the
first request and, under SnapStart, into the snapshot. Building a client makes no connection, so nothing
stale is captured. S3, SQS, Scheduler and the WebSocket API's connections wait until a request needs them.
"""

import ipaddress
import threading
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

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


# Posting a push is a hint sent while the events function holds a batch: a stalled connection is given up quickly
# (the client catches up from its cursor) instead of holding the other messages.
_PUSH_CONFIG = _CONFIG.merge(Config(retries={"mode": "standard", "max_attempts": 2}, connect_timeout=2, read_timeout=3))


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

    def _client(self, service: str, config: Config = _CONFIG, endpoint_url: str | None = None) -> Any:
        """A client of `service`; at the local endpoint when there is one (every AWS call goes there), else at
        `endpoint_url` (a service with an endpoint of its own, the WebSocket API's) or the region's."""
        with self._lock:
            return self._session.client(
                service, region_name=self._region, endpoint_url=self._endpoint_url or endpoint_url, config=config
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

    def connections(self, callback_url: str) -> Any:
        """The WebSocket API's connection API (`@connections`) at its callback URL, `https://<api>.execute-api.
        <region>.amazonaws.com/<stage>`. Under a local endpoint, a loopback callback is `make serve`'s own WebSocket
        gateway (`local.push_gateway`) and is used as it is; any other goes to the moto server, like every AWS call."""
        if self._endpoint_url and _loopback(callback_url):
            with self._lock:
                return self._session.client(
                    "apigatewaymanagementapi", region_name=self._region, endpoint_url=callback_url, config=_PUSH_CONFIG
                )
        return self._client("apigatewaymanagementapi", _PUSH_CONFIG, callback_url)


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
