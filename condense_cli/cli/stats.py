"""`condense stats`: events, characters and tokens of a log against its view.

No `from __future__ import annotations` (see `common`).
"""

from typing import TYPE_CHECKING, Annotated

import orjson
import typer

from condense_cli.cli.common import (
    ClientConfigOpt,
    ConfigOpt,
    DialectOpt,
    GroupByOpt,
    TableFormat,
    guarded,
    reading,
    say,
)

if TYPE_CHECKING:
    from condense_cli.core.clientconfig import ClientConfig
    from condense_cli.dialects.base import StatsReport
    from condense_cli.llm.tokens import Tokenizer


@guarded
def stats(
    logs: Annotated[
        list[str],
        typer.Argument(
            metavar="LOG...",
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
    deep: Annotated[
        bool,
        typer.Option(
            "--deep",
            help="Also count compactions that lost again the files and commands the agent "
            "read anew after the one before lost them (walks every compaction; slower).",
        ),
    ] = False,
) -> None:
    """Events, characters and tokens of a log against its view.

    Also events and bytes by type, and what each condensation forgot. Over several
    logs (or a tree), one row per log and the totals; exit 1 if a log cannot be read.
    """
    from condense_cli.config.loading import configured_tokenizer
    from condense_cli.core.clientconfig import read_client_config
    from condense_cli.core.errors import CondenseError
    from condense_cli.dialects.discovery import find_logs

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
    from condense_cli.terminal.many import STATS_COLUMNS, render, stats_row

    rows, failed = [], 0
    for log in found.logs:
        try:
            rows.append(stats_row(_report(log, dialect, tokenizer, client, deep)))
        except CondenseError as exc:
            say(f"Error: {exc.message}")
            failed += 1
    if group_by is not None:
        from condense_cli.dialects.discovery import group_of
        from condense_cli.terminal.many import grouped

        keys = [group_of(r["log"], r["dialect"], group_by.value) for r in rows]
        rows = grouped(rows, keys)
    typer.echo(render(rows, STATS_COLUMNS, format.value), nl=False)
    for line in found.says():
        say(line)
    if failed or not found.logs:
        say(
            f"{failed} of {len(found.logs)} logs could not be read"
            if found.logs
            else "no log found"
        )
        raise typer.Exit(1)


def _report(
    log: str,
    dialect: str | None,
    tokenizer: "Tokenizer | None",
    client: "ClientConfig | None",
    deep: bool,
) -> "StatsReport":
    """One log's `stats`: its numbers, the messages the model reads, thrash, and
    where each compaction fired against its client's threshold."""
    from condense_cli.analysis.thrash import all_findings
    from condense_cli.core.messages import message_numbers
    from condense_cli.dialects import read_log

    with read_log(log, dialect=dialect, reading=reading("reading")) as replay:
        report = replay.stats(tokenizer, reading("counting"))
        if replay.converts_messages:
            report.messages = message_numbers(replay.messages(replay.view()), tokenizer)
        report.thrash = [f.to_json() for f in all_findings(replay, deep)]
        thresholds = replay.thresholds(client)
        for row in report.condensations:
            row.threshold = thresholds.get(row.line)
    return report
