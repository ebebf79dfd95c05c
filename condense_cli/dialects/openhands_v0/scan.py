"""Replay on integer keys: the scan's bookkeeping and the byte paths, for any dialect
whose log is one record per line and whose keys increase down the file.

A dialect's scan loop (its own, for speed) classifies each line and calls a
`KeyedScan`: an ordinary event is recorded by key and byte offset; hidden
events, condensations, requests, summary lines and invalid lines are marked.
Forgotten keys are kept as ranges (`IntervalSet`), never expanded, so memory
grows with the number of events, never with their text. Pass two reads back
only the runs of kept lines, or copies them as byte ranges.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field

from condense_cli.core.errors import LogError
from condense_cli.core.events import CondensationRecord, Problem
from condense_cli.core.intervals import IntervalSet
from condense_cli.core.logfile import LogSource, line_body
from condense_cli.core.text import plural
from condense_cli.dialects.base import Gap

# Lines that are not kept by their key, in `LogIndex.special` by position.
HIDDEN = -1  # an event the agent never sees
SUMMARY_LINE = -2  # a summary record without key (from `view --format jsonl`)
INVALID = -3  # a line that failed validation (only when collecting problems)
CONDENSATION = -4  # a condensation or condensation request: never shown


@dataclass
class LogIndex:
    """The result of scanning a log: enough to replay it and to answer `stats`."""

    path: str
    size: int = 0
    # Per event line, in order: its id (never decreasing: a line without an id
    # repeats the previous one) and where it starts. Lines that are not kept by
    # id are marked in `special` (position -> HIDDEN, SUMMARY_LINE, INVALID or
    # CONDENSATION); every other position is an event the agent sees.
    line_ids: array[int] = field(default_factory=lambda: array("q"))
    line_offsets: array[int] = field(default_factory=lambda: array("q"))
    special: dict[int, int] = field(default_factory=dict)
    replay_end: int = 0  # the byte after the last line in line_ids
    clean: bool = True  # no blank lines, BOM or torn end: kept lines can be copied as ranges
    forgotten: IntervalSet = field(default_factory=IntervalSet)
    summary: str | None = None
    summary_offset: int | None = None
    summary_line: int | None = None
    unhandled_request: bool = False
    condensations: list[CondensationRecord] = field(default_factory=list)
    requests: int = 0
    events: int = 0  # every event line, hidden ones included
    visible_events: int = 0  # events the agent sees, before condensation
    kept_events: int = 0  # visible events still in the view (summary excluded)
    summary_lines: int = 0
    max_key: int = -1  # the largest key (id) in the log
    problems: list[Problem] = field(default_factory=list)

    @property
    def view_size(self) -> int:
        """Events in the view, the summary included."""
        return self.kept_events + self.summary_lines + (1 if self.summary is not None else 0)

    @property
    def forgotten_events(self) -> int:
        """Events the agent saw that condensations have forgotten."""
        return self.visible_events - self.kept_events

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


class KeyedScan:
    """The replay state a dialect's scan loop feeds, line by line."""

    def __init__(self, path: str, upto: int, collect: bool) -> None:
        self.index = LogIndex(path)
        self.upto = upto
        self.collect = collect
        self.special_positions: list[int] = []  # the keys of index.special, in order
        self.other_events = 0  # valid events that are not plain visible ones
        self.counted = 0  # positions already counted into index.kept_events
        self.prev_id = -1
        self.prev_line = 0
        self.cut = False  # past --upto: validate, but replay no more

    def _count_visible(self, low: int, high: int, first: int = 0) -> int:
        """Visible events with ids in `low..high` among positions from `first` on."""
        ids, marked = self.index.line_ids, self.special_positions
        lo, hi = bisect_left(ids, low, first), bisect_right(ids, high, first)
        if lo >= hi:
            return 0
        return (hi - lo) - (bisect_left(marked, hi) - bisect_left(marked, lo))

    def _count_arrivals(self) -> None:
        """Add the visible events read since the last count to `kept_events`,
        less those an earlier condensation's range already forgot."""
        index = self.index
        ids = index.line_ids
        first, end = self.counted, len(ids)
        if first >= end:
            return
        marked = self.special_positions
        arrived = (end - first) - (len(marked) - bisect_left(marked, first))
        for low, high in index.forgotten.overlapping(ids[first], ids[end - 1]):
            arrived -= self._count_visible(low, high, first)
        index.kept_events += arrived
        self.counted = end

    def problem(self, line: int | None, message: str, severity: str = "error") -> None:
        if not self.collect and severity == "error":
            raise LogError(self.index.path, message, line, hint=_hint(message))
        self.index.problems.append(Problem(line, message, severity))

    def mark(self, marker: int, event_id: int | None = None) -> None:
        """Add a line that is not kept by its id; its id slot keeps the order."""
        line_ids = self.index.line_ids
        self.index.special[len(line_ids)] = marker
        self.special_positions.append(len(line_ids))
        if event_id is None:
            event_id = line_ids[-1] if line_ids else -1
        line_ids.append(event_id)

    def request(self, key: int) -> None:
        """A condensation request at `key`: pending until the next condensation."""
        self.mark(CONDENSATION, key)
        self.other_events += 1
        self.index.requests += 1
        self.index.unhandled_request = True
        self.index.forgotten.add(key, key)

    def forget(
        self,
        number: int,
        key: int,
        ranges: list[tuple[int, int]],
        summary: str | None,
        summary_offset: int | None,
    ) -> None:
        """Apply a condensation at `key` (line `number`) that forgets the key `ranges`
        and, with a summary, shows it at `summary_offset`; it forgets itself too."""
        index = self.index
        self._count_arrivals()
        newly_forgotten = 0
        first_forgotten = []
        for start, end in ranges:
            for lo, hi in index.forgotten.add(start, end):
                first_forgotten.append((lo, hi))
                newly_forgotten += self._count_visible(lo, hi)
        index.forgotten.add(key, key)
        index.kept_events -= newly_forgotten
        index.unhandled_request = False
        if summary is not None and summary_offset is not None:
            if summary_offset > index.kept_events + index.summary_lines:
                self.problem(
                    number,
                    f"summary_offset {summary_offset} is past the end of the view it "
                    f"produces ({plural(index.kept_events + index.summary_lines, 'event')}); "
                    "the summary is shown at the end",
                    "warning",
                )
            index.summary = summary
            index.summary_offset = summary_offset
            index.summary_line = number
        elif index.summary is not None:
            self.problem(
                number,
                f"condensation {key} has no summary, so the summary from line "
                f"{index.summary_line} stays in the view (as in OpenHands)",
                "warning",
            )
        index.condensations.append(
            CondensationRecord(
                id=key,
                line=number,
                ranges=ranges,
                forgotten_events=newly_forgotten,
                summary_chars=len(summary) if summary is not None else None,
                view_size=index.view_size,
                first_forgotten=first_forgotten,
            )
        )

    def finish(self, size: int) -> LogIndex:
        index = self.index
        self._count_arrivals()
        index.size = size
        index.visible_events = len(index.line_ids) - len(self.special_positions)
        index.events = index.visible_events + self.other_events
        index.max_key = self.prev_id
        if index.events == 0 and not index.problems:
            self.problem(None, "the log is empty: it holds no events")
        return index


def _hint(message: str) -> str | None:
    if "incomplete" in message:
        return "run `condense check` to list every problem; the log was not changed"
    return "run `condense check` on the log to list every problem"


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


def iter_view_bytes(
    source: LogSource, index: LogIndex, summary_body: bytes | None
) -> Iterator[bytes]:
    """The view as JSONL bytes: kept lines byte-for-byte, and `summary_body` (the
    replayed summary as a line, made by the dialect) at its offset."""
    summary = summary_body + b"\n" if summary_body is not None else None
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
