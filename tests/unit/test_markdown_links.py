"""Issue 15, item 2: a pano doc's links are found in linear time, with the answers the old expression gave.

`re.finditer` with the expression below re-read the rest of the markdown from every '[' that failed to
become a link: `"[](" * 21845` (64 KiB) took 38 s and froze the server. It stays here as the oracle for
what counts as a link: percent-encoding, angle brackets, titles.
"""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_workspace.domain import markdown_links
from agent_workspace.domain.markdown_links import link_targets
from agent_workspace.domain.pano import linked_names

OLD_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*(?:<([^>\n]+)>|([^)\s]+))(?:\s+\"[^\"]*\")?\s*\)")


def old_targets(markdown: str) -> list[str]:
    return [match.group(1) or match.group(2) for match in OLD_LINK.finditer(markdown)]


# The characters the expression cares about, some it does not, and white space beyond ASCII's.
PIECES = ["[", "]", "(", ")", "<", ">", '"', "!", " ", "\n", "\t", "\u00a0", "\u2028", "a", "b.png", "%20", "](", "]("]


@settings(max_examples=2000, deadline=None, database=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_the_scan_finds_exactly_the_links_the_old_expression_found(markdown):
    assert list(link_targets(markdown)) == old_targets(markdown)


@pytest.mark.parametrize(
    ("markdown", "targets"),
    [
        (
            '# Plan\n\n![chart](chart.png)\nSee [the notes](notes.txt "title") and [plan](<my plan.bin>).',
            ["chart.png", "notes.txt", "my plan.bin"],
        ),
        ("![shot](my%20shot.png)", ["my%20shot.png"]),
        ("[data] (data.csv)", []),
        ("[a](<b)", ["<b"]),
        ("[a](<b> x)", []),
        ('[a]( b  "t"  )', ["b"]),
        ("[a\nb](c)", []),
        ("[[a](b)", ["b"]),
    ],
)
def test_links_as_the_pano_tests_write_them(markdown, targets):
    assert list(link_targets(markdown)) == targets == old_targets(markdown)


def test_percent_encoded_targets_link_the_decoded_name_too():
    assert linked_names("![shot](my%20shot.png)") == {"my%20shot.png", "my shot.png"}


# Shapes that made the old expression quadratic: each '[' starts a link that fails only at the end.
HOSTILE = ["[](", "[a](<", "[", '[a](b "', "[a](b ", "[a](<b> ", "![](<", "[](\n"]


class _CountingPattern:
    """A scanner's pattern that adds up the characters each search reads: work measured, not timed."""

    def __init__(self, pattern: re.Pattern[str], read: list[int]) -> None:
        self._pattern, self._read = pattern, read

    def search(self, text: str, start: int = 0) -> re.Match[str] | None:
        match = self._pattern.search(text, start)
        self._read[0] += (match.end() if match else len(text)) - start
        return match


def _characters_read(markdown: str, monkeypatch: pytest.MonkeyPatch) -> int:
    read = [0]
    for name in ("_CLOSE_LABEL", "_CLOSE_ANGLE", "_END_BARE", "_QUOTE", "_NOT_SPACE"):
        monkeypatch.setattr(markdown_links, name, _CountingPattern(getattr(markdown_links, name), read))
    for _ in link_targets(markdown):
        pass
    monkeypatch.undo()
    return read[0]


@pytest.mark.parametrize("unit", HOSTILE)
def test_the_scan_reads_the_markdown_a_bounded_number_of_times(unit, monkeypatch):
    # Linear: 8 times the text, 8 times the reading, a few passes over it at most. The old expression re-read
    # the rest of the text from every '[': quadratic, 64 times the reading for 8 times the text.
    small, large = unit * 500, unit * 4000
    read_small, read_large = _characters_read(small, monkeypatch), _characters_read(large, monkeypatch)
    assert read_large <= 8 * read_small + 64, f"{unit!r}: 8x the text, {read_large / read_small:.1f}x the reading"
    assert read_large <= 8 * len(large), f"{unit!r}: read {read_large} characters of {len(large)}"
