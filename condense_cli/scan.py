"""Pass one over a log: validate every line and replay every condensation.

The scan keeps only what replay needs (forgotten ranges, the latest summary,
the request flag, one id per line), so memory grows with the number of
events' ids, never with their text.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from condense_cli.errors import LogError
from condense_cli.events import (
    CondensationArgs,
    LineProblem,
    decode_line,
    is_seen_by_agent,
    parse_condensation,
    validate_event,
)
from condense_cli.intervals import IntervalSet
from condense_cli.log import LogSource

# Markers stored in place of an id for lines that are not kept by id.
HIDDEN = -1  # an event the agent never sees
SUMMARY_LINE = -2  # a summary observation without id (from `view --format jsonl`)
INVALID = -3  # a line that failed validation (only when collecting problems)


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding of `check`: an error makes the log invalid, a warning does not."""

    line: int | None
    message: str
    severity: str = "error"


@dataclass(slots=True)
class CondensationRecord:
    """What one condensation did, for `stats` and `check`."""

    id: int
    line: int
    ranges: list[tuple[int, int]]
    forgotten_events: int  # events of the view it newly forgot
    summary_chars: int | None
    view_size: int  # view size right after it


@dataclass
class LogIndex:
    """The result of scanning a log: enough to replay it and to answer `stats`."""

    path: str
    size: int = 0
    line_ids: array = field(default_factory=lambda: array("q"))
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
    last_line_terminated: bool = True
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
    for number, body, terminated in source.lines():
        scanner.feed(number, body, terminated)
    return scanner.finish(source.size)


class _Scanner:
    def __init__(self, path: str, upto: int | None, collect: bool) -> None:
        self.index = LogIndex(path)
        self.upto = upto
        self.collect = collect
        self.visible_ids = array("q")  # sorted ids of visible events, for counting
        self.prev_id = -1
        self.prev_line = 0
        self.last_condensation_line: int | None = None
        self.cut = False  # past --upto: validate, but replay no more

    def problem(self, line: int | None, message: str, severity: str = "error") -> None:
        if not self.collect and severity == "error":
            raise LogError(self.index.path, message, line, hint=_hint(message))
        self.index.problems.append(Problem(line, message, severity))

    def feed(self, number: int, body: bytes, terminated: bool) -> None:
        index = self.index
        index.last_line_terminated = terminated
        try:
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
                index.line_ids.append(INVALID)
            return
        index.events += 1
        if event_id is not None:
            self.prev_id, self.prev_line = event_id, number
            index.max_id = event_id
        if self.cut or (self.upto is not None and event_id is not None and event_id > self.upto):
            self.cut = True
            return
        if event_id is None:
            index.line_ids.append(SUMMARY_LINE)
            index.summary_lines += 1
            return
        if not is_seen_by_agent(data):
            index.line_ids.append(HIDDEN)
            return
        index.line_ids.append(event_id)
        action = data.get("action")
        if condensation is not None:
            self._apply_condensation(number, event_id, condensation)
        elif action == "condensation_request":
            index.requests += 1
            index.unhandled_request = True
            index.forgotten.add(event_id, event_id)
        else:
            index.visible_events += 1
            if event_id > index.forgotten.max_end or event_id not in index.forgotten:
                self.visible_ids.append(event_id)
                index.kept_events += 1
            # else: forgotten on arrival by an earlier condensation's range

    def _apply_condensation(self, number: int, event_id: int, args: CondensationArgs) -> None:
        index = self.index
        ranges = args.ranges()
        newly_forgotten = 0
        for start, end in ranges:
            for lo, hi in index.forgotten.add(start, end):
                newly_forgotten += _count_between(self.visible_ids, lo, hi)
        index.forgotten.add(event_id, event_id)
        index.kept_events -= newly_forgotten
        index.unhandled_request = False
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
        index.size = size
        if index.events == 0 and not index.problems:
            self.problem(None, "the log is empty: it holds no events")
        return index


def _count_between(sorted_ids: array, lo: int, hi: int) -> int:
    return bisect_right(sorted_ids, hi) - bisect_left(sorted_ids, lo)


def _hint(message: str) -> str | None:
    if "incomplete" in message:
        return "run `condense check` to list every problem; the log was not changed"
    return "run `condense check` on the log to list every problem"
