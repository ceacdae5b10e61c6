"""The notification rules: addresses and webhook URLs accepted, quiet hours across midnight and DST, answer links."""

from datetime import UTC, datetime, time

import pytest

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.notifications import (
    LINK_MAX,
    QuietHours,
    blocker_detail,
    check_email,
    check_slack_url,
    check_triggers,
    parse_quiet_hours,
    read_link,
    sign_link,
)
from agent_workspace.domain.web_push import check_push_endpoint

KEY = b"k" * 32
NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("address", ["me@example.com", "a.b+c@sub.example.co.uk"])
def test_plain_addresses_are_accepted(address):
    assert check_email(address) == address


@pytest.mark.parametrize(
    "address", ["me", "me@", "@example.com", "me@example", "m e@example.com", "a@b@c.d", "x" * 65 + "@e.com"]
)
def test_malformed_addresses_are_refused_naming_the_field(address):
    with pytest.raises(PayloadError) as refused:
        check_email(address)
    assert refused.value.field == "email"


def test_only_slacks_webhook_host_is_accepted_on_a_deployed_stack():
    assert check_slack_url("https://hooks.slack.com/services/T0/B0/x", allow_loopback=False)
    for url in [
        "http://hooks.slack.com/services/T0/B0/x",
        "https://hooks.slack.com.evil.example/services/x",
        "https://evil.example/services/x",
        "https://user@hooks.slack.com/services/x",
        "https://hooks.slack.com:8443/services/x",
        "https://hooks.slack.com/other",
        "http://127.0.0.1:9000/hook",
        "http://169.254.169.254/latest/meta-data",
        "https://hooks.slack.com:99999/services/x",
    ]:
        with pytest.raises(PayloadError):
            check_slack_url(url, allow_loopback=False)


def test_the_local_stack_may_post_to_a_loopback_receiver_but_nowhere_else():
    assert check_slack_url("http://127.0.0.1:9000/hook", allow_loopback=True)
    with pytest.raises(PayloadError):
        check_slack_url("http://10.0.0.1:9000/hook", allow_loopback=True)


# Hosts a check by urlsplit reads one way and the sender (urllib.request, which unquotes the host) another: a
# %-escape, a backslash, user info, a control character, a non-ASCII dot. Refused, never normalised.
AMBIGUOUS_HOSTS = [
    "evil.example%2F.{host}",
    "evil.example%00.{host}",
    "{host}%2Eevil.example",
    "evil.example\\.{host}",
    "evil.example\\@{host}",
    "evil.example@{host}",
    ":@{host}",
    "evil.example\t.{host}",
    "evil.example\uff0e{host}",
    "{HOST}",
    "{host}.",
    "{host}:443@evil.example",
    "[::1].{host}",
]


@pytest.mark.parametrize("host", AMBIGUOUS_HOSTS)
def test_a_slack_url_whose_host_parsers_could_read_differently_is_refused(host):
    url = f"https://{host.format(host='hooks.slack.com', HOST='HOOKS.SLACK.COM')}/services/T0/B0/x"
    with pytest.raises(PayloadError) as refused:
        check_slack_url(url, allow_loopback=False)
    assert refused.value.field == "slackWebhookUrl"


@pytest.mark.parametrize("host", AMBIGUOUS_HOSTS)
@pytest.mark.parametrize("service", ["fcm.googleapis.com", "wns2-par02p.notify.windows.com", "web.push.apple.com"])
def test_a_push_endpoint_whose_host_parsers_could_read_differently_is_refused(host, service):
    url = f"https://{host.format(host=service, HOST=service.upper())}/fcm/send/abc"
    with pytest.raises(PayloadError) as refused:
        check_push_endpoint(url, allow_loopback=False)
    assert refused.value.field == "endpoint"


def test_push_endpoints_of_the_browsers_services_are_accepted_with_escapes_in_their_query():
    for url in [
        "https://fcm.googleapis.com/fcm/send/dGVzdA:APA91b",
        "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABk",
        "https://wns2-par02p.notify.windows.com/w/?token=AwYAAAD%2bXw%3d%3d",
        "https://web.push.apple.com/QGx8",
    ]:
        assert check_push_endpoint(url, allow_loopback=False) == url


def test_triggers_are_checked_and_kept_in_their_documented_order():
    assert check_triggers(["review", "question"]) == ("question", "review")
    with pytest.raises(PayloadError, match="'gossip'"):
        check_triggers(["question", "gossip"])


def test_quiet_hours_across_midnight_hold_until_the_morning_in_the_humans_zone():
    quiet = QuietHours(time(22, 0), time(7, 0), "Europe/Istanbul")  # UTC+3
    assert quiet.held_until(datetime(2026, 12, 3, 20, 30, tzinfo=UTC)) == datetime(2026, 12, 4, 4, 0, tzinfo=UTC)
    assert quiet.held_until(datetime(2026, 12, 4, 2, 0, tzinfo=UTC)) == datetime(2026, 12, 4, 4, 0, tzinfo=UTC)
    assert quiet.held_until(datetime(2026, 12, 4, 4, 0, tzinfo=UTC)) is None  # 07:00 local: over
    assert quiet.held_until(datetime(2026, 12, 3, 12, 0, tzinfo=UTC)) is None


def test_a_same_day_window_and_an_empty_one():
    lunch = QuietHours(time(12, 0), time(13, 0), "UTC")
    assert lunch.held_until(datetime(2026, 12, 3, 12, 30, tzinfo=UTC)) == datetime(2026, 12, 3, 13, 0, tzinfo=UTC)
    assert lunch.held_until(datetime(2026, 12, 3, 13, 0, tzinfo=UTC)) is None
    assert QuietHours(time(9, 0), time(9, 0), "UTC").held_until(NOW) is None


def test_the_window_ends_at_the_local_wall_time_across_a_dst_change():
    quiet = QuietHours(time(22, 0), time(7, 0), "Europe/Berlin")  # DST ends 2026-10-25 03:00 → 02:00
    held = quiet.held_until(datetime(2026, 10, 24, 21, 0, tzinfo=UTC))  # 23:00 CEST
    assert held == datetime(2026, 10, 25, 6, 0, tzinfo=UTC)  # 07:00 CET


def test_quiet_hours_are_parsed_strictly():
    parsed = parse_quiet_hours({"start": "22:00", "end": "07:30", "timeZone": "America/New_York"})
    assert parsed is not None and parsed.public() == {"start": "22:00", "end": "07:30", "timeZone": "America/New_York"}
    for raw, field in [
        ({"start": "24:00", "end": "07:00", "timeZone": "UTC"}, "quietHours.start"),
        ({"start": "22:00", "end": "7", "timeZone": "UTC"}, "quietHours.end"),
        ({"start": "22:00", "end": "07:00", "timeZone": "Mars/Olympus"}, "quietHours.timeZone"),
        ({"start": "22:00", "end": "07:00", "timeZone": "../../etc/passwd"}, "quietHours.timeZone"),
    ]:
        with pytest.raises(PayloadError) as refused:
            parse_quiet_hours(raw)
        assert refused.value.field == field


def test_a_signed_link_reads_back_its_claims_until_it_expires():
    claims = {"k": "question", "ws": "w", "id": "q", "c": "yes", "exp": int(NOW.timestamp()) + 60}
    token = sign_link(KEY, claims)
    assert read_link(KEY, token, NOW) == claims
    with pytest.raises(PayloadError, match="expired"):
        read_link(KEY, token, datetime.fromtimestamp(claims["exp"], UTC))


def test_a_link_changed_signed_with_another_key_or_malformed_is_refused():
    claims = {"k": "question", "id": "q", "c": "yes", "exp": int(NOW.timestamp()) + 60}
    token = sign_link(KEY, claims)
    body, mac = token.split(".")
    other = sign_link(KEY, {**claims, "id": "another"}).split(".")[0]
    for bad in [
        f"{other}.{mac}",  # another question's claims under this link's signature
        sign_link(b"x" * 32, claims),
        token + "x",
        "a.b.c",
        "!!.??",
        "x" * (LINK_MAX + 1),
        "",
    ]:
        with pytest.raises(PayloadError, match="not one the workspace made"):
            read_link(KEY, bad, NOW)


@pytest.mark.parametrize("name", ["x" * 5000, "Europe/../../etc/passwd", "", "europe/berlin"])
def test_a_zone_name_that_is_no_iana_zone_is_refused_without_reading_a_file(name, monkeypatch):
    from agent_workspace.domain import zones

    def never(*args):
        raise AssertionError("a file was looked up for a name that is no zone")

    monkeypatch.setattr(zones, "ZoneInfo", never)
    with pytest.raises(PayloadError) as refused:
        parse_quiet_hours({"start": "22:00", "end": "07:00", "timeZone": name})
    assert refused.value.field == "quietHours.timeZone"


def test_a_blockers_detail_numbers_its_questions_one_bounded_line_each_else_falls_back():
    many = tuple(f"Question {n}?\n(details)" for n in range(12))
    lines = blocker_detail(many, "the description").splitlines()
    assert lines[0] == "1. Question 0? (details)" and lines[-1] == "10. Question 9? (details)" and len(lines) == 10
    assert blocker_detail(("x" * 600,), "d") == "1. " + "x" * 499 + "…"
    assert blocker_detail((), "the description") == "the description"
