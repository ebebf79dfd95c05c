"""`condense diff`: what changed between two views of one log.

No `from __future__ import annotations` (see `common`).
"""

from typing import Annotated

import orjson
import typer

from condense_cli.cli.common import (
    CallModelOpt,
    ConfigsOpt,
    DialectOpt,
    LogArg,
    SetOpt,
    StatsFormat,
    SummaryTokensOpt,
    TypeOpt,
    VariantOpt,
    guarded,
    print_notes,
    reading,
    usage_error,
)


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
    from condense_cli.analysis.diff import diff_views
    from condense_cli.config.comparing import comparison_sides
    from condense_cli.config.loading import configured_tokenizer
    from condense_cli.core.events import Condensation, apply_condensation
    from condense_cli.dialects import read_log
    from condense_cli.terminal.reports import diff_text

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
    tokenizer = configured_tokenizer(config[0] if config else None)
    if comparing:
        point = points[0] if points else None
        with read_log(log, dialect=dialect, upto=point, reading=reading("reading")) as replay:
            view, name, path = replay.view(), replay.dialect, replay.path
            replay.hold(view)  # condensed and compared once the log is closed
        where = f"up to {point}" if point is not None else "now"
        views = [(where, view)] if len(sides) == 1 else []
        for side in sides:
            result = side.condenser.condense(view)
            after = apply_condensation(view, result) if isinstance(result, Condensation) else result
            views.append((side.label, after))
    else:
        views = []
        for point in points if len(points) == 2 else [points[0], None]:
            with read_log(log, dialect=dialect, upto=point, reading=reading("reading")) as replay:
                label = f"up to {point}" if point is not None else "now"
                views.append((label, replay.view()))
                replay.hold(views[-1][1])  # compared once the log is closed
                name, path = replay.dialect, replay.path
    (label_a, a), (label_b, b) = views
    difference = diff_views(a, b, (label_a, label_b), tokenizer.count_batch)
    if format is StatsFormat.json:
        data = {"dialect": name, "log": path, **difference.to_dict()}
        typer.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
    else:
        typer.echo(diff_text(path, name, difference), nl=False)
