"""Timestamps as stored: ISO 8601 UTC with milliseconds, so they sort as strings."""

from datetime import UTC, datetime


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
