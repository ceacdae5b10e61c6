"""Timestamps as stored: ISO 8601 UTC with milliseconds, so they sort as strings."""

from datetime import UTC, datetime


def now_iso() -> str:
    return iso(datetime.now(UTC))


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
