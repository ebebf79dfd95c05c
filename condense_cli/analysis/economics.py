"""What a compaction cost and what it saved, in tokens and dollars, from the calls a
log records around it.

- **Its own call**: the summariser's, as the log records it (or builds it, `estimated`).
- **Cache rewritten**: after a compaction the prompt's prefix is new, so the calls after
  it write to the prompt cache what they would otherwise have read from it. Counted: the
  first call's cache writes whole, then each call's writes beyond what the prompt grew
  by since the call before, until a call writes no more than that (the cache is warm
  again); priced as the difference between a write and a read.
- **Saved**: the tokens it took out of the prompt (the prompt and answer of the call
  before it, less the prompt of the call after it) are tokens every later call, up to
  the next compaction or the end, did not send; priced as each call would have been
  with them (as cache reads where the calls use the cache, else as input; a long-context
  tier that they would have crossed counts).
- **Net**: saved, less the cache rewritten and its own call.

The figures assume the session would have gone on as it did without the compaction;
where the prompt would have passed the model's window, the client had no choice.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from condense_cli.analysis.cost import price_of
from condense_cli.core.usage import Compaction, Economics, Spending, Usage


def weigh(spending: Spending) -> list[Economics]:
    """Each compaction of a log, weighed by the calls around it."""
    calls = spending.calls
    caching = any(c.cache_read or c.cache_write or c.cache_write_1h for c in calls)
    found = []
    marks = spending.compactions
    starts = [0, *(c.after for c in marks[:-1])]
    ends = [*(c.after for c in marks[1:]), len(calls)]
    for compaction, start, end in zip(marks, starts, ends, strict=False):
        # the calls since the compaction before it, and up to the next
        before, after = calls[start : compaction.after], calls[compaction.after : end]
        found.append(_weigh(compaction, before, after, caching))
    return found


def matched(spending: Spending | None, lines: list[int | None]) -> list[Economics | None]:
    """The figures of the condensations at `lines` (each a line of the log, or None),
    weighed by `spending`: matched by line, or in order where the lines are not the
    log's (and the counts agree); None where nothing matches."""
    if spending is None or not spending.compactions:
        return [None] * len(lines)
    figures = dict(zip(spending.compactions, weigh(spending), strict=True))
    by_line = {c.line: f for c, f in figures.items() if c.line is not None}
    if all(line is not None and line in by_line for line in lines):
        return [by_line.get(line or 0) for line in lines]
    if len(figures) == len(lines):
        return list(figures.values())
    return [None] * len(lines)


def total(each: Iterable[Economics]) -> Economics:
    """The figures of many compactions, added up."""
    whole = Economics()
    for one in each:
        whole.add(one)
    return whole


def _weigh(
    compaction: Compaction, before: list[Usage], after: list[Usage], caching: bool
) -> Economics:
    figures = Economics(compactions=1)
    own = compaction.call
    if own is not None:
        figures.own_calls = 1
        figures.own_estimated = int(compaction.estimated)
        figures.own_tokens = own.tokens
        figures.own_dollars = _dollars(own, figures)
    if not before or not after:
        figures.unmeasured = 1
        return figures
    last = before[-1]
    dropped = max(0, last.prompt + last.output - after[0].prompt)
    figures.dropped = dropped
    figures.calls_after = len(after)
    previous: int | None = None  # the prompt of the call before, once past the first
    for call in after:
        written = call.cache_write + call.cache_write_1h
        grew = call.prompt - previous if previous is not None else 0
        extra = written if previous is None else max(0, written - max(0, grew))
        if not extra:
            break  # the cache is warm again
        figures.rewritten += extra
        figures.rewritten_dollars += _dollars(call, figures) - _dollars(_read(call, extra), figures)
        previous = call.prompt
    for call in after:
        more = (
            replace(call, cache_read=call.cache_read + dropped)
            if caching
            else replace(call, input=call.input + dropped)
        )
        figures.saved += dropped
        figures.saved_dollars += _dollars(more, figures) - _dollars(call, figures)
    return figures


def _read(call: Usage, tokens: int) -> Usage:
    """`call` with `tokens` of its cache writes read from the cache instead (its
    one-hour writes first)."""
    hour = min(tokens, call.cache_write_1h)
    return replace(
        call,
        cache_write_1h=call.cache_write_1h - hour,
        cache_write=call.cache_write - (tokens - hour),
        cache_read=call.cache_read + tokens,
    )


def _dollars(call: Usage, figures: Economics) -> float:
    price = price_of(call.model)
    if price is None:
        figures.unpriced.add(call.model)
        return 0.0
    return price.of(call)
