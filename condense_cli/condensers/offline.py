"""Condensers without their model: a placeholder summary of a chosen size.

`simulate` and `diff` run condensers many times on views that never reach a model;
unless told to call the model, each summarising condenser writes a placeholder of
about `summary_tokens` tokens instead, and the prompt it would have sent is counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from condense_cli.condensers.attention import LLMAttentionCondenser
from condense_cli.condensers.base import Condenser
from condense_cli.condensers.pipeline import PipelineCondenser
from condense_cli.condensers.prompting import format_event, format_events
from condense_cli.condensers.summarizing import LLMSummarizingCondenser
from condense_cli.core.events import Event

if TYPE_CHECKING:
    from condense_cli.fast.halves import Feeder

Count = Callable[[str], int]


def placeholder(tokens: int) -> str:
    """A summary of about `tokens` tokens (one per word)."""
    return "[placeholder summary]" + " lorem" * max(0, tokens - 4)


class Meter:
    """Tokens sent to the model by condensers (counted, or as the model reported).

    The prompts a condenser without its model would have sent (`price`) are counted
    here or, `aside`, by a forked child while the run goes on, each one the child
    has room for (`settle` adds its count): on a long history, counting them takes as
    long as the rest of the run."""

    def __init__(self, count: Count) -> None:
        self.count = count
        self.sent = 0  # prompt tokens
        self.calls = 0
        self.received = 0  # answer tokens
        self.aside = False
        self._pricing: Feeder | None = None

    def reset(self) -> None:
        """Nothing counted yet, and no child to count the prompts."""
        self.sent = self.calls = self.received = 0
        self.aside = False

    def add_usage(self, usage: dict[str, Any]) -> None:
        """A call the model made, as it reported it (nothing: no call was made)."""
        if usage:
            self.calls += 1
        self.sent += int(usage.get("prompt_tokens") or 0)
        self.received += int(usage.get("completion_tokens") or 0)

    def price(self, prompt: str, answer: int = 0) -> None:
        """Count the tokens of a prompt a condenser would have sent (and of the
        `answer` it would have had)."""
        self.calls += 1
        self.received += answer
        if self.aside and self._pricing is None:
            from condense_cli.fast.halves import Feeder

            self._pricing = Feeder.start(partial(_total, self.count))
            self.aside = self._pricing is not None
        if self._pricing is None or not self._pricing.feed(prompt):
            self.sent += self.count(prompt)  # here: no child, or it is busy

    def settle(self) -> bool:
        """Add what the child counted (once it has counted all it was sent); False when
        it failed: the prompts it was sent are not counted, and the run must be made
        again without it."""
        pricing, self._pricing = self._pricing, None
        if pricing is None:
            return True
        total = pricing.result()
        if total is None:
            return False
        self.sent += total
        return True

    def stop(self) -> None:
        """Stop a child still counting (a run that ended in an error)."""
        pricing, self._pricing = self._pricing, None
        if pricing is not None:
            pricing.stop()


def _total(count: Count, prompts: Iterator[str]) -> int:
    return sum(map(count, prompts))


def go_offline(condenser: Condenser, summary: str, meter: Meter) -> None:
    """Make `condenser` (and every stage of a pipeline) answer without its model."""
    if isinstance(condenser, PipelineCondenser):
        for stage in condenser.stages:
            go_offline(stage, summary, meter)
    elif isinstance(condenser, LLMSummarizingCondenser):
        _summarise_offline(condenser, summary, meter)
    elif isinstance(condenser, LLMAttentionCondenser):
        _rank_offline(condenser, meter)


def _summarise_offline(condenser: LLMSummarizingCondenser, summary: str, meter: Meter) -> None:
    answer: list[int] = []  # the placeholder's tokens, once counted

    def summarize(
        previous: Event | None, forgotten: list[Event], extra: str = ""
    ) -> tuple[str, dict[str, Any]]:
        start = previous.text if previous is not None else None
        texts = [format_event(e, condenser.config.max_event_length) for e in forgotten]
        if not answer:
            answer.append(meter.count(summary))
        meter.price(condenser.prompt(start, texts, extra), answer[0])
        return summary, {}

    def tokens(events: list[Event]) -> list[int]:
        return [meter.count(e.text) for e in events]

    condenser.summarize = summarize  # type: ignore[method-assign]
    condenser._tokens = tokens  # type: ignore[method-assign]


def _rank_offline(condenser: LLMAttentionCondenser, meter: Meter) -> None:
    """No ranking at all: the condenser keeps the newest events, as it does when the
    model ranks too few."""

    def rank(candidates: list[Any]) -> tuple[list[int], dict[str, Any]]:
        meter.price(format_events(candidates, 10_000))
        return [], {}

    condenser.rank = rank  # type: ignore[method-assign]
