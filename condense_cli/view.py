"""Pass two over a log: the kept events, in order, with the summary in place.

`scan_log` has already validated the log and replayed its condensations into
a `LogIndex` that knows where each event line starts. Here we read only the
runs of kept lines; for JSONL output of a clean log they are copied as byte
ranges, without splitting them into lines at all.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, replace

import orjson

from condense_cli.events import Event
from condense_cli.log import LogSource, line_body
from condense_cli.scan import SUMMARY_LINE, LogIndex, scan_log


@dataclass
class View:
    """What the model sees: events in order, and whether a request is pending.

    `summary` is the summary event replay inserted (also in `events`), and
    `summary_offset` the offset its condensation asked for. `note` is set by a
    condenser that looked at the view and decided not to condense it.
    """

    events: list[Event]
    unhandled_request: bool = False
    summary: Event | None = None
    summary_offset: int | None = None
    note: str | None = None

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __getitem__(self, index: int) -> Event:
        return self.events[index]

    @property
    def ids(self) -> list[int]:
        """The log ids in the view (the summary has none)."""
        return [e.id for e in self.events if e.id is not None]

    def with_events(self, events: list[Event]) -> View:
        """The same view (request flag, summary) over rewritten events."""
        return replace(self, events=events, note=None)

    def with_note(self, note: str) -> View:
        """The same view, marked with why a condenser left it unchanged."""
        return replace(self, note=note)


def kept_runs(index: LogIndex) -> list[tuple[int, int]]:
    """Runs [first, last) of consecutive kept positions in `index.line_ids`.

    `line_ids` never decreases, so each forgotten range maps to a run of
    positions by bisection: the work grows with the ranges, not the lines.
    """
    ids = index.line_ids
    dropped: list[tuple[int, int]] = []
    for low, high in index.forgotten:
        first, last = bisect_left(ids, low), bisect_right(ids, high)
        if first < last:
            dropped.append((first, last))
    always_kept = []
    for position, marker in index.special.items():
        if marker == SUMMARY_LINE:
            always_kept.append(position)
        else:
            dropped.append((position, position + 1))
    dropped.sort()
    runs: list[tuple[int, int]] = []
    cursor = 0
    for first, last in dropped:
        if first > cursor:
            runs.append((cursor, first))
        cursor = max(cursor, last)
    if cursor < len(ids):
        runs.append((cursor, len(ids)))
    if always_kept:
        runs = _merge_runs(runs + [(p, p + 1) for p in always_kept])
    return runs


@dataclass(frozen=True)
class Gap:
    """Events forgotten between two kept ones, all by one condensation.

    `after` is how many kept log lines come before the gap in the view (the
    summary replay inserts is not counted), so a renderer can place it.
    """

    after: int
    count: int
    first_id: int
    last_id: int
    by: int | None  # the id of the condensation that forgot them


def forgotten_gaps(index: LogIndex) -> list[Gap]:
    """Where forgotten events were in the view, and which condensation forgot them.

    Works on the ranges only: each stretch of positions between kept runs is
    split by the ranges each condensation forgot first, and counted by bisection.
    """
    ids, runs = index.line_ids, kept_runs(index)
    marked = sorted(index.special)
    owners = sorted(
        (lo, hi, record.id) for record in index.condensations for lo, hi in record.first_forgotten
    )
    owner_ends = [hi for _, hi, _ in owners]
    gaps: list[Gap] = []
    stretches, kept, cursor = [], 0, 0
    for first, last in [*runs, (len(ids), len(ids))]:
        if first > cursor:
            stretches.append((kept, cursor, first))
        kept += last - first
        cursor = last
    for after, first, last in stretches:
        k = bisect_left(owner_ends, ids[first])
        pieces = []
        while k < len(owners) and owners[k][0] <= ids[last - 1]:
            lo, hi, by = owners[k]
            pieces.append(
                (bisect_left(ids, lo, first, last), bisect_right(ids, hi, first, last), by)
            )
            k += 1
        for lo_pos, hi_pos, by in pieces:
            count = (hi_pos - lo_pos) - (bisect_left(marked, hi_pos) - bisect_left(marked, lo_pos))
            if count:
                low = _visible(marked, lo_pos, 1)
                high = _visible(marked, hi_pos - 1, -1)
                gaps.append(Gap(after, count, ids[low], ids[high], by))
    return gaps


def _visible(marked: list[int], position: int, step: int) -> int:
    """The nearest position from `position` on (in direction `step`) not in `marked`."""
    k = bisect_left(marked, position)
    while k < len(marked) and k >= 0 and marked[k] == position:
        position += step
        k += step
    return position


def _merge_runs(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for first, last in sorted(runs):
        if merged and first <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
    return merged


def iter_kept_lines(source: LogSource, index: LogIndex) -> Iterator[tuple[bytes, int | None]]:
    """Yield (body, id) of each kept line, in log order, reading only kept runs."""
    offsets, line_ids = index.line_offsets, index.line_ids
    for first, last in kept_runs(index):
        for position in range(first, last):
            offset = offsets[position]
            body = line_body(source.line_at(offset), first=offset == 0)
            summary_line = index.special.get(position) == SUMMARY_LINE
            yield body, (None if summary_line else line_ids[position])


def iter_view_bytes(source: LogSource, index: LogIndex) -> Iterator[bytes]:
    """The view as JSONL bytes: kept lines byte-for-byte, the summary as a new line."""
    summary = Event.summary(index.summary).to_json() + b"\n" if index.summary is not None else None
    at = index.summary_offset or 0
    if not index.clean:
        for emitted, (body, _id) in enumerate(iter_kept_lines(source, index)):
            if summary is not None and emitted == at:
                yield summary
                summary = None
            yield body + b"\n"
        if summary is not None:
            yield summary
        return
    offsets, end = index.line_offsets, index.replay_end
    emitted = 0
    for first, last in kept_runs(index):
        count = last - first
        if summary is not None and emitted + count >= at:
            split = first + (at - emitted)
            yield from _unix_lines(source.read_range(offsets[first], _start(offsets, split, end)))
            yield summary
            summary = None
            first = split
        yield from _unix_lines(
            source.read_range(_start(offsets, first, end), _start(offsets, last, end))
        )
        emitted += count
    if summary is not None:
        yield summary


def _unix_lines(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Turn CRLF line endings into LF across chunk boundaries.

    Inside a JSON line a raw CR LF cannot occur (strings escape them), so
    every CR LF in the bytes of whole lines is a line ending.
    """
    held = b""
    for chunk in chunks:
        chunk = held + chunk
        held = b""
        if chunk.endswith(b"\r"):
            chunk, held = chunk[:-1], b"\r"
        yield chunk.replace(b"\r\n", b"\n") if b"\r" in chunk else chunk
    if held:
        yield held


def _start(offsets: object, position: int, end: int) -> int:
    """Where line `position` starts, or `end` past the last line."""
    return offsets[position] if position < len(offsets) else end  # type: ignore[index, arg-type]


def build_view(source: LogSource, index: LogIndex) -> View:
    """The replayed view with every kept event parsed."""
    events = [
        Event(orjson.loads(body), event_id, body)
        for body, event_id in iter_kept_lines(source, index)
    ]
    summary = None
    if index.summary is not None:
        summary = Event.summary(index.summary)
        events.insert(min(index.summary_offset or 0, len(events)), summary)
    return View(events, index.unhandled_request, summary, index.summary_offset)


def load_view(path: str, upto: int | None = None) -> tuple[View, LogIndex]:
    """Scan and replay the log at `path` (or `-`) in one call."""
    with LogSource.open(path) as source:
        index = scan_log(source, upto=upto)
        return build_view(source, index), index
