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

A history `simulate` replays under a condenser is priced the same way (`price_run`):
a call at each of the log's turns, sending the view then, the prefix it shares with
the call before read from the prompt cache, and the summariser's calls.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from condense_cli.analysis.cost import Spend, price_of
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
    log's (and the counts agree); None where nothing matches, or the log records no
    model call to weigh them by."""
    if spending is None or not spending.compactions:
        return [None] * len(lines)
    if not spending.calls and not any(c.call for c in spending.compactions):
        return [None] * len(lines)  # the log records no model call at all
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
        figures.own_dollars = _dollars(own, figures.unpriced)
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
        figures.rewritten_dollars += _dollars(call, figures.unpriced) - _dollars(
            _read(call, extra), figures.unpriced
        )
        previous = call.prompt
    for call in after:
        figures.saved += dropped
        figures.saved_dollars += _more(call, dropped, caching, figures.unpriced)
    return figures


def _more(call: Usage, tokens: int, caching: bool, unpriced: set[str]) -> float:
    """What `call` would have cost more with `tokens` more in its prompt (read from the
    cache where the calls use it, else sent as input); 0 for a model with no price,
    named in `unpriced`."""
    price = price_of(call.model)
    if price is None:
        unpriced.add(call.model)
        return 0.0
    rates = price.rates(call.prompt)
    if price.rates(call.prompt + tokens) is not rates:  # every part at the tier's rates
        more = (
            replace(call, cache_read=call.cache_read + tokens)
            if caching
            else replace(call, input=call.input + tokens)
        )
        return price.of(more) - price.of(call)
    return tokens * (rates.cache_read if caching else rates.input)


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


def _dollars(call: Usage, unpriced: set[str]) -> float:
    """What `call` cost; 0 for a model with no price, named in `unpriced`."""
    price = price_of(call.model)
    if price is None:
        unpriced.add(call.model)
        return 0.0
    return price.of(call)


# --- a simulated history in dollars (`simulate`) --------------------------------------


@dataclass(frozen=True)
class Turns:
    """The recorded turns a simulated history is priced as: the agent's model; the
    tokens its prompts hold beyond the view (the system prompt and tools: the first
    recorded call's prompt less the view's tokens then); its answers' tokens, all
    together (the same whatever the condenser); and how its calls use the prompt
    cache (`none`, `reads` as OpenAI bills them, or `writes` too, as Anthropic does)."""

    model: str
    overhead: int = 0
    output: int = 0
    cache: str = "writes"
    hour: bool = False  # cache writes kept an hour (Claude Code's)
    recorded: int = 0  # the agent's calls the log records (0: none, or not read)
    spent: Spend | None = None  # every call the log records, as `cost` adds them up
    served: str = ""  # how most of its calls were served (`Usage.served`: "fast", ...)


def turns_of(model: str, calls: list[Usage] | None, first_view: int) -> Turns:
    """The turns of a log whose agent recorded `calls` (None: not read), the first
    of them made when the view held `first_view` tokens: priced as the model most of
    them used (`model`, the one it used last, where the log records none)."""
    agent = [c for c in calls or () if c.by_agent]
    if not agent:
        price = price_of(model)
        writes = price is not None and price.cache_write > price.cache_read > 0
        cache = "writes" if writes else "reads" if price and price.cache_read else "none"
        return Turns(model, cache=cache)
    used = Counter(c.model for c in agent)
    most = max(used.values())
    model = model if used.get(model) == most else next(m for m, n in used.items() if n == most)
    spent = Spend()
    for call in calls or ():
        spent.add(call)
    written = sum(c.cache_write for c in agent)
    hour = sum(c.cache_write_1h for c in agent)
    cache = "writes" if written or hour else "reads" if any(c.cache_read for c in agent) else "none"
    return Turns(
        model,
        max(0, agent[0].prompt - first_view),
        sum(c.output for c in agent),
        cache,
        hour > written,
        len(agent),
        spent,
        Counter(c.served for c in agent).most_common(1)[0][0],
    )


@dataclass
class RunCost:
    """A simulated history's model calls in tokens and dollars: the agent's (a call
    at each of the log's turns) and the summariser's."""

    calls: int = 0
    prompt: int = 0  # tokens the agent's calls sent
    cache_read: int = 0  # of them, read from the prompt cache
    dollars: float = 0.0
    summariser_calls: int = 0
    summariser_tokens: int = 0  # prompts and answers
    summariser_dollars: float = 0.0
    summariser_model: str = ""
    unpriced: set[str] = field(default_factory=set)

    @property
    def total(self) -> float:
        return self.dollars + self.summariser_dollars

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "calls": self.calls,
            "prompt_tokens": self.prompt,
            "cache_read_tokens": self.cache_read,
            "dollars": round(self.dollars, 6),
            "summariser": {
                "calls": self.summariser_calls,
                "model": self.summariser_model or None,
                "tokens": self.summariser_tokens,
                "dollars": round(self.summariser_dollars, 6),
            },
            "total_dollars": round(self.total, 6),
        }
        if self.unpriced:
            row["unpriced_models"] = sorted(self.unpriced)
        return row


def price_run(
    turns: Turns,
    at: list[int],
    tokens: list[int],
    shared: list[int],
    summariser: Usage | None = None,
    summariser_calls: int = 0,
) -> RunCost:
    """The calls made after the steps `at` (indexes into `tokens`, the view's tokens
    after each step; `shared[i]`: those of step i's view the one before it starts with),
    each sending the view with the turns' overhead, the prefix it shares with the call
    before read from the cache; and the summariser's calls."""
    cost = RunCost(calls=len(at))
    each, extra = divmod(turns.output, len(at)) if at else (0, 0)
    previous: int | None = None
    for number, step in enumerate(at):
        prompt = turns.overhead + tokens[step]
        cached = 0
        if previous is not None:
            cached = turns.overhead + min(shared[previous + 1 : step + 1], default=tokens[step])
        cached = min(cached, prompt) if turns.cache != "none" else 0
        fresh = prompt - cached
        call = Usage(
            "",
            turns.model,
            input=fresh if turns.cache != "writes" else 0,
            output=each + (1 if number < extra else 0),
            cache_write=fresh if turns.cache == "writes" and not turns.hour else 0,
            cache_write_1h=fresh if turns.cache == "writes" and turns.hour else 0,
            cache_read=cached,
            served=turns.served,
        )
        cost.prompt += prompt
        cost.cache_read += cached
        cost.dollars += _dollars(call, cost.unpriced)
        previous = step
    if summariser is not None and summariser.tokens:
        cost.summariser_calls = summariser_calls
        cost.summariser_model = summariser.model
        cost.summariser_tokens = summariser.tokens
        cost.summariser_dollars = _dollars(summariser, cost.unpriced)
    return cost
