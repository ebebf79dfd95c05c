"""Replay in two passes: pass one validates every line and keeps the bookkeeping of
what is forgotten (`scan.KeyedScan`), taking the fast path on big logs; pass two
reads the kept lines back into the view."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any

import orjson

from condense_cli.core.events import Event, View, summary_position
from condense_cli.core.jsonlines import LineProblem, decode_line
from condense_cli.core.logfile import BOM, LogSource, line_body
from condense_cli.dialects.openhands_v0.events import (
    MAX_ID,
    CondensationArgs,
    V0Event,
    is_seen_by_agent,
    parse_condensation,
    summary_event,
    validate_event,
)
from condense_cli.dialects.openhands_v0.scan import (
    CONDENSATION,
    HIDDEN,
    INVALID,
    SUMMARY_LINE,
    KeyedScan,
    LogIndex,
    iter_kept_lines,
    iter_view_bytes,
)
from condense_cli.dialects.openhands_v0.sorting import Classified
from condense_cli.fast.halves import Report, lines_between, parallel_min_bytes, threshold
from condense_cli.fast.lines import lines_end

# Below this size a log's lines all go to the full validator: importing the fast
# path (simdjson and msgspec, about 10 ms) costs more than it saves on a small log
# (callgrind: it pays from about 2,200 lines of the uniform bench log, 3.7 MB, and
# 800 lines of the realistic one, 2.6 MB).
FAST_MIN_BYTES = 3 << 20
FAST_ENV = "CONDENSE_FAST_MIN_BYTES"


def _no_fast_path(raw: bytes) -> None:
    """Send every line to the full validator."""


def has_fast_path(size: int) -> bool:
    """Whether a log of `size` bytes takes the fast path: from `FAST_MIN_BYTES` (or
    `CONDENSE_FAST_MIN_BYTES`) on."""
    return size >= threshold(FAST_ENV, FAST_MIN_BYTES)


def line_sorter(size: int) -> Callable[[bytes], int | None]:
    """What tells ordinary events from the rest, one line at a time, for a log of
    `size` bytes: the fast path's `ordinary_id`, or nothing (all to the validator)."""
    if not has_fast_path(size):
        return _no_fast_path
    from condense_cli.dialects.openhands_v0.fast import ordinary_id

    return ordinary_id


STRETCH_LINES = 4096  # lines a worker sends at a time
BATCH_LINES = 256  # lines sorted at a time (kept small: they stay in the CPU's cache)


def classify_range(
    source: LogSource, start: int, end: int, report: Report | None = None
) -> Iterator[Classified]:
    """Sort the lines of bytes `start..end` with the fast path, a batch at a time,
    into stretches of about `STRETCH_LINES` lines."""
    from condense_cli.dialects.openhands_v0.fast import sort_batch  # it imports this module

    lines = lines_between(source, start, end, report)
    stretch = Classified(end=start)
    offset = start
    while batch := list(islice(lines, BATCH_LINES)):
        offset = sort_batch(batch, offset, stretch)
        if stretch.lines >= STRETCH_LINES:
            yield stretch
            stretch = Classified(end=offset)
    if stretch.lines:
        yield stretch


def scan_log(source: LogSource, *, upto: int | None = None, collect: bool = False) -> LogIndex:
    """Validate and replay `source`; raise LogError at the first defect unless `collect`."""
    scanner = V0Scan(source.path, MAX_ID if upto is None else upto, collect)
    scanner.run(source)
    return scanner.finish(source.size)


class V0Scan(KeyedScan):
    """Pass one over a V0 log: ordinary events take a short fast path; condensations,
    requests, hidden events and anything suspect go through the full validator.

    From `FAST_MIN_BYTES` on, the fast path (simdjson and msgspec) tells the ordinary
    events, a batch of lines at a time (`classify_range`); from `parallel_min_bytes()`
    on, this process and a forked worker share the log chunk by chunk.
    """

    ordinary_id: Callable[[bytes], int | None]  # set by `run` for the log's size

    def run(self, source: LogSource) -> None:
        """Read every line; ordinary events take a fast path, the rest `slow_line`.

        With the fast path (and no `--upto`), lines are sorted a batch at a time
        (`classify_range`) and the sorted stretches replayed in order; from
        `parallel_min_bytes()` on, the log is cut in chunks that this process and a
        forked worker sort, each taking the next as soon as it is done with the last
        (`walk_chunks`). Otherwise lines are read one at a time (`run_lines`). The
        last line, which a writer may still be writing, is always read here, from
        the file.
        """
        end = lines_end(source.file, source.size)
        report = source.on_progress
        by_batch = self.upto == MAX_ID and has_fast_path(source.size)
        if by_batch and end >= parallel_min_bytes():
            lines = self._walk(source, end)  # forks first: both import the fast path
        elif by_batch:
            lines = self.replay(classify_range(source, 0, end, report), source, 0)
        self.ordinary_id = line_sorter(source.size)
        if not by_batch:
            lines = self.run_lines(source, 0, 0, lines_between(source, 0, end, report))
        self.run_lines(source, end, lines)

    def _walk(self, source: LogSource, end: int) -> int:
        """Sort the chunks of bytes [0, end) in two processes and replay them here, in
        order, as they come; returns the last line's number."""
        from condense_cli.dialects.openhands_v0.chunks import (  # here: only big logs
            chunk_starts,
            walk_chunks,
        )

        starts = chunk_starts(source.file, end)
        report = source.on_progress
        lines = 0

        def sort(start: int, stop: int) -> list[Classified]:
            return list(classify_range(source, start, stop))

        def use(chunk: int, stretches: list[Classified]) -> None:
            nonlocal lines
            lines = self.replay(stretches, source, lines)
            if report is not None:
                report(starts[chunk + 1])

        walk_chunks(starts, sort, use)
        return lines

    def replay(self, stretches: Iterable[Classified], source: LogSource, lines: int) -> int:
        """Replay sorted stretches in order, after line `lines`; returns the last
        line's number."""
        for stretch in stretches:
            self.apply(stretch, lines, source)
            lines += stretch.lines
        return lines

    def apply(self, stretch: Classified, lines: int, source: LogSource) -> None:
        """Replay a classified stretch that follows line `lines`."""
        ids, end = stretch.ids, stretch.end
        done = 0  # ordinary events applied
        for seen, (before, position, start, stop) in enumerate(
            [*stretch.others, (len(ids), -1, end, end)]
        ):
            if before > done:
                self._apply_run(stretch, done, before, lines + done + seen, start, source)
                done = before
            if position >= 0:
                raw = source.read_at(start, stop)
                self.slow_line(lines + position + 1, raw, start, stop)

    def _apply_run(
        self, stretch: Classified, first: int, last: int, line: int, end: int, source: LogSource
    ) -> None:
        """Ordinary events `first..last` of a stretch, on the lines after `line`, the
        last one ending at offset `end`."""
        index = self.index
        ids, offsets = stretch.ids, stretch.offsets
        if self.cut or ids[first] <= self.prev_id:  # the exact path says what is wrong
            for k in range(first, last):
                start = offsets[k]
                stop = offsets[k + 1] if k + 1 < last else end
                raw = source.read_at(start, stop)
                self.slow_line(line + 1 + k - first, raw, start, stop)
            return
        if first == 0 and last == len(ids):
            index.line_ids.extend(ids)
            index.line_offsets.extend(offsets)
        else:
            index.line_ids.extend(ids[first:last])
            index.line_offsets.extend(offsets[first:last])
        self.prev_id = ids[last - 1]
        self.prev_line = line + last - first
        index.replay_end = max(index.replay_end, end)

    def run_lines(self, source: LogSource, offset: int, number: int, lines: Any = None) -> int:
        """The exact line loop, from byte `offset` after line `number`: over `lines`
        (a block's), or over the file to the size taken at open. Returns the last
        line's number.

        The fast path only records each event's id and offset: counts are
        worked out from those arrays when a condensation needs them.
        """
        index = self.index
        append_id = index.line_ids.append
        append_offset = index.line_offsets.append
        upto, ordinary_id = self.upto, self.ordinary_id
        prev_id, prev_line = self.prev_id, self.prev_line
        from_file = lines is None
        report, step = source.on_progress, source.PROGRESS_STEP
        next_report = step if report is not None and from_file else sys.maxsize
        size = source.size if from_file else sys.maxsize
        watch = min(size + 1, next_report)  # the next offset that needs a look
        replay_end = 0
        cut = self.cut
        if from_file:
            lines = source.file
            lines.seek(offset)
        for raw in lines:
            number += 1
            start = offset
            offset += len(raw)
            if offset >= watch:
                if offset > size:
                    clipped = source.clip(raw, start)
                    if clipped is None:
                        offset = start
                        number -= 1
                        break
                    raw, offset, size = clipped, start + len(clipped), source.size
                if offset >= next_report:
                    report(offset)  # type: ignore[misc]
                    next_report += step
                watch = min(size + 1, next_report)
            event_id = ordinary_id(raw)
            if event_id is not None and prev_id < event_id <= upto and not cut:
                prev_id, prev_line = event_id, number
                append_id(event_id)
                append_offset(start)
                replay_end = offset
                continue
            # The full validator: hand it the state, then take it back.
            self.prev_id, self.prev_line = prev_id, prev_line
            index.replay_end = max(index.replay_end, replay_end)
            self.slow_line(number, raw, start, offset)
            prev_id, prev_line, cut = self.prev_id, self.prev_line, self.cut
        self.prev_id, self.prev_line = prev_id, prev_line
        index.replay_end = max(index.replay_end, replay_end)
        if from_file and not source.ends_with_newline(offset):
            index.clean = False  # the last line needs its newline written by us
        return number

    def slow_line(self, number: int, raw: bytes, start: int, end: int) -> None:
        """Blank lines, byte-order marks, line endings, then the full validator."""
        body = line_body(raw, first=number == 1)
        if number == 1 and raw.startswith(BOM):
            self.index.clean = False
        if not body or body.isspace():
            self.index.clean = False
            return
        if self.feed(number, body, raw.endswith(b"\n")):
            self.index.line_offsets.append(start)
            self.index.replay_end = end

    def feed(self, number: int, body: bytes, terminated: bool) -> bool:
        """Validate and replay one line; True when it
        was added to `line_ids`."""
        index = self.index
        try:
            data = decode_line(body, quote=number > 1)
            event_id = validate_event(data)
            if event_id is not None and event_id <= self.prev_id:
                word = "duplicate" if event_id == self.prev_id else "decreasing"
                raise LineProblem(
                    f"{word} id {event_id}: ids must increase down the file "
                    f"(line {self.prev_line} has id {self.prev_id})"
                )
            condensation = (
                parse_condensation(data)
                if data.get("action") == "condensation" and is_seen_by_agent(data)
                else None
            )
        except LineProblem as exc:
            message = str(exc)
            if not terminated:
                message = (
                    f"the last line is incomplete ({message}); "
                    "a writer probably stopped in the middle of it"
                )
            self.problem(number, message)
            if not self.cut:
                self.mark(INVALID)
                return True
            return False
        if event_id is not None:
            self.prev_id, self.prev_line = event_id, number
        if self.cut or (event_id is not None and event_id > self.upto):
            self.cut = True
            self.other_events += 1
            return False
        if event_id is None:
            self.mark(SUMMARY_LINE)
            self.other_events += 1
            index.summary_lines += 1
            return True
        if not is_seen_by_agent(data):
            self.mark(HIDDEN, event_id)
            self.other_events += 1
            return True
        if condensation is not None:
            self.mark(CONDENSATION, event_id)
            self.other_events += 1
            self._condensation(number, event_id, condensation)
        elif data.get("action") == "condensation_request":
            self.request(event_id)
        else:
            index.line_ids.append(event_id)  # a visible event the fast path left to us
        return True

    def _condensation(self, number: int, event_id: int, args: CondensationArgs) -> None:
        """Warn about what OpenHands allows, then apply the condensation."""
        negative = args.negative_ids
        if negative is not None:
            self.problem(
                number,
                f"condensation {event_id}: {negative}; ids below 0 match no event and forget "
                "nothing (OpenHands writes -1, the id of its summary placeholder)",
                "warning",
            )
        beyond = args.max_forgotten
        if beyond is not None and beyond > event_id:
            self.problem(
                number,
                f"condensation {event_id} forgets ids after its own (up to {beyond}); "
                "events appended later with those ids will be hidden (OpenHands allows this)",
                "warning",
            )
        summary = args.summary if args.has_summary else None
        self.forget(number, event_id, args.ranges(), summary, args.summary_offset)


# --- pass two: the view ---------------------------------------------------------------


def view_lines(source: LogSource, index: LogIndex) -> Iterator[bytes]:
    """The view as JSON lines: kept lines byte-for-byte, the summary as a new line."""
    summary = summary_event(index.summary).to_json() if index.summary is not None else None
    return iter_view_bytes(source, index, summary)


def build_view(source: LogSource, index: LogIndex) -> View:
    """The replayed view with every kept event parsed."""
    events: list[Event] = [
        V0Event(orjson.loads(body), event_id, body)
        for body, event_id in iter_kept_lines(source, index)
    ]
    summary = None
    if index.summary is not None:
        summary = summary_event(index.summary)
        events.insert(summary_position(index.summary_offset, len(events)), summary)
    return View(events, index.unhandled_request, summary, index.summary_offset, None, summary_event)


def folded_view(
    kept: list[Event], summary: str | None, offset: int | None, requested: bool = False
) -> View:
    """A view from the kept events and the summary in force (the history walk's);
    `requested`: a condensation request is pending."""
    events = list(kept)
    shown = None
    if summary is not None:
        shown = summary_event(summary)
        events.insert(summary_position(offset, len(events)), shown)
    return View(events, requested, shown, offset, None, summary_event)


def load_view(path: str, upto: int | None = None) -> tuple[View, LogIndex]:
    """Scan and replay the V0 log at `path` (or `-`) in one call."""
    with LogSource.open(path) as source:
        index = scan_log(source, upto=upto)
        return build_view(source, index), index
