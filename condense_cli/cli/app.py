"""The typer app: parse options, call the core, render, map errors to exit codes.

Start-up is kept to what the command needs. The core (dialects, replay, render)
is imported by the commands that read a log, so `--version` and `--help` do
without it; rich only where something is drawn with it (~30 ms to import: the
text view on a terminal, tables, messages on stderr), never for piped output or
JSON. No `from __future__ import annotations` here: typer evaluates every
command's annotations at each start, and strings cost ~4 ms more to evaluate.
"""

import contextlib
import functools
import io
import math
import os
import signal
import sys
import traceback
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import orjson
import typer
from typer.core import TyperCommand, TyperOption

from condense_cli import __version__
from condense_cli.core.errors import CondenseError, OutputError
from condense_cli.core.interrupts import INTERRUPTED, quit_now
from condense_cli.core.jsonlines import encode
from condense_cli.core.redact import mask
from condense_cli.core.text import plural, sanitize
from condense_cli.terminal.output import install_stdout, silence_stdout, stderr_may_be_a_terminal

if TYPE_CHECKING:
    from rich.console import Console

    from condense_cli.core.events import Problem, View
    from condense_cli.core.messages import Conversion
    from condense_cli.dialects.base import Gap, Reading, Replay

app = typer.Typer(
    name="condense",
    help="Replay, check and condense the event logs of AI coding agents.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

_state = {"debug": False}
MESSAGE_CHARS = 1000
F = TypeVar("F", bound=Callable[..., Any])


def _set_debug(ctx: Any, param: Any, value: bool) -> bool:
    if value:
        _state["debug"] = True
    return value


class _Command(TyperCommand):
    """A command whose usage line reads `condense view [OPTIONS] LOG` (typer writes
    `{LOG}`), and which takes --debug after its name as well as before it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.append(
            TyperOption(
                param_decls=["--debug"],
                is_flag=True,
                default=False,
                expose_value=False,
                is_eager=True,
                callback=_set_debug,
                help="Show the traceback of unexpected errors.",
            )
        )

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = super().collect_usage_pieces(ctx)
        return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in pieces]


class ViewFormat(StrEnum):
    text = "text"
    json = "json"
    jsonl = "jsonl"
    messages = "messages"


class StatsFormat(StrEnum):
    text = "text"
    json = "json"


LogArg = Annotated[
    str,
    typer.Argument(
        metavar="LOG",
        help="The session log (JSONL), a conversation folder, or - for standard input.",
    ),
]
ConfigOpt = Annotated[
    str | None,
    typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help="config.toml to use (default: $CONDENSE_CONFIG, ./config.toml).",
    ),
]
TypeOpt = Annotated[
    str | None,
    typer.Option(
        "--type", "-t", metavar="TYPE", help="Condenser type, replacing [condenser].type."
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        "-s",
        metavar="KEY=VALUE",
        help="Override a key; VALUE is parsed as TOML. Repeatable.",
    ),
]


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise typer.BadParameter(f"must be a finite number of seconds, not {value}")
    return value


LockOpt = Annotated[
    float,
    typer.Option(
        "--lock-timeout",
        metavar="SECONDS",
        envvar="CONDENSE_LOCK_TIMEOUT",
        min=0,
        callback=_finite,
        help="Seconds to wait for the log's lock before giving up (exit 4).",
    ),
]
UptoOpt = Annotated[
    str | None,
    typer.Option(
        "--upto",
        metavar="ID",
        help="Replay only up to this event: its id (V0: ids <= ID) or its position.",
    ),
]
DialectOpt = Annotated[
    str | None,
    typer.Option(
        "--dialect",
        "-d",
        metavar="NAME",
        help="The log's format, when detection gets it wrong (e.g. openhands-v0).",
    ),
]


def _stderr() -> "Console":
    from condense_cli.terminal.consoles import stderr_console

    return stderr_console()


def _say(message: str) -> None:
    """One line for people on stderr: secrets masked, names and values made safe,
    and never more than MESSAGE_CHARS (values are quoted short where they are named;
    this is the net under that)."""
    line = sanitize(mask(message), one_line=True)
    if len(line) > MESSAGE_CHARS:
        half = MESSAGE_CHARS // 2
        line = f"{line[:half]} … {line[-half:]}"
    if stderr_may_be_a_terminal():
        _stderr().print(line, markup=False)
    else:  # no terminal: the line as it is, without importing rich
        sys.stderr.write(line + "\n")


def _fail(message: str, hint: str | None, code: int) -> typer.Exit:
    _say(f"Error: {message}")
    if hint:
        _say(f"Hint: {hint}")
    return typer.Exit(code)


def guarded(command: F) -> F:
    """Turn core errors into one message and an exit code; never a traceback.

    A closed pipe on stdout (`condense check | head`) never changes a verdict.
    Every command but `check` writes to stdout only once its verdict is settled
    (errors are raised before any output), so a closed pipe ends it with that
    verdict: 0. `check` writes as it goes, so it carries on silently and exits 1
    if a log failed (see `_emit`). Ctrl-C exits 130 without a traceback.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except OutputError as exc:
            silence_stdout()
            raise _fail(exc.message, exc.hint, exc.exit_code) from None
        except CondenseError as exc:
            raise _fail(exc.message, exc.hint, exc.exit_code) from None
        except BrokenPipeError:
            silence_stdout()
            raise typer.Exit(0) from None
        except KeyboardInterrupt:
            raise typer.Exit(INTERRUPTED) from None
        except (typer.Exit, typer.Abort):
            raise
        except Exception as exc:
            if _state["debug"]:
                sys.stderr.write(sanitize(mask(traceback.format_exc())))
            raise _fail(
                f"unexpected {type(exc).__name__}: {exc}",
                "this is a bug in condense; rerun with --debug for the traceback and report it",
                1,
            ) from None

    return wrapper  # type: ignore[return-value]


def _emit(line: str) -> None:
    """Print one line of `check` output; after a closed pipe, keep checking silently."""
    try:
        typer.echo(line)
    except BrokenPipeError:
        silence_stdout()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"condense {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the traceback of unexpected errors.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Replay, check and condense the event logs of AI coding agents."""
    _state["debug"] = debug  # the command's own --debug, parsed after this, may set it too


@app.command(cls=_Command)
@guarded
def view(
    log: LogArg,
    format: Annotated[
        ViewFormat,
        typer.Option(
            "--format",
            "-f",
            help="text for people, json/jsonl for scripts, messages: the chat messages "
            "the agent sends for the view.",
        ),
    ] = ViewFormat.text,
    upto: UptoOpt = None,
    full: Annotated[
        bool, typer.Option("--full", help="Show whole event texts, not previews.")
    ] = False,
    no_pager: Annotated[
        bool,
        typer.Option(
            "--no-pager", help="On a terminal, print long text output instead of paging it."
        ),
    ] = False,
    dialect: DialectOpt = None,
) -> None:
    """Replay every condensation and print what the model sees.

    On a terminal, text that does not fit on the screen is paged through $PAGER
    (default: less -R), unless --no-pager.
    """
    from condense_cli.dialects import read_log

    with read_log(log, dialect=dialect, upto=upto, reading=_reading("reading")) as replay:
        if format is ViewFormat.jsonl:
            sys.stdout.flush()
            sys.stdout.buffer.writelines(replay.view_lines())
            sys.stdout.buffer.flush()
            return
        current = replay.view()
        gaps = replay.gaps()
        conversion = replay.messages(current) if format is ViewFormat.messages else None
    title = replay.path if upto is None else f"{replay.path} (up to {upto})"
    _print_view(
        current, replay, format, title, full, gaps=gaps, page=not no_pager, conversion=conversion
    )


def _say_changes(title: str, events: int, conversion: "Conversion") -> None:
    """One line on stderr when the messages are not the view one for one."""
    parts = [
        f"{what} {plural(len(changes), noun)}"
        for what, changes, noun in (
            ("dropped", conversion.dropped, "event"),
            ("put in", conversion.inserted, "message"),
            ("approximated", conversion.approximated, "message"),
        )
        if changes
    ]
    if parts:
        counted = f"{plural(len(conversion.messages), 'message')} from {plural(events, 'event')}"
        _say(f"{title}: {counted}; the conversion {', '.join(parts)} (see condense stats -f json)")


def _reading(description: str) -> "Reading":
    """A progress bar while a big log is read (only when stderr is a terminal)."""
    from condense_cli.terminal.progress import progress

    return lambda source: progress(source, description)


def _print_view(
    current: "View",
    replay: "Replay",
    format: ViewFormat,
    title: str,
    full: bool,
    *,
    gaps: "list[Gap] | None" = None,
    page: bool = False,
    conversion: "Conversion | None" = None,
) -> None:
    """Print a view in the chosen format: rich on a terminal (paged when `page` and
    longer than the screen), plain when piped; `conversion` is the view as messages."""
    from condense_cli.terminal.render import (
        header_line,
        print_rich,
        view_json,
        write_jsonl,
        write_plain,
    )

    if format is not ViewFormat.text:
        sys.stdout.flush()
        if conversion is not None:
            sys.stdout.buffer.write(encode(conversion.messages, indent=True))
            sys.stdout.buffer.write(b"\n")
            _say_changes(title, len(current), conversion)
        elif format is ViewFormat.json:
            sys.stdout.buffer.write(view_json(current, replay) + b"\n")
        else:
            write_jsonl((event.to_json() for event in current), sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    header = header_line(current, replay, title)
    if not sys.stdout.isatty():
        write_plain(current, sys.stdout, header, full, gaps)
        return
    from rich.console import Console

    from condense_cli.terminal.consoles import StdoutConsole

    console = StdoutConsole(highlight=False)
    if not page:
        print_rich(current, console, header, full, gaps)
        return
    from condense_cli.terminal.pager import show

    rendered = Console(
        file=io.StringIO(),
        force_terminal=True,
        color_system=console.color_system,
        width=console.width,
        highlight=False,
    )
    print_rich(current, rendered, header, full, gaps)
    show(rendered.file.getvalue(), console.height)


@app.command(cls=_Command)
@guarded
def check(
    logs: Annotated[
        list[str], typer.Argument(metavar="LOG...", help="Logs to check (- for standard input).")
    ],
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail on warnings too, not only on errors.")
    ] = False,
    dialect: DialectOpt = None,
) -> None:
    """Validate logs and their condensations.

    One `file:line: message` per problem; exit 1 on errors (or warnings with --strict).
    """
    from condense_cli.dialects import read_log

    failed = 0
    problems = 0
    dialects: set[str] = set()
    for path in logs:
        try:
            with read_log(
                path, dialect=dialect, collect=True, reading=_reading(f"checking {path}")
            ) as replay:
                name = replay.path
                dialects.add(replay.dialect)
                found = replay.problems + ([] if replay.errors else _lost_context(replay))
        except CondenseError as exc:
            _emit(sanitize(mask(exc.message), one_line=True))
            failed += 1
            problems += 1
            continue
        for problem in found:
            prefix = "warning: " if problem.severity == "warning" else ""
            _emit(sanitize(f"{problem.where(name)}: {prefix}{problem.message}", one_line=True))
        if replay.generation is not None:
            why = replay.generation_reason
            _say(f"{name}: replayed as the {replay.generation} showed it ({why})")
        problems += len(found)
        bad = replay.errors or (strict and found)
        failed += 1 if bad else 0
    if failed:
        counted = plural(problems, "problem")
        _say(f"{failed} of {plural(len(logs), 'log')} failed the check ({counted})")
        raise typer.Exit(1)
    notes = [", ".join(sorted(dialects))] + ([plural(problems, "warning")] if problems else [])
    _say(f"{plural(len(logs), 'log')} ok ({'; '.join(notes)})")


def _lost_context(replay: "Replay") -> "list[Problem]":
    """Warnings for what the conversion to messages drops: context the model
    silently loses (a tool result without its call, a call without its result)."""
    from condense_cli.core.events import Problem

    return [
        Problem(change.line, f"the model never sees this: {change.reason}", "warning", change.path)
        for change in replay.messages(replay.view()).lost
    ]


@app.command(cls=_Command)
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
) -> None:
    """Run the configured condenser and append its condensation."""
    from rich.text import Text

    from condense_cli.condensers.runner import Feedback, describe_rewrite, run_condenser
    from condense_cli.core.events import Condensation
    from condense_cli.core.logfile import STDIN, is_stream

    condenser = _load_condenser(config, type, set)
    err = _stderr()
    if is_stream(log) and not dry_run:
        what = "standard input" if log == STDIN else f"{log} is not a regular file: it"
        _say(f"{what} cannot be appended to: printing the condensation instead")
        dry_run = True
    label = Text(sanitize(f"{condenser.name}: condensing {log} …", one_line=True))
    feedback = Feedback(
        reading=_reading("reading"),
        condensing=(lambda: err.status(label)) if err.is_terminal else contextlib.nullcontext,
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
    )
    result = outcome.result
    if not isinstance(result, Condensation):
        # A condenser that declined (a note, the view untouched) prints nothing on
        # stdout, so `run --dry-run | jq` sees a condensation line or nothing; one
        # that rewrote the view for this step (masking, recent_events) prints it.
        rewrite = describe_rewrite(outcome.before, result)
        if result.note is None or rewrite is not None:
            title = f"{log} after {condenser.name}"
            _print_view(result, outcome.replay, format, title, False, conversion=outcome.messages)
        did = f"{rewrite} for this step" if rewrite else None
        if result.note is None and rewrite is None:
            did = "left the view unchanged"
        _say(f"{condenser.name}: {'; '.join(filter(None, [result.note, did]))}; nothing appended")
        return
    assert outcome.after is not None and outcome.record is not None
    sizes = f"view {len(outcome.before)} -> {len(outcome.after)}"
    report = (
        f"{condenser.name}: forgot {plural(len(result.forgotten), 'event')} "
        f"({_describe_forgotten(outcome.before, result.forgotten)}), {sizes}"
    )
    if result.summary is not None:
        report += f", summary of {len(result.summary):,} chars at offset {result.summary_offset}"
    if result.usage:
        report += ", " + _usage_text(result.usage)
    if outcome.appended:
        _say(f"{report}; appended to {log}")
        return
    sys.stdout.flush()
    sys.stdout.buffer.write(outcome.record.body + b"\n")
    sys.stdout.buffer.flush()
    _say(f"{report} (dry run: nothing appended)")


@app.command(cls=_Command)
@guarded
def request(log: LogArg, lock_timeout: LockOpt = 10.0, dialect: DialectOpt = None) -> None:
    """Append a condensation_request event to the log."""
    from condense_cli.condensers.runner import Feedback, append_request

    feedback = Feedback(reading=_reading("reading"))
    event_id = append_request(log, lock_timeout, feedback, dialect)
    _say(f"appended condensation request {event_id} to {log}")


@app.command("config", cls=_Command)
@guarded
def show_config(config: ConfigOpt = None, type: TypeOpt = None, set: SetOpt = None) -> None:
    """Print the effective configuration as TOML.

    Defaults are filled in and secrets are printed as "***". The output reads back
    unchanged with --config.
    """
    import tomli_w

    from condense_cli.config.loading import effective_config, load_settings

    settings = load_settings(config, type, set)
    _print_notes(settings.notes)
    table = _with_source(settings.path, lambda: effective_config(settings))
    if settings.path is not None:
        _say(f"configuration read from {settings.path}")
    typer.echo(tomli_w.dumps(table), nl=False)


@app.command(cls=_Command)
@guarded
def stats(
    log: LogArg,
    format: Annotated[
        StatsFormat, typer.Option("--format", "-f", help="text (a table) or json.")
    ] = StatsFormat.text,
    tokens: Annotated[
        bool,
        typer.Option("--tokens/--no-tokens", help="Count tokens with the [llm] model's tokenizer."),
    ] = True,
    config: ConfigOpt = None,
    dialect: DialectOpt = None,
) -> None:
    """Events, characters and tokens of a log against its view.

    Also events and bytes by type, and what each condensation forgot.
    """
    from condense_cli.config.loading import LLMTables, load_settings
    from condense_cli.dialects import read_log
    from condense_cli.llm.tokens import tokenizer_for

    tokenizer = None
    if tokens:
        settings = load_settings(config)
        model = _with_source(settings.path, lambda: LLMTables(settings.llm).default.model)
        tokenizer = tokenizer_for(model)
    from condense_cli.core.messages import message_numbers

    with read_log(log, dialect=dialect, reading=_reading("reading")) as replay:
        numbers = replay.stats(tokenizer, _reading("counting"))
        numbers["messages"] = message_numbers(replay.messages(replay.view()), tokenizer)
    if format is StatsFormat.json:
        typer.echo(orjson.dumps(numbers, option=orjson.OPT_INDENT_2).decode())
    else:
        from condense_cli.terminal.consoles import StdoutConsole
        from condense_cli.terminal.render import print_stats

        print_stats(numbers, StdoutConsole(highlight=False))


@app.command(cls=_Command)
@guarded
def audit(
    logs: Annotated[
        list[str],
        typer.Argument(metavar="LOG...", help="Logs to audit (- for standard input)."),
    ],
    format: Annotated[
        StatsFormat, typer.Option("--format", "-f", help="text (tables) or json.")
    ] = StatsFormat.text,
    fail_under: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-under",
            metavar="[KIND=]PERCENT",
            help="Exit 1 when less than PERCENT of the facts (or of one KIND: instructions, "
            "paths, commands, errors, urls, tasks) were kept over every condensation. "
            "Repeatable.",
        ),
    ] = None,
    upto: UptoOpt = None,
    dialect: DialectOpt = None,
) -> None:
    """What each condensation lost: the facts of the events it forgot, by kind.

    User instructions, file paths, commands, errors, URLs and task ids of the
    forgotten events are looked up in the summary, then in the events the view
    still holds; the rest is lost. With several logs, a last table adds them up.
    Exit 1 when --fail-under is not met (over every condensation of every log).
    """
    from condense_cli.analysis.audit import (
        audit_log,
        combined,
        failures,
        kinds_json,
        parse_threshold,
    )
    from condense_cli.dialects import read_log
    from condense_cli.terminal.reports import audits_text

    thresholds = [parse_threshold(value) for value in fail_under or []]
    results = []
    for log in logs:
        with read_log(log, dialect=dialect, upto=upto, reading=_reading("reading")) as replay:
            results.append(audit_log(replay))
    overall = combined(results)
    if format is StatsFormat.json:
        data: Any = results[0].to_dict()
        if len(results) > 1:
            data = {"logs": [r.to_dict() for r in results], "overall": kinds_json(overall)}
        typer.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
    else:
        typer.echo(audits_text(results, overall), nl=False)
    below = failures(overall, thresholds)
    for line in below:
        _say(f"fail-under: {line}")
    if below:
        raise typer.Exit(1)


ConfigsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help="A config.toml to compare; repeat it for one column (or side) each.",
    ),
]
VariantOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--variant",
        metavar="'K=V ...'",
        help="One group of --set overrides (space-separated KEY=VALUE) to compare; "
        "repeat it for one column (or side) each, for every --config.",
    ),
]
CallModelOpt = Annotated[
    bool,
    typer.Option(
        "--call-model",
        help="Let summarising condensers call their model (default: a placeholder summary).",
    ),
]
SummaryTokensOpt = Annotated[
    int,
    typer.Option(
        "--summary-tokens",
        metavar="N",
        min=1,
        help="Size of the placeholder summary, in tokens.",
    ),
]


@app.command(cls=_Command)
@guarded
def diff(
    log: LogArg,
    upto: Annotated[
        list[str] | None,
        typer.Option(
            "--upto",
            metavar="ID",
            help="Compare the view up to this event (once: with the view now; twice: the two).",
        ),
    ] = None,
    config: ConfigsOpt = None,
    variant: VariantOpt = None,
    type: TypeOpt = None,
    set: SetOpt = None,
    call_model: CallModelOpt = False,
    summary_tokens: SummaryTokensOpt = 500,
    format: Annotated[
        StatsFormat, typer.Option("--format", "-f", help="text or json.")
    ] = StatsFormat.text,
    dialect: DialectOpt = None,
) -> None:
    """Which events left and entered the view, which summaries changed, in tokens.

    Two moments of a log (--upto A --upto B), or what two configurations would do to
    the view (--config a.toml --config b.toml, or --variant groups). Nothing is
    appended.
    """
    from condense_cli.analysis.diff import diff_views
    from condense_cli.core.events import Condensation, apply_condensation
    from condense_cli.dialects import read_log
    from condense_cli.terminal.reports import diff_text

    points = upto or []
    comparing = bool(config or variant or type or set)
    if comparing:
        if len(points) > 1:
            raise _usage_error("compare configurations at one --upto point at most")
        count = len(config or [None]) * len(variant or [None])
        if count > 2:
            raise _usage_error(f"diff compares two views, and these options make {count}")
        sides = _sides(config, type, set, variant, call_model, summary_tokens)
    elif not 1 <= len(points) <= 2:
        raise _usage_error("give --upto A (and --upto B), or --config a.toml --config b.toml")
    tokenizer = _tokenizer(config[0] if config else None)
    if comparing:
        point = points[0] if points else None
        with read_log(log, dialect=dialect, upto=point, reading=_reading("reading")) as replay:
            view, name, path = replay.view(), replay.dialect, replay.path
        where = f"up to {point}" if point is not None else "now"
        views = [(where, view)] if len(sides) == 1 else []
        for label, condenser, _meter in sides:
            result = condenser.condense(view)
            after = apply_condensation(view, result) if isinstance(result, Condensation) else result
            views.append((label, after))
    else:
        views = []
        for point in points if len(points) == 2 else [points[0], None]:
            with read_log(log, dialect=dialect, upto=point, reading=_reading("reading")) as replay:
                label = f"up to {point}" if point is not None else "now"
                views.append((label, replay.view()))
                name, path = replay.dialect, replay.path
    (label_a, a), (label_b, b) = views
    result = diff_views(a, b, (label_a, label_b), tokenizer.count_batch)
    if format is StatsFormat.json:
        data = {"dialect": name, "log": path, **result.to_dict()}
        typer.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
    else:
        typer.echo(diff_text(path, name, result), nl=False)


class SimulateFormat(StrEnum):
    text = "text"
    json = "json"
    csv = "csv"


@app.command(cls=_Command)
@guarded
def simulate(
    log: LogArg,
    config: ConfigsOpt = None,
    type: TypeOpt = None,
    set: SetOpt = None,
    variant: VariantOpt = None,
    call_model: CallModelOpt = False,
    summary_tokens: SummaryTokensOpt = 500,
    format: Annotated[
        SimulateFormat,
        typer.Option("--format", "-f", help="text (a table and a chart), json or csv."),
    ] = SimulateFormat.text,
    upto: UptoOpt = None,
    dialect: DialectOpt = None,
) -> None:
    """Replay the log's history under a condenser, in memory, step by step.

    After each event: when it would condense, the view in events and tokens, the
    tokens sent to the summariser, and the events rewritten where the prompt cache
    is lost. One column per --config and per --variant group (each --variant
    applies to every --config). Nothing is appended.
    """
    from condense_cli.condensers.simulate import TokenCache
    from condense_cli.condensers.simulate import simulate as run_simulation
    from condense_cli.core.events import View
    from condense_cli.dialects import read_log
    from condense_cli.terminal.reports import simulate_csv, simulate_text

    sides = _sides(config, type, set, variant, call_model, summary_tokens)
    tokenizer = _tokenizer(config[0] if config else None)
    with read_log(log, dialect=dialect, upto=upto, reading=_reading("reading")) as replay:
        history = list(replay.history())
        start = View([], make_summary=replay.view().make_summary)
        name, path = replay.dialect, replay.path
    tokens = TokenCache(tokenizer.count_batch, history)
    runs = [
        run_simulation(history, label, condenser, start, tokens, meter)
        for label, condenser, meter in sides
    ]
    events = [e for e in history if e is not None]
    if format is SimulateFormat.json:
        data = {
            "dialect": name,
            "log": path,
            "events": len(events),
            "tokenizer": tokenizer.name,
            "runs": [run.to_dict() for run in runs],
        }
        typer.echo(orjson.dumps(data).decode())
    elif format is SimulateFormat.csv:
        typer.echo(simulate_csv([e.id for e in events], runs), nl=False)
    else:
        typer.echo(simulate_text(path, name, len(events), tokenizer.name, runs), nl=False)


def _usage_error(message: str) -> Exception:
    from condense_cli.core.errors import ConfigError

    return ConfigError(message, hint="see condense diff --help")


def _tokenizer(config: str | None) -> Any:
    """The tokenizer of the [llm] model (as `stats` counts)."""
    from condense_cli.config.loading import LLMTables, load_settings
    from condense_cli.llm.tokens import tokenizer_for

    settings = load_settings(config)
    model = _with_source(settings.path, lambda: LLMTables(settings.llm).default.model)
    return tokenizer_for(model)


def _sides(
    configs: list[str] | None,
    type: str | None,
    sets: list[str] | None,
    variants: list[str] | None,
    call_model: bool,
    summary_tokens: int,
) -> list[tuple[str, Any, Any]]:
    """(label, condenser, meter) for every --config times every --variant group."""
    import shlex
    from pathlib import Path

    from condense_cli.condensers.offline import Meter, go_offline, placeholder

    sides = []
    for file in configs or [None]:
        tokenizer = _tokenizer(file)
        for group in variants or [None]:
            extra = shlex.split(group) if group else []
            condenser = _load_condenser(file, type, [*(sets or []), *extra])
            meter = Meter(lambda text, t=tokenizer: t.count_batch([text])[0])
            if not call_model:
                go_offline(condenser, placeholder(summary_tokens), meter)
            label = Path(file).name if file else condenser.name
            sides.append((f"{label} {group}" if group else label, condenser, meter))
    return sides


ID_CHARS = 12  # ids longer than this (uuids) are reported by position


def _describe_forgotten(view: "View", forgotten: tuple[int, ...]) -> str:
    """The forgotten events by the ids the log shows: `ids 2..61` (runs of keys when
    ids are keys, as in V0; runs of neighbouring events, first..last id, when ids are
    short; `positions 177..202` when they are uuids)."""
    from condense_cli.core.intervals import describe_ids

    events = [e for e in view if e.key is not None]
    if all(e.id == e.key for e in events):
        return describe_ids(forgotten)
    if any(len(str(e.id)) > ID_CHARS for e in events):  # uuids: positions read better
        return "positions " + describe_ids(forgotten).removeprefix("ids ")
    gone = set(forgotten)
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


def _usage_text(usage: dict[str, Any]) -> str:
    """`model m, 1,200 prompt + 300 completion tokens, $0.0004`."""
    text = (
        f"model {usage.get('model')}, {usage.get('prompt_tokens', 0):,} prompt + "
        f"{usage.get('completion_tokens', 0):,} completion tokens"
    )
    cost = usage.get("cost")
    text += f", ${cost:.4f}" if cost else ", cost unknown"
    facts = usage.get("facts")
    if facts:
        text += f", kept {facts['kept']:,} of {plural(facts['total'], 'fact')}"
        if facts["asked_again_naming"]:
            text += f" (asked again naming {facts['asked_again_naming']:,} it lost)"
    return text


def _load_condenser(config: str | None, type: str | None, sets: list[str] | None) -> Any:
    from condense_cli.config.loading import load_condenser, load_settings

    settings = load_settings(config, type, sets)
    _print_notes(settings.notes)
    return _with_source(settings.path, lambda: load_condenser(settings))


def _with_source(path: Any, build: Callable[[], Any]) -> Any:
    """Name the config file in configuration errors that come from it."""
    from condense_cli.core.errors import ConfigError

    try:
        return build()
    except ConfigError as exc:
        if path is None:
            raise
        raise ConfigError(f"{path}: {exc.message}", exc.hint) from None


def _print_notes(notes: list[str]) -> None:
    for note in notes:
        _say(f"Note: {note}")


def run_app() -> None:
    """Run the typer app as the process (see `entry.main`) and exit.

    Output is flushed here, before the interpreter's own flush at exit, so that a
    full device or a closed stdout is reported (also for --help) rather than
    ending as a traceback or "Exception ignored". The process then ends at once:
    a Ctrl-C during the interpreter's finalisation would kill it by the signal.
    """
    install_stdout()
    code: Any = 0
    try:
        app(prog_name="condense")
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:
        code = INTERRUPTED
    except OutputError as exc:  # while click printed help or usage
        silence_stdout()
        code = _fail(exc.message, exc.hint, exc.exit_code).exit_code
    signal.signal(signal.SIGINT, quit_now)  # a late Ctrl-C: exit 130 now, not in finalisation
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    except OutputError as exc:
        silence_stdout()
        code = _fail(exc.message, exc.hint, exc.exit_code).exit_code
    if not isinstance(code, int):
        code = 0 if code is None else 1
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(code)
