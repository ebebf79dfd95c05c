"""`condense audit`: what each condensation lost, fact by fact.

No `from __future__ import annotations` (see `options`).
"""

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from condense_cli.analysis.audit import (
    audit_log,
    combined,
    failures,
    kinds_json,
    new_tallies,
    parse_threshold,
)
from condense_cli.cli.guard import guarded
from condense_cli.cli.many import each_log, grouping, said_logs, some_logs
from condense_cli.cli.options import (
    DEFAULT_WORKERS,
    ClientConfigOpt,
    DialectOpt,
    GroupByOpt,
    PricesOpt,
    TableFormat,
    UptoOpt,
    Workers,
    local_paths,
    use_own_prices,
    with_workers,
    worker_prices,
)
from condense_cli.cli.output import echo, reading
from condense_cli.core.clientconfig import read_client_config
from condense_cli.core.errors import CondenseError, LogFailed
from condense_cli.core.jsonlines import Items, indented
from condense_cli.dialects import read_log
from condense_cli.dialects.base import quiet_reading
from condense_cli.terminal.analysis_text import audits_text
from condense_cli.terminal.output import say, write_pieces

if TYPE_CHECKING:
    from condense_cli.analysis.audit import LogAudit
    from condense_cli.core.clientconfig import ClientConfig


@guarded
@with_workers
def audit(
    logs: Annotated[
        list[str],
        typer.Argument(
            metavar="LOG...",
            callback=local_paths,
            help="Logs to audit: files (- for standard input), conversation folders, or "
            "trees searched for logs of every dialect.",
        ),
    ],
    format: Annotated[
        TableFormat,
        typer.Option(
            "--format",
            "-f",
            help="text (tables) or json; jsonl or csv: a row per log (its compactions and "
            "the facts they lost, per kind) and the totals.",
        ),
    ] = TableFormat.text,
    fail_under: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-under",
            metavar="[KIND=]PERCENT",
            help="Exit 1 when less than PERCENT of the facts (or of one KIND: "
            "contradictions, pins, constraints, tasks, instructions, errors, commands, paths, "
            "urls) were kept over every condensation. Repeatable.",
        ),
    ] = None,
    upto: UptoOpt = None,
    dialect: DialectOpt = None,
    everything: Annotated[
        bool,
        typer.Option(
            "--all", help="Count exploration commands too (ls, grep, cat, find, read-only git)."
        ),
    ] = False,
    client_config: ClientConfigOpt = None,
    group_by: GroupByOpt = None,
    workers: Workers = DEFAULT_WORKERS,
    prices: PricesOpt = None,
) -> None:
    """What each condensation lost: the facts of the events it forgot, by kind.

    What the summary says against its events comes first, then the pins, the user's
    constraints and instructions (clause by clause), tasks, errors, commands, file
    paths and URLs of the forgotten events, each looked up in the summary, then in
    the events the view still holds; the rest is lost. With several logs, a last
    table adds them up.
    Exit 1 when --fail-under is not met (over every condensation of every log).
    """

    thresholds = [parse_threshold(value) for value in fail_under or []]
    use_own_prices(prices)
    client = read_client_config(client_config) if client_config is not None else None
    found = some_logs(logs, dialect)
    work = partial(
        audit_one,
        dialect=dialect,
        upto=upto,
        everything=everything,
        client=client,
        progress=len(found.logs) == 1,
        prices=prices,
    )
    # a row per log: written as each log is audited, only the totals kept
    table = None
    if format in (TableFormat.jsonl, TableFormat.csv) or group_by is not None:
        from condense_cli.terminal.many import AUDIT_COLUMNS, Table, audit_row

        table = Table(AUDIT_COLUMNS, format.value, echo, grouping(group_by))
    results, failed = [], 0
    overall = new_tallies()
    with each_log(work, found.logs, workers, "auditing") as done:
        for result in done:
            if isinstance(result, tuple):  # one log: its error; among many: said, counted
                if len(found.logs) == 1:
                    raise LogFailed(*result)
                say(f"Error: {result[0]}")
                failed += 1
                continue
            combined([result], into=overall)
            if table is not None:
                table.add(audit_row(result))
            else:
                results.append(result)
    if table is not None:
        table.close()
    elif format is TableFormat.json and results:
        data: Any = results[0].to_dict(lazy=True)
        if len(found.logs) > 1:
            every = Items(r.to_dict(lazy=True) for r in results)
            data = {"logs": every, "overall": kinds_json(overall)}
        write_pieces(indented(data), end=b"\n")
    elif results:
        for part in audits_text(results, overall):
            echo(part)
    below = failures(overall, thresholds)
    for line in below:
        say(f"fail-under: {line}")
    said_logs(found, failed)  # exit 1 when a log could not be read
    if below:
        raise typer.Exit(1)


def audit_one(
    log: str,
    dialect: str | None,
    upto: str | None,
    everything: bool,
    client: "ClientConfig | None",
    progress: bool,
    prices: Path | None = None,
) -> "LogAudit | tuple[str, str | None, int]":
    """One log audited (in this process or a worker's), or the message, hint and exit
    code of why it cannot be (its compactions priced at `prices` before LiteLLM's)."""
    worker_prices(prices)

    shown = reading("reading") if progress else quiet_reading
    try:
        with read_log(log, dialect=dialect, upto=upto, reading=shown) as replay:
            return audit_log(replay, everything, client)
    except CondenseError as exc:
        return exc.message, exc.hint, exc.exit_code
