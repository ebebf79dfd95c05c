"""Reading big JSON-lines logs fast: whole blocks of lines decoded by msgspec, checked
to be exactly what the exact path would accept (the Claude Code dialect uses it).

The exact path (`orjson.loads` of each line, then the dialect's validator) stays the
definition of a valid line. msgspec decodes a block of lines into small Structs and
skips the fields it is not asked for without building them, which is what makes it
faster; but it accepts some input orjson refuses. A block is taken from msgspec only
when it also passes these checks:

- as many values as lines, each line starting with `{` and ending with `}` (a CR
  before the newline is allowed): so no blank line, no two values on a line and no
  value split over lines, since `}` newline `{` cannot occur inside one JSON value;
- valid UTF-8 (msgspec does not check the strings it skips);
- no number that overflows a double (orjson refuses `1e400`, msgspec skips it): lines
  where one might be are left to the exact path.

Anything else (a block msgspec refuses, or one that fails a check) goes to the exact
path line by line, so errors keep their wording. msgspec is imported only for logs of
at least `FAST_MIN_BYTES`, where it pays for its import.

OpenHands V0 does not use it: there the checks cost about what msgspec saves, and
unlike orjson line by line, the block passes slow each other down when two processes
run them (measured on the 1M-event benchmark log: a half took 0.65-0.78 s alone and
up to 1.5 s beside the other half; orjson's half 1.1 s and 1.4 s). V0 reads its two
halves with orjson instead (`halves`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

Decoded = tuple[list[Any], list[int], set[int]]

BLOCK_BYTES = 256 << 10
# Below this, msgspec's import (about 20 ms) costs more than it saves.
FAST_MIN_BYTES = 4 << 20

# A number can overflow a double only with an exponent of 3 or more digits, or with
# 210 or more digits before its decimal point (an exponent of 2 digits adds at most
# 99). To find the lines where one might be, digits become "0", exponent marks "e",
# signs and letters other than e/E disappear, newlines stay, and every other byte
# becomes a space: then "0e000" or a run of 210 "0" marks a candidate. Deleting never
# splits a run, so no number is missed; it may join some (a hex "3e400a"), which only
# costs a closer look at that line (`number_doubts`).
_SEPARATORS = bytes(c for c in range(128) if not chr(c).isalnum() and c not in b"+-\n")
_SHAPES = bytes.maketrans(
    b"0123456789eE" + _SEPARATORS, b"0" * 10 + b"ee" + b" " * len(_SEPARATORS)
)
_DROPPED = bytes(c for c in range(256) if c >= 128 or (chr(c).isalpha() and c not in b"eE")) + b"+-"
_MAY_OVERFLOW = (b"0e000", b"0" * 210)
# For one line at a time: every byte kept in place, a number's bytes shaped alike.
_LINE_SHAPES = bytes.maketrans(b"123456789E-", b"000000000e+")
_NUMBER_CHARS = frozenset(b"0e+.")  # what a number's bytes become in `_LINE_SHAPES`
_BEFORE_A_VALUE = frozenset(b":,[ \t\r")  # what can come just before a JSON number


def lines_end(file: Any, size: int) -> int:
    """The offset just after the last newline within the first `size` bytes (0 if none)."""
    position = size
    while position > 0:
        step = min(BLOCK_BYTES, position)
        chunk = os.pread(file.fileno(), step, position - step)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            return position - step + newline + 1
        position -= step
    return 0


def read_blocks(file: Any, start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) of blocks of whole lines covering `start..end`, where `end`
    follows a newline. A block holds at least one line, however long."""
    fd = file.fileno()
    position = start
    while position < end:
        want = min(BLOCK_BYTES, end - position)
        data = os.pread(fd, want, position)
        cut = data.rfind(b"\n") + 1
        while cut == 0 and position + len(data) < end:  # one line longer than a block
            more = os.pread(fd, min(len(data), end - position - len(data)), position + len(data))
            if not more:
                break
            data += more
            cut = data.rfind(b"\n") + 1
        if cut == 0:
            return
        yield position, data if cut == len(data) else data[:cut]
        position += cut


class BlockDecoder:
    """msgspec decoding of blocks into one Struct type, with the exactness checks."""

    def __init__(self, struct: type) -> None:
        import msgspec  # here: it costs ~20 ms to import and only big logs need it

        self._decode = msgspec.json.Decoder(struct).decode_lines
        # msgspec raises UnicodeDecodeError for invalid UTF-8 in a string it builds
        self._errors = (
            msgspec.DecodeError,
            msgspec.ValidationError,
            RecursionError,
            UnicodeDecodeError,
        )

    def decode(self, block: bytes) -> Decoded | None:
        """The block's values, the offset of each line in the block (and the block's
        length after them), and the indexes of lines the exact path must check (a
        number may overflow); None when the whole block must go to the exact path."""
        try:
            values = self._decode(block)
        except self._errors:
            return None
        if not block.isascii():
            try:
                block.decode("utf-8")
            except UnicodeDecodeError:
                return None
        starts = line_starts(block, len(values))
        if starts is None:
            return None
        return values, starts, doubtful_lines(block)


def line_starts(block: bytes, count: int) -> list[int] | None:
    """Where each of the block's lines starts, then the block's length, if it has
    `count` lines that each start with `{` and end with `}` (or `}` CR); None otherwise."""
    starts: list[int] = []
    add = starts.append
    find = block.find
    position = 0
    for _ in range(count):
        end = find(b"\n", position)
        if end < 0 or block[position] != 123:
            return None
        last = block[end - 1]
        if last != 125 and not (last == 13 and block[end - 2] == 125 and end - 2 > position):
            return None
        add(position)
        position = end + 1
    if position != len(block):
        return None
    add(position)
    return starts


def doubtful_lines(block: bytes) -> set[int]:
    """Indexes of the lines that may hold a number too large for a double.

    A first, cheap pass over the block finds the lines with an overflow shape;
    `number_doubts` then looks at each of those lines alone.
    """
    shapes = block.translate(_SHAPES, _DROPPED)
    matches: list[int] = []
    for pattern in _MAY_OVERFLOW:
        found = shapes.find(pattern)
        while found >= 0:
            matches.append(found)
            found = shapes.find(pattern, found + 1)
    candidates: set[int] = set()
    line = counted = 0
    for found in sorted(matches):  # count newlines once, from one match to the next
        line += shapes.count(b"\n", counted, found)
        counted = found
        candidates.add(line)
    if not candidates:
        return candidates
    lines = block.split(b"\n")
    return {i for i in candidates if number_doubts(lines[i])}


def number_doubts(line: bytes) -> bool:
    """Whether `line` may hold a number that overflows a double: an overflow shape
    whose run of number characters starts where a JSON value can (after `:`, `,`,
    `[` or white space). A run that follows anything else (a letter, as in a uuid
    `...-4e93-8e3e-5296...`) is inside a string: a number never is."""
    shapes = line.translate(_LINE_SHAPES)
    for pattern in (b"0e000", b"0e+000", b"0" * 210):
        found = shapes.find(pattern)
        while found >= 0:
            start = found
            while start > 0 and shapes[start - 1] in _NUMBER_CHARS:
                start -= 1
            if start == 0 or line[start - 1] in _BEFORE_A_VALUE:
                return True
            end = found + len(pattern)  # later matches in this run start it alike
            while end < len(shapes) and shapes[end] in _NUMBER_CHARS:
                end += 1
            found = shapes.find(pattern, end)
    return False
