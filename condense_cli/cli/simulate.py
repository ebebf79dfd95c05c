"""`condense simulate`: replay a log's history under a condenser, in memory.

No `from __future__ import annotations` (see `options`).
"""

from enum import StrEnum
from typing import Annotated, Any

import orjson
import typer

from condense_cli.cli.guard import guarded
from condense_cli.cli.options import (
    CallModelOpt,
    ConfigsOpt,
    DialectOpt,
    LogArg,
    PricesOpt,
    SetOpt,
    SummaryTokensOpt,
    TypeOpt,
    UptoOpt,
    VariantOpt,
    use_own_prices,
)
from condense_cli.cli.output import print_notes, reading
from condense_cli.condensers.simulate import Priced, TokenCache, in_dollars
from condense_cli.condensers.simulate import simulate as run_simulation
from condense_cli.config.comparing import comparison_sides
from condense_cli.config.loading import configured_tokenizer
from condense_cli.core.events import View
from condense_cli.dialects import read_log
from condense_cli.dialects.counting import TextCounts
from condense_cli.fast.halves import log_size, splits
from condense_cli.terminal.analysis_text import simulate_csv, simulate_text


class SimulateFormat(StrEnum):
    text = "text"
    json = "json"
    csv = "csv"


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
    prices: PricesOpt = None,
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
    tokenizer = configured_tokenizer(config[0] if config else None)
    with read_log(log, dialect=dialect, upto=upto, reading=reading("reading")) as replay:
        replay.require("simulates")  # simulated while open: a history reads its events then
        history = list(replay.history())
        start = View([], make_summary=replay.view().make_summary)
        name, path = replay.dialect, replay.path
        size = log_size(path)
        tokens = TokenCache(TextCounts(tokenizer), history, size)
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
        model, calls = replay.model, replay.usage()
        priced = None
        if model is not None:
            summarisers = [side.model for side in sides]
            priced = in_dollars(runs, history, tokens, model, calls, summarisers)
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
            "recorded": turns.spent.to_json() if turns.spent is not None else None,
        },
        "runs": [cost.to_json() for cost in priced.runs],
        "uncondensed": priced.uncondensed.to_json(),
    }
