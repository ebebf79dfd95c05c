"""`condense diff`: what changed between two views of one log.

Events are matched by what the model reads of them (who, what kind, which tool
call, what text), in order, so a kept event matches even when a dialect wrote it
again (Claude Code's and Codex's compactions copy what they keep). An event that
keeps its id but reads differently (a masked observation) is *rewritten*.
Summaries are compared apart, by their text.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from condense_cli.core.events import Event, View
from condense_cli.dialects.counting import model_text

Counter = Callable[[list[str]], list[int]]
PREVIEW_CHARS = 80


def signature(event: Event) -> tuple[Any, ...]:
    return (event.source, event.kind, event.type, event.tool_call_id, model_text(event))


@dataclass
class Side:
    """One view of the diff: its name, size and tokens."""

    label: str
    events: int
    tokens: int
    summaries: list[str]


@dataclass
class ViewDiff:
    """Events that left the view, entered it or were rewritten; summaries changed."""

    a: Side
    b: Side
    left: list[Event] = field(default_factory=list)
    entered: list[Event] = field(default_factory=list)
    rewritten: list[tuple[Event, Event]] = field(default_factory=list)
    tokens: dict[int, int] = field(default_factory=dict)  # id(event) -> tokens

    @property
    def summaries_removed(self) -> list[str]:
        return [s for s in self.a.summaries if s not in self.b.summaries]

    @property
    def summaries_added(self) -> list[str]:
        return [s for s in self.b.summaries if s not in self.a.summaries]

    def tokens_of(self, events: list[Event]) -> int:
        return sum(self.tokens[id(e)] for e in events)

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": _side_dict(self.a),
            "b": _side_dict(self.b),
            "tokens_delta": self.b.tokens - self.a.tokens,
            "left": [self._event_dict(e) for e in self.left],
            "entered": [self._event_dict(e) for e in self.entered],
            "rewritten": [
                {**self._event_dict(new), "tokens_before": self.tokens[id(old)]}
                for old, new in self.rewritten
            ],
            "summaries": {"removed": self.summaries_removed, "added": self.summaries_added},
        }

    def _event_dict(self, event: Event) -> dict[str, Any]:
        return {
            "id": event.id,
            "source": event.source,
            "kind": event.kind,
            "type": event.type,
            "tokens": self.tokens[id(event)],
            "preview": preview(event),
        }


def _side_dict(side: Side) -> dict[str, Any]:
    return {
        "label": side.label,
        "events": side.events,
        "tokens": side.tokens,
        "summary_chars": [len(s) for s in side.summaries],
    }


def _identity(event: Event) -> tuple[Any, ...]:
    """An event rewritten in place keeps its id, kind, type and tool call."""
    return (event.id, event.kind, event.type, event.tool_call_id)


def preview(event: Event) -> str:
    line = " ".join(model_text(event).split())
    return line if len(line) <= PREVIEW_CHARS else line[: PREVIEW_CHARS - 1] + "…"


def diff_views(a: View, b: View, labels: tuple[str, str], count: Counter) -> ViewDiff:
    """What changed from view `a` to view `b`."""
    events_a = [e for e in a if not e.is_summary]
    events_b = [e for e in b if not e.is_summary]
    every = list(a) + list(b)
    counted = count([model_text(e) for e in every])
    tokens = {id(e): n for e, n in zip(every, counted, strict=True)}
    sides = [
        Side(
            label,
            len(view),
            sum(tokens[id(e)] for e in view),
            [e.text for e in view if e.is_summary],
        )
        for label, view in zip(labels, (a, b), strict=True)
    ]
    result = ViewDiff(sides[0], sides[1], tokens=tokens)
    matcher = difflib.SequenceMatcher(
        None, [signature(e) for e in events_a], [signature(e) for e in events_b], autojunk=False
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        gone, new = events_a[i1:i2], events_b[j1:j2]
        by_id = {_identity(e): e for e in gone if e.id is not None}
        for event in new:
            old = by_id.pop(_identity(event), None) if event.id is not None else None
            if old is not None:
                result.rewritten.append((old, event))
            else:
                result.entered.append(event)
        kept = {id(old) for old, _ in result.rewritten}
        result.left += [e for e in gone if id(e) not in kept]
    return result
