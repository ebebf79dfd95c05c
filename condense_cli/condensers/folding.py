"""Prompts that fit the model's window: texts packed into chunks, and a rolling fold.

When the forgotten events do not fit one prompt, they are summarised in order, a chunk
at a time, each prompt carrying the summary so far; the last answer covers every
event. A text too long for any prompt is cut in the middle, and the cut says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from condense_cli.condensers.prompting import truncate_middle
from condense_cli.core.errors import ConfigError, ContextOverflow

if TYPE_CHECKING:
    from condense_cli.llm.client import Answer
    from condense_cli.llm.window import Window

# How each model could be asked for structured answers, learned this run (per process):
# (model, base_url, what is asked) -> the mode that worked.
LEARNED_MODES: dict[tuple[str, str | None, str], str] = {}
MIN_TEXT_BUDGET = 128  # tokens a chunk must leave for the texts it carries
MAX_OVERFLOWS = 3  # refusals of a too-long prompt before giving up
T = TypeVar("T")


def fit(text: str, budget: int, count: Callable[[str], int]) -> str:
    """`text`, cut in the middle until it counts at most `budget` tokens."""
    tokens = count(text)
    while tokens > budget and len(text) > 64:
        keep = max(64, int(len(text) * budget / tokens * 0.9))
        text = truncate_middle(text, keep)
        tokens = count(text)
    return text


def next_chunk(
    texts: list[str], budget: int, count: Callable[[str], int]
) -> tuple[list[str], list[str]]:
    """The texts that fit `budget` tokens together (at least one, cut to fit), and the
    rest. Texts are joined by a newline (one token, counted)."""
    chunk: list[str] = []
    used = 0
    for index, text in enumerate(texts):
        tokens = count(text) + 1
        if chunk and used + tokens > budget:
            return chunk, texts[index:]
        if not chunk and tokens > budget:
            text = fit(text, budget - 1, count)
            tokens = budget
        chunk.append(text)
        used += tokens
    return chunk, []


def room_for_texts(window: Window, fixed: str) -> int:
    """Tokens left for the texts once `fixed` (the prompt without them) is in, or a
    configuration error saying what to change when too few are left."""
    budget = window.prompt_budget - window.count(fixed)
    if budget < MIN_TEXT_BUDGET:
        raise ConfigError(
            f"{window.describe()} leaves {max(budget, 0):,} tokens for the events once the "
            f"instructions, the summary so far and {window.answer:,} tokens for the answer "
            "are counted",
            hint="set max_input_tokens in the [llm] table to the model's real window, "
            "or a smaller max_output_tokens",
        )
    return budget


def fold(
    texts: list[str],
    start: str | None,
    window: Window,
    prompt: Callable[[str | None, list[str], bool], str],
    ask: Callable[[Callable[[], str]], tuple[str, Answer]],
) -> tuple[str, dict[str, Any]]:
    """Summarise `texts` in order, a chunk per call: `prompt(summary so far, chunk,
    last)` builds each prompt, `ask(make)` answers the prompt `make()` builds (again,
    if it changes how it asks). A prompt the model refuses as too long makes the count
    more careful and the chunk smaller."""
    running, usage = start, Usage()
    pending, overflows = texts, 0
    while True:
        budget = room_for_texts(window, prompt(running, [], True))
        chunk, rest = next_chunk(pending, budget, window.count)

        def make(
            running: str | None = running, chunk: list[str] = chunk, last: bool = not rest
        ) -> str:
            return prompt(running, chunk, last)

        text = make()
        try:
            running, answer = ask(make)
        except ContextOverflow:
            overflows += 1
            if overflows > MAX_OVERFLOWS:
                raise
            window.margin *= 1.5
            continue
        window.learn(window.count(text), answer.prompt_tokens)
        usage.add(answer)
        pending = rest
        if not pending:
            return running, usage.to_dict()


class Usage:
    """What several model calls used together."""

    def __init__(self) -> None:
        self.model = ""
        self.calls = self.prompt_tokens = self.completion_tokens = self.largest_prompt = 0
        self.cost: float | None = None

    def add(self, answer: Answer) -> None:
        self.model = answer.model or self.model
        self.calls += 1
        self.prompt_tokens += answer.prompt_tokens
        self.completion_tokens += answer.completion_tokens
        self.largest_prompt = max(self.largest_prompt, answer.prompt_tokens)
        if answer.cost:
            self.cost = (self.cost or 0.0) + answer.cost

    def to_dict(self) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
        }
        if self.calls > 1:
            usage["calls"] = self.calls
            usage["largest_prompt_tokens"] = self.largest_prompt
        return usage
