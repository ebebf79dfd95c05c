"""Checks `condense check` makes beyond the format: what the model silently loses."""

from __future__ import annotations

from condense_cli.core.events import Problem
from condense_cli.dialects.base import Replay


def lost_context(replay: Replay) -> list[Problem]:
    """Warnings for what the conversion to messages drops: context the model
    silently loses (a tool result without its call, a call without its result);
    none for a dialect that does not convert its views to messages."""
    if not replay.converts_messages:
        return []
    return [
        Problem(change.line, f"the model never sees this: {change.reason}", "warning", change.path)
        for change in replay.messages(replay.view()).lost
    ]
