"""Reading big JSON-lines logs fast: whole blocks of lines decoded by msgspec, checked
line by line by simdjson to be exactly what the exact path would accept (the Claude
Code and Codex dialects use it).

The exact path (`orjson.loads` of each line, then the dialect's validator) stays the
definition of a valid line. msgspec decodes a block of lines into small Structs and
skips the fields it is not asked for without building them, which is what makes it
faster; but it accepts some input orjson refuses: invalid UTF-8 and numbers that
overflow a double (`1e400`) in the fields it skips, a blank line, two values on a
line or one value split over two. So each line of the block must also pass
simdjson, which checks a whole line (one value, syntax, UTF-8, numbers, depth)
without building it and accepts no line orjson refuses but one behind a byte-order
mark, which msgspec refuses. With every line one valid value, msgspec's values are
the lines' values, one for one.

A block either fails is read by the exact path line by line, so errors keep their
wording. simdjson and msgspec are imported only for logs of at least
`FAST_MIN_BYTES`, where they pay for their import.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterator
from typing import Any

Decoded = tuple[list[Any], list[bytes]]
# A line of a decoded block: what a dialect reads of it (None: the exact path must
# read it), where it starts, where its own bytes end (before a CR) and where the
# next line starts.
Record = tuple[Any, int, int, int]

BLOCK_BYTES = 256 << 10
# Below this, importing msgspec and simdjson (about 15 ms) costs more than they save.
FAST_MIN_BYTES = 4 << 20


def lines_end(file: Any, size: int, limit: int | None = None) -> int:
    """The offset just after the last newline within the first `size` bytes (0 if none);
    with `limit`, after the `limit`-th newline when there are more (`--upto` a line)."""
    if limit is not None:
        return _line_end(file, size, limit)
    position = size
    while position > 0:
        step = min(BLOCK_BYTES, position)
        chunk = os.pread(file.fileno(), step, position - step)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            return position - step + newline + 1
        position -= step
    return 0


def _line_end(file: Any, size: int, limit: int) -> int:
    """The offset just after the `limit`-th newline within the first `size` bytes, or
    after the last one when there are fewer."""
    position = seen = 0
    while position < size and seen < limit:
        chunk = os.pread(file.fileno(), min(BLOCK_BYTES, size - position), position)
        if not chunk:
            break
        found = chunk.count(b"\n")
        if seen + found >= limit:
            at = -1
            for _ in range(limit - seen):
                at = chunk.index(b"\n", at + 1)
            return position + at + 1
        seen += found
        position += len(chunk)
    return lines_end(file, size) if seen < limit else position


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
    """msgspec decoding of blocks into one Struct type, each line checked by simdjson."""

    def __init__(self, struct: type) -> None:
        import msgspec  # here: with simdjson, ~15 ms to import; only big logs need them
        import simdjson

        self._decode: Any = msgspec.json.Decoder(struct).decode_lines
        self._validate = simdjson.Parser().parse  # the parse is the check

    def decode(self, block: bytes) -> Decoded | None:
        """The block's values and its lines (without their newlines), one for one;
        None when the whole block must go to the exact path."""
        lines = block.split(b"\n")
        if lines.pop():  # a block ends with a newline
            return None
        validate = self._validate
        try:
            for line in lines:
                validate(line)
            values = self._decode(block)
        except (ValueError, RuntimeError):  # simdjson's errors; msgspec's are ValueErrors,
            return None  # and its UnicodeDecodeError on invalid UTF-8 in a field it builds
        return (values, lines) if len(values) == len(lines) else None

    def records(
        self, block: bytes, offset: int, fields_of: Callable[[Any], Any]
    ) -> list[Record] | None:
        """The lines of a block of whole lines that starts at `offset`, as `Record`s
        whose fields are `fields_of(value)` for each line's decoded value; None when
        the whole block must go to the exact path."""
        decoded = self.decode(block)
        if decoded is None:
            return None
        records: list[Record] = []
        start = offset
        for value, raw in zip(*decoded, strict=True):
            following = start + len(raw) + 1
            records.append(
                (fields_of(value), start, following - 1 - raw.endswith(b"\r"), following)
            )
            start = following
        return records


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a big log is read: the objects a read
    makes (lines, strings, tuples) hold no cycles, and each collection would walk the
    ones made so far (on a 256 MB session, a tenth of `view`'s time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def lines_decoded(decoder: Any, block: bytes) -> tuple[list[Any] | None, int]:
    """A block of whole lines decoded by msgspec's `decoder` at once, a value a line,
    and how many lines the block holds; None for the values where msgspec cannot take
    one of its lines, or where a blank line would move the numbers (it skips those)."""
    import msgspec

    held = block.count(b"\n") + (not block.endswith(b"\n"))
    try:
        values = decoder.decode_lines(block)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None, held
    return (values if len(values) == held else None), held
