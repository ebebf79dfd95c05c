"""The story of `tests/stories.py` told as an OpenHands V0 log."""

from __future__ import annotations

from typing import Any

from tests.stories import COMMAND, DONE, EDITED, FIRST, OUTPUT, SECOND, SUMMARY, URL

# `--upto` for the view just before the condensation.
# V0 ids: the last event before the condensation is id 8.
BEFORE = "8"


def lines(condensed: bool) -> list[dict[str, Any]]:
    def obs(i: int, kind: str, content: str, cause: int, **extras: Any) -> dict[str, Any]:
        return {
            "id": i,
            "source": "agent",
            "observation": kind,
            "content": content,
            "cause": cause,
            "extras": extras,
        }

    events = [
        {"id": 1, "source": "user", "action": "message", "args": {"content": FIRST}},
        {"id": 2, "source": "agent", "action": "run", "args": {"command": COMMAND}},
        obs(3, "run", OUTPUT, 2, metadata={"exit_code": 1}),
        {"id": 4, "source": "agent", "action": "edit", "args": {"path": EDITED}},
        obs(5, "edit", "edited", 4),
        {"id": 6, "source": "user", "action": "message", "args": {"content": SECOND}},
        {"id": 7, "source": "agent", "action": "browse", "args": {"url": URL}},
        obs(8, "browse", "page", 7, url=URL),
    ]
    if condensed:
        args = {
            "forgotten_event_ids": None,
            "forgotten_events_start_id": 1,
            "forgotten_events_end_id": 8,
            "summary": SUMMARY,
            "summary_offset": 0,
        }
        events.append({"id": 9, "source": "agent", "action": "condensation", "args": args})
    events.append({"id": 10, "source": "agent", "action": "message", "args": {"content": DONE}})
    return events
