"""What marks a file as a Gemini CLI session; cheap to import, so that detection
loads `gemini_cli` only for a log it reads."""

from __future__ import annotations

from typing import Any

NAME = "gemini-cli"


def claims(first: dict[str, Any]) -> bool:
    """Whether a file whose first JSON object is `first` is a Gemini CLI session: its
    header names the session and the project's hash (a Claude Code line never has
    `projectHash`)."""
    return (
        isinstance(first.get("sessionId"), str)
        and isinstance(first.get("projectHash"), str)
        and "type" not in first
    )
