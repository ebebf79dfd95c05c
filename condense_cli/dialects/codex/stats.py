"""`condense stats` for a Codex rollout: a second walk over the validated file.

Each line is parsed again for its type and, for an item Codex sends, the text
the model reads; only the sums are kept, and each sent item's characters and
tokens by line number, so that the view (mostly the rollout's own items) adds
them up without parsing or tokenizing again. From `halves.SPLIT_MIN_BYTES` up, a
forked child walks the second half of the file.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING

from condense_cli.core.events import Event, model_text
from condense_cli.core.jsonlines import LineProblem, as_str, decode_line
from condense_cli.core.logfile import LogSource, line_body
from condense_cli.dialects.codex.items import CodexEvent, is_sent
from condense_cli.dialects.counting import (
    Counted,
    Places,
    TextCounts,
    largest_first,
    merge_by_type,
    sizes,
)
from condense_cli.dialects.reports import CondensationRow, StatsReport
from condense_cli.fast.halves import Report, in_halves, lines_between

if TYPE_CHECKING:
    from condense_cli.dialects.codex.dialect import CodexReplay
    from condense_cli.llm.tokens import Tokenizer


@dataclass
class Part:
    """What the walk of consecutive lines of a rollout found."""

    by_type: dict[str, dict[str, int]]
    events: int  # lines that are not blank
    sent: int  # items Codex sends
    lines: int  # every line, blank ones too
    numbers: array[int]  # the number of each sent item's line (from 1 in this part)
    counted: Counted  # and the counts of each one's text


def count_lines(
    source: LogSource, start: int, end: int, counts: TextCounts, report: Report | None
) -> Part:
    """Types, bytes and texts of the lines of bytes [start, end) (`start` a line start)."""
    by_type: dict[str, dict[str, int]] = {}
    numbers, counted = array("q"), counts.counted()
    events = sent = number = 0
    first = start == 0
    for raw in lines_between(source, start, end, report):
        number += 1
        body = line_body(raw, first=first)
        first = False
        if not body.strip():
            continue
        events += 1
        try:
            data = decode_line(body)
        except LineProblem:
            continue
        kind = as_str(data.get("type")) or "?"
        payload = data.get("payload")
        sub = payload.get("type") if isinstance(payload, dict) else None
        name = f"{kind}:{sub}" if isinstance(sub, str) else kind
        slot = by_type.get(name)
        if slot is None:
            slot = by_type[name] = {"events": 0, "bytes": 0}
        slot["events"] += 1
        slot["bytes"] += len(raw)
        if kind == "response_item" and isinstance(payload, dict) and is_sent(payload):
            counts.note(counted, model_text(CodexEvent(payload, None, None)))
            numbers.append(number)
            sent += 1
    return Part(by_type, events, sent, number, numbers, counted)


def _merge(first: Part, second: Part) -> Part:
    """The counts of two consecutive parts of a rollout, as one walk would give them."""
    first.by_type = merge_by_type(first.by_type, second.by_type)
    first.events += second.events
    first.sent += second.sent
    first.numbers.extend(array("q", (n + first.lines for n in second.numbers)))
    first.counted.extend(second.counted)
    first.lines += second.lines
    return first


def rollout_stats(replay: CodexReplay, tokenizer: Tokenizer | None) -> StatsReport:
    """The numbers of `condense stats`, in the shape every dialect returns."""
    source = replay.source
    view = replay.view()
    counts = TextCounts(tokenizer)

    def walk(start: int, end: int, report: Report | None) -> Part:
        return count_lines(source, start, end, counts, report)

    # Every line is parsed: a big rollout is walked in two processes, tokens or not.
    part = in_halves(source, source.size, walk, _merge)
    # the view's items are mostly the log's own: their counts are taken by line
    places = Places(counts, part.numbers, part.counted)
    known: dict[int, int] = {}  # the view's counts, for its messages
    seen = places.tally(view, _line_of, known)
    replay.token_counts = known
    compactions = replay.state.compactions
    rows = [
        CondensationRow(
            c.line,
            c.line,
            max(0, c.before - c.after),
            [],
            c.summary_chars,
            c.after,
            log_says=c.says,
        )
        for c in compactions
    ]
    report = StatsReport(
        replay.dialect,
        replay.path,
        source.size,
        part.events,
        part.sent,
        largest_first(part.by_type),
        rows,
        replay.state.requests,
        replay.state.request_pending,
        len(view),
        replay.forgotten_events,
        *sizes(part.counted.full, seen, tokenizer),
    )
    compaction = replay.resume_compaction()
    report.client = {"resume_compaction": compaction.to_json() if compaction else None}
    return report


def _line_of(event: Event) -> int | None:
    return event.line_item if isinstance(event, CodexEvent) else None
