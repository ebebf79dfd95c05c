"""What a run did, in words: the condensation it made (what it forgot, the summary,
what its model calls cost) or what a view result did to the view."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from condense_cli.core.intervals import describe_ids
from condense_cli.core.text import plural

if TYPE_CHECKING:
    from condense_cli.condensers.runner import RunOutcome
    from condense_cli.core.events import View


def describe_rewrite(outcome: RunOutcome) -> str | None:
    """What a view result did for this step (`rewrote 3 of 14 events`, `dropped 9 of
    14 events`, or both), or None when it left every event as it was."""
    rewritten, dropped = outcome.rewrote
    before = outcome.before
    done = [f"{verb} {n:,}" for verb, n in (("rewrote", rewritten), ("dropped", dropped)) if n]
    if not done:
        return None
    return f"{' and '.join(done)} of {plural(len(before), 'event')}"


ID_CHARS = 12  # ids longer than this (uuids) are reported by position


def describe_forgotten(view: View, forgotten: tuple[int, ...]) -> str:
    """The forgotten events by the ids the log shows: `ids 2..61` (runs of keys when
    ids are keys, as in V0; runs of neighbouring events, first..last id, when ids are
    short; `positions 177..202` when they are uuids)."""
    events = [e for e in view if e.key is not None]
    if all(e.id == e.key for e in events):
        return describe_ids(forgotten)
    if any(len(str(e.id)) > ID_CHARS for e in events):  # uuids: positions read better
        return "positions " + describe_ids(forgotten).removeprefix("ids ")
    gone = set(forgotten)
    numbers = [e.id for e in events if isinstance(e.id, int)]
    if len(numbers) == len(events) and numbers != sorted(numbers):
        # numbers out of order in the view (Gemini CLI's re-listed messages): their runs
        return describe_ids(n for e, n in zip(events, numbers, strict=True) if e.key in gone)
    runs: list[list[object]] = []
    previous = False
    for event in events:
        if event.key in gone:
            if previous:
                runs[-1][1] = event.id
            else:
                runs.append([event.id, event.id])
        previous = event.key in gone
    shown = [f"{a}..{b}" if a != b else str(a) for a, b in runs[:6]]
    more = f", … ({len(runs) - 6} more runs)" if len(runs) > 6 else ""
    return "ids " + ", ".join(shown) + more


def describe_usage(usage: dict[str, Any]) -> str:
    """`model m, 1,200 prompt + 300 completion tokens, $0.0004` (with the number of
    calls when the prompt took several, and what the condenser noted)."""
    calls = usage.get("calls")
    text = f"model {usage.get('model')}, " + (f"{calls} calls, " if calls else "")
    text += (
        f"{usage.get('prompt_tokens', 0):,} prompt + "
        f"{usage.get('completion_tokens', 0):,} completion tokens"
    )
    if calls:
        text += f" (the largest prompt {usage.get('largest_prompt_tokens', 0):,})"
    cost = usage.get("cost")
    text += f", ${cost:.4f}" if cost else ", cost unknown"
    facts = usage.get("facts")
    if facts:
        text += f", kept {facts['kept']:,} of {plural(facts['total'], 'fact')}"
        if facts["asked_again_naming"]:
            text += f" (asked again naming {facts['asked_again_naming']:,} it lost)"
    for note in usage.get("notes") or ():
        text += f"; {note}"
    return text


def describe_condensation(name: str, outcome: RunOutcome) -> str:
    """What a condensation forgot and put in its place, and what its model calls cost."""
    from condense_cli.core.events import Condensation

    result = outcome.result
    assert isinstance(result, Condensation) and outcome.after is not None
    sizes = f"view {len(outcome.before)} -> {len(outcome.after)}"
    report = (
        f"{name}: forgot {plural(len(result.forgotten), 'event')} "
        f"({describe_forgotten(outcome.before, result.forgotten)}), {sizes}"
    )
    if result.summary is not None:
        report += f", summary of {len(result.summary):,} chars at offset {result.summary_offset}"
    if result.usage:
        report += ", " + describe_usage(result.usage)
    return report
