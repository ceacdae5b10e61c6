"""A site is its origin: spellings of the same origin are one site, anything more than an origin is refused."""

import pytest

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.site_tools import normalise_origin


@pytest.mark.parametrize(
    ("given", "origin"),
    [
        ("https://github.com", "https://github.com"),
        ("https://GitHub.com/", "https://github.com"),
        ("https://github.com:443", "https://github.com"),
        ("http://localhost:80/", "http://localhost"),
        ("http://localhost:8080", "http://localhost:8080"),
        ("https://[::1]:8443", "https://[::1]:8443"),
    ],
)
def test_spellings_of_one_origin_are_one_site(given, origin):
    assert normalise_origin(given) == origin


@pytest.mark.parametrize(
    "given",
    [
        "ftp://github.com",
        "javascript:alert(1)",
        "https://github.com/issues",
        "https://github.com/?q=1",
        "https://github.com/#top",
        "https://user:pw@github.com",
        "https://github.com:abc",
        "https://github.com:99999",
        "https://[::1",
        "github.com",
    ],
)
def test_anything_but_an_origin_is_refused_naming_the_field(given):
    with pytest.raises(PayloadError) as refused:
        normalise_origin(given, "sites[0].origin")
    assert refused.value.field == "sites[0].origin"
