"""Issue 32: the URLs the server posts to (a Slack webhook, a browser's push endpoint), checked by one parser and
sent by another.

The checks read a URL with `urlsplit`; the sender is `urllib.request`, which unquotes the host, and `http.client`,
which splits host and port its own way. URLs are built from an allowed host with hostile text around it: %-escapes,
backslashes, `@`, `:`, brackets, controls, a fullwidth dot, upper case.

The property: a URL a check accepts is one the sender connects to exactly an allowed host, on port 443; anything
else is refused naming the field, never an exception of another kind. `FUZZ_EXAMPLES` sets the examples.
"""

import http.client
import urllib.request

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.notifications import SLACK_HOST, check_slack_url
from agent_workspace.domain.web_push import PUSH_HOST_SUFFIXES, PUSH_HOSTS, check_push_endpoint
from tests.fuzz.test_tools_fuzz import FUZZ

HOSTILE = ["%", "%2e", "%2E", "%2f", "%40", "%00", "%5c", "\\", "@", ":", ":443", "[", "]", ".", "/", "#", "?"]
HOSTILE += ["\t", "\n", "\x00", " ", "\uff0e", "\u3002", "A", "evil.example", "evil.example.", "user:pw@"]
hostile_text = st.lists(st.sampled_from(HOSTILE), max_size=4).map("".join)


def url_around(hosts: list[str], path: str) -> st.SearchStrategy[str]:
    """`https://<hostile><host><hostile>[:port]<path>`, the host in its case or upper-cased."""
    host = st.sampled_from(hosts).flatmap(lambda h: st.sampled_from([h, h.upper()]))
    port = st.sampled_from(["", ":443", ":8443", ":0443", ":"])
    scheme = st.sampled_from(["https://", "http://", "HTTPS://", "https:/", "https:\\\\"])
    return st.tuples(scheme, hostile_text, host, hostile_text, port, st.just(path)).map("".join)


def sent_to(url: str) -> tuple[str, int]:
    """The host and port the sender would connect to: urllib.request's host, split as http.client splits it."""
    connection = http.client.HTTPSConnection(urllib.request.Request(url).host)
    return connection.host, connection.port


def push_host(host: str) -> bool:
    return host in PUSH_HOSTS or host.endswith(PUSH_HOST_SUFFIXES)


@FUZZ
@given(url=url_around([SLACK_HOST], "/services/T0/B0/x"))
@example(url="https://evil.example%2F.hooks.slack.com/services/T0/B0/x")
@example(url="https://:@hooks.slack.com/services/T0/B0/x")
def test_a_slack_url_is_accepted_only_if_it_is_sent_to_slack(url):
    try:
        check_slack_url(url, allow_loopback=False)
    except PayloadError as refused:
        assert refused.field == "slackWebhookUrl"
        return
    assert sent_to(url) == (SLACK_HOST, 443)


@FUZZ
@given(url=url_around(["fcm.googleapis.com", "web.push.apple.com", "wns2-par02p.notify.windows.com"], "/send/x"))
@example(url="https://evil.example%2F.web.push.apple.com/send/x")
@example(url="https://evil.example\\.wns2-par02p.notify.windows.com/send/x")
def test_a_push_endpoint_is_accepted_only_if_it_is_sent_to_a_push_service(url):
    try:
        check_push_endpoint(url, allow_loopback=False)
    except PayloadError as refused:
        assert refused.field == "endpoint"
        return
    host, port = sent_to(url)
    assert push_host(host) and port == 443, (url, host, port)


@pytest.mark.parametrize(
    ("check", "url"),
    [
        (check_slack_url, "https://evil.example%2F.hooks.slack.com/services/x"),
        (check_push_endpoint, "https://evil.example%2F.web.push.apple.com/x"),
    ],
)
def test_the_sender_would_have_gone_elsewhere_for_what_is_refused(check, url):
    """Why the checks refuse %-escapes in a host: the sender unquotes them, so it would not reach the host checked."""
    assert sent_to(url)[0].startswith("evil.example/")
    with pytest.raises(PayloadError):
        check(url, allow_loopback=False)
