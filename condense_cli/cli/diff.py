"""`condense diff`: what changed between two views of one log.

No `from __future__ import annotations` (see `options`).
"""

import contextlib
from typing import Annotated

import orjson
import typer

from condense_cli.analysis.diff import diff_views
from condense_cli.cli.guard import guarded, usage_error
from condense_cli.cli.options import (
    CallModelOpt,
    ConfigsOpt,
    DialectOpt,
    LogArg,
    SetOpt,
    StatsFormat,
    SummaryTokensOpt,
    TypeOpt,
    VariantOpt,
)
from condense_cli.cli.output import print_notes, reading
from condense_cli.condensers.base import set_agent_window
from condense_cli.config.comparing import comparison_sides
from condense_cli.config.loading import configured_tokenizer
from condense_cli.core.events import Condensation, apply_condensation
from condense_cli.core.logfile import is_stream
from condense_cli.dialects import read_log
from condense_cli.dialects.counting import TextCounts
from condense_cli.fast.halves import log_size
from condense_cli.terminal.analysis_text import diff_text


@guarded
def diff(
    log: LogArg,
    upto: Annotated[
        list[str] | None,
        typer.Option(
            "--upto",
            metavar="ID",
            help="Compare the view up to this event (once: with the view now; twice: the two).",
        ),
    ] = None,
    config: ConfigsOpt = None,
    variant: VariantOpt = None,
    type: TypeOpt = None,
    set: SetOpt = None,
    call_model: CallModelOpt = False,
    summary_tokens: SummaryTokensOpt = 500,
    format: Annotated[
        StatsFormat, typer.Option("--format", "-f", help="text or json.")
    ] = StatsFormat.text,
    dialect: DialectOpt = None,
) -> None:
    """Which events left and entered the view, which summaries changed, in tokens.

    Two moments of a log (--upto A --upto B), or what two configurations would do to
    the view (--config a.toml --config b.toml, or --variant groups). Nothing is
    appended.
    """

    points = upto or []
    notes: list[str] = []
    comparing = bool(config or variant or type or set)
    if comparing:
        if len(points) > 1:
            raise usage_error("compare configurations at one --upto point at most")
        count = len(config or [None]) * len(variant or [None])
        if count > 2:
            raise usage_error(f"diff compares two views, and these options make {count}")
        sides = comparison_sides(config, type, set, variant, call_model, summary_tokens, notes)
        print_notes(notes)
    elif not 1 <= len(points) <= 2:
        raise usage_error("give --upto A (and --upto B), or --config a.toml --config b.toml")
    if not comparing and is_stream(log):
        moments = " and up to ".join(points) if len(points) == 2 else f"{points[0]}, and whole"
        raise usage_error(
            f"diff reads {log} twice (up to {moments}), and a stream can be read once: "
            "save it to a file first"
        )
    counts = TextCounts(configured_tokenizer(config[0] if config else None))
    with contextlib.ExitStack() as open_logs:  # compared while they are open
        if comparing:
            point = points[0] if points else None
            replay = open_logs.enter_context(
                read_log(log, dialect=dialect, upto=point, reading=reading("reading"))
            )
            view = replay.view()
            where = f"up to {point}" if point is not None else "now"
            views = [(where, view)] if len(sides) == 1 else []
            for side in sides:
                set_agent_window(side.condenser, replay.model)
                result = side.condenser.condense(side.carrying(view))
                after = (
                    apply_condensation(view, result) if isinstance(result, Condensation) else result
                )
                views.append((side.label, after))
        else:
            views = []
            for point in points if len(points) == 2 else [points[0], None]:
                replay = open_logs.enter_context(
                    read_log(log, dialect=dialect, upto=point, reading=reading("reading"))
                )
                views.append((f"up to {point}" if point is not None else "now", replay.view()))
        (label_a, a), (label_b, b) = views
        difference = diff_views(a, b, (label_a, label_b), counts, log_size(replay.path))
        if format is StatsFormat.json:
            data = {"dialect": replay.dialect, "log": replay.path, **difference.to_dict()}
            typer.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
        else:
            typer.echo(diff_text(replay.path, replay.dialect, difference), nl=False)
