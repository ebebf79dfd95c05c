"""Counting what the model reads, shared by every dialect's `stats`: characters and
tokens of the log against the view, and the rows that describe each condensation.

Tokenizing is most of the time `stats` takes, so every text is tokenized once: an
event the view keeps is counted for the log and the view in one go (OpenHands V0's
walk), or its count is remembered from the log's tally, by its place in the log
(`Places`: Claude Code, V1, Codex) or by its text's fingerprint (`TextCounts`). Many
texts are counted in two processes (`halves`).
"""

from __future__ import annotations

from array import array
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
E = TypeVar("E", bound=Event)


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


# A tally of texts, and the characters and tokens of each text, in order.
Each = tuple[Tally, "array[int]", "array[int]"]


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
    ) -> Each:
        """`tally_each` of the texts of `items` (the log's, `size` bytes); from
        `halves.SPLIT_MIN_BYTES` up, a forked child counts the second half and sends
        back its counts and those it kept. Without tokens that pays only when `text`
        reads a file for each item (`reads`)."""
        if (self.count is None and not reads) or not splits(size):
            return self.tally_each(map(text, items))
        half = len(items) // 2

        def second() -> tuple[Each, dict[int, int]]:
            return self.tally_each(map(text, items[half:])), self.counted()

        first, (rest, known) = in_two(lambda: self.tally_each(map(text, items[:half])), second)
        self.known.update(known)
        first[0].merge(rest[0])
        first[1].extend(rest[1])
        first[2].extend(rest[2])
        return first

    def tally(self, texts: Iterable[str]) -> Tally:
        tally = Tally()
        for text in texts:
            tally.chars += len(text)
            tally.tokens += self.tokens(text)
        return tally

    def tally_each(self, texts: Iterable[str]) -> Each:
        """`tally`, with the characters and tokens of each text, in order."""
        tally, chars, tokens = Tally(), array("q"), array("q")
        for text in texts:
            text_chars, text_tokens = len(text), self.tokens(text)
            tally.chars += text_chars
            tally.tokens += text_tokens
            chars.append(text_chars)
            tokens.append(text_tokens)
        return tally, chars, tokens

    def tokens(self, text: str) -> int:
        """The tokens of `text` (0 without a tokenizer), counted once if it is one of
        `again`."""
        count = self.count
        if count is None:
            return 0
        known = self.known
        key = fingerprint(text)
        tokens = known.get(key)
        if tokens is None:
            tokens = count(text)
            if key in known:
                known[key] = tokens
        return tokens


# In `Places`: a place that holds no text of the log's tally.
NOT_SEEN = -1


class Places:
    """The characters and tokens of a log's texts by place (a Claude Code or Codex
    line's number, a V1 event's position), so that a view made of the log's own events
    adds them up without reading or tokenizing its texts again."""

    def __init__(
        self,
        counts: TextCounts,
        places: Sequence[int],
        chars: Sequence[int],
        tokens: Sequence[int],
    ) -> None:
        """`chars` and `tokens`: of the text at each of `places`, in the same order."""
        self.counts = counts
        top = max(places, default=0) + 1
        self.chars = array("q", [NOT_SEEN]) * top
        self.tokens = array("q", [NOT_SEEN]) * top
        for at, at_chars, at_tokens in zip(places, chars, tokens, strict=True):
            self.chars[at] = at_chars
            self.tokens[at] = at_tokens

    def tally(self, events: Iterable[E], place: Callable[[E], int | None]) -> Tally:
        """The characters and tokens of `events`: one at a place of the log's tally
        takes its counts, any other (a summary, a line that is no message) is counted
        now."""
        tally = Tally()
        chars_at, tokens_at = self.chars, self.tokens
        for event in events:
            at = place(event)
            chars = chars_at[at] if at is not None and 0 <= at < len(chars_at) else NOT_SEEN
            if chars == NOT_SEEN:
                tally.merge(self.counts.tally((model_text(event),)))
                continue
            tally.chars += chars
            tally.tokens += tokens_at[at]  # type: ignore[index]
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
