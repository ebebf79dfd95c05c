"""The typer app: parse options, call the core, render, map errors to exit codes."""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from condense_cli import __version__
from condense_cli.errors import CondenseError
from condense_cli.log import LogSource
from condense_cli.render import header_line, print_rich, view_json, write_jsonl, write_plain
from condense_cli.scan import scan_log
from condense_cli.view import build_view, iter_view_lines

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


LogArg = Annotated[str, typer.Argument(help="The session log (JSONL), or - for standard input.")]
UptoOpt = Annotated[
    int | None, typer.Option("--upto", help="Replay only events with id <= UPTO.", min=0)
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
        import os

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
) -> None:
    """Replay every condensation and print what the model sees."""
    with LogSource.open(log) as source:
        index = scan_log(source, upto=upto)
        if format is ViewFormat.jsonl:
            sys.stdout.flush()
            write_jsonl(iter_view_lines(source, index), sys.stdout.buffer)
            sys.stdout.buffer.flush()
            return
        current = build_view(source, index)
    if format is ViewFormat.json:
        sys.stdout.flush()
        sys.stdout.buffer.write(view_json(current, index) + b"\n")
        sys.stdout.buffer.flush()
        return
    title = source.path if upto is None else f"{source.path} (up to id {upto})"
    header = header_line(current, index, title)
    if sys.stdout.isatty():
        print_rich(current, Console(highlight=False), header, full)
    else:
        write_plain(current, sys.stdout, header, full)


@app.command()
@guarded
def check(
    logs: Annotated[list[str], typer.Argument(help="Logs to check (- for standard input).")],
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail on warnings too, not only on errors.")
    ] = False,
) -> None:
    """Validate logs and their condensations; one `file:line: message` per problem."""
    failed = 0
    problems = 0
    for path in logs:
        try:
            with LogSource.open(path) as source:
                index = scan_log(source, collect=True)
                name = source.path
        except CondenseError as exc:
            typer.echo(exc.message)
            failed += 1
            problems += 1
            continue
        for problem in index.problems:
            where = f"{name}:{problem.line}" if problem.line is not None else name
            prefix = "warning: " if problem.severity == "warning" else ""
            typer.echo(f"{where}: {prefix}{problem.message}")
        problems += len(index.problems)
        bad = index.errors or (strict and index.problems)
        failed += 1 if bad else 0
    err = _stderr()
    if failed:
        err.print(f"{failed} of {len(logs)} logs failed the check ({problems} problems)")
        raise typer.Exit(1)
    note = f" ({problems} warnings)" if problems else ""
    err.print(f"{len(logs)} logs ok{note}")


def main() -> None:
    """Console-script entry point."""
    app(prog_name="condense")
