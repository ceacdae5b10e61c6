"""IANA time zones named by callers (cron templates, quiet hours).

`ZoneInfo(name)` reads a file named after `name` (the OS's zone files, or the tzdata package's): a name is
looked up in the fixed list of zone names first, so what a caller sends never becomes a path that is opened.
"""

from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

ZONE_NAME_MAX = 64


@cache
def _names() -> frozenset[str]:
    return frozenset(available_timezones())


def zone(name: str) -> ZoneInfo | None:
    """The zone called `name`, or None if there is no such IANA zone here."""
    if not isinstance(name, str) or len(name) > ZONE_NAME_MAX or name not in _names():
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None
