"""OpenHands V0 logs (one event per line): the replay and the dialect."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import orjson

from condense_cli.core.errors import ConfigError, LogError
from condense_cli.core.events import Condensation, CondensationRecord, Event, View
from condense_cli.core.intervals import IntervalSet
from condense_cli.core.jsonlines import as_dict
from condense_cli.core.logfile import BOM, LockedLog, LogSource, line_body
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
from condense_cli.dialects.openhands_v0.events import (
    MAX_ID,
    StoredV0Event,
    V0Event,
    condensation_event,
    is_seen_by_agent,
    parse_condensation,
    request_event,
)
from condense_cli.dialects.openhands_v0.replay import build_view, folded_view, scan_log, view_lines
from condense_cli.dialects.openhands_v0.scan import (
    CONDENSATION,
    SUMMARY_LINE,
    LogIndex,
    forgotten_gaps,
)
from condense_cli.dialects.reports import StatsReport, Threshold
from condense_cli.llm.messages import Conversion

if TYPE_CHECKING:
    from condense_cli.core.clientconfig import ClientConfig
    from condense_cli.llm.tokens import Tokenizer


@dataclass
class Walk:
    """What the walk over a log's condensations holds between lines: the events kept,
    the keys forgotten, the summary in force and where it goes, a request pending."""

    kept: list[Event] = field(default_factory=list)
    forgotten: IntervalSet = field(default_factory=IntervalSet)
    summary: str | None = None
    offset: int | None = None
    requested: bool = False


# --- the dialect ---------------------------------------------------------------------

# A line the agent sees: its number, its event, its bytes and where they start in the log.
Line = tuple[int, dict[str, Any], bytes, int]

MODEL_TAIL = 1 << 20  # bytes at the end of a log searched for the model


class V0Replay(Replay):
    """A V0 log scanned into a `LogIndex`; its view is read back from the source."""

    dialect = NAME
    converts_messages = audits = simulates = appends = True
    steps_start_anywhere = True  # from the index (`condensation_steps_from`)

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
    def model(self) -> str | None:
        """The model of the last agent step's `llm_metrics`, in the log's last MODEL_TAIL
        bytes (a step records it on every action)."""
        size = self.source.size
        tail = self.source.read_at(max(0, size - MODEL_TAIL), size)
        for body in reversed(tail.splitlines()[1:] if size > MODEL_TAIL else tail.splitlines()):
            if b'"accumulated_token_usage"' not in body:
                continue
            try:
                data = orjson.loads(body)
            except orjson.JSONDecodeError:
                continue
            usage = as_dict(
                as_dict(as_dict(data).get("llm_metrics")).get("accumulated_token_usage")
            )
            if isinstance(model := usage.get("model"), str) and model:
                return model
        return None

    @property
    def condensations(self) -> list[CondensationRecord]:
        return self.index.condensations

    def view(self) -> View:
        return build_view(self.source, self.index)

    def view_lines(self) -> Iterator[bytes]:
        return view_lines(self.source, self.index)

    def gaps(self) -> list[Gap]:
        return forgotten_gaps(self.index)

    def stats(self, tokenizer: Tokenizer | None, reading: Reading = quiet_reading) -> StatsReport:
        from condense_cli.dialects.openhands_v0.stats import collect_stats

        with reading(self.source):
            return collect_stats(self.source, self.index, tokenizer)

    # --- history: a second, slower walk that parses every line -------------------------

    def _lines(self, start: int = 0, first: int = 1) -> Iterator[Line]:
        """(line, event, bytes, where the bytes start) of every event the agent sees, up
        to `upto` (from byte `start`, the start of line `first`)."""
        offset = start
        for number, raw in enumerate(self.source.raw_lines(start), start=first):
            at, offset = offset, offset + len(raw)
            body = line_body(raw, first=number == 1)
            if not body or body.isspace():
                continue
            data = orjson.loads(body)
            event_id = data.get("id")
            if isinstance(event_id, int) and event_id > self.upto:
                return
            if is_seen_by_agent(data):
                bom = number == 1 and raw.startswith(BOM)
                yield number, data, body, (at + len(BOM) if bom else at)

    def forked(self) -> None:
        self.source.detach()  # its steps read the log again, line by line

    def condensation_steps(self) -> Iterator[CondensationStep]:
        if not self.condensations:
            return  # never condensed: nothing to read again
        yield from self._steps(Walk(), self._lines())

    def condensation_steps_from(self, first: int) -> Iterator[CondensationStep]:
        """From the `first`-th condensation on, the walk's state just before it rebuilt
        from the index (only the events still kept then are read), when the log is
        clean (every line has its place in the index)."""
        index = self.index
        if not index.clean or not 1 < first <= len(index.condensations):
            yield from super().condensation_steps_from(first)
            return
        walk, at = self._walk_before(first - 1)
        yield from self._steps(walk, self._lines(index.line_offsets[at], at + 1))

    def _walk_before(self, number: int) -> tuple[Walk, int]:
        """The walk's state just before the condensation `number` (counted from 0), and
        that condensation's position in the index (its line, less one: the log is clean)."""
        index, walk = self.index, Walk()
        records = index.condensations
        at = records[number].line - 1
        for record in records[:number]:
            for start, end in record.ranges:
                walk.forgotten.add(start, end)
        summarised = [r for r in records[:number] if r.summary_chars is not None]
        if summarised:
            args = parse_condensation(orjson.loads(self._body_at(summarised[-1].line - 1)))
            walk.summary, walk.offset = args.summary, args.summary_offset
        special, ids = index.special, index.line_ids
        # A request since the condensation before (the lines marked CONDENSATION
        # between two condensations are requests)
        since = records[number - 1].line - 1
        walk.requested = any(special.get(p) == CONDENSATION for p in range(since + 1, at))
        for position in range(at):
            mark = special.get(position)
            if mark == SUMMARY_LINE or (mark is None and ids[position] not in walk.forgotten):
                body = self._body_at(position)
                data = orjson.loads(body)
                walk.kept.append(V0Event(data, data.get("id"), body))
        return walk, at

    def _body_at(self, position: int) -> bytes:
        """The bytes of the line at `position` of the index (a line that is not the last)."""
        offsets = self.index.line_offsets
        raw = self.source.read_at(offsets[position], offsets[position + 1])
        return line_body(raw, first=position == 0)

    @staticmethod
    def _steps(walk: Walk, lines: Iterator[Line]) -> Iterator[CondensationStep]:
        """The condensations of `lines`, walked on from `walk` (which this uses up)."""
        kept, forgotten = walk.kept, walk.forgotten
        for number, data, body, _at in lines:
            action = data.get("action")
            if action == "condensation_request":
                walk.requested = True
            elif action == "condensation":
                args = parse_condensation(data)
                before = folded_view(kept, walk.summary, walk.offset, walk.requested)
                walk.requested = False
                for start, end in args.ranges():
                    forgotten.add(start, end)
                gone = [e for e in kept if e.key is not None and e.key in forgotten]
                kept = [e for e in kept if e.key is None or e.key not in forgotten]
                if args.has_summary:
                    walk.summary, walk.offset = args.summary, args.summary_offset
                new = args.summary if args.has_summary else None
                after = folded_view(kept, walk.summary, walk.offset)
                yield CondensationStep(data["id"], number, before, gone, new, after)
            else:
                event = V0Event(data, data.get("id"), body)
                if event.key is None or event.key not in forgotten:
                    kept.append(event)

    def thresholds(self, client: ClientConfig | None = None) -> dict[int, Threshold]:
        """Each condensation against the `max_size` of the `[condenser]` of `client`,
        an OpenHands `config.toml` (a V0 log does not record its condenser)."""
        from condense_cli.dialects.openhands_sizes import configured_max_size, size_threshold

        found = configured_max_size(client) if client is not None else None
        if found is None:
            return {}
        max_size, source = found
        return {
            step.line: size_threshold(
                len(step.before), max_size, source, step.before.unhandled_request
            )
            for step in self.condensation_steps()
        }

    def history(self) -> Iterator[Event | None]:
        """Each event reads its line back when asked (`StoredV0Event`)."""
        for _number, data, body, at in self._lines():
            action = data.get("action")
            if action == "condensation_request":
                yield None
            elif action != "condensation" and "id" in data:
                yield StoredV0Event(data["id"], (self.source, at, at + len(body)))

    def each_message(self, view: View, out: Conversion) -> Iterator[dict[str, Any]]:
        """The messages converted whole (a view of this dialect is read into memory),
        then given one at a time."""
        from condense_cli.dialects.openhands_v0.messages import convert

        system, first_user = self._first_messages()
        conversion = convert(view.events, system, first_user)
        changes = conversion.dropped + conversion.inserted + conversion.approximated
        lines = self._lines_of({c.event for c in changes if isinstance(c.event, int)})
        for changed, into in (
            (conversion.dropped, out.dropped),
            (conversion.inserted, out.inserted),
            (conversion.approximated, out.approximated),
        ):
            into += [
                replace(c, line=lines.get(c.event) if isinstance(c.event, int) else None)
                for c in changed
            ]
        return iter(conversion.messages)

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
