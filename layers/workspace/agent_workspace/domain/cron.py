"""Cron schedules as the reference defines them: 5 fields, and a recurring one runs hourly at most."""

from croniter import croniter

from agent_workspace.domain.errors import PayloadError

_FIELD = "cronSchedule"


def validate_cron(expression: str) -> str:
    """The normalised expression, or `PayloadError` saying what is wrong with it."""
    fields = expression.split()
    if len(fields) != 5:
        raise PayloadError(
            f"{_FIELD} must have 5 fields (minute hour dom month dow), got {len(fields)}: {expression!r}", field=_FIELD
        )
    normalised = " ".join(fields)
    if not croniter.is_valid(normalised):
        raise PayloadError(f"{_FIELD} {expression!r} is not a valid cron expression", field=_FIELD)
    minute = fields[0]
    if not (minute.isdigit() and 0 <= int(minute) <= 59):
        raise PayloadError(
            f"{_FIELD} {expression!r} runs more than hourly: the minute must be a single number 0-59, "
            "e.g. '30 * * * *'",
            field=_FIELD,
        )
    return normalised


def is_one_time(fields: list[str]) -> bool:
    """A fixed day and month (`30 14 25 4 *`) fires once, then the schedule is finished."""
    _minute, _hour, day, month, _dow = fields
    return day.isdigit() and month.isdigit()
