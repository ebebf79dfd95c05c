"""The story of `tests/stories.py` told as a Claude Code log."""

from __future__ import annotations

from typing import Any

from tests.stories import COMMAND, DONE, EDITED, FIRST, OUTPUT, SECOND, SUMMARY, URL

# `--upto` for the view just before the condensation.
# Claude Code lines count from 1: the eighth message line.
BEFORE = "8"


def lines(condensed: bool) -> list[dict[str, Any]]:
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
