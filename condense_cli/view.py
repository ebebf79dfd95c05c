"""Pass two over a log: the kept events, in order, with the summary in place.

`scan_log` has already validated the log and replayed its condensations into
an `LogIndex`; here we walk the lines again and keep those whose id is not
forgotten, parsing only the kept ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import orjson

from condense_cli.events import Event
from condense_cli.log import LogSource
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


def iter_kept_lines(source: LogSource, index: LogIndex) -> Iterator[tuple[int, bytes, int | None]]:
    """Yield (line number, body, id) of each kept line, in log order."""
    forgotten = index.forgotten.cursor()
    # zip stops at the last line the scan replayed (--upto, or a log that grew).
    for event_id, (number, body, _terminated) in zip(index.line_ids, source.lines(), strict=False):
        if event_id >= 0:
            if event_id not in forgotten:
                yield number, body, event_id
        elif event_id == SUMMARY_LINE:
            yield number, body, None


def iter_view_lines(source: LogSource, index: LogIndex) -> Iterator[bytes]:
    """The view as JSON line bodies: kept lines byte-for-byte, the summary as a new line."""
    summary_body = Event.summary(index.summary).to_json() if index.summary is not None else None
    offset = index.summary_offset or 0
    for emitted, (_number, body, _id) in enumerate(iter_kept_lines(source, index)):
        if summary_body is not None and emitted == offset:
            yield summary_body
            summary_body = None
        yield body
    if summary_body is not None:
        yield summary_body


def build_view(source: LogSource, index: LogIndex) -> View:
    """The replayed view with every kept event parsed."""
    events = [
        Event(orjson.loads(body), event_id, number, body)
        for number, body, event_id in iter_kept_lines(source, index)
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
