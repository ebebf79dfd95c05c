"""The quick ways facts scans texts are the plain ones, exactly: paths found in runs
of path characters, white space squashed by `str.split`, a view's texts scanned
once across views, paths and URLs looked for only in the texts that name them,
exceptions looked for only where a line names one, a text not looked for in a memory
that lacks one of its words, a pager looked for only on a line that may hold one."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from condense_cli.analysis.carrying import Memory, Scanned, Scans
from condense_cli.analysis.commands import PAGER_SUFFIX, without_pager
from condense_cli.analysis.facts import (
    EXCEPTION,
    PATH_IN_TEXT,
    QUOTE_MARKS,
    SPACE,
    Fact,
    exceptions,
    normal_url,
    paths_in,
    squash,
)

# Characters that start, end, stop or join paths, with the white space str.split
# and \s agree on, and letters of other scripts.
PIECES = list("/.:~@-+_aZ9 \t\n\r\x0b\x0c\x1c\x85\u00a0\u2028\u3000é日'\"`()[]<>,;#=?")
PIECES += ["py", "src/", "../", "~/", "http://", "https://x.io/a", "a.py", "::", ":12"]
PIECES += ["A.PY", "SRC", "HTTPS://X.IO/A", "\u212a", "\ufb01le.py", "\u0130"]  # case-folded apart
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
    # (a line's quotation mark left out, as a clause reflowed from the line leaves it)
    assert squash(text) == SPACE.sub(" ", QUOTE_MARKS.sub("", text)).strip().casefold()


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
        memory, plain = scans.memory(texts), Memory.of(texts)
        assert memory.flat == plain.flat
        assert memory.urls == plain.urls
        for name in ("a.py", "b.txt", "doc"):
            assert memory.paths_named(name) == plain.paths_named(name)
    kept = scans.last["src/a.py"]
    scans.memory(second)
    assert scans.last["src/a.py"] is kept  # carried over from the view before, not scanned again
    assert set(scans.last) == set(second)  # only the last view's texts are held
    assert re.search(r"\bsrc/a\.py\b", scans.memory(second).flat)


@given(st.lists(TEXTS, max_size=6))
@settings(max_examples=1500, deadline=None)
def test_paths_and_urls_are_found_by_name_as_by_scanning_every_text(texts: list[str]) -> None:
    memory = Memory.of(texts)
    scans = [Scanned(t) for t in texts if t]
    every_path = [p for scan in scans for p in scan.paths]
    every_url = {u for scan in scans for u in scan.urls}
    names = {part for path in every_path for part in path} | {"a.py", "src", "py", "x.io"}
    for name in names:
        assert memory.paths_named(name) == [p for p in every_path if p[-1] == name]
    for path in every_path:  # each folder a path is under is carried by it
        for end in range(1, len(path)):
            tail = path[:end][-2:]
            under = any(
                other[i : i + len(tail)] == tail
                for other in every_path
                for i in range(len(other) - len(tail))
            )
            assert memory._names_under(path[:end]) == under
    assert memory.urls == every_url
    candidates = every_url | {normal_url(u) for u in ("https://X.io/a", "http://x.io/A#b")}
    for url in candidates:
        assert memory.carries(Fact("urls", (url,), url)) == (url in every_url or url in memory.flat)


# What an exception line is made of: pytest's `E` marker, names, dots, the words an
# exception's name ends in, a message, and white space that \s and str.isspace agree on.
ERROR_PIECES = ["E", "E ", " ", "\t", "\n", "\r", "\x0b", "\x1c", "\x85", "\u00a0", "\u2028"]
ERROR_PIECES += ["Error", "Exception", "Failure", "Value", "ErrorError", "os.", "_x.", ".", ":"]
ERROR_PIECES += [": bad 'x'", "ValueError", "é", "日", "E   KeyError: 'a'", "x", "1"]
ERROR_TEXTS = st.lists(st.sampled_from(ERROR_PIECES), max_size=30).map("".join)
TRACEBACK = """Traceback (most recent call last):
  File "/repo/a.py", line 3, in <module>
    import foo.bar
ModuleNotFoundError: No module named 'foo'
E   AssertionError: assert 1 == 2
E
    ValueError: spread over lines
KeyError:

IndexError: list index out of range
some text with an Error in it
requests.exceptions.ConnectionError
"""


@given(ERROR_TEXTS)
@settings(max_examples=4000, deadline=None)
def test_exceptions_are_what_the_pattern_finds_in_the_whole_text(text: str) -> None:
    assert exceptions(text) == EXCEPTION.findall(text)


def test_exceptions_of_a_traceback() -> None:
    assert exceptions(TRACEBACK) == EXCEPTION.findall(TRACEBACK)
    assert exceptions(TRACEBACK) == [
        ("ModuleNotFoundError", "No module named 'foo'"),
        ("AssertionError", "assert 1 == 2"),
        ("ValueError", "spread over lines"),
        ("KeyError", "IndexError: list index out of range"),  # a message on a later line
        ("ConnectionError", ""),
    ]


WORD_PIECES = ["a", "b", "ab", "é", "ß", "ss", "日本", "x.py", "İ", "ǅ"]  # some case-fold apart
WORDS = st.lists(st.sampled_from(WORD_PIECES), max_size=6)


@given(st.lists(WORDS.map(" ".join), max_size=8), st.lists(WORDS.map(" ".join), max_size=20))
@settings(max_examples=1500, deadline=None)
def test_a_memory_holds_what_its_flat_text_holds(texts: list[str], keys: list[str]) -> None:
    """Once a memory has indexed its words, a key is looked for only when it may be
    there: `holds` is `in` on the flat text, before the index and after it."""
    memory = Memory.of(texts)
    keys = [squash(k) for k in keys] + [squash(t) for t in texts] + ["", " ", "a b", "b a b"]
    for key in keys:
        assert memory.holds(key) == (key in memory.flat), (key, memory.flat)
    memory.index_words()
    for key in keys:
        assert memory.holds(key) == (key in memory.flat), (key, memory.flat)


def test_a_memory_with_its_words_indexed_skips_texts_it_lacks_a_word_of() -> None:
    memory = Memory.of(["run the tests with care", "then deploy the app"])
    memory.index_words()
    assert memory.holds("the tests with")
    assert memory.holds("run the tests with care")
    assert memory.holds("tests with car")  # the first and last words may be parts of words
    assert not memory.holds("run the spec with care")  # "spec" is no word of the texts
    assert not memory.holds("care then deploy")  # across two texts


PAGER_PIECES = ["ls", " ", "\t", "|", "| tail -5", "|head", " 2>&1", "2>&1", "cat", "less", "x|y"]
PAGER_TEXTS = st.lists(st.sampled_from(PAGER_PIECES), max_size=12).map("".join)


@given(PAGER_TEXTS)
@settings(max_examples=2000, deadline=None)
def test_a_pager_is_cut_as_the_pattern_cuts_it(line: str) -> None:
    assert without_pager(line) == (PAGER_SUFFIX.sub("", line).strip() or line.strip())
