"""`condense run`: run the configured condenser and append its condensation.

No `from __future__ import annotations` (see `common`).
"""

import contextlib
import sys
from typing import Annotated

import typer

from condense_cli.cli.common import (
    ConfigOpt,
    DialectOpt,
    LockOpt,
    LogArg,
    SetOpt,
    TypeOpt,
    ViewFormat,
    guarded,
    load_condenser,
    reading,
    say,
    stderr,
    usage_error,
)
from condense_cli.cli.view import print_view
from condense_cli.core.text import plural, sanitize


@guarded
def run(
    log: LogArg,
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
) -> None:
    """Run the configured condenser and append its condensation."""
    if timeout is not None and not 0 < timeout < 1e9:
        raise usage_error(f"--timeout must be a positive number of seconds, not {timeout:g}")
    from rich.text import Text

    from condense_cli.condensers.runner import (
        Feedback,
        describe_forgotten,
        describe_rewrite,
        describe_usage,
        run_condenser,
    )
    from condense_cli.core.events import Condensation
    from condense_cli.core.logfile import STDIN, is_stream
    from condense_cli.core.pins import Pins, read_pins

    condenser = load_condenser(config, type, set)
    texts = [*condenser.pins, *([] if is_stream(log) else read_pins(log))]
    condenser.set_pins(dict.fromkeys(texts))  # the config's, then the log's, each once
    pins = Pins(condenser.pins, tuple(pin_event or ()))
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
    )
    outcome = run_condenser(
        log,
        condenser,
        dialect=dialect,
        dry_run=dry_run,
        force=force,
        lock_timeout=lock_timeout,
        feedback=feedback,
        messages=format is ViewFormat.messages,
        pins=pins,
    )
    result = outcome.result
    if not isinstance(result, Condensation):
        # A condenser that declined (a note, the view untouched) prints nothing on
        # stdout, so `run --dry-run | jq` sees a condensation line or nothing; one
        # that rewrote the view for this step (masking, recent_events) prints it.
        rewrite = describe_rewrite(outcome.before, result)
        if result.note is None or rewrite is not None:
            title = f"{log} after {condenser.name}"
            print_view(result, outcome.replay, format, title, False, conversion=outcome.messages)
        did = f"{rewrite} for this step" if rewrite else None
        if result.note is None and rewrite is None:
            did = "left the view unchanged"
        say(f"{condenser.name}: {'; '.join(filter(None, [result.note, did]))}; nothing appended")
        return
    assert outcome.after is not None and outcome.record is not None
    sizes = f"view {len(outcome.before)} -> {len(outcome.after)}"
    report = (
        f"{condenser.name}: forgot {plural(len(result.forgotten), 'event')} "
        f"({describe_forgotten(outcome.before, result.forgotten)}), {sizes}"
    )
    if result.summary is not None:
        report += f", summary of {len(result.summary):,} chars at offset {result.summary_offset}"
    if result.usage:
        report += ", " + describe_usage(result.usage)
    if outcome.appended:
        say(f"{report}; appended to {log}")
        return
    sys.stdout.flush()
    sys.stdout.buffer.write(outcome.record.body + b"\n")
    sys.stdout.buffer.flush()
    say(f"{report} (dry run: nothing appended)")
