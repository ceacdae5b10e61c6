"""Issue 15, item 2: a pano doc's links are found in linear time, with the answers the old expression gave.

`re.finditer` with the expression below re-read the rest of the markdown from every '[' that failed to
become a link: `"[](" * 21845` (64 KiB) took 38 s and froze the server. It stays here as the oracle for
what counts as a link: percent-encoding, angle brackets, titles.
"""

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _seconds(markdown: str) -> float:
    """The best of five runs, the least disturbed by whatever else the machine does (one, if it is slow anyway)."""
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in link_targets(markdown):
            pass
        best = min(best, time.perf_counter() - started)
        if best > 0.1:
            break
    return best


@pytest.mark.parametrize("unit", HOSTILE)
def test_scanning_time_grows_linearly_with_the_markdown(unit):
    # 8 times the text: linear takes ~8 times as long, quadratic ~64 times. 24 leaves room both ways.
    small, large = unit * 500, unit * 4000
    ratio = _seconds(large) / max(_seconds(small), 1e-6)
    assert ratio < 24, f"{unit!r}: 8x the text took {ratio:.0f}x the time"
