"""What marks a file as a Claude Code session; cheap to import, so that detection
loads `claude_code` only for a log it reads."""

from __future__ import annotations

from typing import Any

NAME = "claude-code"
# Types seen first in a session file (older sessions start with a `summary` line).
FIRST_TYPES = frozenset(
    {"queue-operation", "file-history-snapshot", "summary", "permission-mode", "user", "system"}
)


def claims(first: dict[str, Any]) -> bool:
    """Whether a file whose first JSON object is `first` is a Claude Code session."""
    if any(k in first for k in ("parentUuid", "leafUuid", "sessionId")):
        return "payload" not in first
    return first.get("type") in FIRST_TYPES and "action" not in first
