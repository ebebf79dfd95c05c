"""`condense simulate`: replay a log's history under another condenser, in memory.

After each event the agent saw, the condenser runs on the view; a condensation it
decides on is applied at once (nothing is appended), a view it rewrites is what
the model reads at that step. The view is kept incrementally (one event added, a
running token total), so a step costs what the condenser costs, not a replay.

A prompt cache holds the longest prefix a step shares with the step before; when a
step's view is not the previous one plus new events, the cache is lost from the
first event that differs (a *cache bust*), and every event after it is rewritten.

In dollars (`in_dollars`), the agent calls its model at the log's own turns, each
call sending the view then.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import accumulate, pairwise
from typing import Any

from condense_cli.analysis.economics import RunCost, Turns, price_run, turns_of
from condense_cli.condensers.base import Condenser, Result
from condense_cli.condensers.offline import Meter
from condense_cli.core.events import (
    Condensation,
    Event,
    View,
    apply_condensation,
    model_text,
    same_start,
)
from condense_cli.core.usage import Usage
from condense_cli.dialects.counting import TextCounts


@dataclass
class Run:
    """What one condenser did over the whole history."""

    label: str
    events: list[int] = field(default_factory=list)  # view size after each step
    tokens: list[int] = field(default_factory=list)  # view tokens after each step
    fired: list[int] = field(default_factory=list)  # steps at which it condensed
    # tokens of each step's view that the view of the step before starts with
    shared: list[int] = field(default_factory=list)
    cache_busts: int = 0
    rewritten: int = 0  # events re-read after a cache bust
    summariser_tokens: int = 0  # the prompts sent to the summariser
    summariser_calls: int = 0
    summariser_output: int = 0  # its answers' tokens
    final: list[Event] = field(default_factory=list)  # the view after the last step

    @staticmethod
    def _figures(values: list[int]) -> dict[str, Any]:
        if not values:
            return {"peak": 0, "mean": 0.0, "final": 0}
        return {
            "peak": max(values),
            "mean": round(sum(values) / len(values), 1),
            "final": values[-1],
        }

    def to_dict(self, series: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "label": self.label,
            "condensations": len(self.fired),
            "fired_at": self.fired,
            "view_events": self._figures(self.events),
            "view_tokens": self._figures(self.tokens),
            "summariser_tokens": self.summariser_tokens,
            "cache_busts": self.cache_busts,
            "events_rewritten": self.rewritten,
        }
        if series:
            data["series"] = {"events": self.events, "tokens": self.tokens}
        return data


class TokenCache:
    """Tokens of what the model reads of each event (characters, for `counts` without
    a tokenizer), counted once: the history's by `TextCounts.walk_log` (a long text
    once, in two processes for a log of `size` bytes from `halves.SPLIT_MIN_BYTES`
    up), another text when first asked."""

    def __init__(self, counts: TextCounts, history: Sequence[Event | None], size: int) -> None:
        self.counts = counts
        events = [e for e in history if e is not None]
        counted = counts.walk_log(events, model_text, size)
        figures = counted.tokens if counts.tokenizer is not None else counted.chars
        self.by_event = {id(e): n for e, n in zip(events, figures, strict=True)}
        self.by_text: dict[str, int] = {}
        self._keep = events  # ids stay valid while the events live

    def __call__(self, event: Event) -> int:
        found = self.by_event.get(id(event))
        if found is not None:
            return found
        text = model_text(event)
        if text not in self.by_text:
            tokenized = self.counts.tokenizer is not None
            self.by_text[text] = self.counts.tokens(text) if tokenized else len(text)
        return self.by_text[text]


def turn_steps(history: Sequence[Event | None]) -> list[int]:
    """The steps (from 0) after which the agent called its model: those the agent's
    actions follow, the first of each run of them (one response's actions come
    together)."""
    events = [e for e in history if e is not None]
    return [
        step
        for step, (event, following) in enumerate(pairwise(events))
        if _acts(following) and not _acts(event)
    ]


def _acts(event: Event) -> bool:
    return event.source == "agent" and event.is_action


def _same(a: Event, b: Event) -> bool:
    return a is b or (a.key is not None and a.key == b.key and a.text == b.text)


def _shared(before: list[Event], now: list[Event]) -> tuple[int, int]:
    """How many events `now` starts with that are `before`'s own, and how many it
    starts with that are the same as `before`'s."""
    limit = min(len(before), len(now))
    own = same = same_start(before, now)
    while same < limit and _same(before[same], now[same]):
        same += 1
    return own, same


def simulate(
    history: Sequence[Event | None],
    label: str,
    condenser: Condenser,
    start: View,
    tokens: TokenCache,
    meter: Meter,
    aside: bool = False,
) -> Run:
    """Run `condenser` after every event of `history` (None: a condensation request),
    starting from the empty view `start`; `aside`: the prompts it prices are counted
    by a forked child meanwhile (for a long history). A child that fails costs a
    second run, without it."""
    meter.aside = aside
    try:
        run = _steps(history, start, tokens, condenser.condense, meter)
        if not meter.settle():
            meter.reset()
            run = _steps(history, start, tokens, condenser.condense, meter)
    finally:
        meter.stop()
    run.label, run.summariser_tokens = label, meter.sent
    run.summariser_calls, run.summariser_output = meter.calls, meter.received
    return run


def _steps(
    history: Sequence[Event | None],
    view: View,
    tokens: TokenCache,
    condense: Callable[[View], Result],
    meter: Meter,
) -> Run:
    """What `condense` does after each event of `history`, from the view `view`
    (`simulate`)."""
    run = Run("")
    events: list[Event] = []
    events_tokens = [0]  # of `events[:i]`, for every i
    sent: list[Event] = []  # what the model read at the previous step: `sent[:read]`
    sent_tokens = events_tokens  # of `sent[:i]`
    read = 0
    appended = True  # `sent` is `events` as it was (so this step only adds to it)
    step = 0
    for item in history:
        if item is None:
            view = view.with_request()
            continue
        step += 1
        events.append(item)
        events_tokens.append(events_tokens[-1] + tokens(item))
        view = replace(view, events=events)
        result = condense(view)
        if isinstance(result, Condensation):
            meter.add_usage(result.usage)
            view = apply_condensation(view, result)
            events = view.events
            events_tokens = list(accumulate(map(tokens, events), initial=0))
            run.fired.append(step)
            now, now_tokens, plain = events, events_tokens, False
        elif result.events is events:
            now, now_tokens, plain = events, events_tokens, True
        else:
            now, now_tokens, plain = result.events, [], False
        if plain and appended:
            run.shared.append(run.tokens[-1] if run.tokens else 0)
        else:
            own, prefix = _shared(sent[:read] if len(sent) > read else sent, now)
            if prefix < read:
                run.cache_busts += 1
                run.rewritten += len(now) - prefix
            if not now_tokens:  # tokens of the events it shares with `sent`, then the rest
                rest = map(tokens, now[own:])
                now_tokens = list(accumulate(rest, initial=sent_tokens[own]))
                now_tokens[:0] = sent_tokens[:own]
            run.shared.append(now_tokens[min(prefix, read)])
        appended = plain
        sent, sent_tokens = (list(now), now_tokens) if not plain else (events, events_tokens)
        read = len(now)
        run.events.append(len(now))
        run.tokens.append(now_tokens[-1])
        run.final = now
    run.final = list(run.final)
    return run


@dataclass
class Priced:
    """The runs of `simulate` in dollars: the turns they are priced as, each run's
    calls, and the history's with no condensation at all."""

    turns: Turns
    runs: list[RunCost]
    uncondensed: RunCost


def in_dollars(
    runs: list[Run],
    history: Sequence[Event | None],
    tokens: TokenCache,
    model: str,
    calls: list[Usage] | None,
    summarisers: list[str | None],
) -> Priced:
    """Each run's calls priced as the log's turns (`economics.price_run`: the agent's
    `model`, its recorded `calls`), its summariser's at the model of `summarisers`
    (None: as the agent's), and the same history with no condensation at all."""
    at = turn_steps(history)
    whole = list(accumulate(tokens(e) for e in history if e is not None))
    turns = turns_of(model, calls, whole[at[0]] if at else 0)
    costs = []
    for run, summariser in zip(runs, summarisers, strict=True):
        answers = Usage(
            "",
            summariser or turns.model,
            input=run.summariser_tokens,
            output=run.summariser_output,
        )
        costs.append(price_run(turns, at, run.tokens, run.shared, answers, run.summariser_calls))
    return Priced(turns, costs, price_run(turns, at, whole, [0, *whole[:-1]]))
