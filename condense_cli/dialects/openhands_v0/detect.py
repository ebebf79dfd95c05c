"""What marks a file as an OpenHands V0 event log; cheap to import, so that
detection loads `openhands_v0` only for a log it reads."""

from __future__ import annotations

from typing import Any

NAME = "openhands-v0"


def claims(first: dict[str, Any]) -> bool:
    """Whether a file whose first JSON object is `first` is a V0 event log."""
    return "action" in first or "observation" in first or type(first.get("id")) is int
