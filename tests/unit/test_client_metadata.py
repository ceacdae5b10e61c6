"""Client ID Metadata Documents: which client_ids name one, which addresses may be fetched, which documents are
used; and that an address outside the public internet is refused before any connection is made. The fetch over a
real TLS connection is in tests/integration/test_client_metadata_fetch.py."""

import ipaddress
import socket
from typing import Any

import pytest

from agent_workspace.services.client_metadata import (
    ClientMetadataError,
    MetadataFetcher,
    is_metadata_document_url,
    public_address,
    validate_document,
)

URL = "https://client.example/oauth/client.json"


def document(**fields: Any) -> dict[str, Any]:
    """A document every rule accepts, with `fields` changed (None removes one)."""
    base = {"client_id": URL, "client_name": "Example", "redirect_uris": ["https://client.example/callback"]}
    return {k: v for k, v in (base | fields).items() if v is not None}


@pytest.mark.parametrize(
    "client_id",
    [URL, "https://client.example:8443/c", "https://client.example/c?v=1", "https://[2001:db8::1]/c"],
)
def test_an_https_url_with_a_path_names_a_metadata_document(client_id):
    assert is_metadata_document_url(client_id)


@pytest.mark.parametrize(
    "client_id",
    [
        "http://client.example/c",
        "HTTPS://client.example/c",
        "https://client.example",
        "https://client.example/",
        "https:///c",
        "https://client.example/c#top",
        "https://client.example/c#",
        "https://user@client.example/c",
        "https://user:pw@client.example/c",
        "https://client.example/a/../c",
        "https://client.example/a/./c",
        "https://client.example/a/%2e%2E/c",
        "https://client.example/..",
        "https://client.example:99999/c",
        "https://client.example:port/c",
        "https://client.example/a c",
        "https://client.example/c\n",
        "https://client.example\\@evil.example/c",
        "https://clíent.example/c",
        "https://client.example/" + "a" * 490,
        "3f2a-opaque-dynamic-client-id",
        "",
    ],
)
def test_anything_else_is_not_a_metadata_document_url(client_id):
    assert not is_metadata_document_url(client_id)


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.215.14", True),
        ("2606:4700::1", True),
        ("10.0.0.1", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("100.64.0.1", False),
        ("127.0.0.1", False),
        ("169.254.169.254", False),
        ("0.0.0.0", False),
        ("224.0.0.251", False),
        ("::1", False),
        ("fe80::1", False),
        ("fd00:ec2::254", False),
        ("ff02::1", False),
        # IPv6 forms that carry an IPv4 address a gateway may route on: refused, never unwrapped and trusted.
        ("::7f00:1", False),
        ("::5db8:d70e", False),
        ("::ffff:0:7f00:1", False),
        ("2002:7f00:1::1", False),
        ("2002:5db8:d70e::1", False),
        ("64:ff9b:1::7f00:1", False),
    ],
)
def test_only_an_address_on_the_public_internet_may_be_fetched(address, public):
    assert public_address(ipaddress.ip_address(address)) is public


class Resolver:
    """Answers every lookup with `addresses`, and records the lookups."""

    def __init__(self, *addresses: str) -> None:
        self.addresses, self.lookups = addresses, []

    def __call__(self, host: str, port: int, *args: Any) -> list[tuple[Any, ...]]:
        self.lookups.append(host)
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (a, port, 0, 0))
            if ":" in a
            else (socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in self.addresses
        ]


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every connection attempted in the test, refused: these tests must end before one is made."""
    attempted: list[Any] = []

    def connect(sock: socket.socket, address: Any) -> None:
        attempted.append(address)
        raise AssertionError(f"a connection to {address} was attempted")

    monkeypatch.setattr(socket.socket, "connect", connect)
    return attempted


@pytest.mark.parametrize(
    "addresses",
    [
        ["10.0.0.1"],
        ["127.0.0.1"],
        ["169.254.169.254"],
        ["::1"],
        ["::ffff:127.0.0.1"],
        ["::ffff:169.254.169.254"],
        ["64:ff9b::a9fe:a9fe"],  # NAT64 of 169.254.169.254
        ["93.184.215.14", "10.0.0.1"],
        ["10.0.0.1", "93.184.215.14"],
    ],
)
def test_a_host_leading_to_any_address_that_is_not_public_is_refused_before_connecting(addresses, connections):
    fetcher = MetadataFetcher(resolver=Resolver(*addresses))
    with pytest.raises(ClientMetadataError) as refused:
        fetcher.fetch(URL)
    assert str(refused.value) == (
        f"the client's metadata document at {URL} could not be fetched: "
        "its host name client.example leads to an address that is not public"
    )
    assert connections == []


def test_a_host_that_does_not_resolve_is_refused_in_words(connections):
    def resolver(*args: Any) -> list[Any]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(ClientMetadataError, match="its host name client.example does not resolve"):
        MetadataFetcher(resolver=resolver).fetch(URL)
    with pytest.raises(ClientMetadataError, match="does not resolve"):
        MetadataFetcher(resolver=Resolver()).fetch(URL)


def test_a_plain_http_url_is_refused_without_even_a_lookup(connections):
    resolver = Resolver("93.184.215.14")
    with pytest.raises(ClientMetadataError, match="it is not an https URL with a path"):
        MetadataFetcher(resolver=resolver).fetch("http://client.example/oauth/client.json")
    assert resolver.lookups == []


def test_a_document_that_follows_every_rule_gives_the_fields_we_use():
    given = document(client_uri="https://client.example", logo_uri="https://client.example/l.png", scope="read",
                     grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                     contacts=["ops@client.example"], software_id="x")  # fmt: skip
    assert validate_document(URL, given) == {
        "client_id": URL,
        "client_name": "Example",
        "client_uri": "https://client.example",
        "redirect_uris": ["https://client.example/callback"],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "scope": "read",
    }


def test_a_document_without_a_name_or_auth_method_is_a_public_client_without_a_name():
    cleaned = validate_document(URL, document(client_name=None))
    assert cleaned == {"client_id": URL, "redirect_uris": ["https://client.example/callback"],
                       "token_endpoint_auth_method": "none"}  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "field", "why"),
    [
        ({"client_id": "https://client.example/oauth/other.json"}, "client_id", "does not match the URL"),
        ({"client_id": URL + "/"}, "client_id", "does not match the URL"),
        ({"client_id": None}, "client_id", "does not match the URL"),
        ({"client_secret": "s3cret"}, "client_secret", "must not hold a secret"),
        ({"client_secret_expires_at": 0}, "client_secret_expires_at", "must not hold a secret"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, "token_endpoint_auth_method", "does not support"),
        ({"token_endpoint_auth_method": "client_secret_basic"}, "token_endpoint_auth_method", "only 'none'"),
        ({"redirect_uris": None}, "redirect_uris", "at least one"),
        ({"redirect_uris": []}, "redirect_uris", "at least one"),
        ({"redirect_uris": "https://client.example/callback"}, "redirect_uris", "list of strings"),
        ({"redirect_uris": [7]}, "redirect_uris", "list of strings"),
        ({"redirect_uris": [f"https://client.example/{i}" for i in range(21)]}, "redirect_uris", "at most 20"),
        ({"client_name": "x" * 201}, "client_name", "longer than 200 characters"),
        ({"client_name": ["Example"]}, "client_name", "must be a string"),
        ({"client_uri": {"href": "https://client.example"}}, "client_uri", "must be a string"),
        ({"logo_uri": 1}, "logo_uri", "must be a string"),
        ({"grant_types": "authorization_code"}, "grant_types", "list of strings"),
    ],
)
def test_a_document_breaking_a_rule_is_refused_naming_the_field(fields, field, why):
    with pytest.raises(ClientMetadataError) as refused:
        validate_document(URL, document(**fields))
    assert refused.value.field == field
    assert str(refused.value).startswith(f"the client's metadata document at {URL} is not usable: {field} ")
    assert why in str(refused.value)


def test_a_name_of_exactly_200_characters_is_kept_whole():
    assert validate_document(URL, document(client_name="x" * 200))["client_name"] == "x" * 200
