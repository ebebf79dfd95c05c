"""Counting what the model reads, shared by every dialect's `stats`: characters and
tokens of the log against the view, and the rows that describe each condensation.

Tokenizing is most of the time `stats` takes, so every text is tokenized once: an
event the view keeps is counted for the log and the view in one go (OpenHands V0's
walk), or its count is taken from the log's tally by its place in the log (`Places`:
Claude Code, V1, Codex), which also gives the message conversion the counts of the
view's texts by fingerprint. A long text the log holds again is tokenized once
(`TextCounts`). Many texts are counted in two processes (`halves`).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from condense_cli.core.events import CondensationRecord, Event, model_text
from condense_cli.dialects.reports import CondensationRow, Sizes
from condense_cli.fast.halves import in_two, splits
from condense_cli.llm.messages import fingerprint, fingerprint_of
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


# A text this long is remembered by its fingerprint once tokenized, so that a text
# the log holds again (a file read twice, the same output) is tokenized once; a
# shorter one costs less to tokenize again than to remember.
REMEMBER_MIN_CHARS = 1024
# At most this many are remembered (about 7 MB), however long the log.
REMEMBER_MAX = 1 << 16

# In `Counted` and `Places`: a place that holds no text of the log's tally.
NOT_SEEN = -1


class Counted:
    """The texts of a walk: their sums, and the characters, tokens and hash of each, in
    order (`NOT_SEEN` for a place the walk passed that holds none; `hashes` only when
    tokens are counted, for the view's `known`: see `Places.tally`). `TextCounts.walk`
    or `note` fill it."""

    def __init__(self, hashed: bool) -> None:
        self.full = Tally()
        self.chars = array("q")
        self.tokens = array("q")
        self.hashes = array("q") if hashed else None

    def skip(self) -> None:
        """A place with no text the model reads."""
        self.chars.append(NOT_SEEN)
        self.tokens.append(NOT_SEEN)
        if self.hashes is not None:
            self.hashes.append(0)

    def extend(self, other: Counted) -> None:
        """Add the next part of the same walk."""
        self.full.merge(other.full)
        self.chars.extend(other.chars)
        self.tokens.extend(other.tokens)
        if self.hashes is not None and other.hashes is not None:
            self.hashes.extend(other.hashes)


class TextCounts:
    """Counts the characters and tokens of texts, tokenizing a long text the log
    holds more than once only once; only its fingerprint and count are remembered
    (`llm.messages.fingerprint`), so memory grows with the number of long texts,
    up to `REMEMBER_MAX`, not with their length."""

    def __init__(self, tokenizer: Tokenizer | None) -> None:
        self.tokenizer = tokenizer
        self.count = tokenizer.count if tokenizer is not None else None
        self.remembered: dict[int, int] = {}

    def walk_log(
        self, items: Sequence[X], text: Callable[[X], str], size: int, reads: bool = False
    ) -> Counted:
        """`walk` of the texts of `items` (the log's, `size` bytes); from
        `halves.SPLIT_MIN_BYTES` up, a forked child counts the second half. Without
        tokens that pays only when `text` reads a file for each item (`reads`)."""
        if (self.count is None and not reads) or not splits(size):
            return self.walk(map(text, items))
        half = len(items) // 2
        first, rest = in_two(
            lambda: self.walk(map(text, items[:half])),
            lambda: self.walk(map(text, items[half:])),
        )
        first.extend(rest)
        return first

    def counted(self) -> Counted:
        """A walk's counts, empty: hashed when tokens are counted."""
        return Counted(hashed=self.count is not None)

    def walk(self, texts: Iterable[str]) -> Counted:
        """The counts of each of `texts`, in order."""
        counted = self.counted()
        for text in texts:
            self.note(counted, text)
        return counted

    def note(self, counted: Counted, text: str) -> None:
        """Count `text`, the next place of a walk."""
        text_chars, text_tokens = len(text), self.tokens(text)
        counted.full.chars += text_chars
        counted.full.tokens += text_tokens
        counted.chars.append(text_chars)
        counted.tokens.append(text_tokens)
        if counted.hashes is not None:
            counted.hashes.append(hash(text))

    def tokens(self, text: str) -> int:
        """The tokens of `text` (0 without a tokenizer), counted once if it is long."""
        count = self.count
        if count is None:
            return 0
        if len(text) < REMEMBER_MIN_CHARS:
            return count(text) if text else 0
        remembered = self.remembered
        key = fingerprint(text)
        tokens = remembered.get(key)
        if tokens is None:
            tokens = count(text)
            if len(remembered) < REMEMBER_MAX:
                remembered[key] = tokens
        return tokens


class Places:
    """The characters and tokens of a log's texts by place (a Claude Code or Codex
    line's number, a V1 event's position), so that a view made of the log's own events
    adds them up without reading or tokenizing its texts again."""

    def __init__(self, counts: TextCounts, places: Sequence[int], counted: Counted) -> None:
        """`counted`: the walk of the texts at each of `places`, in the same order."""
        self.counts = counts
        top = max(places, default=0) + 1
        self.chars = array("q", [NOT_SEEN]) * top
        self.tokens = array("q", [NOT_SEEN]) * top
        for at, at_chars, at_tokens in zip(places, counted.chars, counted.tokens, strict=True):
            self.chars[at] = at_chars
            self.tokens[at] = at_tokens
        self.hashes = array("q")
        if counted.hashes is not None:
            self.hashes = array("q", [0]) * top
            for at, at_hash in zip(places, counted.hashes, strict=True):
                self.hashes[at] = at_hash

    def tally(
        self,
        events: Iterable[E],
        place: Callable[[E], int | None],
        known: dict[int, int] | None = None,
    ) -> Tally:
        """The characters and tokens of `events`: one at a place of the log's tally
        takes its counts, any other (a summary, a line that is no message) is counted
        now. With tokens, each text's count is put in `known` by its fingerprint, for
        converting the events to messages without tokenizing them again."""
        tally = Tally()
        chars_at, tokens_at, hashes_at = self.chars, self.tokens, self.hashes
        if not hashes_at:  # no tokens counted
            known = None
        for event in events:
            at = self._at(place(event))
            if at is None:
                text = model_text(event)
                text_tokens = self.counts.tokens(text)
                tally.chars += len(text)
                tally.tokens += text_tokens
                if known is not None:
                    known[fingerprint(text)] = text_tokens
                continue
            tally.chars += chars_at[at]
            tally.tokens += tokens_at[at]
            if known is not None:
                known[fingerprint_of(chars_at[at], hashes_at[at])] = tokens_at[at]
        return tally

    def _at(self, at: int | None) -> int | None:
        """`at` if the log's tally holds a text there."""
        if at is None or not 0 <= at < len(self.chars) or self.chars[at] == NOT_SEEN:
            return None
        return at


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
