"""Regular expressions from outside (a search's `pattern`, a schema's `pattern` and `patternProperties`), run safely.

Python's `re` cannot be interrupted: `^(a+)+$` against 30 characters runs for minutes. The `regex` engine takes a
timeout, and one `Deadline` bounds every evaluation of a request together, so thousands of evaluations that are
each quick cannot add up to seconds either. `regex` unrolls counted repeats when it compiles, so `(?:a{9999}){999}`
(16 characters) would take gigabytes: `compile_pattern` refuses a pattern whose unrolled size is over a limit
before `regex` sees it.
"""

import re
import time
from collections.abc import Callable
from typing import Any

from agent_workspace.domain.errors import PayloadError

EVALUATION_SECONDS = 0.05  # one pattern on one text
REQUEST_SECONDS = 0.5  # all the evaluations of one request together
# About 270 bytes each once compiled: 100,000 is some 27 MB, within a 512 MB Lambda beside everything else.
UNROLLED_MAX = 100_000
GROUPS_DEEP_MAX = 32  # `regex` parses groups recursively: a thousand nested ones end in RecursionError

_QUANTIFIER = re.compile(r"\{([0-9]*)(?:,([0-9]*))?\}")  # ours, linear: `re` is fine here
_BRACED_ESCAPES = "pPNxXu"  # \p{L}, \N{name}, \x{263a}: the braces are the escape's, not a repeat


class PatternTimeout(Exception):
    """A pattern ran out of time on a text; the caller refuses, naming its own field."""

    def __init__(self, pattern: str, text: str) -> None:
        super().__init__(pattern)
        self.pattern = pattern
        self.text = text


def compile_pattern(pattern: str, field: str, ignore_case: bool = False) -> Any:
    """The compiled pattern, or `PayloadError` naming `field`: it does not compile, or would be too large."""
    size = unrolled_size(pattern)
    if size is None:
        raise PayloadError(f"{field} nests groups more than {GROUPS_DEEP_MAX} deep", field=field)
    if size > UNROLLED_MAX:
        raise PayloadError(
            f"{field} is too large once its repeats are unrolled ({size:,} > {UNROLLED_MAX:,}); use smaller counts",
            field=field,
        )
    import regex  # only when a pattern comes: most requests never need the engine

    try:
        flags = regex.IGNORECASE if ignore_case else 0
        return regex.compile(pattern, flags, cache_pattern=False)  # none kept: each may be megabytes
    except (regex.error, RecursionError, OverflowError) as error:
        raise PayloadError(f"{field} is not a valid regular expression: {error}", field=field) from None


def unrolled_size(pattern: str) -> int | None:
    """An upper bound on the items `regex` builds for the pattern, counting a repeat `{m,n}` as n copies of what it
    repeats; None if groups nest deeper than `GROUPS_DEEP_MAX`. A scan, not a parse: an odd pattern can only be
    over-counted, and `regex` itself refuses what is no pattern."""
    frames = [[0, 0]]  # per open group: [its size so far, the size of its last item]
    i, end = 0, len(pattern)
    while i < end:
        char = pattern[i]
        step, item = 1, 1
        if char == "\\":
            step = 2
            if pattern[i + 1 : i + 2] in tuple(_BRACED_ESCAPES) and pattern[i + 2 : i + 3] == "{":
                close = pattern.find("}", i + 3)
                step = (close if close != -1 else end) - i + 1
        elif char == "[":
            step = _set_length(pattern, i)
        elif char == "(":
            frames.append([0, 0])
            if len(frames) > GROUPS_DEEP_MAX:
                return None
            i += 1
            continue
        elif char == ")" and len(frames) > 1:
            item = max(frames.pop()[0], 1)
        elif char == "{" and (repeat := _QUANTIFIER.match(pattern, i)) and any(repeat.groups()):
            digits = repeat.group(2) or repeat.group(1)
            count = int(digits) if len(digits) <= 9 else UNROLLED_MAX + 1  # int() refuses 4,300 digits and more
            frame = frames[-1]
            frame[0] += frame[1] * (max(count, 1) - 1)
            frame[1] *= max(count, 1)
            i = repeat.end()
            continue
        elif char in "*+?|":
            i += 1
            continue
        frames[-1][0] += item
        frames[-1][1] = item
        i += step
    return sum(frame[0] for frame in frames)


def _set_length(pattern: str, start: int) -> int:
    """Characters from `[` to the first `]` that closes it (a `]` right after `[` or `[^` is a literal). Read this
    way, a nested set of `regex`'s V1 ends early and its rest is counted as more items: over, never under."""
    i = start + 1
    if pattern[i : i + 1] == "^":
        i += 1
    if pattern[i : i + 1] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i - start + 1
        i += 1
    return 1  # never closed (`regex` refuses it): scan on from the `[`, so nothing after it goes uncounted


class Deadline:
    """One request's time for evaluating patterns; each evaluation gets at most `EVALUATION_SECONDS` of what is
    left. `clock` is injectable so a test can count evaluations instead of measuring time."""

    def __init__(self, seconds: float = REQUEST_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._ends = clock() + seconds

    def search(self, compiled: Any, text: str) -> bool:
        """Whether `compiled` matches somewhere in `text`; `PatternTimeout` once the time is up."""
        left = self._ends - self._clock()
        if left <= 0:
            raise PatternTimeout(compiled.pattern, text)
        try:
            return compiled.search(text, timeout=min(EVALUATION_SECONDS, left)) is not None
        except TimeoutError:
            raise PatternTimeout(compiled.pattern, text) from None
