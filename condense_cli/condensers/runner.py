"""Run a condenser on a log and append what it decides, or append a request.

Each append is one locked read-decide-write step, whatever the dialect
(see `dialects.append_to_log`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Any

from condense_cli.condensers.base import Condenser, set_agent_window
from condense_cli.core.errors import CondenserError, ConfigError
from condense_cli.core.events import Condensation, View, apply_condensation
from condense_cli.core.interrupts import time_limit
from condense_cli.core.logfile import is_stream
from condense_cli.core.pins import Pins
from condense_cli.core.text import plural, quote
from condense_cli.dialects import append_to_log, read_log
from condense_cli.dialects.base import Reading, Record, Replay, quiet_reading


@dataclass
class Feedback:
    """What the user sees while a run works: the CLI shows a progress bar while a
    big log is read and a spinner while the condenser (and its model) works.

    `keep` is called with a view result the run `shows_view`, while the log is still
    open: a caller that will show it reads there what it needs of the log (its
    answer is `RunOutcome.kept`)."""

    reading: Reading = quiet_reading
    condensing: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext
    time_limit: float | None = None  # seconds the condenser may take in all (its calls)
    note: Callable[[str], None] = lambda said: None  # a line for the user (stderr)
    keep: Callable[[Replay, View], Any] | None = None


@dataclass
class RunOutcome:
    """What a run did: the view it saw, the result, and the record it wrote (if any)."""

    replay: Replay
    before: View
    result: View | Condensation
    after: View | None = None
    record: Record | None = None
    appended: bool = False
    kept: Any = None  # what `Feedback.keep` kept of a view result to show it
    rewrote: tuple[int, int] = (0, 0)  # what a view result did: events rewritten, dropped

    @property
    def shows_view(self) -> bool:
        """Whether `run` prints its view result: one that changed the view, or that
        came without a note saying why it did nothing."""
        result = self.result
        return isinstance(result, View) and (result.note is None or any(self.rewrote))


def rewrite_counts(before: View, after: View) -> tuple[int, int]:
    """What a view result did to the view: the events it rewrote and dropped."""
    originals = {id(event) for event in before}
    rewritten = sum(1 for event in after if id(event) not in originals)
    return rewritten, max(0, len(before) - len(after))


def run_condenser(
    path: str,
    condenser: Condenser,
    *,
    dialect: str | None = None,
    dry_run: bool = False,
    force: bool = False,
    lock_timeout: float = 10.0,
    feedback: Feedback | None = None,
    pins: Pins | None = None,
) -> RunOutcome:
    """Build the view, run the condenser, and append its condensation unless `dry_run`.

    A condensation keeps `pins` (the config's; the log's are added here), or is refused
    (`keep_pins`). The condenser sees every pin text on the view (`View.pins`)."""
    pins = pins or Pins()
    feedback = feedback or Feedback()
    if dry_run or is_stream(path):
        with read_log(path, dialect=dialect, reading=feedback.reading) as replay:
            return _decide(replay, condenser, force, feedback, pins)
    with append_to_log(
        path, dialect=dialect, lock_timeout=lock_timeout, reading=feedback.reading
    ) as replay:
        outcome = _decide(replay, condenser, force, feedback, pins)
        if outcome.record is not None:
            replay.append(outcome.record)
            outcome.appended = True
        return outcome


def pinned_keys(view: View, pins: Pins) -> set[int]:
    """The keys of the events `pins` names by id (or key); ConfigError for an id
    that no event of the view has."""
    wanted = set(pins.events)
    if not wanted:
        return set()
    pinned = {e.key for e in view if e.key is not None and {str(e.id), str(e.key)} & wanted}
    found = {str(e.id) for e in view if e.key in pinned} | {str(k) for k in pinned}
    missing = sorted(wanted - found)
    if missing:
        raise ConfigError(
            f"--pin-event {missing[0]}: no event of the view has this id",
            hint="give the id `condense view` shows for the event (it must still be in view)",
        )
    return pinned


def keep_pins(view: View, condensation: Condensation, pins: Pins) -> View | Condensation:
    """The condensation with every pinned event (and its pair) kept; refused
    (CondenserError, nothing appended) when it would still drop a pinned text."""
    from condense_cli.condensers.base import close_over_pairs
    from condense_cli.core.pins import dropped, holding

    pinned = pinned_keys(view, pins)
    forgotten = set(condensation.forgotten)
    if forgotten & pinned:
        forgotten = close_over_pairs(view, forgotten - pinned, protect=pinned)
        if not forgotten:
            return view.with_note("every event it would forget is pinned")
        condensation = replace(condensation, forgotten=tuple(sorted(forgotten)))
    lost = dropped(pins.texts, view, apply_condensation(view, condensation).events)
    if lost:
        more = f" (and {plural(len(lost) - 1, 'more pin')})" if len(lost) > 1 else ""
        held = [e for e in holding(lost[0], view) if e.key in forgotten]
        ids = [str(e.id) for e in held[:5]]
        where = f", held by event{'s' if len(held) > 1 else ''} #{', #'.join(ids)}" if ids else ""
        keep = " ".join(f"--pin-event {i}" for i in ids)
        raise CondenserError(
            f"the condensation would drop the pin {quote(lost[0])}{more}{where}: nothing appended",
            hint=(
                f"keep {'them' if len(ids) > 1 else 'it'} with `{keep}`, or use a "
                "summarising condenser, which carries pins verbatim"
                if ids
                else "a summarising condenser carries pins verbatim"
            ),
        )
    return condensation


def _decide(
    replay: Replay,
    condenser: Condenser,
    force: bool,
    feedback: Feedback,
    pins: Pins,
) -> RunOutcome:
    # the config's pins, then the log's (in it, or beside it), each once
    pins = replace(pins, texts=tuple(dict.fromkeys([*pins.texts, *replay.pins()])))
    adopted = adopt_session_model(condenser, replay)
    if adopted is not None:
        feedback.note(adopted)
    set_agent_window(condenser, replay.model)
    view = replace(replay.view(), pins=pins.texts)
    pinned_keys(view, pins)  # an unknown id is refused before the condenser runs
    if force:
        view = view.with_request()
    with feedback.condensing(), time_limit(feedback.time_limit, "the condenser"):
        result = condenser.condense(view)
    if isinstance(result, Condensation) and pins:
        result = keep_pins(view, result, pins)
    if not isinstance(result, Condensation):
        outcome = RunOutcome(replay, view, result, rewrote=rewrite_counts(view, result))
        if feedback.keep is not None and outcome.shows_view:
            outcome.kept = feedback.keep(replay, result)
        return outcome
    record = replay.condensation_record(view, result)
    return RunOutcome(replay, view, result, apply_condensation(view, result), record)


def adopt_session_model(condenser: Condenser, replay: Replay) -> str | None:
    """With no model named for a summarising condenser, the model the session itself
    ran on, at the provider its client sent it to, when that provider's key is set
    (the session goes nowhere it has not been): what was chosen, in words; None when
    nothing was (a model is named, or none can be: the call is refused then)."""
    import os

    from condense_cli.condensers.base import model_stages
    from condense_cli.llm.client import KEY_VARIABLES

    unnamed = [stage for stage in model_stages(condenser) if not stage.llm.model]
    provider, model = replay.provider, replay.model
    if not unnamed or provider is None or not model:
        return None
    key = next((v for v in KEY_VARIABLES.get(provider, ()) if os.environ.get(v)), None)
    if key is None:
        return None
    chosen = f"{provider}/{model}"
    for stage in unnamed:
        stage.llm = replace(stage.llm, model=chosen)
    return (
        f"no [llm] model is named: summarising with {chosen}, the model this session ran "
        f"on, at the provider its client sent it to ({key} is set)"
    )


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
