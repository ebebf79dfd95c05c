"""Tool call matching: a call without its result, or a result without its call, is
dropped."""

from __future__ import annotations

from collections.abc import Sequence

from condense_cli.dialects.openhands_v1.detect import ACTION, OBSERVATION_KINDS
from condense_cli.dialects.openhands_v1.facts import Entry
from condense_cli.dialects.openhands_v1.properties.context import Context, call_id_of, kind_of


def unmatched(view: Sequence[Entry], _context: Context | None = None) -> set[str]:
    """Tool calls without a result in the view, and results without their call."""
    calls = {call_id_of(e) for e in view if kind_of(e) == ACTION}
    results = {call_id_of(e) for e in view if kind_of(e) in OBSERVATION_KINDS}
    return {
        e.id
        for e in view
        if (kind_of(e) == ACTION and call_id_of(e) not in results)
        or (kind_of(e) in OBSERVATION_KINDS and call_id_of(e) not in calls)
    }
