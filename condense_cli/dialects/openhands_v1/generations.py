"""Which SDK generation wrote a conversation: before 22 January 2026 the view showed
the last summary only; since, every condensation's summary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from condense_cli.dialects.openhands_v1.detect import CONDENSATION
from condense_cli.dialects.openhands_v1.storage import (
    APPENDED_KINDS,
    LAST_SUMMARY,
    LOCK_FILE,
    LOCK_FILE_SINCE,
    MULTI_SUMMARY,
    MULTI_SUMMARY_SINCE,
    NO_PARENT,
    Conversation,
    StoredEvent,
)


@dataclass(frozen=True, slots=True)
class Generation:
    """Which SDK view algorithm replays a log, and the evidence for it."""

    name: str  # LAST_SUMMARY or MULTI_SUMMARY
    reason: str


def detect_generation(conversation: Conversation) -> Generation:
    """Tell from a log which generation of the SDK wrote it (strongest evidence first).

    What `condense` appends itself (a Condensation with an `llm_response_id`, a
    CondensationRequest, the lock file it shares with the SDK, today's timestamps)
    is no evidence: appending must not change how a log replays.
    """
    records = conversation.records
    if any(r.parent is not NO_PARENT for r in records):
        return Generation(
            MULTI_SUMMARY, "events carry parent_id (an SDK from July 2026 on wrote them)"
        )
    for record in records:
        if record.kind == CONDENSATION and "llm_response_id" not in record.data:
            return Generation(
                LAST_SUMMARY,
                f"Condensation {record.id} has no llm_response_id "
                "(written by an SDK from before November 2025)",
            )
    newest = newest_date(records)
    if conversation.has_lock_file and (newest is None or newest >= LOCK_FILE_SINCE):
        return Generation(
            MULTI_SUMMARY, f"events/{LOCK_FILE} exists (an SDK from January 2026 on wrote it)"
        )
    if newest is None:
        return Generation(MULTI_SUMMARY, "no dated events; assuming the current SDK")
    if newest < MULTI_SUMMARY_SINCE:
        return Generation(
            LAST_SUMMARY,
            f"the newest event is dated {newest}, before the SDK showed several "
            f"summaries ({MULTI_SUMMARY_SINCE})",
        )
    return Generation(
        MULTI_SUMMARY,
        f"the newest event is dated {newest}, when the SDK showed several summaries",
    )


def newest_date(records: Sequence[StoredEvent]) -> str | None:
    """The newest `YYYY-MM-DD` among the events the agent wrote (not the condensations
    and requests, which `condense` may have appended)."""
    dates = [r.date for r in records if r.kind not in APPENDED_KINDS and r.date is not None]
    return max(dates, default=None)
