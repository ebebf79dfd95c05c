"""`condense cost`: what the model calls of many sessions cost, in dollars.

No `from __future__ import annotations` (see `options`).
"""

import csv
import io
from enum import StrEnum
from functools import partial
from typing import Annotated, Any

import typer

from condense_cli.cli.guard import guarded
from condense_cli.cli.many import client_folders, each_log, said_logs, some_logs
from condense_cli.cli.options import (
    DAY,
    DEFAULT_WORKERS,
    DialectOpt,
    PricesOpt,
    Workers,
    day_of,
    local_paths,
    use_own_prices,
    with_workers,
)
from condense_cli.cli.output import echo
from condense_cli.core.errors import CondenseError, LogFailed
from condense_cli.core.jsonlines import indented
from condense_cli.core.pool import in_worker
from condense_cli.core.text import plural
from condense_cli.core.usage import Spending, Usage, decode_calls, encode_calls
from condense_cli.core.usagecache import UsageCache
from condense_cli.dialects import DIALECTS, read_spending, read_usage
from condense_cli.dialects.discovery import group_of
from condense_cli.terminal.output import say, write_pieces


class By(StrEnum):
    session = "session"
    day = "day"
    week = "week"
    month = "month"
    block = "block"
    model = "model"
    project = "project"


class CostFormat(StrEnum):
    text = "text"
    json = "json"
    csv = "csv"


@guarded
@with_workers
def cost(
    logs: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[LOG...]",
            callback=local_paths,
            help="Sessions: files, folders, trees (default: the clients' own folders, "
            "~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp and "
            "~/.openhands/conversations).",
        ),
    ] = None,
    by: Annotated[
        By,
        typer.Option(
            "--by",
            help="One row per session, day, week (from Monday), month, five-hour billing "
            "block (by its start), model or project (the folder the session worked in, "
            "where it is recorded, else the folder the session is in).",
        ),
    ] = By.day,
    since: Annotated[
        str | None,
        typer.Option("--since", metavar=DAY, help="Only calls on this day or later (UTC)."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", metavar=DAY, help="Only calls on this day or earlier (UTC)."),
    ] = None,
    format: Annotated[
        CostFormat, typer.Option("--format", "-f", help="text (a table), json or csv.")
    ] = CostFormat.text,
    compactions: Annotated[
        bool,
        typer.Option(
            "--compactions",
            help="Also weigh each compaction: its own call, the prompt cache it made "
            "the calls after it write again, and what those calls did not send; the "
            "net in dollars (the sessions are replayed for it).",
        ),
    ] = False,
    prices: PricesOpt = None,
    cache: Annotated[
        bool,
        typer.Option(
            "--cache/--no-cache",
            help="Keep each file's calls in condense's cache (~/.cache/condense) and "
            "read again only the files that changed since; --no-cache reads every one.",
        ),
    ] = True,
    dialect: DialectOpt = None,
    workers: Workers = DEFAULT_WORKERS,
) -> None:
    """What the sessions' model calls cost: tokens and dollars, by session, day, week,
    month, billing block, model or project.

    Each call the log records is counted once, with its input, output, cache writes
    and cache reads, priced by LiteLLM's table as the installed litellm ships it (no
    network); a model the table has no price for, at the dollars its log records
    (OpenHands V1), else counted in tokens and named.
    """
    from condense_cli.analysis.cost import COLUMNS, spend_by

    first, last = day_of(since), day_of(until)
    use_own_prices(prices)
    paths = logs or client_folders()
    kept = UsageCache() if cache and not compactions else None
    found = some_logs(paths, dialect, kept.files() if kept is not None else None)
    calls: list[tuple[str, Usage]] = []
    unread: dict[str, int] = {}
    callless = 0  # logs read that record no model call
    seen: set[str] = set()
    failed = 0
    weighed: list[tuple[str, Spending]] = []
    work = partial(usage_one, dialect=dialect, compactions=compactions)
    known = kept.known(found.logs) if kept is not None else {}  # as read before
    with each_log(work, [log for log in found.logs if log not in known], workers) as read:
        for log in found.logs:
            result = (*known[log], None) if log in known else next(read)
            if result[0] is None:  # the message, hint and exit code of a log not read
                if len(found.logs) == 1:
                    raise LogFailed(*result[1:])
                say(f"Error: {result[1]}")
                failed += 1
                continue
            name, usage, spending = result
            body = None
            if isinstance(usage, bytes):  # as a worker hands them back
                body, usage = usage, decode_calls(usage)
            if kept is not None and log not in known and usage is not None:
                kept.put(log, name, body or encode_calls(usage))
            if spending is not None and spending.compactions:
                weighed.append((log, spending))
            if usage is None:
                unread[name] = unread.get(name, 0) + 1
                continue
            callless += not usage
            # the row a call goes to, when it is the log's: the session the log is
            # part of (a subagent's, the session that started it), or its project
            if by is By.project:
                label = group_of({"log": log, "dialect": name}, "project")
            else:
                label = DIALECTS[name].session_of(log) if name in DIALECTS else log
            for call in usage:  # a call another session holds too (a fork): once
                if call.key is None or call.key not in seen:
                    calls.append((label, call))
                    if call.key is not None:
                        seen.add(call.key)
    if kept is not None:
        kept.close()
    per = "session" if by is By.project else by.value  # (the calls carry their project)
    rows = spend_by(per, calls, first, last)
    total = spend_by("session", [("all", c) for _, c in calls], first, last)
    totals = total.get("all")
    if format is CostFormat.json:
        data: dict[str, Any] = {
            "by": by.value,
            "rows": [{by.value: k, **v.to_json()} for k, v in rows.items()],
        }
        data["totals"] = totals.to_json() if totals is not None else None
        if compactions:
            data["compactions"] = compaction_rows(weighed)
        write_pieces(indented(data), end=b"\n")
    elif format is CostFormat.csv:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([by.value, *COLUMNS])
        for key, spend in rows.items():
            writer.writerow([key, *(spend.to_json()[c] for c in COLUMNS)])
        echo(out.getvalue())
    elif totals is not None:  # (none: no call to show, and why is said below)
        from condense_cli.terminal.cost_text import cost_table

        echo(cost_table(by.value, rows, totals))
    if format is CostFormat.text and compactions:
        from condense_cli.terminal.cost_text import compaction_table

        echo(compaction_table(weighed))
    for name, count in unread.items():
        say(f"{plural(count, 'log')} of {name}: their usage is not read yet, so left out")
    taken = len(found.logs) - failed - sum(unread.values())  # (the logs whose calls were read)
    if callless:
        say(callless_line(callless, taken))
    if calls and totals is None:
        say(f"none of the {plural(len(calls), 'call')} read falls in the days asked for")
    said_logs(found, failed)


def callless_line(callless: int, taken: int) -> str:
    """What is said of the `callless` logs of the `taken` read that record no call."""
    if callless == taken == 1:
        return "the log read records no model call"
    if callless == taken:
        return f"none of the {taken:,} logs read records a model call"
    verb = "records" if callless == 1 else "record"
    return f"{callless} of the {plural(taken, 'log')} read {verb} no model call"


def usage_one(log: str, dialect: str | None, compactions: bool) -> Any:
    """The dialect and calls of one log (in this process, or a worker's, which hands
    them back as `encode_calls` writes them), with its spending where `compactions`
    asks for it, or (None and) the message, hint and exit code of why they cannot be
    read."""
    try:
        name, usage = read_usage(log, dialect)
        handed = encode_calls(usage) if usage is not None and in_worker() else usage
        return name, handed, read_spending(log, dialect) if compactions else None
    except CondenseError as exc:
        return None, exc.message, exc.hint, exc.exit_code


def compaction_rows(weighed: list[tuple[str, Spending]]) -> dict[str, Any]:
    """Each compaction's figures, by its session and number, and their total."""
    from condense_cli.analysis.economics import total, weigh

    rows, every = [], []
    for log, spending in weighed:
        for compaction, figures in zip(spending.compactions, weigh(spending), strict=True):
            every.append(figures)
            rows.append({"session": log, "compaction": compaction.number, **figures.to_json()})
    return {"rows": rows, "totals": total(every).to_json()}
