"""`condense report`: one self-contained HTML page of one or more sessions.

No `from __future__ import annotations` (see `options`).
"""

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from condense_cli import __version__
from condense_cli.analysis.timeline import timeline
from condense_cli.cli.guard import guarded
from condense_cli.cli.many import said_logs, some_logs
from condense_cli.cli.options import (
    CallModelOpt,
    ClientConfigOpt,
    ConfigsOpt,
    DialectOpt,
    PricesOpt,
    SummaryTokensOpt,
    UptoOpt,
    local_paths,
    use_own_prices,
)
from condense_cli.cli.output import print_notes, reading
from condense_cli.condensers.compare import Standing, standings
from condense_cli.condensers.simulate import TokenCache, in_dollars
from condense_cli.condensers.simulate import simulate as run_simulation
from condense_cli.config.comparing import comparison_sides
from condense_cli.config.loading import configured_tokenizer
from condense_cli.core.clientconfig import read_client_config
from condense_cli.core.errors import CondenseError
from condense_cli.core.events import View, model_text
from condense_cli.core.files import replace_file
from condense_cli.core.logfile import is_stream
from condense_cli.core.remote import is_url
from condense_cli.core.text import plural
from condense_cli.dialects import read_log
from condense_cli.dialects.counting import TextCounts
from condense_cli.fast.halves import log_size, splits
from condense_cli.terminal.html_report import log_page as lay_out
from condense_cli.terminal.html_report import render_page, shown
from condense_cli.terminal.output import say

if TYPE_CHECKING:
    from condense_cli.core.clientconfig import ClientConfig
    from condense_cli.core.events import Event
    from condense_cli.terminal.html_report import LogPage


@guarded
def report(
    logs: Annotated[
        list[str],
        typer.Argument(
            metavar="LOG...",
            callback=local_paths,
            help="Logs to show: files (- for standard input), conversation folders, or "
            "trees searched for logs of every dialect; several make one page with an index.",
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", metavar="FILE", help="Where to write the page (- for stdout)."
        ),
    ] = Path("report.html"),
    open_page: Annotated[
        bool, typer.Option("--open", help="Open the page in the web browser when written.")
    ] = False,
    config: ConfigsOpt = None,
    call_model: CallModelOpt = False,
    summary_tokens: SummaryTokensOpt = 500,
    tokens: Annotated[
        bool,
        typer.Option(
            "--tokens/--no-tokens",
            help="Measure the view in tokens of the [llm] model's tokenizer, or in "
            "characters (faster on big logs).",
        ),
    ] = True,
    everything: Annotated[
        bool,
        typer.Option(
            "--all", help="Audit exploration commands too (ls, grep, cat, find, read-only git)."
        ),
    ] = False,
    upto: UptoOpt = None,
    dialect: DialectOpt = None,
    client_config: ClientConfigOpt = None,
    prices: PricesOpt = None,
    later: Annotated[
        bool,
        typer.Option(
            "--later/--no-later",
            help="Link each path and error a condensation lost to the events of the "
            "project's later sessions that name it again (in the clients' folders and "
            "the log's own, found with `condense search`'s index).",
        ),
    ] = True,
) -> None:
    """Write one HTML page of each log as the model saw it, and of its condensations.

    The page shows every event in order (who spoke, tool calls with their results,
    long outputs folded), each condensation as a band where it fired (the summary,
    the events it forgot, and the facts it lost, pins and instructions first), the
    view's size per step against the client's threshold (and, for each --config, the
    same history under that condenser, as `simulate` runs it), and a search over
    every event. It needs no network: open it from disk or from a CI artefact.
    """

    client = read_client_config(client_config) if client_config is not None else None
    use_own_prices(prices)
    found = some_logs(logs, dialect)
    walked: dict[str, list[str]] | None = {} if later else None  # (each folder walked once)
    pages: list[LogPage] = []
    failed = 0
    for log in found.logs:
        try:
            page = log_page(
                len(pages),
                log,
                config,
                call_model,
                summary_tokens,
                tokens,
                everything,
                upto,
                dialect,
                client,
                walked,
            )
        except CondenseError as exc:
            if len(found.logs) == 1:
                raise
            say(f"Error: {exc.message}")  # among many: said, the others shown, exit 1
            failed += 1
            continue
        pages.append(page)
    if not pages:
        said_logs(found, failed)  # none could be read: no page (exit 1)
    command = shlex.join(["condense", *sys.argv[1:]])
    parts = render_page(pages, command, __version__)
    if str(output) == "-":
        sys.stdout.buffer.writelines(parts)
    else:
        replace_file(output, parts)
        size = output.stat().st_size
        say(f"wrote {output} ({size:,} bytes, {plural(len(pages), 'log')})")
        if open_page:
            import webbrowser

            webbrowser.open(output.resolve().as_uri())
    said_logs(found, failed)


def log_page(
    number: int,
    log: str,
    configs: list[str] | None,
    call_model: bool,
    summary_tokens: int,
    tokens: bool,
    everything: bool,
    upto: str | None,
    dialect: str | None,
    client: "ClientConfig | None",
    later: dict[str, list[str]] | None = None,
) -> "LogPage":
    """One log read, audited, measured, simulated under each config, and laid out
    (with `later`, the logs of each folder walked so far this run, what it lost linked
    to later sessions: `mentioned_later`)."""

    notes: list[str] = []
    sides = (
        comparison_sides(configs, None, None, None, call_model, summary_tokens, notes)
        if configs
        else []
    )
    if number == 0:
        print_notes(notes)  # the same for every log
    with read_log(log, dialect=dialect, upto=upto, reading=reading("reading")) as replay:
        # a dialect that keeps no history shows its view (`analysis.timeline`)
        history = list(replay.history()) if replay.simulates else list(replay.view())
        count: Callable[[Event], int]
        if tokens:
            tokenizer = configured_tokenizer(configs[0] if configs else None)
            cache = TokenCache(TextCounts(tokenizer), history, log_size(replay.path))
            count, unit = cache, "tokens"
        else:
            count, unit = _chars, "chars"
        line = timeline(replay, history, count, everything, client)
        start = View([], make_summary=replay.view().make_summary)
        runs = []  # simulated while the log is open: a history reads its events then
        rows: list[Standing] = []
        if sides:
            measure = cache if tokens else TokenCache(TextCounts(None), history, 0)
            aside = splits(log_size(replay.path))
            runs = [
                run_simulation(
                    history,
                    side.label,
                    side.condenser,
                    side.carrying(start),
                    measure,
                    side.meter,
                    aside,
                )
                for side in sides
            ]
            if tokens and replay.model is not None:  # in dollars, as `simulate --compare`
                summarisers = [side.model for side in sides]
                priced = in_dollars(
                    runs, history, measure, replay.model, replay.usage(), summarisers
                )
                rows = standings(history, runs, priced)
        page = lay_out(number, line, runs, unit, rows)  # its events' texts are read from the log
        stamps = (e.data.get("timestamp") for e in line.events if isinstance(e.data, dict))
        started = (
            next((s for s in stamps if isinstance(s, str) and s), "") if later is not None else ""
        )
    if later is not None:
        mentioned_later(page, started, log, later)
    return page


LINKED_KINDS = ("paths", "errors")  # the lost facts looked for in later sessions


def mentioned_later(page: "LogPage", started: str, log: str, walked: dict[str, list[str]]) -> None:
    """Each lost path and error, with the events of the project's sessions that name it
    again after `started` (the log's first moment; `condense search`'s index, brought
    up to date for them; `walked`: the logs of each folder walked so far this run)."""
    from condense_cli.analysis.search import mentions, project_history
    from condense_cli.terminal.html_report import Mention

    bands = [item for chunk in page.items for kind, item in chunk if kind == "band"]
    lost = [*(fact for band in bands for fact in band.lost), *page.current_lost]
    wanted = [fact for fact in lost if fact.kind in LINKED_KINDS]
    if not wanted or is_stream(log) or is_url(log):
        return
    index, logs = project_history(Path(log), walked)
    try:
        found: dict[str, list[Mention]] = {}  # (a fact lost twice is looked for once)
        for fact in wanted:
            if fact.text not in found:
                found[fact.text] = [
                    Mention(shown(h.log), h.row.id, h.row.when[:16].replace("T", " "), h.command)
                    for h in mentions(index, logs, fact.text, started)
                ]
            fact.again = found[fact.text]
    finally:
        index.close()


def _chars(event: "Event") -> int:
    """What the model reads of an event, in characters."""

    return len(model_text(event))
