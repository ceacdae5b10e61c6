"""Cron schedules as the reference defines them: 5 fields, and a recurring one runs hourly at most.

Fire times come from croniter alone, in the schedule's time zone, so daylight-saving changes and
the OR of day-of-month and day-of-week are croniter's semantics everywhere; EventBridge Scheduler
is only ever armed for the next computed instant (see `store.schedules`).
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from croniter import CroniterBadDateError, croniter

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.text import echo
from agent_workspace.domain.zones import zone

_FIELD = "cronSchedule"


@dataclass(frozen=True)
class CronSchedule:
    expression: str
    timezone: str | None = None  # IANA name; None is UTC

    @property
    def one_time(self) -> bool:
        """A fixed day and month (`30 14 25 4 *`) fires once, then the schedule is finished."""
        _minute, _hour, day, month, _dow = self.expression.split()
        return day.isdigit() and month.isdigit()

    def next_after(self, instant: datetime) -> datetime | None:
        """The first fire time strictly after `instant`, in UTC; None if the expression never fires again."""
        zone = ZoneInfo(self.timezone) if self.timezone else UTC
        try:
            fire = croniter(self.expression, instant.astimezone(zone)).get_next(datetime)
        except CroniterBadDateError:
            return None
        return fire.astimezone(UTC)


def validate_cron(expression: str, timezone: str | None = None) -> CronSchedule:
    """The normalised schedule, or `PayloadError` saying what is wrong with it."""
    fields = expression.split()
    if len(fields) != 5:
        raise PayloadError(
            f"{_FIELD} must have 5 fields (minute hour dom month dow), got {len(fields)}: {echo(expression)!r}",
            field=_FIELD,
        )
    normalised = " ".join(fields)
    if not croniter.is_valid(normalised):
        raise PayloadError(f"{_FIELD} {echo(expression)!r} is not a valid cron expression", field=_FIELD)
    minute = fields[0]
    if not (minute.isdigit() and 0 <= int(minute) <= 59):
        raise PayloadError(
            f"{_FIELD} {echo(expression)!r} runs more than hourly: the minute must be a single number 0-59, "
            "e.g. '30 * * * *'",
            field=_FIELD,
        )
    if timezone is not None and zone(timezone) is None:
        raise PayloadError(
            f"timezone {echo(timezone)!r} is not an IANA time zone such as 'Europe/Berlin'", field="timezone"
        )
    return CronSchedule(normalised, timezone)


def first_fire(schedule: CronSchedule, now: datetime) -> datetime:
    """When a new schedule fires first; one that can never fire (`0 0 30 2 *`) is refused."""
    fire = schedule.next_after(now)
    if fire is None:
        raise PayloadError(f"{_FIELD} {schedule.expression!r} never fires (no such date)", field=_FIELD)
    return fire
