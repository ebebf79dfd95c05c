"""What the view properties need to know of every event of the log, not only of the
view: built in one pass, grown one event at a time."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from condense_cli.dialects.openhands_v1.detect import ACTION, OBSERVATION_KINDS
from condense_cli.dialects.openhands_v1.facts import Entry
from condense_cli.dialects.openhands_v1.storage import StoredEvent


class Context:
    """What the view properties need to know of every event so far, not only of the
    view's: how many tool calls each model response made, and which thinking-led
    tool loop each event belongs to (with each loop's size). Built in one pass,
    and grown one event at a time, so that replaying up to each condensation in
    turn costs the view, not the log."""

    __slots__ = ("_open", "calls", "loop_of", "loop_sizes")

    def __init__(self) -> None:
        self.calls: dict[Any, int] = {}  # llm_response_id -> tool calls
        self.loop_of: dict[str, int] = {}  # event id -> its loop's number
        self.loop_sizes: list[int] = []
        self._open: int | None = None  # the loop the next tool event joins

    @classmethod
    def of(cls, records: Iterable[StoredEvent]) -> Context:
        context = cls()
        for record in records:
            context.add(record)
        return context

    def add(self, record: StoredEvent) -> None:
        """Take in the next event of the log (the same runs as `tool_loops`)."""
        kind = record.kind
        if kind == ACTION:
            response = record.response
            self.calls[response] = self.calls.get(response, 0) + 1
            if record.thinking:
                self._open = len(self.loop_sizes)
                self.loop_sizes.append(0)
        elif kind not in OBSERVATION_KINDS:
            self._open = None
            return
        if self._open is not None:
            self.loop_of[record.id] = self._open
            self.loop_sizes[self._open] += 1


# The view properties, each a function (view, context) -> ids to drop. The SDK
# applies the first one that drops anything, then starts over, until none does.


def kind_of(entry: Entry) -> str:
    return entry.kind


def call_id_of(entry: Entry) -> str | None:
    return entry.call if isinstance(entry, StoredEvent) else None
