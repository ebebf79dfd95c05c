"""What every command shares: options, error handling, messages on stderr, progress.

No `from __future__ import annotations`: typer evaluates the annotations of every
command at each start, and strings cost more to evaluate.
"""

import contextlib
import functools
import math
import sys
import traceback
from collections.abc import Callable, Iterator
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from typer.core import TyperCommand, TyperOption

from condense_cli.core.errors import CondenseError, OutputError, os_hint
from condense_cli.core.interrupts import INTERRUPTED
from condense_cli.core.redact import mask
from condense_cli.core.text import sanitize
from condense_cli.terminal.output import say, silence_stdout

if TYPE_CHECKING:
    from rich.console import Console

    from condense_cli.condensers.base import Condenser
    from condense_cli.dialects.base import Reading
    from condense_cli.dialects.discovery import Found

state: dict[str, Any] = {"debug": False, "command": "condense"}
F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")


def set_debug(ctx: Any, param: Any, value: bool) -> bool:
    if value:
        state["debug"] = True
    return value


class Command(TyperCommand):
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
                callback=set_debug,
                help="Show the traceback of unexpected errors.",
            )
        )

    def invoke(self, ctx: Any) -> Any:
        state["command"] = ctx.command_path  # for the hint of a usage error
        return super().invoke(ctx)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = super().collect_usage_pieces(ctx)
        return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in pieces]


class Client(StrEnum):
    """An agent condense works inside (hooks, MCP)."""

    claude_code = "claude-code"
    codex = "codex"


class StatsFormat(StrEnum):
    text = "text"
    json = "json"


JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        metavar="N",
        min=1,
        help="Logs processed at once, each in its own process (default: the cores).",
    ),
]


ClientArg = Annotated[Client, typer.Argument(help="The agent: claude-code or codex.")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Print the change; write nothing.")]


def tell_change(path: object, done: str | None, dry_run: bool, what: str) -> None:
    """What `agent.install.edit_settings` did to a client's settings at `path`: the diff
    of a dry run on stdout, else one line on stderr (`what` it did, or nothing)."""
    if done is None:
        say(f"{path}: nothing to change")
    elif dry_run:
        typer.echo(done, nl=False)
    else:
        say(f"{path}: {what}")


class GroupBy(StrEnum):
    dialect = "dialect"
    project = "project"
    day = "day"
    model = "model"


GroupByOpt = Annotated[
    GroupBy | None,
    typer.Option(
        "--group-by",
        help="Over many logs, a row per dialect, project (Claude Code's project folder, "
        "a Codex rollout's working folder, an evaluation run's folder), day (last "
        "written, UTC) or model (the one the agent used last), instead of a row per log.",
    ),
]


class EngineName(StrEnum):
    local = "local"
    ray = "ray"


EngineOpt = Annotated[
    EngineName,
    typer.Option(
        "--engine",
        help="local: worker processes on this machine (--jobs); ray: Ray tasks on a "
        "cluster (--address), for the extra `condense-cli[ray]`.",
    ),
]

AddressOpt = Annotated[
    str | None,
    typer.Option(
        "--address",
        metavar="ADDR",
        help="With --engine ray, the cluster to join (host:port, ray://host:port; "
        "default: $RAY_ADDRESS, else a Ray started for this command).",
    ),
]


def grouping(group_by: GroupBy | None) -> Callable[[dict[str, Any]], str] | None:
    """What names a row's group for `--group-by` (None: a row per log)."""
    if group_by is None:
        return None
    from condense_cli.dialects.discovery import group_of

    return lambda row: group_of(row, group_by.value)


def echo(text: str) -> None:
    """Text on stdout as it is (its own line endings)."""
    typer.echo(text, nl=False)


@contextlib.contextmanager
def each_log(
    work: Callable[[str], R],
    logs: list[str],
    jobs: int | None,
    engine: EngineName = EngineName.local,
    address: str | None = None,
    doing: str = "reading",
) -> Iterator[Iterator[R]]:
    """`work` of each log, in the logs' order, on `jobs` processes (default: the cores)
    or Ray; a bar of the logs and bytes done on a terminal."""
    from condense_cli.core.pool import capped_jobs, ordered_map
    from condense_cli.terminal.progress import logs_progress

    if address is not None and engine is not EngineName.ray:
        raise usage_error("--address is for --engine ray")
    workers, note = capped_jobs(jobs)
    if note is not None and engine is EngineName.local:
        say(f"Note: {note}")
    with (
        ordered_map(work, logs, workers, engine.value, address) as results,
        logs_progress(logs, doing) as done,
    ):
        yield _ticking(results, done)


def some_logs(logs: list[str], dialect: str | None) -> "Found":
    """The logs in `logs`; none is a usage error (exit 2), after what was passed over."""
    from condense_cli.dialects.discovery import find_logs

    found = find_logs(logs, dialect)
    if not found.logs:
        for line in found.says():
            say(line)
        raise usage_error("no log found in what was given")
    return found


def said_logs(found: "Found", failed: int) -> None:
    """After a command over many logs: what the search passed over, then exit 1 when
    a log could not be read (`failed` of them) or none was found."""
    from condense_cli.core.text import plural

    for line in found.says():
        say(line)
    if not found.logs:
        say("no log found in what was given")
        raise typer.Exit(1)
    if failed:
        say(f"{failed} of {plural(len(found.logs), 'log')} could not be read")
        raise typer.Exit(1)


def _ticking(results: Iterator[R], done: Callable[[], None]) -> Iterator[R]:
    for result in results:
        done()
        yield result


class TableFormat(StrEnum):
    """The formats of a command that may print a row per log."""

    text = "text"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"


def local_paths(value: Any) -> Any:
    """A LOG argument (or a list of them) with each `file://` URI as the path it names."""
    from condense_cli.core.remote import local_path

    try:
        if isinstance(value, list):
            return [local_path(v) for v in value]
        return local_path(value) if isinstance(value, str) else value
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


LogArg = Annotated[
    str,
    typer.Argument(
        metavar="LOG",
        callback=local_paths,
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

ClientConfigOpt = Annotated[
    str | None,
    typer.Option(
        "--client-config",
        metavar="FILE",
        help="The agent's own settings, to judge each compaction against its threshold: "
        "Claude Code's settings.json, Codex's config.toml, OpenHands' config.toml.",
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


def stderr() -> "Console":
    from condense_cli.terminal.consoles import stderr_console

    return stderr_console()


def fail(message: str, hint: str | None, code: int) -> typer.Exit:
    say(f"Error: {message}")
    if hint:
        say(f"Hint: {hint}")
    return typer.Exit(code)


def guarded(command: F) -> F:
    """Turn core errors into one message and an exit code; never a traceback.

    A closed pipe on stdout (`condense check | head`) never changes a verdict.
    A command on one log writes to stdout only once its verdict is settled (errors
    are raised before any output), so a closed pipe ends it with that verdict: 0.
    `check` writes as it goes, so it carries on silently and exits 1 if a log failed
    (see `emit`). Over many logs, `stats`, `audit` and `view` write a log's rows as it
    is done and say a log that cannot be read on stderr; a closed pipe ends them with
    0, as nothing more can be read of their output. Ctrl-C exits 130 without a
    traceback.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except OutputError as exc:
            silence_stdout()
            raise fail(exc.message, exc.hint, exc.exit_code) from None
        except CondenseError as exc:
            raise fail(exc.message, exc.hint, exc.exit_code) from None
        except BrokenPipeError:
            silence_stdout()
            raise typer.Exit(0) from None
        except KeyboardInterrupt:
            raise typer.Exit(INTERRUPTED) from None
        except (typer.Exit, typer.Abort):
            raise
        except OSError as exc:  # the system refused a file (a full disk, a protected file)
            where = f"{exc.filename}: " if exc.filename else ""
            raise fail(f"{where}{exc.strerror or exc}", os_hint(exc.errno), 1) from None
        except Exception as exc:
            if state["debug"]:
                sys.stderr.write(sanitize(mask(traceback.format_exc())))
            raise fail(
                f"unexpected {type(exc).__name__}: {exc}",
                "this is a bug in condense; rerun with --debug for the traceback and report it",
                1,
            ) from None

    return wrapper  # type: ignore[return-value]


def emit(line: str) -> None:
    """Print one line of `check` output; after a closed pipe, keep checking silently."""
    try:
        typer.echo(line)
    except BrokenPipeError:
        silence_stdout()


def reading(description: str) -> "Reading":
    """A progress bar while a big log is read (only when stderr is a terminal)."""
    from condense_cli.terminal.progress import progress

    return lambda source: progress(source, description)


def load_condenser(config: str | None, type: str | None, sets: list[str] | None) -> "Condenser":
    """The configured condenser; configuration notes go to stderr."""
    from condense_cli.config.loading import configured_condenser

    condenser, notes = configured_condenser(config, type, sets)
    print_notes(notes)
    return condenser


def print_notes(notes: list[str]) -> None:
    for note in notes:
        say(f"Note: {note}")


def usage_error(message: str) -> Exception:
    """A misuse of the command running (exit 2), with where its help is."""
    from condense_cli.core.errors import ConfigError

    return ConfigError(message, hint=f"see {state['command']} --help")
