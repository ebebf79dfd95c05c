"""Run a condenser on a log and append what it decides, or append a request.

Each append is one locked read-decide-write step, whatever the dialect
(see `dialects.append_to_log`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from condense_cli.condensers.base import Condenser
from condense_cli.core.events import Condensation, View, apply_condensation
from condense_cli.core.logfile import is_stream
from condense_cli.core.messages import Conversion
from condense_cli.core.text import plural
from condense_cli.dialects import append_to_log, read_log
from condense_cli.dialects.base import Reading, Record, Replay, quiet_reading


@dataclass
class Feedback:
    """What the user sees while a run works: the CLI shows a progress bar while a
    big log is read and a spinner while the condenser (and its model) works."""

    reading: Reading = quiet_reading
    condensing: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext


@dataclass
class RunOutcome:
    """What a run did: the view it saw, the result, and the record it wrote (if any)."""

    replay: Replay
    before: View
    result: View | Condensation
    after: View | None = None
    record: Record | None = None
    appended: bool = False
    messages: Conversion | None = None  # a view result as chat messages, when asked for


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
    dialect: str | None = None,
    dry_run: bool = False,
    force: bool = False,
    lock_timeout: float = 10.0,
    feedback: Feedback | None = None,
    messages: bool = False,
) -> RunOutcome:
    """Build the view, run the condenser, and append its condensation unless `dry_run`.

    With `messages`, a view result is also converted to chat messages (while the
    log is still open: a dialect may read it to convert)."""
    feedback = feedback or Feedback()
    if dry_run or is_stream(path):
        with read_log(path, dialect=dialect, reading=feedback.reading) as replay:
            return _decide(replay, condenser, force, feedback, messages)
    with append_to_log(
        path, dialect=dialect, lock_timeout=lock_timeout, reading=feedback.reading
    ) as replay:
        outcome = _decide(replay, condenser, force, feedback, messages)
        if outcome.record is not None:
            replay.append(outcome.record)
            outcome.appended = True
        return outcome


def _decide(
    replay: Replay, condenser: Condenser, force: bool, feedback: Feedback, messages: bool
) -> RunOutcome:
    view = replay.view()
    if force:
        view = view.with_request()
    with feedback.condensing():
        result = condenser.condense(view)
    if not isinstance(result, Condensation):
        converted = replay.messages(result) if messages else None
        return RunOutcome(replay, view, result, messages=converted)
    record = replay.condensation_record(view, result)
    return RunOutcome(replay, view, result, apply_condensation(view, result), record)


def append_request(
    path: str,
    lock_timeout: float = 10.0,
    feedback: Feedback | None = None,
    dialect: str | None = None,
) -> str:
    """Append a condensation request; return its id."""
    feedback = feedback or Feedback()
    with append_to_log(
        path, dialect=dialect, lock_timeout=lock_timeout, reading=feedback.reading
    ) as replay:
        record = replay.request_record()
        replay.append(record)
        return record.id
