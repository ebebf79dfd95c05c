"""The story of `tests/stories.py` told as a Codex log."""

from __future__ import annotations

import json
from typing import Any

from tests.stories import COMMAND, DONE, EDITED, FIRST, OUTPUT, SECOND, SUMMARY, URL

# `--upto` for the view just before the condensation.
# Codex lines count the session's
# first line (session_meta).
BEFORE = "9"

TS = "2026-01-01T00:00:00.000Z"


def lines(condensed: bool) -> list[dict[str, Any]]:
    def line(kind: str, payload: Any) -> dict[str, Any]:
        return {"timestamp": TS, "type": kind, "payload": payload}

    def text(role: str, words: str) -> dict[str, Any]:
        kind = "input_text" if role == "user" else "output_text"
        return {"type": "message", "role": role, "content": [{"type": kind, "text": words}]}

    def call(n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "function_call",
            "name": name,
            "arguments": json.dumps(arguments),
            "call_id": f"c{n}",
        }

    def output(n: int, words: str) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": f"c{n}", "output": words}

    patch = f"*** Begin Patch\n*** Update File: {EDITED}\n@@\n-a\n+b\n*** End Patch"
    items = [
        text("user", FIRST),
        call(2, "exec_command", {"cmd": COMMAND}),
        output(2, OUTPUT),
        {"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": "c4"},
        {"type": "custom_tool_call_output", "call_id": "c4", "output": "edited"},
        text("user", SECOND),
        call(7, "web_fetch", {"url": URL}),
        output(7, "page"),
    ]
    lines = [line("session_meta", {"id": "s1", "timestamp": TS, "cwd": "/repo"})]
    lines += [line("response_item", i) for i in items]
    if condensed:
        summary = {
            **text("user", SUMMARY),
            "internal_chat_message_metadata_passthrough": {
                "content_item_kinds": ["compaction.summary"]
            },
        }
        lines.append(line("compacted", {"message": SUMMARY, "replacement_history": [summary]}))
    lines.append(line("response_item", text("assistant", DONE)))
    return lines
