"""Counting what the model reads, shared by every dialect's `stats`: characters and
tokens of the log against the view, and the rows that describe each condensation."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from condense_cli.model import CondensationRecord, Event
from condense_cli.tokens import BATCH, Tokenizer


@dataclass
class Tally:
    """Characters and tokens of the texts the model would read."""

    chars: int = 0
    tokens: int = 0
    pending: list[str] = field(default_factory=list)

    def add(self, text: str, tokenizer: Tokenizer | None) -> None:
        self.chars += len(text)
        if tokenizer is not None:
            self.pending.append(text)
            if len(self.pending) >= BATCH:
                self.flush(tokenizer)

    def flush(self, tokenizer: Tokenizer | None) -> None:
        if tokenizer is not None and self.pending:
            self.tokens += sum(tokenizer.count_batch(self.pending))
        self.pending.clear()


def model_text(event: Event) -> str:
    """What the model reads of an event: its thought and its main text."""
    thought = event.thought
    return f"{thought}\n{event.text}" if thought else event.text


def tally_numbers(full: Tally, view: Tally, tokenizer: Tokenizer | None) -> dict[str, Any]:
    """`chars` and `tokens` of the log against the view (both tallies flushed here)."""
    for tally in (full, view):
        tally.flush(tokenizer)
    return {
        "chars": {"log": full.chars, "view": view.chars, "ratio": ratio(view.chars, full.chars)},
        "tokens": (
            {
                "log": full.tokens,
                "view": view.tokens,
                "ratio": ratio(view.tokens, full.tokens),
                "tokenizer": tokenizer.name,
            }
            if tokenizer is not None
            else None
        ),
    }


def text_numbers(
    log_texts: Iterable[str], view_texts: Iterable[str], tokenizer: Tokenizer | None
) -> dict[str, Any]:
    """`tally_numbers` for a dialect that lists the texts itself."""
    full, view = Tally(), Tally()
    for tally, texts in ((full, log_texts), (view, view_texts)):
        for text in texts:
            tally.add(text, tokenizer)
    return tally_numbers(full, view, tokenizer)


def condensation_rows(condensations: list[CondensationRecord]) -> list[dict[str, Any]]:
    """What each condensation did, as `stats` reports it."""
    return [
        {
            "id": c.id,
            "line": c.line,
            "forgotten_events": c.forgotten_events,
            "forgotten_ranges": [list(r) for r in c.ranges],
            "summary_chars": c.summary_chars,
            "view_size_after": c.view_size,
        }
        for c in condensations
    ]


def ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None
