"""One small session told in every dialect, for `audit`, `simulate` and `diff` tests.

The user asks for a fix; the agent runs the tests (a failing test and an
assertion error), edits a file, gets a second instruction, and fetches a page.
Then a condensation forgets all of that (events 1..8) for SUMMARY, and the agent
says DONE. Whatever the dialect, the facts and what the summary kept are the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

FIRST = "Fix the bug in src/app.py"
COMMAND = "cd /repo && pytest tests/test_app.py"
OUTPUT = "FAILED tests/test_app.py::test_add\nAssertionError: 1 != 2"
EDITED = "/repo/src/app.py"
SECOND = "Also keep the API stable"
URL = "https://docs.python.org/3/"
SUMMARY = "User asked to keep the API stable. Edited src/app.py."
DONE = "All tests in tests/test_app.py pass"
DIALECTS = ("openhands-v0", "openhands-v1", "claude-code", "codex")


def write(dialect: str, path: Path, *, condensed: bool = True) -> Path:
    """The session in `dialect` at `path` (with or without its condensation)."""
    lines = WRITERS[dialect](condensed)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


# --- OpenHands V0 -----------------------------------------------------------------------


def _v0(condensed: bool) -> list[dict[str, Any]]:
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


# --- OpenHands V1 -----------------------------------------------------------------------


def _v1_id(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-000000000000"


def _v1(condensed: bool) -> list[dict[str, Any]]:
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


# --- Claude Code ------------------------------------------------------------------------


def _claude(condensed: bool) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []

    def add(data: dict[str, Any], parent: bool = True) -> None:
        uid = f"u{len(lines) + 1}"
        before = lines[-1]["uuid"] if lines and parent else None
        lines.append({"parentUuid": before, "isSidechain": False, **data, "uuid": uid})

    def user(content: Any, **extra: Any) -> None:
        add({"type": "user", "message": {"role": "user", "content": content}, **extra})

    def use(n: int, tool: str, arguments: dict[str, Any]) -> None:
        block = {"type": "tool_use", "id": f"c{n}", "name": tool, "input": arguments}
        message = {"id": f"m{n}", "role": "assistant", "model": "m", "content": [block]}
        add({"type": "assistant", "message": message})

    def result(n: int, text: str) -> None:
        user([{"type": "tool_result", "tool_use_id": f"c{n}", "content": text}])

    user(FIRST)
    use(2, "Bash", {"command": COMMAND})
    result(2, OUTPUT)
    use(4, "Edit", {"file_path": EDITED, "old_string": "a", "new_string": "b"})
    result(4, "edited")
    user(SECOND)
    use(7, "WebFetch", {"url": URL, "prompt": "read"})
    result(7, "page")
    if condensed:
        meta = {"trigger": "manual", "preTokens": 100}
        add(
            {
                "type": "system",
                "subtype": "compact_boundary",
                "logicalParentUuid": lines[-1]["uuid"],
                "compactMetadata": meta,
            },
            parent=False,
        )
        user(SUMMARY, isCompactSummary=True, isVisibleInTranscriptOnly=True)
    message = {
        "id": "m10",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": DONE}],
    }
    add({"type": "assistant", "message": message})
    return lines


# --- Codex ------------------------------------------------------------------------------

TS = "2026-01-01T00:00:00.000Z"


def _codex(condensed: bool) -> list[dict[str, Any]]:
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


WRITERS = {"openhands-v0": _v0, "openhands-v1": _v1, "claude-code": _claude, "codex": _codex}
