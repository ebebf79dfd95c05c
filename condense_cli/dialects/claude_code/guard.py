"""`condense hook pre-compact --guard`: why Claude Code's automatic compaction of a
session should not happen now. The client lets a `PreCompact` hook block one (exit 2);
condense blocks one that would come too soon after the last (thrash) or well before
the point where the client compacts (too early)."""

from __future__ import annotations

from collections.abc import Iterable

from condense_cli.dialects.claude_code.events import ClaudeEvent
from condense_cli.dialects.claude_code.resume import (
    RESUME_ADDS,
    SYNTHETIC_MODEL,
    resume_compaction,
)

MIN_ANSWERS_BETWEEN = 2  # a compaction after fewer model answers than this is thrash


def guard_reason(
    events: list[ClaudeEvent], view: Iterable[ClaudeEvent], last_compaction: int | None
) -> str | None:
    """Why an automatic compaction should not happen now (None: let it), given the
    session's `events`, its `view` and the line of its last compaction (None: none)."""
    if last_compaction is not None:  # answers written after it (not those it kept)
        answers = sum(1 for e in view if _answer(e, last_compaction))
        if answers < MIN_ANSWERS_BETWEEN:
            return (
                f"condense --guard: the model answered {answers} time(s) since the last "
                "compaction; compacting again now would only repeat it (thrash)"
            )
    standing = resume_compaction(events)
    if standing is not None and standing.threshold is not None and not standing.near:
        return (
            f"condense --guard: the context is {standing.context_tokens:,} tokens, "
            f"{standing.threshold - standing.context_tokens:,} below the {standing.threshold:,} "
            f"where Claude Code compacts ({standing.window:,}-token window of {standing.model}): "
            f"too early (more than {RESUME_ADDS:,} below)"
        )
    return None


def _answer(event: ClaudeEvent, since: int) -> bool:
    """Whether an event of the view is an answer of the model written after line
    `since` (not one the client wrote itself)."""
    if event.line is None or event.line <= since or event.is_summary:
        return False
    data = event.data
    if data.get("type") != "assistant":
        return False
    message = data.get("message")
    return isinstance(message, dict) and message.get("model") != SYNTHETIC_MODEL
