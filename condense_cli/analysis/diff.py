"""`condense diff`: what changed between two views of one log.

Events are matched by what the model reads of them (who, what kind, which tool
call, what text), in order, so a kept event matches even when a dialect wrote it
again (Claude Code's and Codex's compactions copy what they keep). An event that
keeps its id but reads differently (a masked observation) is *rewritten*.
Summaries are compared apart, by their text.
"""

from __future__ import annotations

import difflib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from condense_cli.core.events import Event, View, model_text
from condense_cli.dialects.counting import TextCounts
from condense_cli.llm.messages import fingerprint_of

PREVIEW_CHARS = 80


def signature(event: Event, text_key: int) -> tuple[Any, ...]:
    """What an event is to the model; its text by `text_key` (`fingerprint`: the texts
    of two long views are not held)."""
    return (event.source, event.kind, event.type, event.tool_call_id, text_key)


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


def diff_views(
    a: View, b: View, labels: tuple[str, str], counts: TextCounts, size: int
) -> ViewDiff:
    """What changed from view `a` to view `b` (of a log of `size` bytes: from
    `halves.SPLIT_MIN_BYTES` up, a forked child counts the texts of `b`). `counts`
    must count tokens."""
    events_a = [e for e in a if not e.is_summary]
    events_b = [e for e in b if not e.is_summary]
    every = list(a) + list(b)
    counted = counts.walk_log(every, model_text, size)
    assert counted.hashes is not None, "diff_views counts tokens"
    tokens = {id(e): n for e, n in zip(every, counted.tokens, strict=True)}
    keys = {
        id(e): fingerprint_of(chars, text_hash)
        for e, chars, text_hash in zip(every, counted.chars, counted.hashes, strict=True)
    }
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
    signatures_a = [signature(e, keys[id(e)]) for e in events_a]
    signatures_b = [signature(e, keys[id(e)]) for e in events_b]
    for tag, i1, i2, j1, j2 in opcodes(signatures_a, signatures_b):
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


Opcode = tuple[str, int, int, int, int]  # difflib's: a tag, then a's range and b's


def opcodes(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode]:
    """`difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()`, without
    its search when one list starts the other (a view that only grew since, or only
    lost its end): the shorter list is then the longest block, first in both, which
    the search would find first (in a long view of like events, after minutes)."""
    short = min(len(a), len(b))
    if a[:short] != b[:short]:
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        return list(matcher.get_opcodes())
    found: list[Opcode] = [("equal", 0, short, 0, short)] if short else []
    if len(a) > short:
        found.append(("delete", short, len(a), short, short))
    if len(b) > short:
        found.append(("insert", short, short, short, len(b)))
    return found
