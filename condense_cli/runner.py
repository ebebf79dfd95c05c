"""Run a condenser on a log and append what it decides, or append a request.

Each append is one locked read-decide-write step (see `log.locked_log`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from condense_cli.condensers.base import Condensation, Condenser, apply_condensation
from condense_cli.log import LogSource, is_stream, locked_log
from condense_cli.scan import LogIndex, scan_log
from condense_cli.text import plural
from condense_cli.view import View, build_view


def _quiet_reading(source: LogSource) -> AbstractContextManager[None]:
    return contextlib.nullcontext()


@dataclass
class Feedback:
    """What the user sees while a run works: the CLI shows a progress bar while a
    big log is read and a spinner while the condenser (and its model) works."""

    reading: Callable[[LogSource], AbstractContextManager[None]] = _quiet_reading
    condensing: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext


@dataclass
class RunOutcome:
    """What a run did: the view it saw, the result, and the line it wrote (if any)."""

    index: LogIndex
    before: View
    result: View | Condensation
    after: View | None = None
    line: bytes | None = None
    appended: bool = False


def condensation_event(event_id: int, condensation: Condensation, view: View) -> dict[str, Any]:
    """The condensation event to append, in OpenHands' serialisation."""
    args = condensation.args(view)
    count = len(condensation.forgotten_ids)
    message = f"Forgot {plural(count, 'event')} ({describe_ids(condensation.forgotten_ids)})"
    if condensation.summary is not None:
        message += " and summarised them"
    return {
        "id": event_id,
        "timestamp": datetime.now().isoformat(),
        "source": "agent",
        "message": message,
        "action": "condensation",
        "args": args,
    }


def request_event(event_id: int) -> dict[str, Any]:
    """A condensation request event."""
    return {
        "id": event_id,
        "timestamp": datetime.now().isoformat(),
        "source": "agent",
        "message": "Requesting a condensation of the conversation history",
        "action": "condensation_request",
        "args": {},
    }


def describe_ids(ids: tuple[int, ...] | list[int], limit: int = 6) -> str:
    """`ids 2..61` or `ids 2, 4, 7..9` for a report line."""
    runs: list[tuple[int, int]] = []
    for i in sorted(ids):
        if runs and runs[-1][1] + 1 == i:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    parts = [f"{a}..{b}" if b > a else str(a) for a, b in runs[:limit]]
    more = f", … ({len(runs) - limit} more runs)" if len(runs) > limit else ""
    return "ids " + ", ".join(parts) + more


def describe_rewrite(before: View, after: View) -> str | None:
    """What a view result did for this step (`rewrote 3 of 14 events`, `dropped 9 of
    14 events`, or both), or None when it left every event as it was."""
    originals = {id(event) for event in before}
    rewritten = sum(1 for event in after if id(event) not in originals)
    dropped = max(0, len(before) - len(after))
    done = [f"{verb} {n:,}" for verb, n in (("rewrote", rewritten), ("dropped", dropped)) if n]
    if not done:
        return None
    return f"{' and '.join(done)} of {plural(len(before), 'event')}"


def run_condenser(
    path: str,
    condenser: Condenser,
    *,
    dry_run: bool = False,
    force: bool = False,
    lock_timeout: float = 10.0,
    feedback: Feedback | None = None,
) -> RunOutcome:
    """Build the view, run the condenser, and append its condensation unless `dry_run`."""
    feedback = feedback or Feedback()
    if dry_run or is_stream(path):
        with LogSource.open(path) as source:
            with feedback.reading(source):
                index = scan_log(source)
            return _decide(source, index, condenser, force, feedback)
    with locked_log(path, lock_timeout) as locked, locked.open_source() as source:
        with feedback.reading(source):
            index = scan_log(source)
        outcome = _decide(source, index, condenser, force, feedback)
        if outcome.line is not None:
            locked.append_line(outcome.line, index.size)
            outcome.appended = True
        return outcome


def _decide(
    source: LogSource, index: LogIndex, condenser: Condenser, force: bool, feedback: Feedback
) -> RunOutcome:
    view = build_view(source, index)
    if force:
        view.unhandled_request = True
    with feedback.condensing():
        result = condenser.condense(view)
    if not isinstance(result, Condensation):
        return RunOutcome(index, view, result)
    event = condensation_event(index.max_id + 1, result, view)
    return RunOutcome(index, view, result, apply_condensation(view, result), orjson.dumps(event))


def append_request(path: str, lock_timeout: float = 10.0, feedback: Feedback | None = None) -> int:
    """Append a condensation request; return its id."""
    feedback = feedback or Feedback()
    with locked_log(path, lock_timeout) as locked, locked.open_source() as source:
        with feedback.reading(source):
            index = scan_log(source)
        event_id = index.max_id + 1
        locked.append_line(orjson.dumps(request_event(event_id)), index.size)
        return event_id
