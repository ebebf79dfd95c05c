"""Run a condenser on a log and append what it decides, or append a request.

Each append is one locked read-decide-write step (see `log.locked_log`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

import orjson

from condense_cli.condensers.base import Condenser
from condense_cli.dialects.openhands_v0 import condensation_event, request_event
from condense_cli.log import STDIN, LogSource, locked_log
from condense_cli.model import Condensation, View, apply_condensation
from condense_cli.scan import LogIndex, scan_log
from condense_cli.view import build_view


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
    if dry_run or path == STDIN:
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
        view = view.with_request()
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
