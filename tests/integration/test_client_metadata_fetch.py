"""Fetching a Client ID Metadata Document over real TLS, from an HTTPS server on 127.0.0.1 that calls itself
client.example: a certificate from a test CA, a resolver that maps the made-up names to loopback, and a rule that
lets loopback through only here. Each refusal is a ClientMetadataError in words, within a bounded time."""

import datetime
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from agent_workspace.services.client_metadata import ClientMetadataError, MetadataFetcher, validate_document
from tests.outbound import SilentServer, within

HOST = "client.example"
DEADLINE = 2.0  # the fetcher's deadline in these tests (room for a loaded CI machine); a stall is held far longer
SECONDS = 5  # any fetch here ends well within this, or the test fails instead of hanging


def certificates(tmp: Path) -> tuple[Path, Path, bytes]:
    """A test CA and a certificate it signed for client.example: (certificate chain file, key file, CA in PEM)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "metadata test CA")])

    def signed(subject: x509.Name, public: Any, extensions: list[tuple[Any, bool]]) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_name)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        )
        for extension, critical in extensions:
            builder = builder.add_extension(extension, critical=critical)
        return builder.sign(ca_key, hashes.SHA256())

    usage = dict(content_commitment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
                 decipher_only=False)  # fmt: skip
    ca = signed(ca_name, ca_key.public_key(), [
        (x509.BasicConstraints(ca=True, path_length=0), True),
        (x509.KeyUsage(digital_signature=False, key_encipherment=False, key_cert_sign=True, crl_sign=True, **usage),
         True),
    ])  # fmt: skip
    leaf = signed(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)]), key.public_key(), [
        (x509.BasicConstraints(ca=False, path_length=None), True),
        (x509.KeyUsage(digital_signature=True, key_encipherment=False, key_cert_sign=False, crl_sign=False, **usage),
         True),
        (x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), False),
        (x509.SubjectAlternativeName([x509.DNSName(HOST)]), False),
    ])  # fmt: skip
    chain, key_file = tmp / "chain.pem", tmp / "key.pem"
    chain.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return chain, key_file, ca.public_bytes(serialization.Encoding.PEM)


Answer = Callable[[BaseHTTPRequestHandler], None]


class MetadataServer:
    """An HTTPS server on 127.0.0.1 answering each path as `routes` says, recording the requests it was sent;
    `release` lets go of any answer held back to outlast the fetcher's deadline."""

    def __init__(self, tmp: Path) -> None:
        chain, key, self.ca = certificates(tmp)
        self.routes: dict[str, Answer] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                server.requests.append((self.path, dict(self.headers)))
                server.routes[self.path](self)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up (the point of several tests) is not an error here

        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(chain, key)
        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self.url = f"https://{HOST}:{self.port}/oauth/client.json"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()


def answer(status: int = 200, body: bytes = b"", content_type: str = "application/json", **headers: str) -> Answer:
    def send(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        for name, value in {"Content-Type": content_type, "Content-Length": str(len(body)), **headers}.items():
            handler.send_header(name.replace("_", "-"), value)
        handler.end_headers()
        handler.wfile.write(body)

    return send


def document(url: str, **fields: Any) -> bytes:
    return json.dumps({"client_id": url, "client_name": "Example", "redirect_uris": ["https://client.example/cb"]}
                      | fields).encode()  # fmt: skip


@pytest.fixture
def server(tmp_path: Path) -> Iterator[MetadataServer]:
    running = MetadataServer(tmp_path)
    yield running
    running.close()


class Resolver:
    """Maps the test's made-up names to 127.0.0.1 (any other name does not resolve), and counts the lookups."""

    def __init__(self) -> None:
        self.lookups: list[str] = []

    def __call__(self, host: str, port: int, *args: Any) -> list[tuple[Any, ...]]:
        self.lookups.append(host)
        if not host.endswith(".example"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]


@pytest.fixture
def resolver() -> Resolver:
    return Resolver()


@pytest.fixture
def fetcher(server: MetadataServer, resolver: Resolver) -> MetadataFetcher:
    """A fetcher trusting the test CA, reaching loopback (only here), with a short deadline."""
    return MetadataFetcher(
        resolver=resolver,
        address_allowed=lambda address: address.is_loopback,
        ssl_context=ssl.create_default_context(cadata=server.ca.decode()),
        deadline_seconds=DEADLINE,
    )


def refusal(fetcher: MetadataFetcher, url: str) -> str:
    with pytest.raises(ClientMetadataError) as refused:
        within(SECONDS, fetcher.fetch, url)
    return str(refused.value)


def test_a_good_document_is_fetched_once_over_tls_and_validated(server, fetcher, resolver):
    server.routes["/oauth/client.json"] = answer(body=document(server.url, scope="read"))
    fetched = within(SECONDS, fetcher.fetch, server.url)
    assert validate_document(server.url, fetched) == {
        "client_id": server.url,
        "client_name": "Example",
        "redirect_uris": ["https://client.example/cb"],
        "token_endpoint_auth_method": "none",
        "scope": "read",
    }
    ((path, headers),) = server.requests
    assert path == "/oauth/client.json"
    assert headers["Accept"] == "application/json"
    assert headers["Host"] == f"{HOST}:{server.port}"
    assert headers["User-Agent"].startswith("agent-workspace")
    assert resolver.lookups == [HOST]  # looked up once: the address checked is the address connected to


def test_a_json_content_type_with_parameters_or_a_json_suffix_is_json(server, fetcher):
    server.routes["/oauth/client.json"] = answer(
        body=document(server.url), content_type="Application/JSON; charset=utf-8"
    )
    assert within(SECONDS, fetcher.fetch, server.url)["client_id"] == server.url
    server.routes["/oauth/client.json"] = answer(body=document(server.url), content_type="application/ld+json")
    assert within(SECONDS, fetcher.fetch, server.url)["client_id"] == server.url


def test_a_redirect_is_refused_and_not_followed(server, fetcher):
    server.routes["/oauth/client.json"] = answer(302, Location=f"https://{HOST}:{server.port}/elsewhere.json")
    server.routes["/elsewhere.json"] = answer(body=document(server.url))
    assert refusal(fetcher, server.url) == (
        f"the client's metadata document at {server.url} could not be fetched: "
        "it redirects, and redirects are not followed"
    )
    assert [path for path, _ in server.requests] == ["/oauth/client.json"]


def test_an_answer_other_than_200_is_refused_with_its_status(server, fetcher):
    server.routes["/oauth/client.json"] = answer(404, b"{}")
    assert refusal(fetcher, server.url).endswith("it answered with status 404, not 200")


@pytest.mark.parametrize("declared", [True, False], ids=["with its length", "without a length"])
def test_a_body_larger_than_5_kib_is_refused(server, fetcher, declared):
    body = document(server.url, padding="x" * 6 * 1024)

    def send(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header(*(("Content-Length", str(len(body))) if declared else ("Connection", "close")))
        handler.end_headers()
        handler.wfile.write(body)
        handler.close_connection = True

    server.routes["/oauth/client.json"] = send
    assert refusal(fetcher, server.url).endswith("it is larger than 5 KiB")


def test_a_body_of_exactly_5_kib_is_read(server, fetcher):
    body = document(server.url, padding="")
    body = document(server.url, padding="x" * (5 * 1024 - len(body)))
    assert len(body) == 5 * 1024
    server.routes["/oauth/client.json"] = answer(body=body)
    assert within(SECONDS, fetcher.fetch, server.url)["client_id"] == server.url


def stall(headers: bytes, then: Callable[[BaseHTTPRequestHandler], None]) -> Answer:
    def send(handler: BaseHTTPRequestHandler) -> None:
        handler.wfile.write(headers)
        handler.wfile.flush()
        then(handler)

    return send


def drip(server: MetadataServer, data: bytes) -> Callable[[BaseHTTPRequestHandler], None]:
    """Sends `data` a byte every 50 ms: each read is quick, only their sum outlasts the deadline."""

    def send(handler: BaseHTTPRequestHandler) -> None:
        for byte in data:
            if server.release.wait(0.05):
                return
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()

    return send


HEADERS = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n"


@pytest.mark.parametrize(
    "answer_of",
    [
        lambda server: stall(HEADERS + b"{", lambda handler: server.release.wait(SECONDS)),
        lambda server: stall(HEADERS, drip(server, b" " * 100)),
        lambda server: stall(b"", drip(server, HEADERS)),
    ],
    ids=["one byte then a stall", "a body dripping", "headers dripping"],
)
def test_an_answer_slower_than_the_deadline_is_refused_at_the_deadline(server, fetcher, answer_of):
    server.routes["/oauth/client.json"] = answer_of(server)
    started = time.monotonic()
    assert refusal(fetcher, server.url).endswith(f"it did not answer within {DEADLINE:g} seconds")
    assert time.monotonic() - started < DEADLINE + 2.0


def test_a_server_that_never_starts_tls_is_refused_at_the_deadline(fetcher):
    silent = SilentServer()
    try:
        started = time.monotonic()
        message = refusal(fetcher, f"https://{HOST}:{silent.port}/oauth/client.json")
        assert message.endswith(f"it did not answer within {DEADLINE:g} seconds")
        assert time.monotonic() - started < DEADLINE + 2.0
    finally:
        silent.close()


def test_an_answer_with_64_kib_of_headers_is_refused_unread(server, fetcher):
    server.routes["/oauth/client.json"] = answer(
        body=document(server.url), **{f"X-Pad-{i}": "x" * 2048 for i in range(40)}
    )
    assert refusal(fetcher, server.url).endswith("its answer is larger than 64 KiB")


def test_a_certificate_for_another_host_is_refused(server, fetcher):
    server.routes["/oauth/client.json"] = answer(body=document(server.url))
    url = f"https://wrong.example:{server.port}/oauth/client.json"
    message = refusal(fetcher, url)
    assert message.startswith(f"the client's metadata document at {url} could not be fetched: ")
    assert "its TLS certificate is not valid" in message
    assert server.requests == []


def test_a_certificate_from_an_untrusted_issuer_is_refused(server, resolver):
    server.routes["/oauth/client.json"] = answer(body=document(server.url))
    default_trust = MetadataFetcher(resolver=resolver, address_allowed=lambda address: address.is_loopback)
    assert "its TLS certificate is not valid" in refusal(default_trust, server.url)
    assert server.requests == []


@pytest.mark.parametrize("content_type", ["text/html", "text/json", "application/jsonp", ""])
def test_a_content_type_that_is_not_json_is_refused(server, fetcher, content_type):
    server.routes["/oauth/client.json"] = answer(body=document(server.url), content_type=content_type)
    assert refusal(fetcher, server.url).endswith(f"its content type is {content_type or 'missing'}, not JSON")


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"{not json", "it is not valid JSON"),
        (b"\xff\xfe{}", "it is not valid JSON"),
        (b'["a list"]', "it is JSON but not a JSON object"),
    ],
    ids=["broken", "not utf-8", "a list"],
)
def test_a_body_that_is_not_a_json_object_is_refused(server, fetcher, body, why):
    server.routes["/oauth/client.json"] = answer(body=body)
    assert refusal(fetcher, server.url).endswith(why)


def test_a_body_nested_as_deep_as_5_kib_allows_is_refused_not_a_crash(server, fetcher):
    server.routes["/oauth/client.json"] = answer(body=b"[" * 2560 + b"]" * 2560)
    # Refused as too deep where the interpreter's parser stops at its recursion limit, else as no object.
    assert refusal(fetcher, server.url).endswith(("it is nested too deeply", "it is JSON but not a JSON object"))


def test_a_port_where_nothing_listens_is_refused_in_words(fetcher):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert "the connection failed" in refusal(fetcher, f"https://{HOST}:{port}/oauth/client.json")


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"client_id": "https://client.example/oauth/other.json"}, "client_id"),
        ({"client_secret": "s3cret"}, "client_secret"),
        ({"redirect_uris": None}, "redirect_uris"),
    ],
)
def test_a_fetched_document_breaking_a_rule_is_refused_naming_the_field(server, fetcher, fields, field):
    server.routes["/oauth/client.json"] = answer(body=document(server.url, **fields))
    fetched = within(SECONDS, fetcher.fetch, server.url)
    with pytest.raises(ClientMetadataError) as refused:
        validate_document(server.url, {k: v for k, v in fetched.items() if v is not None})
    assert refused.value.field == field
