"""The typer app: the commands, in the order `--help` lists them, each module loaded
only when its command runs, and the process around them (see `entry.main`).

Start-up is kept to what the command needs: `--version` and `--help` import no
command module, and a command only its own; rich only
where something is drawn with it (~30 ms to import: the text view on a terminal,
tables, messages on stderr), never for piped output or JSON. No
`from __future__ import annotations` here (see `options`).
"""

import contextlib
import importlib
import os
import signal
import sys
from dataclasses import dataclass
from typing import Annotated, Any

import typer
import typer.main
from typer import _click as click  # typer 0.28 carries its own click
from typer.core import TyperGroup
from typer.models import CommandInfo

from condense_cli import __version__
from condense_cli.cli.guard import Command, fail, state
from condense_cli.core.errors import OutputError
from condense_cli.core.interrupts import INTERRUPTED, quit_now
from condense_cli.terminal.output import install_stdout, silence_stdout


@dataclass(frozen=True)
class Entry:
    """A command of the app: its name, the module of `cli/` and the name in it that
    hold it (a function, or a typer app of subcommands), and the first sentence of
    its help, which `condense --help` lists without importing the module."""

    name: str
    module: str
    attribute: str
    summary: str


COMMANDS = (
    Entry("view", "view", "view", "Replay every condensation and print what the model sees."),
    Entry("check", "check", "check", "Validate logs and their condensations."),
    Entry("run", "run", "run", "Run the configured condenser and append its condensation."),
    Entry("request", "request", "request", "Append a condensation_request event to the log."),
    Entry(
        "pin",
        "pin",
        "pin",
        "Pin a fact: every condensation `run` makes must carry it (or is refused), and "
        "`audit` and `check` report the compactions that dropped it.",
    ),
    Entry("config", "config", "show_config", "Print the effective configuration as TOML."),
    Entry("stats", "stats", "stats", "Events, characters and tokens of a log against its view."),
    Entry(
        "audit",
        "audit",
        "audit",
        "What each condensation lost: the facts of the events it forgot, by kind.",
    ),
    Entry(
        "diff",
        "diff",
        "diff",
        "Which events left and entered the view, which summaries changed, in tokens.",
    ),
    Entry(
        "simulate",
        "simulate",
        "simulate",
        "Replay the log's history under a condenser, in memory, step by step.",
    ),
    Entry(
        "cost",
        "cost",
        "cost",
        "What the sessions' model calls cost: tokens and dollars, by session, day, week, "
        "month, billing block, model or project.",
    ),
    Entry(
        "search",
        "search",
        "search",
        "Search every session of every dialect: ranked hits, in view or forgotten.",
    ),
    Entry(
        "report",
        "report",
        "report",
        "Write one HTML page of each log as the model saw it, and of its condensations.",
    ),
    Entry(
        "hook",
        "hook",
        "app",
        "Hooks for the agent's own compaction: keep what matters, give back what it lost.",
    ),
    Entry(
        "mcp",
        "mcp",
        "app",
        "An MCP server (stdio) that lets the agent search and read back what its "
        "compactions forgot; `install` registers it with a client.",
    ),
)


class Commands(TyperGroup):
    """The app's commands, in the order `--help` lists them; a command's module is
    imported only when that command runs (pip's `commands_dict` does the same)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.loaded: dict[str, click.Command] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [entry.name for entry in COMMANDS]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = next((e for e in COMMANDS if e.name == cmd_name), None)
        if entry is None:
            return None
        if cmd_name not in self.loaded:
            self.loaded[cmd_name] = load_command(entry)
        return self.loaded[cmd_name]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their summaries, as click lays them out, from `COMMANDS`."""
        limit = formatter.width - 6 - max(len(entry.name) for entry in COMMANDS)
        rows = [(e.name, click.utils.make_default_short_help(e.summary, limit)) for e in COMMANDS]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def load_command(entry: Entry) -> click.Command:
    """The click command of `entry`, its module imported now."""
    module = importlib.import_module(f"condense_cli.cli.{entry.module}")
    target = getattr(module, entry.attribute)
    if isinstance(target, typer.Typer):
        group = typer.main.get_group(target)
        group.name = entry.name
        return group
    info = CommandInfo(name=entry.name, cls=Command, callback=target)
    return typer.main.get_command_from_info(
        info, pretty_exceptions_short=False, rich_markup_mode=None
    )


app = typer.Typer(
    name="condense",
    cls=Commands,
    help="Replay, check and condense the event logs of AI coding agents.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


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
