"""`condense stats` for a Claude Code session: condense's counts beside the log's own.

Each compaction's `compactMetadata` (`trigger`, `preTokens`, `postTokens`,
`durationMs`, as the client wrote them) is shown beside what condense counts
for the same compaction: the view before and after it, in events and (with a
tokenizer) in tokens of the texts the model reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from condense_cli.stats import TextCounts, model_text, tally_numbers

if TYPE_CHECKING:
    from condense_cli.dialects.claude_code import ClaudeReplay, Line
    from condense_cli.model import Event
    from condense_cli.tokens import Tokenizer

LOG_FIELDS = {"trigger": "trigger", "preTokens": "pre_tokens", "postTokens": "post_tokens"}


def _kind(line: Line) -> str:
    """`user`, `system:compact_boundary`, `attachment:file`, `queue-operation`, ..."""
    detail = line.data.get("subtype")
    attachment = line.data.get("attachment")
    if isinstance(attachment, dict):
        detail = attachment.get("type")
    return f"{line.type}:{detail}" if isinstance(detail, str) else line.type or "?"


def _texts(events: list[Event]) -> list[str]:
    return [model_text(event) for event in events]


def session_stats(replay: ClaudeReplay, tokenizer: Tokenizer | None) -> dict[str, Any]:
    """The numbers of `condense stats`, in the shape every dialect returns."""
    from condense_cli.dialects.claude_code import MESSAGE_TYPES, REQUEST_TYPE, ClaudeEvent

    session = replay.session
    by_type: dict[str, dict[str, int]] = {}
    for line in session.lines:
        slot = by_type.setdefault(_kind(line), {"events": 0, "bytes": 0})
        slot["events"] += 1
        slot["bytes"] += len(line.raw) + 1
    seen = [
        ClaudeEvent(x.data, x.number, x.raw)
        for x in session.lines
        if x.type in MESSAGE_TYPES and x.data.get("isSidechain") is not True
    ]
    boundaries = [session.by_uuid[str(record.id)] for record in replay.condensations]
    arounds = [replay.around(boundary) for boundary in boundaries]
    # The views share most texts with the log and with each other: count each once.
    view_texts = _texts(replay.events)
    again = {t for before, after in arounds for t in _texts(before) + _texts(after)}
    counts = TextCounts(tokenizer, again=again.union(view_texts))
    size = sum(len(event.raw or b"") for event in seen)
    full, view = counts.tally_log(seen, model_text, size), counts.tally(view_texts)
    condensations = []
    for record, boundary, (before, after) in zip(
        replay.condensations, boundaries, arounds, strict=True
    ):
        meta = boundary.data.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        entry: dict[str, Any] = {
            "id": record.id,
            "line": record.line,
            "forgotten_events": record.forgotten_events,
            "forgotten_ranges": [list(r) for r in record.ranges],
            "summary_chars": record.summary_chars,
            "view_size_before": len(before),
            "view_size_after": record.view_size,
            "log": {name: meta.get(key) for key, name in LOG_FIELDS.items()}
            | {"duration_ms": meta.get("durationMs")},
        }
        if tokenizer is not None:
            entry["tokens_before"] = counts.tally(_texts(before)).tokens
            entry["tokens_after"] = counts.tally(_texts(after)).tokens
        condensations.append(entry)
    requests = sum(1 for x in session.lines if x.type == REQUEST_TYPE)
    return {
        "dialect": replay.dialect,
        "log": session.path,
        "bytes": session.size,
        "events": len(session.lines),
        "visible_events": len(seen),
        "by_type": dict(sorted(by_type.items(), key=lambda kv: -kv[1]["bytes"])),
        "condensations": condensations,
        "requests": requests,
        "unhandled_request": replay.view().unhandled_request,
        "view": {"events": len(replay.events), "forgotten_events": replay.forgotten_events},
        **tally_numbers(full, view, tokenizer),
    }
