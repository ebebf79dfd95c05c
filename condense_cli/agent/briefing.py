"""What matters in a live session, said to the agent's client around its own
compaction: before it, what the client's summariser must keep, and right after it,
what still holds (`keep`); and what the new summary left out of that (`left_out`).

What matters, in this order: the pins; the user's constraints, then the rest of
what the user asked (clause by clause, `analysis.clauses`); failing tests and errors
not resolved since; the files the agent changed; pending tasks. Each list is cut to
a few items and the whole text to `MAX_CHARS`, saying so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from condense_cli.analysis.audit import check_facts, pin_facts
from condense_cli.analysis.clauses import clauses, is_constraint
from condense_cli.analysis.facts import Fact, extract, shown, squash
from condense_cli.core.events import Event
from condense_cli.dialects.base import Replay

MAX_CHARS = 6_000  # the whole text (the client cuts a hook's answer at about 10,000)
MAX_ITEMS = 12  # per section
ITEM_CHARS = 300
SECTIONS = (
    ("pins", "Pinned facts (carry them as written)"),
    ("constraints", "Constraints the user set"),
    ("instructions", "What the user asked"),
    ("errors", "Failing tests and errors not resolved"),
    ("paths", "Files the agent changed"),
    ("tasks", "Tasks"),
)


@dataclass
class Briefing:
    """Facts that matter, by section (see `SECTIONS`)."""

    facts: dict[str, list[Fact]] = field(default_factory=dict)

    def add(self, fact: Fact) -> None:
        found = self.facts.setdefault(fact.kind, [])
        if all(f.key != fact.key for f in found):
            found.append(fact)

    def __bool__(self) -> bool:
        return any(self.facts.values())

    def count(self) -> int:
        return sum(len(v) for v in self.facts.values())

    def text(self, heading: str, closing: str = "") -> str:
        """The briefing as plain text under `heading`, at most `MAX_CHARS`."""
        lines = [heading]
        for kind, title in SECTIONS:
            items = self.facts.get(kind) or []
            if not items:
                continue
            lines.append(f"{title}:")
            lines += [f"- {shown(f.text, ITEM_CHARS)}" for f in items[:MAX_ITEMS]]
            if len(items) > MAX_ITEMS:
                lines.append(f"- ... and {len(items) - MAX_ITEMS} more")
        if closing:
            lines.append(closing)
        text = "\n".join(lines)
        if len(text) > MAX_CHARS:
            cut = f"\n[cut by condense at {MAX_CHARS:,} characters]"
            text = text[: MAX_CHARS - len(cut)] + cut
        return text


def keep(replay: Replay) -> Briefing:
    """What the client's summariser must keep of the session as it stands."""
    briefing = Briefing()
    for fact in _standing(replay, list(replay.view())):
        briefing.add(fact)
    return briefing


def left_out(replay: Replay, summary: str) -> Briefing:
    """What of the facts that matter a compaction's `summary` left out, the session
    as it was before it (Claude Code hands its hooks the new summary before it
    writes the compaction to the session)."""
    kinds = check_facts(_standing(replay, list(replay.view())), [summary], [])
    briefing = Briefing()
    for kind, _title in SECTIONS:
        for fact in sorted(kinds[kind].lost, key=lambda f: f.rank):
            briefing.add(fact)
    return briefing


def _standing(replay: Replay, recent: Iterable[Event]) -> list[Fact]:
    """The facts that matter: the pins, what the user said (every message), the files
    changed (every call), and the unresolved errors and tasks of `recent` events."""
    history = [e for e in replay.history() if e is not None] if replay.simulates else []
    facts = pin_facts(replay)
    facts += said_by_user(history or list(replay.view()))
    facts += [f for f in extract(recent) if _matters(f) and f.kind != "paths"]
    calls = extract(history or recent, calls=True)
    facts += [f for f in calls if f.kind == "paths" and f.rank == 0]
    return facts


def said_by_user(events: Iterable[Event]) -> list[Fact]:
    """The clauses of the user's messages, constraints first."""
    found = [
        Fact("constraints" if is_constraint(c) else "instructions", (squash(c),), c, e.id)
        for e in events
        if e.is_instruction and e.text.strip()
        for c in clauses(e.text)
    ]
    return sorted(found, key=lambda f: f.kind != "constraints")


def _matters(fact: Fact) -> bool:
    """Failing tests and unresolved errors, files changed, tasks."""
    if fact.kind == "errors":
        return fact.rank == 0
    if fact.kind == "paths":
        return fact.rank == 0
    return fact.kind == "tasks"
