"""The story of `tests/stories.py` told as an OpenHands V1 log."""

from __future__ import annotations

import json
from typing import Any

from tests.stories import COMMAND, DONE, EDITED, FIRST, OUTPUT, SECOND, SUMMARY, URL

# `--upto` for the view just before the condensation.
# V1 positions count from 0: the eighth event is position 7.
BEFORE = "7"


def _v1_id(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-000000000000"


def lines(condensed: bool) -> list[dict[str, Any]]:
    def message(n: int, source: str, text: str) -> dict[str, Any]:
        role = "user" if source == "user" else "assistant"
        content = [{"type": "text", "text": text}]
        return {
            "kind": "MessageEvent",
            "id": _v1_id(n),
            "source": source,
            "llm_message": {"role": role, "content": content},
        }

    def call(n: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        function = {"name": tool, "arguments": json.dumps(arguments)}
        return {
            "kind": "ActionEvent",
            "id": _v1_id(n),
            "source": "agent",
            "tool_name": tool,
            "tool_call_id": f"call{n}",
            "tool_call": {"id": f"call{n}", "type": "function", "function": function},
            "llm_response_id": f"response{n}",
            "thought": [],
        }

    def result(n: int, tool: str, text: str, **more: Any) -> dict[str, Any]:
        observation = {"content": [{"type": "text", "text": text}], **more}
        return {
            "kind": "ObservationEvent",
            "id": _v1_id(n),
            "source": "environment",
            "tool_name": tool,
            "tool_call_id": f"call{n - 1}",
            "observation": observation,
        }

    events = [
        message(1, "user", FIRST),
        call(2, "execute_bash", {"command": COMMAND}),
        result(3, "execute_bash", OUTPUT, exit_code=1),
        call(4, "str_replace_editor", {"command": "str_replace", "path": EDITED}),
        result(5, "str_replace_editor", "edited"),
        message(6, "user", SECOND),
        call(7, "browser_navigate", {"url": URL}),
        result(8, "browser_navigate", "page", url=URL),
    ]
    if condensed:
        events.append(
            {
                "kind": "Condensation",
                "id": _v1_id(9),
                "source": "environment",
                "forgotten_event_ids": [_v1_id(i) for i in range(1, 9)],
                "summary": SUMMARY,
                "summary_offset": 0,
                "llm_response_id": "r",
            }
        )
    events.append(message(10, "agent", DONE))
    return events
