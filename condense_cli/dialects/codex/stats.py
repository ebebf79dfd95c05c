"""`condense stats` for a Codex rollout: a second walk over the validated file.

Each line is parsed again for its type and, for an item Codex sends, the text
the model reads; only the sums are kept, so memory stays with the view. A text
of the view is tokenized once (the walk keeps its count). With tokens, from
`halves.SPLIT_MIN_BYTES` up, a forked child walks the second half of the file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from condense_cli.core.jsonlines import LineProblem, as_str, decode_line
from condense_cli.core.logfile import LogSource, line_body
from condense_cli.dialects.base import CondensationRow, StatsReport
from condense_cli.dialects.codex.items import CodexEvent, is_sent
from condense_cli.dialects.counting import (
    Tally,
    TextCounts,
    largest_first,
    merge_by_type,
    model_text,
    sizes,
)
from condense_cli.fast.halves import Report, in_halves, lines_between

if TYPE_CHECKING:
    from condense_cli.dialects.codex.dialect import CodexReplay
    from condense_cli.llm.tokens import Tokenizer

# by_type, the log's tally, lines, items sent, and the view's texts counted on the way
Part = tuple[dict[str, dict[str, int]], Tally, int, int, dict[int, int]]


def count_lines(
    source: LogSource, start: int, end: int, counts: TextCounts, report: Report | None
) -> Part:
    """Types, bytes and texts of the lines of bytes [start, end) (`start` a line start)."""
    by_type: dict[str, dict[str, int]] = {}
    full = Tally()
    events = sent = 0
    first = start == 0
    for raw in lines_between(source, start, end, report):
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
            full.merge(counts.tally((model_text(CodexEvent(payload, None, None)),)))
            sent += 1
    # The view's texts counted here: the first half's are this process's own already
    return by_type, full, events, sent, counts.counted() if start else {}


def _merge(first: Part, second: Part) -> Part:
    """The counts of two consecutive parts of a rollout, as one walk would give them."""
    by_type, full, events, sent, known = first
    full.merge(second[1])
    known.update(second[4])
    return merge_by_type(by_type, second[0]), full, events + second[2], sent + second[3], known


def rollout_stats(replay: CodexReplay, tokenizer: Tokenizer | None) -> StatsReport:
    """The numbers of `condense stats`, in the shape every dialect returns."""
    source = replay.source
    view = replay.view()
    counts = TextCounts(tokenizer, again=map(model_text, view))

    def walk(start: int, end: int, report: Report | None) -> Part:
        return count_lines(source, start, end, counts, report)

    # Every line is parsed: a big rollout is walked in two processes, tokens or not.
    by_type, full, events, sent, known = in_halves(source, source.size, walk, _merge)
    if tokenizer is not None:
        counts.known.update(known)
        replay.token_counts = counts.known
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
        events,
        sent,
        largest_first(by_type),
        rows,
        replay.state.requests,
        replay.state.request_pending,
        len(view),
        replay.forgotten_events,
        *sizes(full, counts.tally(map(model_text, view)), tokenizer),
    )
    compaction = replay.resume_compaction()
    report.client = {"resume_compaction": compaction.to_json() if compaction else None}
    return report
