"""`condense simulate`: replay a log's history under a condenser, in memory.

No `from __future__ import annotations` (see `options`).
"""

from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import orjson
import typer

from condense_cli.cli.guard import guarded, usage_error
from condense_cli.cli.many import each_log, said_logs, some_logs
from condense_cli.cli.options import (
    DEFAULT_WORKERS,
    CallModelOpt,
    ConfigsOpt,
    DialectOpt,
    PricesOpt,
    SetOpt,
    SummaryTokensOpt,
    TypeOpt,
    UptoOpt,
    VariantOpt,
    Workers,
    local_paths,
    use_own_prices,
    with_workers,
    worker_prices,
)
from condense_cli.cli.output import print_notes, reading
from condense_cli.condensers.base import all_stages, set_agent_window
from condense_cli.condensers.simulate import Priced, Run, TokenCache, in_dollars
from condense_cli.condensers.simulate import simulate as run_simulation
from condense_cli.condensers.summarizing import LLMSummarizingCondenser
from condense_cli.config.comparing import Side, comparison_sides
from condense_cli.config.loading import configured_tokenizer
from condense_cli.core.errors import CondenseError, LogFailed
from condense_cli.core.events import Event, View
from condense_cli.dialects import read_log
from condense_cli.dialects.base import quiet_reading
from condense_cli.dialects.counting import TextCounts
from condense_cli.fast.halves import log_size, splits
from condense_cli.terminal.analysis_text import simulate_csv, simulate_text
from condense_cli.terminal.output import say

if TYPE_CHECKING:
    from condense_cli.condensers.compare import Standing
    from condense_cli.dialects.base import Replay
    from condense_cli.llm.tokens import Tokenizer


class SimulateFormat(StrEnum):
    text = "text"
    json = "json"
    csv = "csv"


@guarded
@with_workers
def simulate(
    logs: Annotated[
        list[str],
        typer.Argument(
            metavar="LOG...",
            callback=local_paths,
            help="The log (a session file, a conversation folder, or - for standard "
            "input); with --compare, any number of logs, folders and trees.",
        ),
    ],
    config: ConfigsOpt = None,
    type: TypeOpt = None,
    set: SetOpt = None,
    variant: VariantOpt = None,
    call_model: CallModelOpt = False,
    summary_tokens: SummaryTokensOpt = 500,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="One row per configuration over every log given, ranked by dollars: "
            "the agent's calls, the tokens they sent and the share read from the "
            "prompt cache, condensations, the summariser's tokens, the facts of the "
            "histories the final views keep, and against no condensation.",
        ),
    ] = False,
    format: Annotated[
        SimulateFormat,
        typer.Option(
            "--format",
            "-f",
            help="text (a table and a chart), json or csv (a row per step; with "
            "--compare, a row per configuration).",
        ),
    ] = SimulateFormat.text,
    upto: UptoOpt = None,
    dialect: DialectOpt = None,
    prices: PricesOpt = None,
    workers: Workers = DEFAULT_WORKERS,
) -> None:
    """Replay the log's history under a condenser, in memory, step by step.

    After each event: when it would condense, the view in events and tokens, the
    tokens sent to the summariser, and the events rewritten where the prompt cache
    is lost; then the dollars of the agent's calls (one at each of the log's turns,
    sending the view then, at its model's rates and prompt cache) and of the
    summariser's, against the same history with no condensation. One column per
    --config and per --variant group (each --variant applies to every --config).
    Nothing is appended.
    """
    use_own_prices(prices)
    notes: list[str] = []
    sides = comparison_sides(config, type, set, variant, call_model, summary_tokens, notes)
    print_notes(notes)
    spec = Spec(config, type, set, variant, call_model, summary_tokens, upto, dialect, prices)
    if compare:
        _compare(logs, spec, [side.label for side in sides], format, workers)
        return
    if len(logs) > 1:
        raise usage_error("simulate takes one log; give --compare to rank configurations over many")
    tokenizer = configured_tokenizer(config[0] if config else None)
    with read_log(logs[0], dialect=dialect, upto=upto, reading=reading("reading")) as replay:
        history, runs, priced = _simulated(replay, sides, tokenizer)
        name, path = replay.dialect, replay.path
    events = [e for e in history if e is not None]
    if format is SimulateFormat.json:
        data = {
            "dialect": name,
            "log": path,
            "events": len(events),
            "tokenizer": tokenizer.name,
            "runs": [run.to_dict() for run in runs],
            "dollars": priced_json(priced),
        }
        typer.echo(orjson.dumps(data).decode())
    elif format is SimulateFormat.csv:
        typer.echo(simulate_csv([e.id for e in events], runs), nl=False)
    else:
        typer.echo(simulate_text(path, name, len(events), tokenizer.name, runs, priced), nl=False)


def _simulated(
    replay: "Replay", sides: list[Side], tokenizer: "Tokenizer", model: str | None = None
) -> tuple[list[Event | None], list[Run], Priced | None]:
    """The log's history, each side's run over it, and their dollars (`model`: the
    agent's where the log names none; None: then no dollars)."""
    replay.require("simulates")  # simulated while open: a history reads its events then
    history = list(replay.history())
    start = View([], make_summary=replay.view().make_summary)
    size = log_size(replay.path)
    tokens = TokenCache(TextCounts(tokenizer), history, size)
    agent = replay.model if replay.model is not None else model
    for side in sides:
        set_agent_window(side.condenser, agent)
        for stage in all_stages(side.condenser):  # (the history's counts bound a view's)
            if isinstance(stage, LLMSummarizingCondenser):
                stage.bound_with(tokens)
    runs = [
        run_simulation(
            history,
            side.label,
            side.condenser,
            side.carrying(start),
            tokens,
            side.meter,
            splits(size),
        )
        for side in sides
    ]
    priced = None
    if agent is not None:
        summarisers = [side.model for side in sides]
        priced = in_dollars(runs, history, tokens, agent, replay.usage(), summarisers)
    return history, runs, priced


@dataclass(frozen=True)
class Spec:
    """What makes the sides of a comparison, and reads a log, in a worker."""

    config: list[str] | None
    type: str | None
    sets: list[str] | None
    variants: list[str] | None
    call_model: bool
    summary_tokens: int
    upto: str | None
    dialect: str | None
    prices: Path | None


UNNAMED = "(a model the log does not name)"


def compare_one(log: str, spec: Spec) -> "list[Standing] | tuple[str, str | None, int]":
    """One log's rows (in this process or a worker's), or the message, hint and exit
    code of why it cannot be simulated."""
    from condense_cli.condensers.compare import standings

    worker_prices(spec.prices)
    sides = comparison_sides(
        spec.config, spec.type, spec.sets, spec.variants, spec.call_model, spec.summary_tokens, []
    )
    tokenizer = configured_tokenizer(spec.config[0] if spec.config else None)
    try:
        with read_log(log, dialect=spec.dialect, upto=spec.upto, reading=quiet_reading) as replay:
            history, runs, priced = _simulated(replay, sides, tokenizer, model="")
            rows = standings(history, runs, priced)
    except CondenseError as exc:
        return exc.message, exc.hint, exc.exit_code
    for row in rows:
        row.unpriced = {name or UNNAMED for name in row.unpriced}
    return rows


def _compare(
    logs: list[str], spec: Spec, labels: list[str], format: SimulateFormat, workers: Workers
) -> None:
    """`simulate --compare`: a row per configuration over every log."""
    from condense_cli.condensers.compare import Standing, ranked
    from condense_cli.terminal.compare_text import compare_csv, compare_text

    found = some_logs(logs, spec.dialect)
    rows = [Standing(label) for label in labels]
    failed = 0
    with each_log(partial(compare_one, spec=spec), found.logs, workers, "simulating") as done:
        for result in done:
            if isinstance(result, tuple):
                if len(found.logs) == 1:
                    raise LogFailed(*result)
                say(f"Error: {result[0]}")
                failed += 1
                continue
            for row, one in zip(rows, result, strict=True):
                row.add(one)
    order = ranked(rows)
    if format is SimulateFormat.json:
        data = {
            "logs": len(found.logs) - failed,
            "summaries": "the model's"
            if spec.call_model
            else f"placeholders of {spec.summary_tokens} tokens",
            "configurations": [row.to_json() for row in order],
        }
        typer.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
    elif format is SimulateFormat.csv:
        typer.echo(compare_csv(order), nl=False)
    else:
        said = None if spec.call_model else spec.summary_tokens
        typer.echo(compare_text(order, len(found.logs) - failed, said), nl=False)
    said_logs(found, failed)


def priced_json(priced: Priced | None) -> dict[str, Any] | None:
    """The dollars of `simulate --format json`: the turns priced as, each run's calls
    (in the order of `runs`), and the history's with no condensation."""
    if priced is None:
        return None
    turns = priced.turns
    return {
        "model": turns.model,
        "turns": {
            "calls_recorded": turns.recorded,
            "prompt_beyond_the_view": turns.overhead,
            "output_tokens": turns.output,
            "prompt_cache": turns.cache,
            "served": turns.served or "standard",
            "recorded": turns.spent.to_json() if turns.spent is not None else None,
        },
        "runs": [cost.to_json() for cost in priced.runs],
        "uncondensed": priced.uncondensed.to_json(),
    }
