"""A plain, whole-list replay used as the reference for the streaming one."""

from __future__ import annotations

from typing import Any

from condense_cli.dialects.openhands_v0 import is_seen_by_agent


def reference_view(events: list[dict[str, Any]]) -> tuple[list[Any], bool]:
    """A plain whole-list replay, as OpenHands' View.from_events does it."""
    seen = [e for e in events if is_seen_by_agent(e)]
    forgotten: set[int] = set()
    for e in seen:
        if e.get("action") == "condensation":
            a = e["args"]
            if a["forgotten_event_ids"] is not None:
                forgotten |= set(a["forgotten_event_ids"])
            else:
                forgotten |= set(
                    range(a["forgotten_events_start_id"], a["forgotten_events_end_id"] + 1)
                )
            forgotten.add(e["id"])
        elif e.get("action") == "condensation_request":
            forgotten.add(e["id"])
    kept: list[Any] = [e["id"] for e in seen if e["id"] not in forgotten]
    for e in reversed(seen):
        if e.get("action") == "condensation" and e["args"]["summary"] is not None:
            kept.insert(e["args"]["summary_offset"], ("S", e["args"]["summary"]))
            break
    pending = False
    for e in reversed(seen):
        if e.get("action") == "condensation":
            break
        if e.get("action") == "condensation_request":
            pending = True
            break
    return kept, pending
