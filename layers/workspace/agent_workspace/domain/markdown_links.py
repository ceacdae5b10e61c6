"""The targets of a markdown's links, `[text](target)` and `![alt](target)`, found in linear time.

This is the scan the regular expression
`!?\\[[^\\]\\n]*\\]\\(\\s*(?:<([^>\\n]+)>|([^)\\s]+))(?:\\s+"[^"]*")?\\s*\\)` made, with the same
answers: a target in angle brackets may hold spaces, a bare one ends at the first space or ')', and a
"title" may follow. Searched with `re.finditer`, that expression re-read the rest of the text from every
'[' that failed to become a link: `"[](" * 21845` (64 KiB) took 38 s and held the server meanwhile.

Every step of the expression is forced (each run of characters it takes ends at the first character of
a fixed set, and taking fewer never lets the rest match), so the scan below asks only "where is the
next such character after here?". Each place in the code asks it at positions that never decrease, so
`_Next` remembers its last answer and reads every character of the text at most once per place.
"""

import re
from collections.abc import Iterator

_CLOSE_LABEL = re.compile(r"[\]\n]")  # ends `[text`
_CLOSE_ANGLE = re.compile(r"[>\n]")  # ends `<target`
_END_BARE = re.compile(r"[)\s]")  # ends a bare target
_QUOTE = re.compile('"')  # ends a "title"
_NOT_SPACE = re.compile(r"\S")  # ends a run of white space (`\s` as the expression meant it)


class _Next:
    """The first position at or after `start` holding a character of `chars` (`len(text)` if none).

    Amortised O(1) while `start` never decreases: a position before the last answer has the same answer.
    """

    def __init__(self, text: str, chars: re.Pattern[str]) -> None:
        self._text, self._chars = text, chars
        self._start, self._found = 0, -1

    def __call__(self, start: int) -> int:
        if not self._start <= start <= self._found:
            match = self._chars.search(self._text, start)
            self._found = match.start() if match else len(self._text)
        self._start = start
        return self._found


def link_targets(markdown: str) -> Iterator[str]:
    """Each link's target as written, in order; links do not overlap, as with `re.finditer`."""
    scan = _Scan(markdown)
    position = 0
    while (opening := markdown.find("[", position)) >= 0:
        found = scan.link_at(opening)
        if found is None:
            position = opening + 1
        else:
            target, position = found
            yield target


class _Scan:
    """One link tried at a time; each `_Next` serves one step, so its positions only grow."""

    def __init__(self, text: str) -> None:
        self._text, self._end = text, len(text)
        self._label_end = _Next(text, _CLOSE_LABEL)
        self._target_start = _Next(text, _NOT_SPACE)
        self._angle_end = _Next(text, _CLOSE_ANGLE)
        self._bare_end = _Next(text, _END_BARE)
        self._after_angle = _Tail(text)
        self._after_bare = _Tail(text)

    def _at(self, position: int) -> str:
        return self._text[position] if position < self._end else ""

    def link_at(self, opening: int) -> tuple[str, int] | None:
        """(target, the position after the link) for a link whose '[' is at `opening`, else None."""
        close = self._label_end(opening + 1)
        if self._at(close) != "]" or self._at(close + 1) != "(":
            return None
        start = self._target_start(close + 2)
        if self._at(start) == "<":
            angle = self._angle_end(start + 1)
            if self._at(angle) == ">" and angle > start + 1:
                end = self._after_angle.end(angle + 1)
                if end is not None:
                    return self._text[start + 1 : angle], end
        if self._at(start) in ("", ")"):
            return None
        bare = self._bare_end(start)
        end = self._after_bare.end(bare)
        return (self._text[start:bare], end) if end is not None else None


class _Tail:
    """What may follow a target: an optional `"title"` after white space, then white space and ')'."""

    def __init__(self, text: str) -> None:
        self._text, self._end = text, len(text)
        self._space_end = _Next(text, _NOT_SPACE)
        self._quote_end = _Next(text, _QUOTE)
        self._after_title = _Next(text, _NOT_SPACE)

    def _at(self, position: int) -> str:
        return self._text[position] if position < self._end else ""

    def end(self, position: int) -> int | None:
        """The position after the closing ')', or None if the link does not close here."""
        after_space = self._space_end(position)
        if after_space > position and self._at(after_space) == '"':
            closing = self._quote_end(after_space + 1)
            if closing < self._end:
                paren = self._after_title(closing + 1)
                if self._at(paren) == ")":
                    return paren + 1
        return after_space + 1 if self._at(after_space) == ")" else None
