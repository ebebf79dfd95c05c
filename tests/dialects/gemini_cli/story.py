"""The story of `tests/stories.py` told as a Gemini CLI session."""

from __future__ import annotations

from typing import Any

from tests.stories import COMMAND, DONE, EDITED, FIRST, OUTPUT, SECOND, SUMMARY, URL

# `--upto` for the view just before the condensation: the session's lines count
# its header.
BEFORE = "9"

TS = "2026-11-28T10:00:00.000Z"
HEADER = {
    "sessionId": "0f8e6a52-7d4c-4a4e-9d55-2b9f1c3e8a10",
    "projectHash": "9" * 64,
    "startTime": TS,
    "lastUpdated": TS,
    "kind": "main",
}


def message(n: int, kind: str, content: Any) -> dict[str, Any]:
    return {"id": f"m{n}", "timestamp": TS, "type": kind, "content": content}


def call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    part = {"functionCall": {"id": f"{name}__c{n}", "name": name, "args": args}}
    return message(n, "gemini", [part]) | {"model": "gemini-2.5-pro"}


def result(n: int, call_n: int, name: str, output: str) -> dict[str, Any]:
    part = {
        "functionResponse": {
            "id": f"{name}__c{call_n}",
            "name": name,
            "response": {"output": output},
        }
    }
    return message(n, "user", [part])


def lines(condensed: bool) -> list[dict[str, Any]]:
    edit = {"file_path": EDITED, "old_string": "a", "new_string": "b"}
    out = [
        HEADER,
        message(1, "user", [{"text": FIRST}]),
        call(2, "run_shell_command", {"command": COMMAND}),
        result(3, 2, "run_shell_command", OUTPUT),
        call(4, "replace", edit),
        result(5, 4, "replace", "edited"),
        message(6, "user", [{"text": SECOND}]),
        call(7, "web_fetch", {"prompt": f"Summarise {URL}"}),
        result(8, 7, "web_fetch", "page"),
    ]
    if condensed:
        # a compression's `$set` of the list: its snapshot (the client's follows it
        # with an acknowledgement of its own, a message like any other)
        out.append({"$set": {"messages": [message(9, "user", [{"text": SUMMARY}])]}})
    out.append(message(11, "gemini", DONE) | {"model": "gemini-2.5-pro"})
    return out
