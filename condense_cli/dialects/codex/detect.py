"""What marks a file as a Codex CLI rollout; cheap to import, so that detection
loads `codex` only for a log it reads."""

from __future__ import annotations

from typing import Any

NAME = "codex"
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
