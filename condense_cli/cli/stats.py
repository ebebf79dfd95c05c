"""`condense stats`: events, characters and tokens of a log against its view.

No `from __future__ import annotations` (see `options`).
"""

import functools
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import orjson
import typer

from condense_cli.analysis.thrash import all_findings
from condense_cli.cli.guard import guarded
from condense_cli.cli.many import each_log, grouping, said_logs
from condense_cli.cli.options import (
    DEFAULT_WORKERS,
    ClientConfigOpt,
    ConfigOpt,
    DeepOpt,
    DialectOpt,
    GroupByOpt,
    PricesOpt,
    TableFormat,
    Workers,
    local_paths,
    use_own_prices,
    with_workers,
    worker_prices,
)
from condense_cli.cli.output import echo, reading
from condense_cli.config.loading import configured_tokenizer
from condense_cli.core.clientconfig import read_client_config
from condense_cli.core.errors import CondenseError
from condense_cli.dialects import read_log
from condense_cli.dialects.base import quiet_reading
from condense_cli.dialects.counting import TextCounts
from condense_cli.dialects.discovery import find_logs
from condense_cli.fast.halves import in_two, log_size, split_min_bytes, splits
from condense_cli.llm.messages import Conversion, MessageSums
from condense_cli.terminal.output import say

if TYPE_CHECKING:
    from condense_cli.core.clientconfig import ClientConfig
    from condense_cli.core.events import View
    from condense_cli.dialects.base import Reading, Replay
    from condense_cli.dialects.reports import StatsReport
    from condense_cli.llm.tokens import Tokenizer


@guarded
@with_workers
def stats(
    logs: Annotated[
        list[str],
        typer.Argument(
            metavar="LOG...",
            callback=local_paths,
            help="Logs: files (- for standard input), conversation folders, or trees "
            "searched for logs of every dialect.",
        ),
    ],
    format: Annotated[
        TableFormat,
        typer.Option(
            "--format",
            "-f",
            help="text or json (one log: its tables; several: a row per log and the "
            "totals), jsonl or csv (a row per log and the totals).",
        ),
    ] = TableFormat.text,
    tokens: Annotated[
        bool,
        typer.Option("--tokens/--no-tokens", help="Count tokens with the [llm] model's tokenizer."),
    ] = True,
    config: ConfigOpt = None,
    dialect: DialectOpt = None,
    client_config: ClientConfigOpt = None,
    group_by: GroupByOpt = None,
    workers: Workers = DEFAULT_WORKERS,
    deep: DeepOpt = False,
    prices: PricesOpt = None,
) -> None:
    """Events, characters and tokens of a log against its view.

    Also events and bytes by type, what each condensation forgot, and what each cost
    and saved in dollars where the log records the model's calls. Over several logs
    (or a tree), one row per log and the totals; exit 1 if a log cannot be read.
    """
    use_own_prices(prices)

    tokenizer = configured_tokenizer(config) if tokens else None
    client = read_client_config(client_config) if client_config is not None else None
    found = find_logs(logs, dialect)
    one = (
        len(found.logs) == 1 and format in (TableFormat.text, TableFormat.json) and group_by is None
    )
    if one:
        report = _report(found.logs[0], dialect, tokenizer, client, deep)
        if format is TableFormat.json:
            typer.echo(orjson.dumps(report.to_json(), option=orjson.OPT_INDENT_2).decode())
        else:
            from condense_cli.terminal.consoles import StdoutConsole
            from condense_cli.terminal.render import print_stats

            print_stats(report, StdoutConsole(highlight=False))
        return

    from condense_cli.terminal.many import STATS_COLUMNS, Table

    table = Table(STATS_COLUMNS, format.value, echo, grouping(group_by))
    failed = 0
    # the tokenizer is made again in each worker: it does not cross processes
    counting = config if tokens else False
    work = partial(_row, dialect=dialect, config=counting, client=client, deep=deep, prices=prices)
    with each_log(work, found.logs, workers) as results:
        for row, error in results:
            if row is not None:
                table.add(row)
            else:
                say(f"Error: {error}")
                failed += 1
    table.close()
    said_logs(found, failed)


def _row(
    log: str,
    dialect: str | None,
    config: str | bool | None,
    client: "ClientConfig | None",
    deep: bool,
    prices: Path | None,
) -> tuple[dict[str, Any] | None, str | None]:
    """One log's row of the table (in this process or a worker's), or why there is none;
    tokens counted with the tokenizer `config` sets (`False`: none), dollars at the
    rates of `prices` before LiteLLM's."""
    from condense_cli.terminal.many import stats_row

    worker_prices(prices)
    tokenizer = _tokenizer(config) if config is not False else None
    try:
        return stats_row(_report(log, dialect, tokenizer, client, deep, quiet_reading)), None
    except CondenseError as exc:
        return None, exc.message


@functools.cache
def _tokenizer(config: str | None) -> "Tokenizer":
    """The tokenizer of `config`, made once per process."""

    return configured_tokenizer(config)


def _report(
    log: str,
    dialect: str | None,
    tokenizer: "Tokenizer | None",
    client: "ClientConfig | None",
    deep: bool,
    shown: "Reading | None" = None,
) -> "StatsReport":
    """One log's `stats`: its numbers, the messages the model reads, thrash, and
    where each compaction fired against its client's threshold (`shown`: how its
    reading is shown, by default a progress bar on a terminal)."""

    counts = TextCounts(tokenizer)  # a read may count as it parses (V1's folders)
    with read_log(
        log, dialect=dialect, reading=shown or reading("reading"), counts=counts
    ) as replay:
        counting = shown or reading("counting")
        # With tokens, the view is made after the walk (which does not hold it twice)
        view = replay.view() if replay.converts_messages and tokenizer is None else None
        if view is not None and _converts_apart(replay, view) and not replay.counted_while_read:
            # the walk (in two processes) with a forked child converting the view beside
            apart = view
            report, messages = in_two(
                lambda: replay.stats(None, counting),
                lambda: _messages(replay, apart, None, cut=False),
            )
            report.messages = messages
        else:
            report = replay.stats(tokenizer, counting)
            if replay.converts_messages:  # after the walk: its token counts are reused
                made = view if view is not None else replay.view()
                report.messages = _messages(replay, made, tokenizer)
        report.thrash = [f.to_json() for f in all_findings(replay, deep)]
        report.model = replay.model
        thresholds = replay.thresholds(client)
        for row in report.condensations:
            row.threshold = thresholds.get(row.line)
        _weigh(replay, report)
        if client is not None and report.client is not None:  # as the user's settings say
            report.client["resume_compaction"] = replay.resume_figure(client)
    return report


def _weigh(replay: "Replay", report: "StatsReport") -> None:
    """Each condensation's figures (what it cost and saved), and their total, where the
    log records the calls around them."""
    from condense_cli.analysis.economics import matched, total

    rows = report.condensations
    if not rows:
        return
    found = matched(replay.spending(), [row.line for row in rows])
    for row, figures in zip(rows, found, strict=True):
        row.economics = figures
    weighed = [figures for figures in found if figures is not None]
    if weighed:
        report.economics = total(weighed)


# A view this long takes about 0.1 s to convert, what a forked child costs.
CONVERT_APART_MIN_EVENTS = 10_000


def _converts_apart(replay: "Replay", view: "View") -> bool:
    """Whether a forked child converts the view to messages, or the part of it after
    its cut (`_cut`): for a big log with a long view (or every log that
    `CONDENSE_STATS_SPLIT_MIN_BYTES=0` splits). Without tokens to count, the whole view
    while this process walks the log (itself in two processes), unless the read counted
    it (`Replay.counted_while_read`: there is no walk); else after the walk, which
    hands the child the counts of the view's texts."""

    if not splits(log_size(replay.path)):
        return False
    return split_min_bytes() == 0 or len(view) >= CONVERT_APART_MIN_EVENTS


def _cut(replay: "Replay", view: "View") -> int | None:
    """Where a long view is cut to be converted in two processes (`Replay.conversion_cut`)."""
    return replay.conversion_cut(view) if _converts_apart(replay, view) else None


def _messages(
    replay: "Replay", view: "View", tokenizer: "Tokenizer | None", cut: bool = True
) -> dict[str, Any]:
    """The `messages` part of a report: the view converted to chat messages, counted
    (the texts the log's walk tokenized are not tokenized again); with `cut`, the second
    part of a view the conversion can cut (`_cut`) converted in a forked child."""

    at = _cut(replay, view) if cut else None
    if at is None:
        sums, conversion = _counted(replay, view, tokenizer)
    else:
        first, rest = view.with_events(view.events[:at]), view.with_events(view.events[at:])
        (sums, conversion), (more, changes) = in_two(
            lambda: _counted(replay, first, tokenizer), lambda: _counted(replay, rest, tokenizer)
        )
        sums.merge(more)
        conversion.extend(changes)
    return sums.numbers(conversion, tokenizer is not None)


def _counted(
    replay: "Replay", view: "View", tokenizer: "Tokenizer | None"
) -> "tuple[MessageSums, Conversion]":
    """`view` converted to chat messages and counted, and what the conversion changed."""

    conversion, sums = Conversion(), MessageSums()
    sums.add(replay.each_message(view, conversion), tokenizer, replay.token_counts)
    return sums, conversion
