"""A plain, whole-list replay used as the reference for the streaming one."""

from __future__ import annotations

from typing import Any

# What OpenHands' controller leaves out of the agent's history: these types, and any
# event whose `hidden` field (serialised in `args` or `extras`) is true.
UNSEEN_ACTIONS = {"null", "change_agent_state"}
UNSEEN_OBSERVATIONS = {"null", "agent_state_changed"}


def seen_by_agent(event: dict[str, Any]) -> bool:
    """As OpenHands reads an event back (`event_from_dict`) and filters it."""
    if "action" in event:
        if event["action"] in UNSEEN_ACTIONS:
            return False
        fields = event.get("args")
    else:
        if event["observation"] in UNSEEN_OBSERVATIONS:
            return False
        fields = event.get("extras")
    return not (isinstance(fields, dict) and fields.get("hidden") is True)


def reference_view(events: list[dict[str, Any]]) -> tuple[list[Any], bool]:
    """A plain whole-list replay, as OpenHands' View.from_events does it."""
    seen = [e for e in events if seen_by_agent(e)]
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
