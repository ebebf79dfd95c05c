"""The options and arguments commands share, each declared once, and the choices
they take.

No `from __future__ import annotations`: typer evaluates the annotations of every
command at each start, and strings cost more to evaluate.
"""

import functools
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer


class Client(StrEnum):
    """An agent condense works inside (hooks, MCP)."""

    claude_code = "claude-code"
    codex = "codex"
    gemini_cli = "gemini-cli"


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


class GroupBy(StrEnum):
    dialect = "dialect"
    project = "project"
    day = "day"
    model = "model"


GroupByOpt = Annotated[
    GroupBy | None,
    typer.Option(
        "--group-by",
        help="Over many logs, a row per dialect, project (the folder the session worked "
        "in, where it is recorded; else the folder it is in), day (last "
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


DeepOpt = Annotated[
    bool,
    typer.Option(
        "--deep",
        help="Also find compactions that lost again the files and commands the agent "
        "read anew after the one before lost them (walks every compaction; slower).",
    ),
]


DAY = "YYYY-MM-DD"


def day_of(value: str | None) -> str:
    """A `--since`/`--until` day as given (`""`: none), refused unless written
    YYYY-MM-DD."""
    from condense_cli.cli.guard import usage_error
    from condense_cli.core.text import sanitize

    if value is None:
        return ""
    if not (len(value) == 10 and value[4] == value[7] == "-"):
        raise usage_error(f"a day is written {DAY}, not {sanitize(value, one_line=True)!r}")
    return value


PricesOpt = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        metavar="FILE",
        help="Your own rates, before LiteLLM's: a JSON or TOML table of models, each "
        "in LiteLLM's keys (input_cost_per_token, output_cost_per_token, "
        "cache_creation_input_token_cost, cache_read_input_token_cost).",
    ),
]
PRICES_LIMIT = 16 << 20  # bytes: a prices file larger than this is refused


def use_own_prices(path: Path | None) -> None:
    """Price by the rates of a `--prices` file before LiteLLM's (none: LiteLLM's
    alone), each model checked to have its rates as numbers of dollars per token."""
    import tomllib

    import orjson

    from condense_cli.analysis.cost import use_prices
    from condense_cli.cli.guard import usage_error
    from condense_cli.core.files import NotSmallFile, read_small

    if path is None:
        use_prices({})
        return
    try:
        body = read_small(path, PRICES_LIMIT)
    except NotSmallFile as exc:
        raise usage_error(f"--prices {path} {exc}") from None
    if body is None:
        raise usage_error(f"--prices {path}: no such file")
    try:
        table = tomllib.loads(body.decode()) if path.suffix == ".toml" else orjson.loads(body)
    except (tomllib.TOMLDecodeError, orjson.JSONDecodeError, UnicodeDecodeError) as exc:
        raise usage_error(f"--prices {path} is not valid JSON or TOML: {exc}") from None
    for model, entry in table.items() if isinstance(table, dict) else [(None, None)]:
        rates = entry if isinstance(entry, dict) else {}
        for key in ("input_cost_per_token", "output_cost_per_token", *rates):
            if key.endswith("_cost_per_token") or key.endswith("_token_cost"):
                value = rates.get(key)
                if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
                    raise usage_error(
                        f"--prices {path}: model {model!r} needs {key} as a number of "
                        "dollars per token (for example 3e-06)"
                    )
    use_prices(table)


@functools.cache
def worker_prices(path: Path | None) -> None:
    """The rates of a `--prices` file used in a worker, read once per process (a
    worker that did not fork from the command's process has not read them)."""
    use_own_prices(path)


@dataclass(frozen=True)
class Workers:
    """Where a command over many logs works: --jobs, --engine and --address."""

    jobs: int | None = None
    engine: EngineName = EngineName.local
    address: str | None = None


DEFAULT_WORKERS = Workers()  # what a command taking `workers` declares as its default
_WORKER_OPTIONS = [
    inspect.Parameter("jobs", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=JobsOpt),
    inspect.Parameter(
        "engine", inspect.Parameter.KEYWORD_ONLY, default=EngineName.local, annotation=EngineOpt
    ),
    inspect.Parameter(
        "address", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=AddressOpt
    ),
]
C = TypeVar("C", bound=Callable[..., Any])


def with_workers(command: C) -> C:
    """`command` with its `workers: Workers` parameter offered as the three options
    --jobs, --engine and --address, in its place, and handed to it as one value."""
    signature = inspect.signature(command)
    params: list[inspect.Parameter] = []
    for param in signature.parameters.values():
        if param.name == "workers":
            params += _WORKER_OPTIONS
        else:
            params.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY))

    @functools.wraps(command)
    def wrapper(
        *args: Any,
        jobs: int | None = None,
        engine: EngineName = EngineName.local,
        address: str | None = None,
        **kwargs: Any,
    ) -> Any:
        return command(*args, workers=Workers(jobs, engine, address), **kwargs)

    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {k: v for k, v in command.__annotations__.items() if k != "workers"}
    return wrapper  # type: ignore[return-value]
