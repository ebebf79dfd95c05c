"""Batch atomicity: the parallel tool calls of one model response are kept or dropped
together."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from condense_cli.dialects.openhands_v1.detect import ACTION
from condense_cli.dialects.openhands_v1.facts import Entry
from condense_cli.dialects.openhands_v1.properties.context import Context, kind_of
from condense_cli.dialects.openhands_v1.storage import StoredEvent


def response_batches(events: Iterable[Entry]) -> dict[str | None, set[str]]:
    batches: dict[str | None, set[str]] = {}
    for event in events:
        if kind_of(event) == ACTION and isinstance(event, StoredEvent):
            batches.setdefault(event.response, set()).add(event.id)
    return batches


def whole_batches(view: Sequence[Entry], context: Context) -> set[str]:
    """The tool calls of one model response are kept or dropped together (the view's
    calls are some of the log's, so all of them are there when the counts agree)."""
    drop: set[str] = set()
    for response, ids in response_batches(view).items():
        if len(ids) != context.calls.get(response):
            drop |= ids
    return drop
