"""Tool loop atomicity: a run of tool calls and results led by a call with thinking
blocks is kept whole or not at all."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from condense_cli.dialects.openhands_v1.detect import ACTION, OBSERVATION_KINDS
from condense_cli.dialects.openhands_v1.facts import Entry
from condense_cli.dialects.openhands_v1.properties.context import Context, kind_of
from condense_cli.dialects.openhands_v1.storage import StoredEvent


def tool_loops(events: Iterable[Entry]) -> list[set[str]]:
    """Runs of tool calls and results that start at a call with thinking blocks."""
    loops: list[set[str]] = []
    current: set[str] | None = None
    for event in events:
        kind = kind_of(event)
        if kind == ACTION and isinstance(event, StoredEvent) and event.thinking:
            if current is not None:
                loops.append(current)
            current = {event.id}
        elif kind == ACTION or kind in OBSERVATION_KINDS:
            if current is not None:
                current.add(event.id)
        elif current is not None:
            loops.append(current)
            current = None
    if current is not None:
        loops.append(current)
    return loops


def whole_tool_loops(view: Sequence[Entry], context: Context) -> set[str]:
    """A thinking-led tool loop is kept whole or not at all."""
    loop_of = context.loop_of
    kept: dict[str, int] = {}
    for entry in view:
        loop = loop_of.get(entry.id)
        if loop is not None:
            kept[entry.id] = loop
    held: dict[int, int] = {}
    for loop in kept.values():
        held[loop] = held.get(loop, 0) + 1
    sizes = context.loop_sizes
    return {event_id for event_id, loop in kept.items() if held[loop] != sizes[loop]}
