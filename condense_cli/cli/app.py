"""The typer app: the commands, registered in the order `--help` lists them, and the
process around them (see `entry.main`).

Start-up is kept to what the command needs. Each command module imports the layers
below it inside the command, so `--version` and `--help` do without them; rich only
where something is drawn with it (~30 ms to import: the text view on a terminal,
tables, messages on stderr), never for piped output or JSON. No
`from __future__ import annotations` here (see `common`).
"""

import contextlib
import os
import signal
import sys
from typing import Annotated, Any

import typer

from condense_cli import __version__
from condense_cli.cli import (
    audit,
    check,
    config,
    diff,
    hook,
    mcp,
    pin,
    report,
    request,
    run,
    simulate,
    stats,
    view,
)
from condense_cli.cli.common import Command, fail, state
from condense_cli.core.errors import OutputError
from condense_cli.core.interrupts import INTERRUPTED, quit_now
from condense_cli.terminal.output import install_stdout, silence_stdout

app = typer.Typer(
    name="condense",
    help="Replay, check and condense the event logs of AI coding agents.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


for name, command in (
    ("view", view.view),
    ("check", check.check),
    ("run", run.run),
    ("request", request.request),
    ("pin", pin.pin),
    ("config", config.show_config),
    ("stats", stats.stats),
    ("audit", audit.audit),
    ("diff", diff.diff),
    ("simulate", simulate.simulate),
    ("report", report.report),
):
    app.command(name, cls=Command)(command)
app.add_typer(hook.app, name="hook")
app.add_typer(mcp.app, name="mcp")


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
    state["debug"] = debug  # the command's own --debug, parsed after this, may set it too


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
        code = fail(exc.message, exc.hint, exc.exit_code).exit_code
    signal.signal(signal.SIGINT, quit_now)  # a late Ctrl-C: exit 130 now, not in finalisation
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    except OutputError as exc:
        silence_stdout()
        code = fail(exc.message, exc.hint, exc.exit_code).exit_code
    if not isinstance(code, int):
        code = 0 if code is None else 1
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(code)
