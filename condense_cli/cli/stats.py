"""`condense stats`: events, characters and tokens of a log against its view.

No `from __future__ import annotations` (see `common`).
"""

from typing import Annotated

import orjson
import typer

from condense_cli.cli.common import (
    ClientConfigOpt,
    ConfigOpt,
    DialectOpt,
    LogArg,
    StatsFormat,
    guarded,
    reading,
)


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
    client_config: ClientConfigOpt = None,
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

    Also events and bytes by type, and what each condensation forgot.
    """
    from condense_cli.config.loading import configured_tokenizer
    from condense_cli.core.clientconfig import read_client_config
    from condense_cli.dialects import read_log

    tokenizer = configured_tokenizer(config) if tokens else None
    client = read_client_config(client_config) if client_config is not None else None
    from condense_cli.analysis.thrash import all_findings
    from condense_cli.core.messages import message_numbers

    with read_log(log, dialect=dialect, reading=reading("reading")) as replay:
        report = replay.stats(tokenizer, reading("counting"))
        if replay.converts_messages:
            report.messages = message_numbers(replay.messages(replay.view()), tokenizer)
        report.thrash = [f.to_json() for f in all_findings(replay, deep)]
        thresholds = replay.thresholds(client)
        for row in report.condensations:
            row.threshold = thresholds.get(row.line)
    if format is StatsFormat.json:
        typer.echo(orjson.dumps(report.to_json(), option=orjson.OPT_INDENT_2).decode())
    else:
        from condense_cli.terminal.consoles import StdoutConsole
        from condense_cli.terminal.render import print_stats

        print_stats(report, StdoutConsole(highlight=False))
