"""Pass one over a log: validate every line and replay every condensation.

The scan keeps only what replay needs (forgotten ranges, the latest summary,
the request flag, and an id and a byte offset per event line), so memory grows
with the number of events, never with their text. Ordinary events take a short
fast path; condensations, requests, hidden events and anything suspect go
through the full validator.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any

import orjson

from condense_cli.dialects.openhands_v0 import (
    HIDDEN_ACTIONS,
    HIDDEN_OBSERVATIONS,
    MAX_ID,
    CondensationArgs,
    LineProblem,
    decode_line,
    is_seen_by_agent,
    parse_condensation,
    validate_event,
)
from condense_cli.errors import LogError
from condense_cli.intervals import IntervalSet
from condense_cli.log import BOM, LogSource, line_body
from condense_cli.model import CondensationRecord, Problem

# Lines that are not kept by their id, in `LogIndex.special` by position.
HIDDEN = -1  # an event the agent never sees
SUMMARY_LINE = -2  # a summary observation without id (from `view --format jsonl`)
INVALID = -3  # a line that failed validation (only when collecting problems)
CONDENSATION = -4  # a condensation or condensation request: never shown

# Types the fast path leaves to the full validator.
SPECIAL_ACTIONS = HIDDEN_ACTIONS | {"condensation", "condensation_request"}
SPECIAL_OBSERVATIONS = HIDDEN_OBSERVATIONS | {"condense"}


@dataclass
class LogIndex:
    """The result of scanning a log: enough to replay it and to answer `stats`."""

    path: str
    size: int = 0
    # Per event line, in order: its id (never decreasing: a line without an id
    # repeats the previous one) and where it starts. Lines that are not kept by
    # id are marked in `special` (position -> HIDDEN, SUMMARY_LINE, INVALID or
    # CONDENSATION); every other position is an event the agent sees.
    line_ids: array = field(default_factory=lambda: array("q"))
    line_offsets: array = field(default_factory=lambda: array("q"))
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
    max_id: int = -1
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


def scan_log(source: LogSource, *, upto: int | None = None, collect: bool = False) -> LogIndex:
    """Validate and replay `source`; raise LogError at the first defect unless `collect`."""
    scanner = _Scanner(source.path, upto, collect)
    scanner.run(source)
    return scanner.finish(source.size)


class _Scanner:
    def __init__(self, path: str, upto: int | None, collect: bool) -> None:
        self.index = LogIndex(path)
        self.upto = MAX_ID if upto is None else upto
        self.collect = collect
        self.special_positions: list[int] = []  # the keys of index.special, in order
        self.other_events = 0  # valid events that are not plain visible ones
        self.counted = 0  # positions already counted into index.kept_events
        self.prev_id = -1
        self.prev_line = 0
        self.cut = False  # past --upto: validate, but replay no more

    def run(self, source: LogSource) -> None:
        """Read every line; ordinary events take the fast path, the rest `slow_line`.

        The fast path only records each event's id and offset: counts are
        worked out from those arrays when a condensation needs them.
        """
        index = self.index
        append_id = index.line_ids.append
        append_offset = index.line_offsets.append
        loads, decode_error = orjson.loads, orjson.JSONDecodeError
        upto = self.upto
        prev_id, prev_line = self.prev_id, self.prev_line
        report, step = source.on_progress, source.PROGRESS_STEP
        next_report = step if report is not None else sys.maxsize
        size = source.size
        watch = min(size + 1, next_report)  # the next offset that needs a look
        number = offset = replay_end = 0
        cut = False
        raw = b""
        file = source.file
        file.seek(0)
        for raw in file:
            number += 1
            start = offset
            offset += len(raw)
            if offset >= watch:
                if offset > size:
                    clipped = source.clip(raw, start)
                    if clipped is None:
                        offset = start
                        break
                    raw, offset, size = clipped, start + len(clipped), source.size
                if offset >= next_report:
                    report(offset)  # type: ignore[misc]
                    next_report += step
                watch = min(size + 1, next_report)
            try:
                data = loads(raw)
            except decode_error:
                data = None
            if type(data) is dict and not cut:
                event_id = data.get("id")
                if type(event_id) is int and prev_id < event_id <= upto:
                    # `hidden` sits in args (actions) or extras (observations)
                    kind = data.get("action")
                    if kind is not None:
                        ordinary = (
                            type(kind) is str
                            and kind not in SPECIAL_ACTIONS
                            and "observation" not in data
                        )
                        fields = data.get("args")
                    else:
                        kind = data.get("observation")
                        ordinary = (
                            type(kind) is str
                            and kind not in SPECIAL_OBSERVATIONS
                            and "action" not in data
                        )
                        fields = data.get("extras")
                    if ordinary and (type(fields) is not dict or fields.get("hidden") is not True):
                        prev_id, prev_line = event_id, number
                        append_id(event_id)
                        append_offset(start)
                        replay_end = offset
                        continue
            # The full validator: hand it the state, then take it back.
            self.prev_id, self.prev_line = prev_id, prev_line
            index.replay_end = max(index.replay_end, replay_end)
            self.slow_line(number, raw, start, offset, data if type(data) is dict else None)
            prev_id, prev_line, cut = self.prev_id, self.prev_line, self.cut
        self.prev_id, self.prev_line = prev_id, prev_line
        index.replay_end = max(index.replay_end, replay_end)
        if not source.ends_with_newline(offset):
            index.clean = False  # the last line needs its newline written by us

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

    def slow_line(
        self, number: int, raw: bytes, start: int, end: int, data: dict[str, Any] | None
    ) -> None:
        """Blank lines, byte-order marks, line endings, then the full validator."""
        body = line_body(raw, first=number == 1)
        if number == 1 and raw.startswith(BOM):
            self.index.clean = False
        if not body or body.isspace():
            self.index.clean = False
            return
        if self.feed(number, body, raw.endswith(b"\n"), data):
            self.index.line_offsets.append(start)
            self.index.replay_end = end

    def problem(self, line: int | None, message: str, severity: str = "error") -> None:
        if not self.collect and severity == "error":
            raise LogError(self.index.path, message, line, hint=_hint(message))
        self.index.problems.append(Problem(line, message, severity))

    def feed(
        self, number: int, body: bytes, terminated: bool, data: dict[str, Any] | None = None
    ) -> bool:
        """Validate and replay one line (already parsed, or not); True when it
        was added to `line_ids`."""
        index = self.index
        try:
            if data is None:
                data = decode_line(body)
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
                self._mark(INVALID)
                return True
            return False
        if event_id is not None:
            self.prev_id, self.prev_line = event_id, number
        if self.cut or (event_id is not None and event_id > self.upto):
            self.cut = True
            self.other_events += 1
            return False
        if event_id is None:
            self._mark(SUMMARY_LINE)
            self.other_events += 1
            index.summary_lines += 1
            return True
        if not is_seen_by_agent(data):
            self._mark(HIDDEN, event_id)
            self.other_events += 1
            return True
        if condensation is not None:
            self._mark(CONDENSATION, event_id)
            self.other_events += 1
            self._apply_condensation(number, event_id, condensation)
        elif data.get("action") == "condensation_request":
            self._mark(CONDENSATION, event_id)
            self.other_events += 1
            index.requests += 1
            index.unhandled_request = True
            index.forgotten.add(event_id, event_id)
        else:
            index.line_ids.append(event_id)  # a visible event the fast path left to us
        return True

    def _mark(self, marker: int, event_id: int | None = None) -> None:
        """Add a line that is not kept by its id; its id slot keeps the order."""
        line_ids = self.index.line_ids
        self.index.special[len(line_ids)] = marker
        self.special_positions.append(len(line_ids))
        if event_id is None:
            event_id = line_ids[-1] if line_ids else -1
        line_ids.append(event_id)

    def _apply_condensation(self, number: int, event_id: int, args: CondensationArgs) -> None:
        index = self.index
        self._count_arrivals()
        ranges = args.ranges()
        newly_forgotten = 0
        for start, end in ranges:
            for lo, hi in index.forgotten.add(start, end):
                newly_forgotten += self._count_visible(lo, hi)
        index.forgotten.add(event_id, event_id)
        index.kept_events -= newly_forgotten
        index.unhandled_request = False
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
        if args.has_summary:
            assert args.summary is not None and args.summary_offset is not None
            if args.summary_offset > index.kept_events + index.summary_lines:
                self.problem(
                    number,
                    f"summary_offset {args.summary_offset} is past the end of the view it "
                    f"produces ({index.kept_events + index.summary_lines} events); "
                    "the summary is shown at the end",
                    "warning",
                )
            index.summary = args.summary
            index.summary_offset = args.summary_offset
            index.summary_line = number
        elif index.summary is not None:
            self.problem(
                number,
                f"condensation {event_id} has no summary, so the summary from line "
                f"{index.summary_line} stays in the view (as in OpenHands)",
                "warning",
            )
        index.condensations.append(
            CondensationRecord(
                id=event_id,
                line=number,
                ranges=ranges,
                forgotten_events=newly_forgotten,
                summary_chars=len(args.summary) if args.has_summary and args.summary else None,
                view_size=index.view_size,
            )
        )

    def finish(self, size: int) -> LogIndex:
        index = self.index
        self._count_arrivals()
        index.size = size
        index.visible_events = len(index.line_ids) - len(self.special_positions)
        index.events = index.visible_events + self.other_events
        index.max_id = self.prev_id
        if index.events == 0 and not index.problems:
            self.problem(None, "the log is empty: it holds no events")
        return index


def _hint(message: str) -> str | None:
    if "incomplete" in message:
        return "run `condense check` to list every problem; the log was not changed"
    return "run `condense check` on the log to list every problem"
