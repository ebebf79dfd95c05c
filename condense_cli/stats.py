"""Numbers about a log: events and bytes by type, condensations, and what the view saves."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from condense_cli.dialects.openhands_v0 import V0Event, is_seen_by_agent
from condense_cli.log import LogSource, line_body
from condense_cli.model import CondensationRecord, Event
from condense_cli.scan import LogIndex
from condense_cli.tokens import BATCH, Tokenizer

NOT_SHOWN = frozenset({"condensation", "condensation_request"})


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


def collect_stats(
    source: LogSource, index: LogIndex, tokenizer: Tokenizer | None
) -> dict[str, Any]:
    """Walk the (already validated) log once more and count."""
    by_type: dict[str, dict[str, int]] = {}
    full, view = Tally(), Tally()
    forgotten = index.forgotten.cursor()
    for number, raw in enumerate(source.raw_lines(), start=1):
        body = line_body(raw, first=number == 1)
        if not body or body.isspace():
            continue
        data = orjson.loads(body)
        event = V0Event(data, data.get("id"), body)
        key = f"{event.kind}:{event.type}"
        slot = by_type.setdefault(key, {"events": 0, "bytes": 0})
        slot["events"] += 1
        slot["bytes"] += len(raw)
        if not is_seen_by_agent(data) or (event.type in NOT_SHOWN and event.is_action):
            continue
        text = model_text(event)
        if event.key is None:  # a summary line without id: always in the view
            view.add(text, tokenizer)
            continue
        full.add(text, tokenizer)
        if event.key not in forgotten:
            view.add(text, tokenizer)
    if index.summary is not None:
        view.add(index.summary, tokenizer)
    return {
        "log": source.path,
        "bytes": index.size,
        "events": index.events,
        "visible_events": index.visible_events,
        "by_type": dict(sorted(by_type.items(), key=lambda kv: -kv[1]["bytes"])),
        "condensations": condensation_rows(index.condensations),
        "requests": index.requests,
        "unhandled_request": index.unhandled_request,
        "view": {"events": index.view_size, "forgotten_events": index.forgotten_events},
        **text_numbers(full, view, tokenizer),
    }


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


def text_numbers(full: Tally, view: Tally, tokenizer: Tokenizer | None) -> dict[str, Any]:
    """`chars` and `tokens` of the log against the view (both tallies flushed here)."""
    for tally in (full, view):
        tally.flush(tokenizer)
    return {
        "chars": {"log": full.chars, "view": view.chars, "ratio": _ratio(view.chars, full.chars)},
        "tokens": (
            {
                "log": full.tokens,
                "view": view.tokens,
                "ratio": _ratio(view.tokens, full.tokens),
                "tokenizer": tokenizer.name,
            }
            if tokenizer is not None
            else None
        ),
    }


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None
