"""Fire-time table vs croniter: the real chain (create → armed at() → fire → re-armed at()) on moto.

For each expression the test computes the fire times itself, with one croniter iterator in the
template's zone converted to UTC, and checks that the schedule armed on EventBridge Scheduler (moto)
names exactly those instants, one after another, as the fire handler re-arms it on every firing.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from croniter import croniter

from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.models import Actor
from agent_workspace.services.tasks import NewTask, create_task
from agent_workspace.store.schedules import schedule_name
from agent_workspace.workers import fire_schedule

FIRINGS = 5  # fire times checked per expression: the first armed one and four re-arms


@dataclass(frozen=True)
class Row:
    expression: str
    start: datetime  # the clock when the template is created
    timezone: str | None = None

    def __str__(self) -> str:
        return f"{self.expression} {self.timezone or 'UTC'}"


def croniter_times(expression: str, timezone: str | None, start: datetime, count: int) -> list[datetime]:
    """croniter's own fire times after `start`, in the schedule's zone, as UTC instants."""
    zone = ZoneInfo(timezone or "UTC")
    times = croniter(expression, start.astimezone(zone))
    return [times.get_next(datetime).astimezone(UTC) for _ in range(count)]


def at(instant: datetime) -> str:
    return f"at({instant.astimezone(UTC):%Y-%m-%dT%H:%M:%S})"


def human(seeded) -> Actor:
    return Actor("human", seeded.account_id, seeded.workspace_id, "tok-human")


def make_template(runtime, seeded, expression: str, timezone: str | None = None, **fields):
    return create_task(
        runtime,
        human(seeded),
        NewTask(title=f"cron {expression}", body="", cron_schedule=expression, timezone=timezone, **fields),
    )


def raw_schedule(runtime, seeded, template_id: str) -> dict:
    return runtime.clients.scheduler.get_schedule(
        Name=schedule_name(seeded.workspace_id, template_id), GroupName=runtime.settings.schedule_group
    )


RECURRING = [
    Row("30 * * * *", datetime(2026, 12, 2, 14, 37, 12, tzinfo=UTC)),  # hourly
    Row("0 9 * * *", datetime(2026, 12, 2, 10, 0, tzinfo=UTC)),  # daily, today's already past
    Row("15 8 * * 1-5", datetime(2026, 12, 3, 12, 0, tzinfo=UTC)),  # weekdays from a Thursday: over a weekend
    Row("0 12 * * 0", datetime(2026, 12, 2, 9, 0, tzinfo=UTC)),  # Sunday as 0
    Row("0 12 * * 7", datetime(2026, 12, 2, 9, 0, tzinfo=UTC)),  # Sunday as 7
    Row("0 6 1 * 1", datetime(2026, 12, 2, 9, 0, tzinfo=UTC)),  # day-of-month OR Monday: Fri 2027-01-01 too
    Row("0 0 1 1,7 *", datetime(2026, 12, 2, 9, 0, tzinfo=UTC)),  # a list of months: twice a year
    Row("0 0 29 * *", datetime(2026, 12, 2, 9, 0, tzinfo=UTC)),  # the 29th: skips February 2027
    # Spring forward in Berlin on 2027-03-28: 02:30 local does not exist that night.
    Row("30 2 * * *", datetime(2027, 3, 25, 12, 0, tzinfo=UTC), "Europe/Berlin"),
    # Fall back in New York on 2026-11-01: 01:00 local happens twice (EDT, then EST); croniter fires at both.
    Row("0 1 * * *", datetime(2026, 10, 29, 12, 0, tzinfo=UTC), "America/New_York"),
    Row("45 * * * *", datetime(2026, 10, 31, 23, 50, tzinfo=UTC), "Asia/Kolkata"),  # a half-hour offset zone
]


def test_croniter_accepts_7_as_sunday():
    """The table relies on it: `0 12 * * 7` is checked against croniter like any other row."""
    assert croniter.is_valid("0 12 * * 7")


@pytest.mark.parametrize("row", RECURRING, ids=str)
def test_the_armed_schedule_follows_croniter_fire_after_fire(runtime, seeded, row):
    expected = croniter_times(row.expression, row.timezone, row.start, FIRINGS)
    runtime.clock = lambda: row.start
    template = make_template(runtime, seeded, row.expression, row.timezone)
    name = schedule_name(seeded.workspace_id, template.id)
    assert template.next_fire_at == iso(expected[0])

    armed = runtime.schedules.get(name)
    assert armed is not None and armed.fire_at == expected[0]
    for number, (fire_at, following) in enumerate(zip(expected, expected[1:], strict=False), start=1):
        assert armed.fire_at == fire_at
        raw = raw_schedule(runtime, seeded, template.id)
        assert (raw["ScheduleExpression"], raw["ScheduleExpressionTimezone"]) == (at(fire_at), "UTC")

        runtime.clock = lambda fire_at=fire_at: fire_at
        assert fire_schedule.handle(armed.input, runtime) == {"outcome": "created"}

        armed = runtime.schedules.get(name)
        assert armed is not None, f"firing {number} ({fire_at}) left no schedule"
        assert armed.fire_at == following, f"after firing {number} at {fire_at}"
        assert armed.input == {
            "accountId": seeded.account_id,
            "workspaceId": seeded.workspace_id,
            "templateId": template.id,
            "fireAt": iso(following),
        }
        stored = runtime.tasks.get(seeded.workspace_id, template.id, consistent=True)
        assert (stored.next_fire_at, stored.run_count, stored.status) == (iso(following), number, "notstarted")

    runs, _ = runtime.tasks.list_runs(seeded.workspace_id, template.id, 50, None)
    assert [run.fire_at for run in runs] == [iso(t) for t in reversed(expected[:-1])]


def test_the_berlin_spring_forward_night_fires_once_at_croniters_replacement_time():
    """Pinned values behind the table's Berlin row: 02:30 does not exist on 2027-03-28."""
    times = croniter_times("30 2 * * *", "Europe/Berlin", datetime(2027, 3, 26, 12, 0, tzinfo=UTC), 3)
    assert [t.isoformat() for t in times] == [
        "2027-03-27T01:30:00+00:00",  # 02:30 CET
        "2027-03-28T01:00:00+00:00",  # 03:00 CEST: croniter's stand-in for the skipped 02:30
        "2027-03-29T00:30:00+00:00",  # 02:30 CEST
    ]


def test_a_fixed_day_and_month_on_february_29_fires_once_in_the_next_leap_year(runtime, seeded):
    start = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
    (first,) = croniter_times("0 0 29 2 *", None, start, 1)
    assert first == datetime(2028, 2, 29, tzinfo=UTC)
    runtime.clock = lambda: start
    template = make_template(runtime, seeded, "0 0 29 2 *")
    name = schedule_name(seeded.workspace_id, template.id)
    armed = runtime.schedules.get(name)
    assert armed is not None and armed.fire_at == first
    assert raw_schedule(runtime, seeded, template.id)["ScheduleExpression"] == "at(2028-02-29T00:00:00)"

    runtime.clock = lambda: first
    assert fire_schedule.handle(armed.input, runtime) == {"outcome": "created"}

    assert runtime.schedules.get(name) is None  # not re-armed for 2032
    stored = runtime.tasks.get(seeded.workspace_id, template.id, consistent=True)
    assert (stored.status, stored.next_fire_at, stored.run_count) == ("completed", None, 1)


def test_the_at_expression_is_utc_to_the_second(runtime, seeded):
    runtime.clock = lambda: datetime(2026, 12, 2, 14, 0, 0, 250_000, tzinfo=UTC)
    template = make_template(runtime, seeded, "30 14 * * *")

    raw = raw_schedule(runtime, seeded, template.id)
    assert raw["ScheduleExpression"] == "at(2026-12-02T14:30:00)"
    assert raw["ScheduleExpressionTimezone"] == "UTC"
    assert template.next_fire_at == "2026-12-02T14:30:00.000Z"


def test_a_zoned_template_is_armed_in_utc_not_in_its_zone(runtime, seeded):
    runtime.clock = lambda: datetime(2026, 12, 2, 6, 0, tzinfo=UTC)
    template = make_template(runtime, seeded, "30 14 * * *", "Europe/Berlin")

    raw = raw_schedule(runtime, seeded, template.id)
    assert (raw["ScheduleExpression"], raw["ScheduleExpressionTimezone"]) == ("at(2026-12-02T13:30:00)", "UTC")


@pytest.mark.parametrize("expression", ["*/5 * * * *", "* * * * *", "0-30 * * * *", "5,35 * * * *"])
def test_a_schedule_running_more_than_hourly_is_refused(runtime, seeded, expression):
    with pytest.raises(PayloadError, match="runs more than hourly") as refused:
        make_template(runtime, seeded, expression)
    assert refused.value.field == "cronSchedule"
    assert_nothing_stored(runtime, seeded)


@pytest.mark.parametrize("expression", ["0 0 30 2 *", "0 0 31 4 *"])
def test_a_schedule_that_never_fires_is_refused(runtime, seeded, expression):
    with pytest.raises(PayloadError, match="never fires") as refused:
        make_template(runtime, seeded, expression)
    assert refused.value.field == "cronSchedule"
    assert_nothing_stored(runtime, seeded)


def test_a_timezone_without_a_cron_schedule_is_refused(runtime, seeded):
    with pytest.raises(PayloadError, match="timezone applies only with cronSchedule") as refused:
        create_task(runtime, human(seeded), NewTask(title="t", body="", timezone="Europe/Berlin"))
    assert refused.value.field == "timezone"
    assert_nothing_stored(runtime, seeded)


def assert_nothing_stored(runtime, seeded) -> None:
    tasks, _ = runtime.tasks.list_page(seeded.workspace_id, None, None, 50, None)
    assert tasks == []
    assert runtime.schedules.list_armed() == []
