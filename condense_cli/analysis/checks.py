"""Checks `condense check` makes beyond the format: what the model silently loses."""

from __future__ import annotations

from condense_cli.core.events import Problem
from condense_cli.dialects.base import Replay


def lost_context(replay: Replay) -> list[Problem]:
    """Warnings for what the conversion to messages drops: context the model
    silently loses (a tool result without its call, a call without its result);
    none for a dialect that does not convert its views to messages, or whose
    conversion drops nothing."""
    if not (replay.converts_messages and replay.conversion_drops):
        return []
    return [
        Problem(change.line, f"the model never sees this: {change.reason}", "warning", change.path)
        for change in replay.conversion_changes(replay.view()).lost
    ]


def lost_pins(replay: Replay) -> list[Problem]:
    """Warnings for the pins (`core.pins`) each compaction in the log dropped."""
    from condense_cli.core.pins import dropped
    from condense_cli.core.text import quote

    pins = replay.pins() if replay.audits else []
    if not pins:
        return []
    return [
        Problem(step.line, f"this compaction dropped the pin {quote(pin)}", "warning")
        for step in replay.condensation_steps()
        for pin in dropped(pins, step.before, step.after)
    ]
