"""What an event is to us: its id, kind, original bytes, and a few accessors.

Lines are parsed with orjson and validated here; nothing in this module ever
re-serialises an event it did not create.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import islice
from typing import Any

import orjson

from condense_cli.core.errors import ConfigError, LogError
from condense_cli.core.events import (
    Condensation,
    CondensationRecord,
    Event,
    View,
    summary_position,
)
from condense_cli.core.intervals import IntervalSet, describe_ids, runs
from condense_cli.core.jsonlines import LineProblem, decode_line, encode, json_type
from condense_cli.core.logfile import BOM, LockedLog, LogSource, line_body
from condense_cli.core.messages import Conversion
from condense_cli.core.text import plural
from condense_cli.dialects.base import (
    CondensationStep,
    Dialect,
    Gap,
    Reading,
    Record,
    Replay,
    quiet_reading,
)
from condense_cli.dialects.openhands_v0.detect import NAME
from condense_cli.dialects.openhands_v0.scan import (
    CONDENSATION,
    HIDDEN,
    INVALID,
    SUMMARY_LINE,
    KeyedScan,
    LogIndex,
    forgotten_gaps,
    iter_kept_lines,
    iter_view_bytes,
)
from condense_cli.fast.halves import (
    Report,
    lines_between,
    parallel_min_bytes,
    threshold,
)
from condense_cli.fast.lines import lines_end

# Events the agent never sees (OpenHands' controller filters them out of its history).
HIDDEN_ACTIONS = frozenset({"null", "change_agent_state"})
HIDDEN_OBSERVATIONS = frozenset({"null", "agent_state_changed"})

MAX_ID = 2**63 - 1


def is_summary_line(data: dict[str, Any]) -> bool:
    """A summary observation as `condense view --format jsonl` prints it (no id)."""
    return data.get("observation") == "condense" and "id" not in data and "action" not in data


def validate_event(data: dict[str, Any]) -> int | None:
    """Check the shape every event must have; return its id (None for a summary line)."""
    has_action = "action" in data
    has_observation = "observation" in data
    if has_action and has_observation:
        raise LineProblem('has both "action" and "observation"; an event is one or the other')
    if not has_action and not has_observation:
        raise LineProblem('has neither "action" nor "observation"')
    kind_key = "action" if has_action else "observation"
    if not isinstance(data[kind_key], str):
        raise LineProblem(f'"{kind_key}" must be a string, not {json_type(data[kind_key])}')
    if is_summary_line(data):
        return None
    if "id" not in data:
        raise LineProblem('has no "id"')
    return check_id(data["id"], '"id"')


def check_id(value: Any, what: str, negative: bool = False) -> int:
    """An event id: an integer that fits in 64 bits, non-negative unless `negative`."""
    if isinstance(value, float) and value.is_integer() and abs(value) > MAX_ID:
        # orjson reads integers beyond 64 bits as floats
        raise LineProblem(f"{what} does not fit in 64 bits")
    if isinstance(value, bool) or not isinstance(value, int):
        raise LineProblem(f"{what} must be an integer, not {json_type(value)}")
    if value < 0 and not negative:
        raise LineProblem(f"{what} must not be negative ({value})")
    if not -MAX_ID - 1 <= value <= MAX_ID:
        raise LineProblem(f"{what} does not fit in 64 bits")
    return value


def is_seen_by_agent(data: dict[str, Any]) -> bool:
    """False for the events OpenHands' controller leaves out of the agent's history.

    OpenHands keeps an event's `hidden` flag among its fields, so it is
    serialised inside `args` (actions) or `extras` (observations); a top-level
    `"hidden"` key is not OpenHands' and is ignored, as OpenHands ignores it.
    """
    action = data.get("action")
    if action is not None:
        if action in HIDDEN_ACTIONS:
            return False
        fields = data.get("args")
    else:
        if data.get("observation") in HIDDEN_OBSERVATIONS:
            return False
        fields = data.get("extras")
    return type(fields) is not dict or fields.get("hidden") is not True


@dataclass(frozen=True, slots=True)
class CondensationArgs:
    """The validated arguments of a `condensation` action."""

    forgotten_ids: tuple[int, ...] | None
    start_id: int | None
    end_id: int | None
    summary: str | None
    summary_offset: int | None

    def ranges(self) -> list[tuple[int, int]]:
        """The forgotten ids as sorted, merged inclusive ranges.

        Negative ids match no event (event ids are never negative), so they are
        left out: `[-1, 5]` forgets 5, and the range `-1..5` forgets `0..5`.
        """
        if self.forgotten_ids is None:
            assert self.start_id is not None and self.end_id is not None
            start = max(self.start_id, 0)
            return [(start, self.end_id)] if start <= self.end_id else []
        return runs(i for i in self.forgotten_ids if i >= 0)

    @property
    def max_forgotten(self) -> int | None:
        """The largest id this condensation forgets, if any."""
        if self.forgotten_ids is None:
            return self.end_id
        return max(self.forgotten_ids, default=None)

    @property
    def negative_ids(self) -> str | None:
        """The negative ids it names, described for a warning; None when there are none."""
        if self.forgotten_ids is None:
            assert self.start_id is not None and self.end_id is not None
            if self.start_id >= 0:
                return None
            return f"its range {self.start_id}..{self.end_id} starts below 0"
        negative = sorted({i for i in self.forgotten_ids if i < 0})
        if not negative:
            return None
        return "forgotten_event_ids holds " + ", ".join(map(str, negative))

    @property
    def has_summary(self) -> bool:
        return self.summary is not None and self.summary_offset is not None


def parse_condensation(data: dict[str, Any]) -> CondensationArgs:
    """Validate a condensation event's `args`, or raise LineProblem."""
    args = data.get("args")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise LineProblem(f'condensation "args" must be an object, not {json_type(args)}')
    ids = args.get("forgotten_event_ids")
    start = args.get("forgotten_events_start_id")
    end = args.get("forgotten_events_end_id")
    has_range = start is not None or end is not None
    if ids is not None and has_range:
        raise LineProblem(
            "condensation gives both forgotten_event_ids and a forgotten_events_start_id/"
            "end_id range; give exactly one form"
        )
    if ids is None and not has_range:
        raise LineProblem(
            "condensation gives neither forgotten_event_ids nor a "
            "forgotten_events_start_id/end_id range; give exactly one form"
        )
    forgotten: tuple[int, ...] | None = None
    if ids is not None:
        if not isinstance(ids, list):
            raise LineProblem(f"forgotten_event_ids must be an array, not {json_type(ids)}")
        # OpenHands writes -1 (its summary placeholder's id) among real ids
        forgotten = tuple(check_id(v, "an id in forgotten_event_ids", True) for v in ids)
    else:
        if start is None or end is None:
            missing = "forgotten_events_end_id" if end is None else "forgotten_events_start_id"
            raise LineProblem(f"condensation range has no {missing}")
        start = check_id(start, "forgotten_events_start_id", True)
        end = check_id(end, "forgotten_events_end_id", True)
        if start > end:
            raise LineProblem(f"forgotten range starts after it ends ({start} > {end})")
    summary = args.get("summary")
    offset = args.get("summary_offset")
    if summary is not None and not isinstance(summary, str):
        raise LineProblem(f"summary must be a string, not {json_type(summary)}")
    if (summary is None) != (offset is None):
        given, missing = (
            ("summary", "summary_offset") if offset is None else ("summary_offset", "summary")
        )
        raise LineProblem(f"condensation has a {given} but no {missing}; set both or neither")
    if offset is not None:
        offset = check_id(offset, "summary_offset")
    return CondensationArgs(forgotten, start, end, summary, offset)


class V0Event(Event):
    """An OpenHands V0 event: its id is its key, its facts are read from the dict."""

    __slots__ = ()

    def replaced(self, **changes: Any) -> V0Event:
        """A copy with some top-level keys changed; it keeps its id."""
        return V0Event({**self.data, **changes}, self.key, None)

    def masked(self, text: str) -> V0Event:
        return self.replaced(content=text)

    @property
    def is_summary(self) -> bool:
        return self.key is None and self.data.get("observation") == "condense"

    @property
    def is_action(self) -> bool:
        return "action" in self.data

    @property
    def type(self) -> str:
        return str(self.data.get("action") or self.data.get("observation") or "")

    @property
    def source(self) -> str:
        return str(self.data.get("source") or "")

    @property
    def args(self) -> dict[str, Any]:
        args = self.data.get("args")
        return args if isinstance(args, dict) else {}

    @property
    def extras(self) -> dict[str, Any]:
        extras = self.data.get("extras")
        return extras if isinstance(extras, dict) else {}

    @property
    def cause(self) -> int | None:
        cause = self.data.get("cause")
        return cause if isinstance(cause, int) and not isinstance(cause, bool) else None

    @property
    def tool_call_id(self) -> str | None:
        meta = self.data.get("tool_call_metadata")
        if isinstance(meta, dict) and isinstance(meta.get("tool_call_id"), str):
            return meta["tool_call_id"]
        return None

    @property
    def text(self) -> str:
        if not self.is_action:
            return _as_text(self.data.get("content"))
        args = self.args
        for key in ACTION_TEXT_KEYS.get(self.type, ()):
            value = args.get(key)
            if value:
                return _as_text(value)
        return _as_text(args.get("content") or self.data.get("message"))

    @property
    def thought(self) -> str:
        value = self.args.get("thought") if self.is_action and self.type != "think" else None
        return value if isinstance(value, str) else ""

    @property
    def url(self) -> str:
        if self.is_action or self.type != "browse":
            return ""
        return str(self.extras.get("url", ""))

    @property
    def exit_code(self) -> int | None:
        if self.is_action:
            return None
        metadata = self.extras.get("metadata")
        code = metadata.get("exit_code") if isinstance(metadata, dict) else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None

    @property
    def tool_call(self) -> tuple[str, dict[str, Any]] | None:
        if not self.is_action or self.type in NOT_TOOLS:
            return None
        return self.type, self.args

    @property
    def recall_query(self) -> str | None:
        if not (self.is_action and self.type == "recall"):
            return None
        query = self.args.get("query")
        return query if isinstance(query, str) else None


def summary_event(text: str) -> V0Event:
    """The summary observation a V0 view shows in place of forgotten events."""
    data = {"source": "agent", "observation": "condense", "content": text, "extras": {}}
    return V0Event(data, None, None)


# Actions that call no tool (the others are tool calls: `run`, `edit`, `browse`, ...).
NOT_TOOLS = frozenset({"message", "system", "condensation", "condensation_request", "recall"})

# Which `args` field carries an action's text, per action type.
ACTION_TEXT_KEYS: dict[str, tuple[str, ...]] = {
    "message": ("content",),
    "system": ("content",),
    "run": ("command",),
    "run_ipython": ("code",),
    "read": ("path",),
    "write": ("path",),
    "edit": ("path",),
    "browse": ("url",),
    "browse_interactive": ("browser_actions",),
    "think": ("thought",),
    "finish": ("final_thought", "outputs"),
    "recall": ("query",),
    "reject": ("reason",),
    "delegate": ("task", "inputs"),
    "call_tool_mcp": ("name",),
}


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return encode(value).decode("utf-8")


# --- the lines `condense` appends ----------------------------------------------------


def condensation_args(condensation: Condensation, view: View) -> dict[str, Any]:
    """A condensation event's args: a range when it covers every id the view holds
    between its min and max, otherwise a list."""
    ids = sorted(condensation.forgotten)
    view_ids = view.keys
    low, high = ids[0], ids[-1]
    held = bisect_right(view_ids, high) - bisect_left(view_ids, low)
    as_range = held == len(ids)
    return {
        "forgotten_event_ids": None if as_range else ids,
        "forgotten_events_start_id": low if as_range else None,
        "forgotten_events_end_id": high if as_range else None,
        "summary": condensation.summary,
        "summary_offset": condensation.summary_offset,
    }


def condensation_event(event_id: int, condensation: Condensation, view: View) -> dict[str, Any]:
    """The condensation event to append, in OpenHands' serialisation."""
    args = condensation_args(condensation, view)
    count = len(condensation.forgotten)
    message = f"Forgot {plural(count, 'event')} ({describe_ids(condensation.forgotten)})"
    if condensation.summary is not None:
        message += " and summarised them"
    return {
        "id": event_id,
        "timestamp": datetime.now().isoformat(),
        "source": "agent",
        "message": message,
        "action": "condensation",
        "args": args,
    }


def request_event(event_id: int) -> dict[str, Any]:
    """A condensation request event."""
    return {
        "id": event_id,
        "timestamp": datetime.now().isoformat(),
        "source": "agent",
        "message": "Requesting a condensation of the conversation history",
        "action": "condensation_request",
        "args": {},
    }


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


@dataclass
class Classified:
    """Lines sorted by a scan worker: the ordinary events (ids increasing, and their
    offsets), and every other line as (ordinary events before it, its index among
    these lines, start, end), for the full validator."""

    ids: array = field(default_factory=lambda: array("q"))
    offsets: array = field(default_factory=lambda: array("q"))
    others: list[tuple[int, int, int, int]] = field(default_factory=list)
    lines: int = 0
    end: int = 0  # the offset after the last line


STRETCH_LINES = 4096  # lines a worker sends at a time
BATCH_LINES = 256  # lines sorted at a time (kept small: they stay in the CPU's cache)


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


# --- pass one: the V0 scan loop -------------------------------------------------------

# Types the fast path leaves to the full validator.
SPECIAL_ACTIONS = HIDDEN_ACTIONS | {"condensation", "condensation_request"}
SPECIAL_OBSERVATIONS = HIDDEN_OBSERVATIONS | {"condense"}


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


def _folded_view(kept: list[Event], summary: str | None, offset: int | None) -> View:
    """A view from the kept events and the summary in force (the history walk's)."""
    events = list(kept)
    shown = None
    if summary is not None:
        shown = summary_event(summary)
        events.insert(summary_position(offset, len(events)), shown)
    return View(events, False, shown, offset, None, summary_event)


def load_view(path: str, upto: int | None = None) -> tuple[View, LogIndex]:
    """Scan and replay the V0 log at `path` (or `-`) in one call."""
    with LogSource.open(path) as source:
        index = scan_log(source, upto=upto)
        return build_view(source, index), index


# --- the dialect ---------------------------------------------------------------------


class V0Replay(Replay):
    """A V0 log scanned into a `LogIndex`; its view is read back from the source."""

    dialect = NAME

    def __init__(
        self,
        source: LogSource,
        index: LogIndex,
        locked: LockedLog | None = None,
        upto: int | None = None,
    ) -> None:
        self.source = source
        self.index = index
        self.locked = locked
        self.path = source.path
        self.problems = index.problems
        self.upto = MAX_ID if upto is None else upto

    @property
    def forgotten_events(self) -> int:
        return self.index.forgotten_events

    @property
    def condensations(self) -> list[CondensationRecord]:
        return self.index.condensations

    def view(self) -> View:
        return build_view(self.source, self.index)

    def view_lines(self) -> Iterator[bytes]:
        return view_lines(self.source, self.index)

    def gaps(self) -> list[Gap]:
        return forgotten_gaps(self.index)

    def stats(self, tokenizer: Any, reading: Reading = quiet_reading) -> dict[str, Any]:
        from condense_cli.dialects.openhands_v0.stats import collect_stats

        with reading(self.source):
            numbers = collect_stats(self.source, self.index, tokenizer)
        return {"dialect": self.dialect, **numbers}

    # --- history: a second, slower walk that parses every line -------------------------

    def _lines(self) -> Iterator[tuple[int, dict[str, Any], bytes]]:
        """(line, event, bytes) of every event the agent sees, up to `upto`."""
        for number, raw in enumerate(self.source.raw_lines(), start=1):
            body = line_body(raw, first=number == 1)
            if not body or body.isspace():
                continue
            data = orjson.loads(body)
            event_id = data.get("id")
            if isinstance(event_id, int) and event_id > self.upto:
                return
            if is_seen_by_agent(data):
                yield number, data, body

    def condensation_steps(self) -> Iterator[CondensationStep]:
        kept: list[Event] = []
        forgotten = IntervalSet()
        summary: str | None = None
        offset: int | None = None
        for number, data, body in self._lines():
            action = data.get("action")
            if action == "condensation":
                args = parse_condensation(data)
                before = _folded_view(kept, summary, offset)
                for start, end in args.ranges():
                    forgotten.add(start, end)
                gone = [e for e in kept if e.key is not None and e.key in forgotten]
                kept = [e for e in kept if e.key is None or e.key not in forgotten]
                if args.has_summary:
                    summary, offset = args.summary, args.summary_offset
                new = args.summary if args.has_summary else None
                after = _folded_view(kept, summary, offset)
                yield CondensationStep(data["id"], number, before, gone, new, after)
            elif action != "condensation_request":
                event = V0Event(data, data.get("id"), body)
                if event.key is None or event.key not in forgotten:
                    kept.append(event)

    def history(self) -> Iterator[Event | None]:
        for _number, data, body in self._lines():
            action = data.get("action")
            if action == "condensation_request":
                yield None
            elif action != "condensation" and "id" in data:
                yield V0Event(data, data["id"], body)

    def messages(self, view: View) -> Conversion:
        from condense_cli.dialects.openhands_v0.messages import convert

        system, first_user = self._first_messages()
        conversion = convert(view.events, system, first_user)
        changes = conversion.dropped + conversion.inserted + conversion.approximated
        lines = self._lines_of({c.event for c in changes if isinstance(c.event, int)})
        for changed in (conversion.dropped, conversion.inserted, conversion.approximated):
            changed[:] = [replace(c, line=lines.get(c.event)) for c in changed]  # type: ignore[arg-type]
        return conversion

    def _first_messages(self) -> tuple[V0Event | None, V0Event | None]:
        """The first system message and the first user message the agent saw in the
        log (forgotten or not): OpenHands puts them back when a view lost them. The
        search ends at the first user message (a system message comes before it)."""
        system = first_user = None
        index = self.index
        for position, offset in enumerate(index.line_offsets):
            if position in index.special:
                continue
            body = line_body(self.source.line_at(offset), first=offset == 0)
            data = orjson.loads(body)
            if data.get("action") == "system" and system is None:
                system = V0Event(data, data["id"], body)
            elif data.get("action") == "message" and data.get("source") == "user":
                first_user = V0Event(data, data["id"], body)
                break
        return system, first_user

    def _lines_of(self, ids: set[int]) -> dict[int, int]:
        """The line numbers of the events with these ids.

        In a clean log every line has its slot in `line_ids`, so a line number is
        its position plus one; otherwise the newlines before each event are counted.
        """
        index = self.index
        wanted: list[tuple[int, int, int]] = []
        for event_id in ids:
            position = bisect_left(index.line_ids, event_id)
            if position < len(index.line_ids) and index.line_ids[position] == event_id:
                wanted.append((index.line_offsets[position], position, event_id))
        if index.clean:
            return {event_id: position + 1 for _, position, event_id in wanted}
        lines: dict[int, int] = {}
        read = newlines = 0
        for offset, _, event_id in sorted(wanted):
            newlines += sum(chunk.count(b"\n") for chunk in self.source.read_range(read, offset))
            read = offset
            lines[event_id] = newlines + 1
        return lines

    def _next_id(self) -> int:
        """One more than the largest id, if that still fits in 64 bits."""
        if self.index.max_key >= MAX_ID:
            raise LogError(
                self.path,
                f"its largest id is {self.index.max_key} (2**63-1), so a new event would need "
                "an id that does not fit in 64 bits; nothing was appended",
                hint="start a new log: no event can be appended to this one",
            )
        return self.index.max_key + 1

    def condensation_record(self, view: View, condensation: Condensation) -> Record:
        event_id = self._next_id()
        return Record(orjson.dumps(condensation_event(event_id, condensation, view)), str(event_id))

    def request_record(self) -> Record:
        event_id = self._next_id()
        return Record(orjson.dumps(request_event(event_id)), str(event_id))

    def append(self, record: Record) -> None:
        if self.locked is None:
            raise ValueError("this log was opened read-only")
        self.locked.append_line(record.body, self.index.size)


class OpenHandsV0(Dialect):
    """OpenHands V0: one `event_to_dict` event per line, integer ids."""

    name = NAME
    label = "OpenHands V0 event log"

    def replay_file(
        self,
        source: LogSource,
        *,
        upto: str | None = None,
        collect: bool = False,
        locked: LockedLog | None = None,
    ) -> Replay:
        limit = parse_upto(upto)
        index = scan_log(source, upto=limit, collect=collect)
        return V0Replay(source, index, locked, upto=limit)


def parse_upto(upto: str | None) -> int | None:
    """`--upto` for a V0 log: an event id."""
    if upto is None:
        return None
    try:
        value = int(upto)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(f"--upto {upto!r}: a V0 log is replayed up to an event id (0 or more)")
    return value
