"""Counting what the model reads, shared by every dialect's `stats`: characters and
tokens of the log against the view, and the rows that describe each condensation.

Tokenizing is most of the time `stats` takes, so every text is tokenized once: an
event the view keeps is counted for the log and the view in one go (OpenHands V0's
walk), or its count is remembered from the log's tally (`TextCounts`). Many texts
are counted in two processes (`halves`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from condense_cli.core.events import CondensationRecord, Event
from condense_cli.core.messages import fingerprint
from condense_cli.dialects.base import CondensationRow, Sizes
from condense_cli.fast.halves import in_two, splits
from condense_cli.llm.tokens import Tokenizer

Count = Callable[[str], int]
X = TypeVar("X")


@dataclass
class Tally:
    """Characters and tokens of the texts the model would read."""

    chars: int = 0
    tokens: int = 0

    def add(self, text: str, count: Count | None) -> None:
        self.chars += len(text)
        if count is not None:
            self.tokens += count(text)

    def merge(self, other: Tally) -> None:
        """Add another part of the same walk (sums: the order does not matter)."""
        self.chars += other.chars
        self.tokens += other.tokens


class TextCounts:
    """Tallies of lists of texts, tokenizing each text of `again` only once.

    `again` are the texts that will be tallied more than once (the views', which
    are mostly the log's own); only their fingerprints and counts are kept
    (`core.messages.fingerprint`), so memory grows with the number of the views'
    texts, not with their length.
    """

    def __init__(self, tokenizer: Tokenizer | None, again: Iterable[str] = ()) -> None:
        self.count = tokenizer.count if tokenizer is not None else None
        # The fingerprint of each text of `again`, with its count once made (None till
        # then: one dict, not a set beside it); none to remember without a tokenizer.
        fingerprints = map(fingerprint, again) if self.count is not None else ()
        self.known: dict[int, int | None] = dict.fromkeys(fingerprints)

    def counted(self) -> dict[int, int]:
        """The counts made so far (what a forked child sends back)."""
        return {key: tokens for key, tokens in self.known.items() if tokens is not None}

    def tally_log(
        self, items: Sequence[X], text: Callable[[X], str], size: int, reads: bool = False
    ) -> Tally:
        """`tally` of the texts of `items` (the log's, `size` bytes); from
        `halves.SPLIT_MIN_BYTES` up, a forked child counts the second half and sends
        back its tally and the counts it kept. Without tokens that pays only when
        `text` reads a file for each item (`reads`)."""
        if (self.count is None and not reads) or not splits(size):
            return self.tally(map(text, items))
        half = len(items) // 2

        def second() -> tuple[Tally, dict[int, int]]:
            return self.tally(map(text, items[half:])), self.counted()

        first, (tally, known) = in_two(lambda: self.tally(map(text, items[:half])), second)
        self.known.update(known)
        first.merge(tally)
        return first

    def tally(self, texts: Iterable[str]) -> Tally:
        tally = Tally()
        count, known = self.count, self.known
        for text in texts:
            tally.chars += len(text)
            if count is None:
                continue
            key = fingerprint(text)
            tokens = known.get(key)
            if tokens is None:
                tokens = count(text)
                if key in known:
                    known[key] = tokens
            tally.tokens += tokens
        return tally


def model_text(event: Event) -> str:
    """What the model reads of an event: its thought and its main text."""
    thought = event.thought
    return f"{thought}\n{event.text}" if thought else event.text


def sizes(full: Tally, view: Tally, tokenizer: Tokenizer | None) -> tuple[Sizes, Sizes | None]:
    """Characters, and tokens when counted, of the log against the view."""
    chars = Sizes(full.chars, view.chars)
    if tokenizer is None:
        return chars, None
    return chars, Sizes(full.tokens, view.tokens, tokenizer.name)


def largest_first(by_type: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """`by_type` with the types of the most bytes first (ties keep their order)."""
    return dict(sorted(by_type.items(), key=lambda kv: -kv[1]["bytes"]))


def merge_by_type(
    first: dict[str, dict[str, int]], second: dict[str, dict[str, int]]
) -> dict[str, dict[str, int]]:
    """`by_type` of two consecutive parts of a log, as one walk would have built it.

    A type keeps the place of its first appearance (it breaks ties in the table's
    order): the first part's types, then the second's new ones in their order.
    """
    for key, slot in second.items():
        mine = first.get(key)
        if mine is None:
            first[key] = slot
        else:
            mine["events"] += slot["events"]
            mine["bytes"] += slot["bytes"]
    return first


def condensation_rows(condensations: list[CondensationRecord]) -> list[CondensationRow]:
    """What each condensation did, as `stats` reports it."""
    return [
        CondensationRow(c.id, c.line, c.forgotten_events, c.ranges, c.summary_chars, c.view_size)
        for c in condensations
    ]
