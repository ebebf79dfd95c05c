"""Compaction thrash: compactions that come back to back, or that leave the view no
smaller while their summary grows. `check` warns of each (so `--strict` fails),
`stats` counts them.

Two compactions are back to back when fewer than `BACK_TO_BACK_EVENTS` events came
into the view between them (the view right after the first, against the view right
before the second): the agent compacted again before it did anything. A run of
`MIN_RUN` or more is one finding. A compaction that does not shrink the view (as
many events after it as before) and writes a longer summary than the one before it
is a finding of its own: it only made the context longer. And a compaction that
loses again `REREAD_MIN` or more files or commands the one before it lost, which the
agent read or ran anew in between, is one too: the agent goes round in circles
(judged from the compactions' views, a second walk over the log: `--deep` on
`check` and `stats`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from condense_cli.analysis.carrying import Memory, event_texts
from condense_cli.analysis.facts import Fact, extract, shown
from condense_cli.core.events import CondensationRecord, Problem
from condense_cli.core.text import plural
from condense_cli.dialects.base import CondensationStep, Replay

BACK_TO_BACK_EVENTS = 3
MIN_RUN = 3  # "several": two compactions close together can be a user's /compact
REREAD_MIN = 2  # facts lost, read anew and lost again that make a finding
REREAD_KINDS = ("paths", "commands")
SHOWN_FACTS = 3


@dataclass(frozen=True)
class Step:
    """What thrash is judged on for one compaction."""

    line: int
    before: int  # events in the view right before it
    after: int  # and right after it
    summary_chars: int | None


@dataclass(frozen=True)
class Finding:
    """One run of compactions back to back, or one that did not shrink the view."""

    kind: str  # "back_to_back", "no_shrink" or "reread"
    lines: tuple[int, ...]
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "lines": list(self.lines), "says": self.message}


def steps_of(replay: Replay) -> list[Step]:
    """The log's compactions, from their records (no second walk over the log): the
    view before one is the view after it plus what it forgot."""
    return [
        Step(c.line, _before(c), c.view_size, c.summary_chars)
        for c in replay.condensations
        if c.line is not None
    ]


def _before(record: CondensationRecord) -> int:
    """The view's size before a condensation: as the dialect knows it, else the view
    after it and what it forgot."""
    known = record.view_size_before
    return known if known is not None else record.view_size + record.forgotten_events


def findings(steps: list[Step]) -> list[Finding]:
    """The thrash in a log's compactions, in order."""
    found: list[Finding] = []
    run: list[Step] = []

    def close() -> None:
        if len(run) >= MIN_RUN:
            lines = tuple(s.line for s in run)
            found.append(
                Finding(
                    "back_to_back",
                    lines,
                    f"{len(run)} compactions back to back (lines {lines[0]} to {lines[-1]}): "
                    f"each came less than {plural(BACK_TO_BACK_EVENTS, 'event')} after the one "
                    "before it",
                )
            )

    for previous, step in zip([None, *steps], steps, strict=False):
        if previous is not None and step.before - previous.after < BACK_TO_BACK_EVENTS:
            run = run or [previous]
            run.append(step)
        else:
            close()
            run = []
        grew = (
            previous is not None
            and step.summary_chars is not None
            and previous.summary_chars is not None
            and step.summary_chars > previous.summary_chars
        )
        if step.after >= step.before and grew:
            assert previous is not None and previous.summary_chars is not None
            found.append(
                Finding(
                    "no_shrink",
                    (step.line,),
                    f"this compaction left the view no smaller ({step.before} -> {step.after} "
                    f"events) and its summary grew ({previous.summary_chars:,} -> "
                    f"{step.summary_chars:,} characters)",
                )
            )
    close()
    return found


def reread_findings(steps: Iterable[CondensationStep]) -> list[Finding]:
    """Compactions that lost again what the agent read anew after the compaction
    before them lost it (files read, commands run)."""
    found: list[Finding] = []
    lost_before: dict[tuple[str, str], Fact] = {}
    previous: CondensationStep | None = None
    for step in steps:
        summary = Memory.of([step.summary] if step.summary else [], loose=True)
        facts = [f for f in extract(step.forgotten, calls=True) if f.kind in REREAD_KINDS]
        lost = {(f.kind, f.key): f for f in facts if not summary.carries(f)}
        again = [f for k, f in lost.items() if k in lost_before]
        if previous is not None and len(again) >= REREAD_MIN:
            # what the view still held after the compaction before was not lost
            held = Memory.of(t for e in previous.after for t in event_texts(e))
            again = [f for f in again if not held.carries(f)]
        if previous is not None and len(again) >= REREAD_MIN:
            named = ", ".join(shown(f.text, 60) for f in again[:SHOWN_FACTS])
            more = f" and {len(again) - SHOWN_FACTS} more" if len(again) > SHOWN_FACTS else ""
            count = plural(len(again), "file or command", "files and commands")
            found.append(
                Finding(
                    "reread",
                    (step.line,),
                    f"this compaction lost again {count} that the compaction at line "
                    f"{previous.line} lost and the agent read or ran anew since: {named}{more}",
                )
            )
        lost_before, previous = lost, step
    return found


def all_findings(replay: Replay, deep: bool = False) -> list[Finding]:
    """The thrash findings of a log, in the order of the compactions they are at;
    `deep` adds those judged from the compactions' views (a second, slower walk)."""
    found = findings(steps_of(replay))
    if deep and replay.audits and len(replay.condensations) >= 2:
        found += reread_findings(replay.condensation_steps())
    return sorted(found, key=lambda f: f.lines[0])


def thrash_problems(replay: Replay, deep: bool = False) -> list[Problem]:
    """`check`'s warnings, one per finding, at its first compaction's line."""
    return [Problem(f.lines[0], f.message, "warning") for f in all_findings(replay, deep)]
