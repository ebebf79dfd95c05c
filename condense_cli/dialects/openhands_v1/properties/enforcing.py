"""The view properties in the SDK's order, enforced until every one holds."""

from __future__ import annotations

from condense_cli.dialects.openhands_v1.facts import Entry
from condense_cli.dialects.openhands_v1.properties.batch_atomicity import whole_batches
from condense_cli.dialects.openhands_v1.properties.context import Context
from condense_cli.dialects.openhands_v1.properties.observation_uniqueness import unique_observations
from condense_cli.dialects.openhands_v1.properties.tool_call_matching import unmatched
from condense_cli.dialects.openhands_v1.properties.tool_loop_atomicity import whole_tool_loops

PROPERTIES = (
    ("observation_uniqueness", unique_observations),
    ("batch_atomicity", whole_batches),
    ("tool_call_matching", unmatched),
    ("tool_loop_atomicity", whole_tool_loops),
)


def enforce_properties(
    view: list[Entry], context: Context
) -> tuple[list[Entry], dict[str, tuple[str, ...]]]:
    """Drop events until every view property holds; say which rule dropped what.
    `context` is what the rules need of every event of the log replayed."""
    dropped: dict[str, tuple[str, ...]] = {}
    while True:
        for name, rule in PROPERTIES:
            drop = rule(view, context)
            if drop:
                dropped[name] = dropped.get(name, ()) + tuple(e.id for e in view if e.id in drop)
                view = [e for e in view if e.id not in drop]
                break
        else:
            return view, dropped
