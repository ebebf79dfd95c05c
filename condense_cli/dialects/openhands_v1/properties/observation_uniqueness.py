"""Observation uniqueness: one result per tool call; a later result for the same call
is dropped."""

from __future__ import annotations

from collections.abc import Sequence

from condense_cli.dialects.openhands_v1.detect import OBSERVATION_KINDS
from condense_cli.dialects.openhands_v1.facts import Entry
from condense_cli.dialects.openhands_v1.properties.context import Context, call_id_of, kind_of


def unique_observations(view: Sequence[Entry], _context: Context) -> set[str]:
    """One result per tool call: a later result for the same call is dropped."""
    seen: set[str | None] = set()
    drop: set[str] = set()
    for entry in view:
        if kind_of(entry) in OBSERVATION_KINDS:
            call = call_id_of(entry)
            if call in seen:
                drop.add(entry.id)
            seen.add(call)
    return drop
