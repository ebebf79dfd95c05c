"""The typer app: parse options, call the core, render, map errors to exit codes."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import traceback
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, TypeVar

import orjson
import typer
from rich.console import Console
from rich.markup import escape

from condense_cli import __version__
from condense_cli.dialects import read_log
from condense_cli.dialects.base import Reading, Replay
from condense_cli.errors import CondenseError
from condense_cli.log import STDIN
from condense_cli.model import View
from condense_cli.progress import progress
from condense_cli.render import header_line, print_rich, view_json, write_jsonl, write_plain

app = typer.Typer(
    name="condense",
    help="Replay, check and condense the event logs of AI coding agents.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

_state = {"debug": False}
F = TypeVar("F", bound=Callable[..., Any])


class ViewFormat(StrEnum):
    text = "text"
    json = "json"
    jsonl = "jsonl"


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
LockOpt = Annotated[
    float,
    typer.Option(
        "--lock-timeout",
        metavar="SECONDS",
        envvar="CONDENSE_LOCK_TIMEOUT",
        min=0,
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


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def _fail(message: str, hint: str | None, code: int) -> typer.Exit:
    err = _stderr()
    err.print(f"Error: {message}", markup=False)
    if hint:
        err.print(f"Hint: {hint}", markup=False)
    return typer.Exit(code)


def guarded(command: F) -> F:
    """Turn core errors into one message and an exit code; never a traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except CondenseError as exc:
            raise _fail(exc.message, exc.hint, exc.exit_code) from None
        except BrokenPipeError:
            _silence_stdout()
            raise typer.Exit(0) from None
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:
            if _state["debug"]:
                traceback.print_exc()
            raise _fail(
                f"unexpected {type(exc).__name__}: {exc}",
                "this is a bug in condense; rerun with --debug for the traceback and report it",
                1,
            ) from None

    return wrapper  # type: ignore[return-value]


def _silence_stdout() -> None:
    """After a closed pipe, point stdout at /dev/null so the exit flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


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
    _state["debug"] = debug


@app.command()
@guarded
def view(
    log: LogArg,
    format: Annotated[
        ViewFormat, typer.Option("--format", "-f", help="text for people, json/jsonl for scripts.")
    ] = ViewFormat.text,
    upto: UptoOpt = None,
    full: Annotated[
        bool, typer.Option("--full", help="Show whole event texts, not previews.")
    ] = False,
    dialect: DialectOpt = None,
) -> None:
    """Replay every condensation and print what the model sees."""
    with read_log(log, dialect=dialect, upto=upto, reading=_reading("reading")) as replay:
        if format is ViewFormat.jsonl:
            sys.stdout.flush()
            sys.stdout.buffer.writelines(replay.view_lines())
            sys.stdout.buffer.flush()
            return
        current = replay.view()
    title = replay.path if upto is None else f"{replay.path} (up to {upto})"
    _print_view(current, replay, format, title, full)


def _reading(description: str) -> Reading:
    """A progress bar while a big log is read (only when stderr is a terminal)."""
    return lambda source: progress(source, description)


def _print_view(current: View, replay: Replay, format: ViewFormat, title: str, full: bool) -> None:
    """Print a view in the chosen format: rich on a terminal, plain when piped."""
    if format is not ViewFormat.text:
        sys.stdout.flush()
        if format is ViewFormat.json:
            sys.stdout.buffer.write(view_json(current, replay) + b"\n")
        else:
            write_jsonl((event.to_json() for event in current), sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    header = header_line(current, replay, title)
    if sys.stdout.isatty():
        print_rich(current, Console(highlight=False), header, full)
    else:
        write_plain(current, sys.stdout, header, full)


@app.command()
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
        except CondenseError as exc:
            typer.echo(exc.message)
            failed += 1
            problems += 1
            continue
        for problem in replay.problems:
            prefix = "warning: " if problem.severity == "warning" else ""
            typer.echo(f"{problem.where(name)}: {prefix}{problem.message}")
        if replay.generation is not None:
            _stderr().print(
                f"{name}: replayed as the {replay.generation} showed it "
                f"({replay.generation_reason})",
                markup=False,
                highlight=False,
            )
        problems += len(replay.problems)
        bad = replay.errors or (strict and replay.problems)
        failed += 1 if bad else 0
    err = _stderr()
    if failed:
        err.print(f"{failed} of {len(logs)} logs failed the check ({problems} problems)")
        raise typer.Exit(1)
    notes = [", ".join(sorted(dialects))] + ([f"{problems} warnings"] if problems else [])
    err.print(f"{len(logs)} logs ok ({'; '.join(notes)})")


@app.command()
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
    from condense_cli.intervals import describe_ids
    from condense_cli.model import Condensation
    from condense_cli.runner import Feedback, run_condenser

    condenser = _load_condenser(config, type, set)
    err = _stderr()
    if log == STDIN and not dry_run:
        err.print("standard input cannot be appended to: printing the condensation instead")
        dry_run = True
    label = f"{condenser.name}: condensing {escape(log)} …"
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
    )
    result = outcome.result
    if not isinstance(result, Condensation):
        _print_view(result, outcome.replay, format, f"{log} ({condenser.name})", False)
        changed = sum(1 for a, b in zip(outcome.before, result, strict=False) if a is not b)
        note = result.note or f"rewrote {changed} of {len(result)} events for this step"
        err.print(f"{condenser.name}: {note}; nothing appended", markup=False, highlight=False)
        return
    assert outcome.after is not None and outcome.record is not None
    sizes = f"view {len(outcome.before)} -> {len(outcome.after)}"
    report = (
        f"{condenser.name}: forgot {len(result.forgotten)} events "
        f"({describe_ids(result.forgotten)}), {sizes}"
    )
    if result.summary is not None:
        report += f", summary of {len(result.summary):,} chars at offset {result.summary_offset}"
    if result.usage:
        report += ", " + _usage_text(result.usage)
    if outcome.appended:
        err.print(f"{report}; appended to {log}", markup=False, highlight=False)
        return
    sys.stdout.flush()
    sys.stdout.buffer.write(outcome.record.body + b"\n")
    sys.stdout.buffer.flush()
    err.print(f"{report} (dry run: nothing appended)", markup=False, highlight=False)


@app.command()
@guarded
def request(log: LogArg, lock_timeout: LockOpt = 10.0, dialect: DialectOpt = None) -> None:
    """Append a condensation_request event to the log."""
    from condense_cli.runner import Feedback, append_request

    feedback = Feedback(reading=_reading("reading"))
    event_id = append_request(log, lock_timeout, feedback, dialect)
    _stderr().print(f"appended condensation request {event_id} to {log}", markup=False)


@app.command("config")
@guarded
def show_config(config: ConfigOpt = None, type: TypeOpt = None, set: SetOpt = None) -> None:
    """Print the effective configuration as TOML.

    Defaults are filled in and API keys are printed as "***".
    """
    import tomli_w

    from condense_cli.config import effective_config, load_settings

    settings = load_settings(config, type, set)
    _print_notes(settings.notes)
    table = _with_source(settings.path, lambda: effective_config(settings))
    if settings.path is not None:
        typer.echo(f"# from {settings.path}")
    typer.echo(tomli_w.dumps(table), nl=False)


@app.command()
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
    from condense_cli.config import LLMTables, load_settings
    from condense_cli.render import print_stats
    from condense_cli.tokens import tokenizer_for

    tokenizer = None
    if tokens:
        settings = load_settings(config)
        model = _with_source(settings.path, lambda: LLMTables(settings.llm).default.model)
        tokenizer = tokenizer_for(model)
    with read_log(log, dialect=dialect, reading=_reading("reading")) as replay:
        numbers = replay.stats(tokenizer, _reading("counting"))
    if format is StatsFormat.json:
        typer.echo(orjson.dumps(numbers, option=orjson.OPT_INDENT_2).decode())
    else:
        print_stats(numbers, Console(highlight=False))


def _usage_text(usage: dict[str, Any]) -> str:
    """`model m, 1,200 prompt + 300 completion tokens, $0.0004`."""
    text = (
        f"model {usage.get('model')}, {usage.get('prompt_tokens', 0):,} prompt + "
        f"{usage.get('completion_tokens', 0):,} completion tokens"
    )
    cost = usage.get("cost")
    return text + (f", ${cost:.4f}" if cost else ", cost unknown")


def _load_condenser(config: str | None, type: str | None, sets: list[str] | None) -> Any:
    from condense_cli.config import load_condenser, load_settings

    settings = load_settings(config, type, sets)
    _print_notes(settings.notes)
    return _with_source(settings.path, lambda: load_condenser(settings))


def _with_source(path: Any, build: Callable[[], Any]) -> Any:
    """Name the config file in configuration errors that come from it."""
    from condense_cli.errors import ConfigError

    try:
        return build()
    except ConfigError as exc:
        if path is None:
            raise
        raise ConfigError(f"{path}: {exc.message}", exc.hint) from None


def _print_notes(notes: list[str]) -> None:
    for note in notes:
        _stderr().print(f"Note: {note}", markup=False)


def main() -> None:
    """Console-script entry point."""
    app(prog_name="condense")
