"""OpenHands V0's fast path: lines decoded by msgspec a block at a time, and sorted
into ordinary events (recorded by id and offset) and lines for the exact path.

Imported only for logs big enough to pay for msgspec's import (`fastlines`). This
module does not use `from __future__ import annotations`: msgspec reads the Structs'
annotations as types.
"""

import io
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import msgspec
from msgspec import UNSET

from condense_cli.dialects.openhands_v0 import MAX_ID, SPECIAL_ACTIONS, SPECIAL_OBSERVATIONS
from condense_cli.fastlines import BlockDecoder, Decoded, read_blocks


class Fields(msgspec.Struct, gc=False):
    """`args` or `extras`: only whether the event is hidden."""

    hidden: object = None


class Line(msgspec.Struct, gc=False):
    """What the scan reads of a V0 line; other fields are skipped unbuilt."""

    id: object = None
    action: object = UNSET
    observation: object = UNSET
    args: Fields | None = None
    extras: Fields | None = None


DECODER = BlockDecoder(Line)


@dataclass
class Classified:
    """A stretch of lines sorted by the fast path: the ordinary events (ids and
    offsets, ids increasing), and every other line as (ordinary events before it,
    its index in the stretch, start, end), for the exact path."""

    ids: array = field(default_factory=lambda: array("q"))
    offsets: array = field(default_factory=lambda: array("q"))
    others: list[tuple[int, int, int, int]] = field(default_factory=list)
    lines: int = 0
    end: int = 0  # the offset after the stretch


def classify_block(decoded: Decoded, base: int, upto: int, into: Classified) -> None:
    """Sort one decoded block (at file offset `base`) into `into`.

    An ordinary event is one the scan only records: an integer id above the previous
    one (and up to `upto`), exactly one of action/observation, a type that is not
    special, and not hidden. This is the rule of `V0Scan.run_lines` on decoded Structs.
    """
    values, starts, doubtful = decoded
    add_id, add_offset = into.ids.append, into.offsets.append
    others = into.others
    previous = into.ids[-1] if into.ids else -1
    first_line = into.lines
    lines = zip(values, starts, islice(starts, 1, None), strict=False)
    for position, (value, start, stop) in enumerate(lines, start=first_line):
        event_id = value.id
        if type(event_id) is int and previous < event_id <= upto:
            kind = value.action
            if kind is not UNSET:
                ordinary = (
                    type(kind) is str and kind not in SPECIAL_ACTIONS and value.observation is UNSET
                )
                fields = value.args
            else:
                kind = value.observation
                ordinary = type(kind) is str and kind not in SPECIAL_OBSERVATIONS
                fields = value.extras
            if (
                ordinary
                and (fields is None or fields.hidden is not True)
                and (not doubtful or position - first_line not in doubtful)
            ):
                previous = event_id
                add_id(event_id)
                add_offset(base + start)
                continue
        others.append((len(into.ids), position, base + start, base + stop))
    into.lines = first_line + len(values)


def classify_range(file: Any, start: int, end: int) -> Iterator[Classified]:
    """Sort the lines of `start..end` (a worker's half of the log), one block at a
    time; a block the fast path cannot take is listed line by line for the exact path."""
    for offset, block in read_blocks(file, start, end):
        into = Classified(end=offset + len(block))
        decoded = DECODER.decode(block)
        if decoded is None:
            line_start = offset
            for raw in io.BytesIO(block):
                into.others.append((0, into.lines, line_start, line_start + len(raw)))
                into.lines += 1
                line_start += len(raw)
        else:
            classify_block(decoded, offset, MAX_ID, into)
        yield into
