"""Short base62 IDs that sort by creation time (e.g. `0kGogHmaqvZ`).

Seven characters of milliseconds since the epoch (good until the year 5138) followed by four
random ones. Within one millisecond a process counts on from its last id instead of drawing again
(as ULID's monotonic mode does), so its ids never repeat and keep the order they were made in; ids of
different processes may still meet, and DynamoDB writes that create an ID are conditional, so such a
collision fails loudly rather than overwriting.
"""

import secrets
import threading
import time

from agent_workspace.domain.errors import PayloadError

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_TIME_CHARS = 7
_RANDOM_CHARS = 4
ID_LENGTH = _TIME_CHARS + _RANDOM_CHARS


def _encode(number: int, width: int) -> str:
    chars = []
    for _ in range(width):
        number, digit = divmod(number, 62)
        chars.append(ALPHABET[digit])
    return "".join(reversed(chars))


_RANDOM_SPACE = 62**_RANDOM_CHARS
_last = {"ms": -1, "random": 0}
_lock = threading.Lock()


def new_id(now_ms: int | None = None) -> str:
    millis = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    with _lock:
        if millis == _last["ms"] and _last["random"] + 1 < _RANDOM_SPACE:
            _last["random"] += 1
        else:
            _last["ms"], _last["random"] = millis, secrets.randbelow(_RANDOM_SPACE // 2)  # room to count on
        random_part = _last["random"]
    return _encode(millis, _TIME_CHARS) + _encode(random_part, _RANDOM_CHARS)


def is_id(value: str) -> bool:
    return len(value) == ID_LENGTH and all(c in ALPHABET for c in value)


def check_id(value: str, field_name: str) -> str:
    """`value` if it is an id as this server makes them, else `PayloadError` naming the field."""
    if not isinstance(value, str) or not is_id(value):
        raise PayloadError(f"{field_name} must be a base62 id such as '0kGogHmaqvZ'", field=field_name)
    return value


def first_id_at(millis: int) -> str:
    """The smallest id made at `millis`: every id made then or later sorts after it (a cursor for "since then")."""
    return _encode(millis, _TIME_CHARS) + ALPHABET[0] * _RANDOM_CHARS
