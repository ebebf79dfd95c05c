"""Pass two over a log: the kept events, in order, with the summary in place.

`scan_log` has already validated the log and replayed its condensations into
a `LogIndex` that knows where each event line starts. Here we read only the
runs of kept lines; for JSONL output of a clean log they are copied as byte
ranges, without splitting them into lines at all.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator

import orjson

from condense_cli.dialects.openhands_v0 import V0Event, summary_event
from condense_cli.log import LogSource, line_body
from condense_cli.model import View, summary_position
from condense_cli.scan import SUMMARY_LINE, LogIndex, scan_log


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
    summary = summary_event(index.summary).to_json() + b"\n" if index.summary is not None else None
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
    events: list = [
        V0Event(orjson.loads(body), event_id, body)
        for body, event_id in iter_kept_lines(source, index)
    ]
    summary = None
    if index.summary is not None:
        summary = summary_event(index.summary)
        events.insert(summary_position(index.summary_offset, len(events)), summary)
    return View(events, index.unhandled_request, summary, index.summary_offset, None, summary_event)


def load_view(path: str, upto: int | None = None) -> tuple[View, LogIndex]:
    """Scan and replay the log at `path` (or `-`) in one call."""
    with LogSource.open(path) as source:
        index = scan_log(source, upto=upto)
        return build_view(source, index), index
