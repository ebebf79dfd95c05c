"""Lines sorted for the fast path: ordinary events (ids increasing) apart from every
other line, which goes to the full validator."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from condense_cli.dialects.openhands_v0.events import MAX_ID


@dataclass
class Classified:
    """Lines sorted by a scan worker: the ordinary events (ids increasing, and their
    offsets), and every other line as (ordinary events before it, its index among
    these lines, start, end), for the full validator."""

    ids: array[int] = field(default_factory=lambda: array("q"))
    offsets: array[int] = field(default_factory=lambda: array("q"))
    others: list[tuple[int, int, int, int]] = field(default_factory=list)
    lines: int = 0
    end: int = 0  # the offset after the last line


def classify_lines(
    lines: list[bytes], offset: int, stretch: Classified, ordinary_id: Callable[[bytes], Any]
) -> int:
    """Sort `lines`, which start at byte `offset`, into `stretch` one at a time, by
    `ordinary_id`; returns the offset after them. An ordinary event whose id does not
    increase goes to the full validator, which says what is wrong."""
    previous = stretch.ids[-1] if stretch.ids else -1
    for raw in lines:
        start = offset
        offset += len(raw)
        event_id = ordinary_id(raw)
        if event_id is not None and previous < event_id <= MAX_ID:
            previous = event_id
            stretch.ids.append(event_id)
            stretch.offsets.append(start)
        else:
            stretch.others.append((len(stretch.ids), stretch.lines, start, offset))
        stretch.lines += 1
    stretch.end = offset
    return offset
