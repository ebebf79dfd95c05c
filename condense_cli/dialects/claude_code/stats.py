"""`condense stats` for a Claude Code session: condense's counts beside the log's own.

Each compaction's `compactMetadata` (`trigger`, `preTokens`, `postTokens`,
`durationMs`, as the client wrote them) is shown beside what condense counts
for the same compaction: the view before and after it, in events and (with a
tokenizer) in tokens of the texts the model reads.

One walk over the session's lines parses each line once, without keeping it,
for its type and the text the model reads of it; the characters and tokens of
every message line are kept by line number, so the views around every
compaction (which are made of the session's own lines) add them up without
parsing or tokenizing again. From `halves.SPLIT_MIN_BYTES` of messages up, a
forked child walks the second half of the lines, tokens counted or not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from condense_cli.core.events import model_text
from condense_cli.dialects.claude_code.events import MESSAGE_TYPES, REQUEST_TYPE, ClaudeEvent
from condense_cli.dialects.claude_code.lines import Line
from condense_cli.dialects.claude_code.resume import client_figures
from condense_cli.dialects.claude_code.usage import Fields, call_fields
from condense_cli.dialects.counting import (
    Counted,
    Places,
    Tally,
    TextCounts,
    largest_first,
    merge_by_type,
    sizes,
)
from condense_cli.dialects.reports import CondensationRow, StatsReport
from condense_cli.fast.halves import in_two, splits

if TYPE_CHECKING:
    from condense_cli.dialects.claude_code.dialect import ClaudeReplay
    from condense_cli.llm.tokens import Tokenizer

LOG_FIELDS = {"trigger": "trigger", "preTokens": "pre_tokens", "postTokens": "post_tokens"}

# by_type, the texts of the lines walked, and what the assistant lines say of their calls
Part = tuple[dict[str, dict[str, int]], Counted, list[tuple[int, Fields]]]


def _kind(line: Line, data: dict[str, Any]) -> str:
    """`user`, `system:compact_boundary`, `attachment:file`, `queue-operation`, ..."""
    detail = data.get("subtype")
    attachment = data.get("attachment")
    if isinstance(attachment, dict):
        detail = attachment.get("type")
    return f"{line.type}:{detail}" if isinstance(detail, str) else line.type or "?"


def _walk(lines: Sequence[Line], counts: TextCounts) -> Part:
    """Types and bytes of `lines`, the texts of their messages the agent saw (not
    `isSidechain`; the other lines are skipped places), and the call fields of the
    assistant lines (`usage.call_fields`)."""
    by_type: dict[str, dict[str, int]] = {}
    counted = counts.counted()
    calls = []
    for line in lines:
        data = line._data
        if data is None:
            data = orjson.loads(line.raw)  # read and parsed once, not kept
        kind = _kind(line, data)
        slot = by_type.get(kind)
        if slot is None:
            slot = by_type[kind] = {"events": 0, "bytes": 0}
        slot["events"] += 1
        slot["bytes"] += line.size + 1
        if line.type in MESSAGE_TYPES and not line.sidechain:
            counts.note(counted, model_text(ClaudeEvent(data, line.number, None)))
        else:
            counted.skip()
        if line.type == "assistant":
            calls.append((line.number, call_fields(data)))
    return by_type, counted, calls


class LineCounts:
    """The characters and tokens of every message line, by line number."""

    def __init__(self, lines: Sequence[Line], counts: TextCounts, split: bool) -> None:
        if split:
            half = len(lines) // 2
            (by_type, counted, calls), (more_types, more, more_calls) = in_two(
                lambda: _walk(lines[:half], counts), lambda: _walk(lines[half:], counts)
            )
            self.by_type = merge_by_type(by_type, more_types)
            counted.extend(more)
            calls.extend(more_calls)
        else:
            self.by_type, counted, calls = _walk(lines, counts)
        self.calls = calls
        self.full = counted.full
        self.places = Places(counts, [line.number for line in lines], counted)

    def tally(self, events: Sequence[ClaudeEvent], known: dict[int, int] | None = None) -> Tally:
        """The characters and tokens of a view made of session lines (`Places.tally`)."""
        return self.places.tally(events, _line_of, known)


def _line_of(event: ClaudeEvent) -> int | None:
    return event.line


def session_stats(replay: ClaudeReplay, tokenizer: Tokenizer | None) -> StatsReport:
    """The numbers of `condense stats`, in the shape every dialect returns."""
    session = replay.session
    seen = [x for x in session.lines if x.type in MESSAGE_TYPES and not x.sidechain]
    size = sum(x.size for x in seen)
    counts = TextCounts(tokenizer)
    lines = LineCounts(session.lines, counts, splits(size))
    session.call_lines = lines.calls  # (`spending` reads no line again)
    known: dict[int, int] = {}  # the view's counts, for its messages
    view = lines.tally(replay.events, known)
    replay.token_counts = known
    replay.walk_compactions()  # and `thresholds` after it has nothing to walk again
    condensations: list[CondensationRow] = []
    for record, boundary in zip(replay.condensations, replay.boundaries(), strict=True):
        meta = boundary.data.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        row = CondensationRow(
            record.id,
            record.line,
            record.forgotten_events,
            record.ranges,
            record.summary_chars,
            record.view_size,
            view_size_before=replay.size_before(boundary),
            log={name: meta.get(key) for key, name in LOG_FIELDS.items()}
            | {"duration_ms": meta.get("durationMs")},
        )
        if tokenizer is not None:
            row.tokens_before = lines.tally(replay.before(boundary)).tokens
            row.tokens_after = lines.tally(replay.after(boundary)).tokens
        condensations.append(row)
    requests = sum(1 for x in session.lines if x.type == REQUEST_TYPE)
    report = StatsReport(
        replay.dialect,
        session.path,
        session.size,
        len(session.lines),
        len(seen),
        largest_first(lines.by_type),
        condensations,
        requests,
        replay.view().unhandled_request,
        len(replay.events),
        replay.forgotten_events,
        *sizes(lines.full, view, tokenizer),
    )
    report.client = client_figures(session.lines, replay.events)
    return report
