"""What marks a file as a Codex CLI rollout; cheap to import, so that detection
loads `codex` only for a log it reads."""

from __future__ import annotations

from typing import Any

import orjson

from condense_cli.core.files import reading_head

NAME = "codex"
FIRST_LINE_BYTES = 1 << 20  # a rollout's first line (its `session_meta`) is read to this
REQUEST = "condensation_request"
LINE_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "world_state",
        "token_usage_record",
        REQUEST,
    }
)


def claims(first: dict[str, Any]) -> bool:
    """Whether a file whose first JSON object is `first` is a Codex rollout."""
    return first.get("type") in LINE_TYPES and "payload" in first and "action" not in first


def project_of(log: str) -> str | None:
    """The folder a rollout worked in: its `session_meta`'s `cwd` (None: not a rollout
    that records one)."""
    try:
        with reading_head(log, FIRST_LINE_BYTES) as file:
            first = orjson.loads(file.readline(FIRST_LINE_BYTES))
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(first, dict) or first.get("type") != "session_meta":
        return None
    payload = first.get("payload")
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return cwd if isinstance(cwd, str) else None
