"""Only the local stack's own AWS clients reach its moto server.

moto answers any request that finds its port: any Host, any signature, and CORS for any Origin, so a web
page could read and write the local table and bucket (tokens included) around the app's own checks. The
gate in front of it lets through only requests signed (SigV4) with this process's random secret key,
which never travels: a presigned link carries its signature, good for that one object, and not the key.
A request must also name moto's own loopback address as its Host (no DNS rebinding) and carry no Origin
(AWS SDKs never send one; a browser always does on a cross-origin write), and no answer carries CORS.
"""

import hashlib
import hmac
import io
import secrets
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, unquote

from botocore.utils import normalize_url_path

# The process's credentials for moto: the key ID starts with letters, since moto takes a 12-digit one for an
# account ID. Random per process, so no other process (nor a page guessing "test"/"local") can sign.
ACCESS_KEY_ID = "LOCAL" + secrets.token_hex(8).upper()
SECRET_ACCESS_KEY = secrets.token_urlsafe(32)
CREDENTIALS = {"AWS_ACCESS_KEY_ID": ACCESS_KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY}

_ALGORITHM = "AWS4-HMAC-SHA256"
_UNSIGNED = "UNSIGNED-PAYLOAD"

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class Gate:
    """WSGI middleware: refuse (403) whatever the process's own clients did not sign; strip CORS from answers."""

    def __init__(self, app: WsgiApp) -> None:
        self._app = app
        self._hosts: set[str] = set()  # none until the server has bound its port: everything is refused

    def allow_hosts(self, hosts: set[str]) -> None:
        self._hosts = {host.lower() for host in hosts}

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        refusal = self._refusal(environ)
        if refusal is not None:
            body = f"refused by the local stack's gate: {refusal}\n".encode()
            start_response("403 Forbidden", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
            return [body]

        def without_cors(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            kept = [(name, value) for name, value in headers if not name.lower().startswith("access-control-")]
            return start_response(status, kept, exc_info)

        return self._app(environ, without_cors)

    def _refusal(self, environ: dict[str, Any]) -> str | None:
        if environ.get("HTTP_HOST", "").lower() not in self._hosts:
            return "unknown Host"
        if "HTTP_ORIGIN" in environ:
            return "requests from web pages are not served"
        if not signed_by_this_process(environ):
            return "not signed with this process's credentials"
        return None


def signed_by_this_process(environ: dict[str, Any]) -> bool:
    """Recompute the request's SigV4 signature with our secret, as botocore computed it, and compare."""
    raw_query = environ.get("QUERY_STRING", "")
    pairs = [pair.partition("=") for pair in raw_query.split("&")] if raw_query else []
    query = {key: unquote(value) for key, _, value in pairs}
    if "X-Amz-Signature" in query:  # a presigned link: everything is in the query string
        if query.get("X-Amz-Algorithm") != _ALGORITHM or _expired(query):
            return False
        credential, signed = query.get("X-Amz-Credential", ""), query.get("X-Amz-SignedHeaders", "")
        signature = query["X-Amz-Signature"]
        amz_date = query.get("X-Amz-Date", "")
        pairs = [pair for pair in pairs if pair[0] != "X-Amz-Signature"]
        payload = _UNSIGNED
    else:
        fields = _authorization(environ.get("HTTP_AUTHORIZATION", ""))
        if fields is None:
            return False
        credential, signed, signature = fields["Credential"], fields["SignedHeaders"], fields["Signature"]
        amz_date = environ.get("HTTP_X_AMZ_DATE", "")
        payload = environ.get("HTTP_X_AMZ_CONTENT_SHA256") or hashlib.sha256(_body(environ)).hexdigest()
    scope = credential.split("/")
    if len(scope) != 5 or scope[0] != ACCESS_KEY_ID or scope[4] != "aws4_request" or scope[1] != amz_date[:8]:
        return False
    _, date, region, service, _ = scope
    raw_path = environ.get("RAW_URI", environ.get("PATH_INFO", "/")).split("?", 1)[0]
    # botocore normalises and re-quotes every path but S3's (SigV4's rule), so the server does too.
    path = raw_path if service == "s3" else quote(normalize_url_path(raw_path), safe="/~")
    names = signed.split(";")
    canonical = "\n".join(
        [
            environ.get("REQUEST_METHOD", "").upper(),
            path,
            "&".join(f"{key}={value}" for key, value in sorted((key, value) for key, _, value in pairs)),
            "".join(f"{name}:{' '.join(_header(environ, name).split())}\n" for name in names),
            signed,
            payload,
        ]
    )
    to_sign = "\n".join([_ALGORITHM, amz_date, "/".join(scope[1:]), hashlib.sha256(_wire(canonical)).hexdigest()])
    key = f"AWS4{SECRET_ACCESS_KEY}".encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


def _authorization(header: str) -> dict[str, str] | None:
    algorithm, _, rest = header.partition(" ")
    if algorithm != _ALGORITHM:
        return None
    fields = dict(part.strip().partition("=")[::2] for part in rest.split(","))
    return fields if {"Credential", "SignedHeaders", "Signature"} <= fields.keys() else None


def _expired(query: dict[str, str]) -> bool:
    try:
        signed_at = datetime.strptime(query["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        return datetime.now(UTC) > signed_at + timedelta(seconds=int(query["X-Amz-Expires"]))
    except (KeyError, ValueError):
        return True


def _header(environ: dict[str, Any], name: str) -> str:
    key = name.upper().replace("-", "_")
    return environ.get(key if key in ("CONTENT_TYPE", "CONTENT_LENGTH") else f"HTTP_{key}", "")


def _body(environ: dict[str, Any]) -> bytes:
    """The request's body, read to hash it and put back for moto to read again."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    body = environ["wsgi.input"].read(length) if length > 0 else b""
    environ["wsgi.input"] = io.BytesIO(body)
    return body


def _wire(text: str) -> bytes:
    """The bytes botocore hashed: WSGI decodes what came over the wire as latin-1, so encoding back restores them."""
    return text.encode("latin-1", errors="replace")
