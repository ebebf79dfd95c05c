"""The quick ways facts scans texts are the plain ones, exactly: paths found in runs
of path characters, white space squashed by `str.split`, a view's texts scanned
once across views."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from condense_cli.analysis.facts import (
    PATH_IN_TEXT,
    SPACE,
    Memory,
    Scans,
    paths_in,
    squash,
)

# Characters that start, end, stop or join paths, with the white space str.split
# and \s agree on, and letters of other scripts.
PIECES = list("/.:~@-+_aZ9 \t\n\r\x0b\x0c\x1c\x85\u00a0\u2028\u3000é日'\"`()[]<>,;#=?")
PIECES += ["py", "src/", "../", "~/", "http://", "https://x.io/a", "a.py", "::", ":12"]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
TRICKY = [
    "see /repo/src/app.py:12 and ./tests/test_a.py::test_x, then ~/notes.md.",
    "http://host/a/b.py and file:/etc/passwd and C:/x/y.txt",
    "a+b/c.py x@y.com/z +/a/b -a/b.json 日本/文書.md 請閱讀/Users/me/doc.md,這是",
    "run: python3 -m pytest tests/ 2>&1 | tail -5; cat a..b/..c/.d",
]


@given(TEXTS)
@settings(max_examples=3000, deadline=None)
def test_paths_in_finds_what_the_pattern_finds_in_the_whole_text(text: str) -> None:
    assert list(paths_in(text)) == PATH_IN_TEXT.findall(text)
    assert squash(text) == SPACE.sub(" ", text).strip().casefold()


def test_paths_in_on_tricky_texts() -> None:
    for text in TRICKY:
        assert list(paths_in(text)) == PATH_IN_TEXT.findall(text), text
    found = list(paths_in(TRICKY[0]))
    assert found == ["/repo/src/app.py", "./tests/test_a.py"]
    assert list(paths_in("a" * 50_000 + " " + "b" * 50_000)) == []  # runs without / or .


def test_a_view_scanned_again_is_the_memory_of_its_texts() -> None:
    scans = Scans()
    first = ["edit src/a.py", "see https://x.io/doc#top", "src/a.py", ""]
    second = ["src/a.py", "new /tmp/b.txt", "edit src/a.py", "edit src/a.py"]
    for texts in (first, second, first):
        assert scans.memory(texts) == Memory.of(texts)
    kept = scans.last["src/a.py"]
    scans.memory(second)
    assert scans.last["src/a.py"] is kept  # carried over from the view before, not scanned again
    assert set(scans.last) == set(second)  # only the last view's texts are held
    assert re.search(r"\bsrc/a\.py\b", scans.memory(second).flat)
