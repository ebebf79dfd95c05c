"""`condense run`: run the configured condenser and append its condensation.

No `from __future__ import annotations` (see `options`).
"""

import contextlib
import sys
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Annotated

import orjson
import typer
from rich.text import Text

from condense_cli.cli.guard import guarded, usage_error
from condense_cli.cli.options import (
    ConfigOpt,
    DialectOpt,
    LockOpt,
    SetOpt,
    TypeOpt,
    local_paths,
)
from condense_cli.cli.output import print_notes, reading, stderr
from condense_cli.condensers.runner import Feedback, run_condenser
from condense_cli.config.loading import configured_condenser
from condense_cli.core.errors import CondenseError
from condense_cli.core.events import Condensation
from condense_cli.core.logfile import STDIN, is_stream
from condense_cli.core.pins import Pins
from condense_cli.core.text import plural, sanitize
from condense_cli.dialects.discovery import find_logs
from condense_cli.terminal.outcomes import describe_condensation, describe_rewrite
from condense_cli.terminal.output import say
from condense_cli.terminal.views import ViewFormat, print_view

if TYPE_CHECKING:
    from condense_cli.core.events import View
    from condense_cli.dialects.base import Replay
    from condense_cli.dialects.discovery import Found
    from condense_cli.llm.messages import Conversion


@guarded
def run(
    logs: Annotated[
        list[str],
        typer.Argument(
            metavar="LOG...",
            callback=local_paths,
            help="The session log (JSONL), a conversation folder, or - for standard input; "
            "with --all, several logs or trees searched for logs.",
        ),
    ],
    config: ConfigOpt = None,
    type: TypeOpt = None,
    set: SetOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the condensation line instead of appending it.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Act as if a condensation request were pending.")
    ] = False,
    format: Annotated[
        ViewFormat, typer.Option("--format", "-f", help="Format of a rewritten view.")
    ] = ViewFormat.text,
    lock_timeout: LockOpt = 10.0,
    dialect: DialectOpt = None,
    pin_event: Annotated[
        list[str] | None,
        typer.Option(
            "--pin-event",
            metavar="ID",
            help="Never forget this event (and its pair); repeatable.",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            help="Seconds the condenser may take in all (every model call); "
            "past them, nothing is appended (exit 3).",
        ),
    ] = None,
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Condense every log named or found in the trees, each under its own lock, "
            "a line per log; exit with the first failure's code.",
        ),
    ] = False,
    max_concurrency: Annotated[
        int,
        typer.Option(
            "--max-concurrency",
            metavar="N",
            min=1,
            help="With --all, logs condensed at once (model calls in flight; a rate "
            "limit's 429 is retried with backoff, as num_retries allows).",
        ),
    ] = 4,
) -> None:
    """Run the configured condenser and append its condensation."""
    if timeout is not None and not 0 < timeout < 1e9:
        raise usage_error(f"--timeout must be a positive number of seconds, not {timeout:g}")

    found = find_logs(logs, dialect)
    if every or found.logs != logs:
        if not every:
            raise usage_error(
                f"{plural(len(found.logs), 'log')} to condense: add --all to condense each"
            )
        if timeout is not None:
            raise usage_error(
                "--timeout is for one log; with --all the [llm] timeout bounds each call"
            )
        settings = RunSettings(config, type, set, dry_run, force, lock_timeout, dialect, pin_event)
        run_all(found, settings, max_concurrency)
        return
    log = found.logs[0]

    configured = configured_condenser(config, type, set)
    print_notes(configured.notes)
    condenser = configured.condenser

    err = stderr()
    if is_stream(log) and not dry_run:
        what = "standard input" if log == STDIN else f"{log} is not a regular file: it"
        say(f"{what} cannot be appended to: printing the condensation instead")
        dry_run = True
    label = Text(sanitize(f"{condenser.name}: condensing {log} …", one_line=True))
    feedback = Feedback(
        reading=reading("reading"),
        condensing=(lambda: err.status(label)) if err.is_terminal else contextlib.nullcontext,
        time_limit=timeout,
        note=say,
        keep=partial(keep_to_print, format),
    )
    outcome = run_condenser(
        log,
        condenser,
        dialect=dialect,
        dry_run=dry_run,
        force=force,
        lock_timeout=lock_timeout,
        feedback=feedback,
        pins=Pins(configured.pins, tuple(pin_event or ())),
    )
    result = outcome.result
    if not isinstance(result, Condensation):
        # A condenser that declined (a note, the view untouched) prints nothing on
        # stdout, so `run --dry-run | jq` sees a condensation line or nothing; one
        # that rewrote the view for this step (masking, recent_events) prints it.
        rewrite = describe_rewrite(outcome)
        if outcome.shows_view:
            title = f"{log} after {condenser.name}"
            print_view(result, outcome.replay, format, title, False, conversion=outcome.kept)
        did = f"{rewrite} for this step" if rewrite else None
        if result.note is None and rewrite is None:
            did = "left the view unchanged"
        say(f"{condenser.name}: {'; '.join(filter(None, [result.note, did]))}; nothing appended")
        return
    assert outcome.record is not None
    report = describe_condensation(condenser.name, outcome)
    if outcome.appended:
        say(f"{report}; appended to {log}")
        return
    sys.stdout.flush()
    sys.stdout.buffer.write(outcome.record.body + b"\n")
    sys.stdout.buffer.flush()
    say(f"{report} (dry run: nothing appended)")


def keep_to_print(format: ViewFormat, replay: "Replay", view: "View") -> "Conversion | None":
    """What `run` prints of a view result, read while the log is open: its chat
    messages for `-f messages`, else the events' texts (`Replay.hold`)."""
    if format is ViewFormat.messages:
        replay.require("converts_messages")
        return replay.messages(view)
    replay.hold(view)
    return None


@dataclass(frozen=True)
class RunSettings:
    """What `run --all` does to each log."""

    config: str | None
    type: str | None
    sets: list[str] | None
    dry_run: bool
    force: bool
    lock_timeout: float
    dialect: str | None
    pin_event: list[str] | None


@dataclass(frozen=True)
class LogRun:
    """One log's run: the line that tells it, the record a dry run would append, and
    the exit code of its failure (0: none)."""

    line: str
    record: bytes | None = None
    code: int = 0
    appended: bool = False  # or, in a dry run, would be


def run_all(found: "Found", settings: RunSettings, concurrency: int) -> None:
    """Condense each log on up to `concurrency` threads (the work waits on the model),
    a line per log on stderr in the logs' order; a dry run prints the records as
    JSON lines `{"log", "record"}`. Exit with the first failure's code."""
    from concurrent.futures import ThreadPoolExecutor

    # the configuration is checked, and its notes said, once
    print_notes(configured_condenser(settings.config, settings.type, settings.sets).notes)
    first_failure = failed = appended = 0
    executor = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="condense-run")
    try:
        for done in executor.map(lambda log: run_one(log, settings), found.logs):
            say(done.line)
            if done.record is not None:
                sys.stdout.buffer.write(done.record)
                sys.stdout.buffer.flush()
            appended += done.appended
            failed += done.code != 0
            first_failure = first_failure or done.code
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
    for line in found.says():
        say(line)
    if not found.logs:
        raise usage_error("no log found in what was given")
    verb = "would append to" if settings.dry_run else "appended to"
    tally = f"{appended:,} of {plural(len(found.logs), 'log')}"
    say(f"run --all: {verb} {tally}" + (f"; {failed:,} failed" if failed else ""))
    if first_failure:
        raise typer.Exit(first_failure)


def run_one(log: str, settings: RunSettings) -> LogRun:
    """One log of `run --all` (in a thread): condensed, or why not."""

    try:
        configured = configured_condenser(settings.config, settings.type, settings.sets)
        condenser = configured.condenser
        pins = Pins(configured.pins, tuple(settings.pin_event or ()))
        outcome = run_condenser(
            log,
            condenser,
            dialect=settings.dialect,
            dry_run=settings.dry_run,
            force=settings.force,
            lock_timeout=settings.lock_timeout,
            pins=pins,
        )
    except CondenseError as exc:
        hint = f" ({exc.hint})" if exc.hint else ""
        return LogRun(f"{log}: Error: {exc.message}{hint}", code=exc.exit_code)
    result = outcome.result
    if not isinstance(result, Condensation):
        rewrite = describe_rewrite(outcome)
        did = result.note or (f"{rewrite} for this step" if rewrite else "left the view unchanged")
        return LogRun(f"{log}: {condenser.name}: {did}; nothing appended")
    report = f"{log}: {describe_condensation(condenser.name, outcome)}"
    if outcome.appended:
        return LogRun(f"{report}; appended", appended=True)
    assert outcome.record is not None
    name = orjson.dumps(outcome.replay.path)
    line = b'{"log":' + name + b',"record":' + outcome.record.body + b"}\n"
    return LogRun(f"{report} (dry run: nothing appended)", line, appended=True)
