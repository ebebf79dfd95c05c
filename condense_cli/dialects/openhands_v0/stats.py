"""`condense stats` for an OpenHands V0 log: a second walk over the validated log.

Each line is parsed again for its type and the text the model reads; an event
the view keeps has its text tokenized once for both tallies. From
`halves.SPLIT_MIN_BYTES` up, a forked child walks the second half of the file.
"""

from __future__ import annotations

from collections.abc import Iterable

import orjson

from condense_cli.core.errors import LogError
from condense_cli.core.events import model_text
from condense_cli.core.intervals import IntervalSet
from condense_cli.core.logfile import LogSource, line_body
from condense_cli.dialects.counting import (
    Count,
    Tally,
    condensation_rows,
    largest_first,
    merge_by_type,
    sizes,
)
from condense_cli.dialects.openhands_v0.detect import NAME
from condense_cli.dialects.openhands_v0.events import V0Event, is_seen_by_agent
from condense_cli.dialects.openhands_v0.scan import LogIndex
from condense_cli.dialects.reports import StatsReport
from condense_cli.fast.halves import Report, in_halves, lines_between
from condense_cli.llm.tokens import Tokenizer

NOT_SHOWN = frozenset({"condensation", "condensation_request"})


def collect_stats(source: LogSource, index: LogIndex, tokenizer: Tokenizer | None) -> StatsReport:
    """Walk the (already validated) log once more and count, in two processes on a big log."""
    count = tokenizer.count if tokenizer is not None else None

    def walk(start: int, end: int, report: Report | None) -> StatsPart:
        lines = lines_between(source, start, end, report)
        return count_lines(source.path, lines, start == 0, index.forgotten, count)

    by_type, full, view = in_halves(source, index.size, walk, merge_parts)
    if index.summary is not None:
        view.add(index.summary, count)
    return StatsReport(
        NAME,
        source.path,
        index.size,
        index.events,
        index.visible_events,
        largest_first(by_type),
        condensation_rows(index.condensations),
        index.requests,
        index.unhandled_request,
        index.view_size,
        index.forgotten_events,
        *sizes(full, view, tokenizer),
    )


StatsPart = tuple[dict[str, dict[str, int]], Tally, Tally]  # by_type, log, view


def count_lines(
    path: str,
    lines: Iterable[bytes],
    first: bool,
    forgotten: IntervalSet,
    count: Count | None,
) -> StatsPart:
    """Events and bytes by type, and the log's and the view's tallies, of some lines;
    the text of an event the view keeps is tokenized once for both."""
    by_type: dict[str, dict[str, int]] = {}
    full, view = Tally(), Tally()
    gone = forgotten.cursor()
    for raw in lines:
        body = line_body(raw, first=first)
        first = False
        if not body or body.isspace():
            continue
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            data = None
        if type(data) is not dict:
            raise LogError(path, CHANGED, hint="run the command again")
        event = V0Event(data, data.get("id"), body)
        key = f"{event.kind}:{event.type}"
        slot = by_type.get(key)
        if slot is None:
            slot = by_type[key] = {"events": 0, "bytes": 0}
        slot["events"] += 1
        slot["bytes"] += len(raw)
        if not is_seen_by_agent(data) or (event.type in NOT_SHOWN and event.is_action):
            continue
        text = model_text(event)
        chars = len(text)
        tokens = count(text) if count is not None else 0
        if event.key is None or event.key not in gone:  # a summary line without id: shown
            view.chars += chars
            view.tokens += tokens
        if event.key is not None:
            full.chars += chars
            full.tokens += tokens
    return by_type, full, view


CHANGED = "changed while it was being counted: a line that held an event no longer does"


def merge_parts(first: StatsPart, second: StatsPart) -> StatsPart:
    """The counts of two consecutive parts of a log, as one walk would give them."""
    by_type, full, view = first
    full.merge(second[1])
    view.merge(second[2])
    return merge_by_type(by_type, second[0]), full, view
