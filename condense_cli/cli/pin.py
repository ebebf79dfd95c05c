"""`condense pin`: a fact every condensation of a log must carry.

No `from __future__ import annotations` (see `options`).
"""

from typing import TYPE_CHECKING, Annotated

import typer

from condense_cli.cli.guard import guarded, usage_error
from condense_cli.cli.options import DialectOpt, LogArg
from condense_cli.cli.output import emit, reading
from condense_cli.core.logfile import is_stream
from condense_cli.core.pins import add_pin, check_pin, holding, pins_path
from condense_cli.core.text import quote, sanitize
from condense_cli.dialects import append_to_log, read_log
from condense_cli.terminal.output import say

if TYPE_CHECKING:
    from condense_cli.dialects.base import Replay


@guarded
def pin(
    log: LogArg,
    text: Annotated[
        str | None, typer.Argument(help="The fact to pin, as the summary must carry it.")
    ] = None,
    list_pins: Annotated[bool, typer.Option("--list", help="Print the log's pins.")] = False,
    dialect: DialectOpt = None,
) -> None:
    """Pin a fact: every condensation `run` makes must carry it (or is refused), and
    `audit` and `check` report the compactions that dropped it.

    Kept in the log where its client skips a record it does not know (Claude Code),
    else beside it (LOG.pins.json), so no client reads a record it would refuse.
    """

    if is_stream(log):
        raise usage_error(f"{log}: pins are kept in or beside a log file; give its path")
    with read_log(log, dialect=dialect, reading=reading("reading")) as replay:
        pins, in_log = replay.pins(), replay.pins_in_log
        held = _held_by(replay, text) if text is not None and not list_pins else None
    if list_pins:
        for pinned in pins:
            emit(sanitize(pinned, one_line=True))
        return
    if text is None:
        raise usage_error("give the text to pin, or --list")
    check_pin(text)
    if held is not None and not held:
        say(
            f"Warning: no event of {log} holds {quote(text)} (as written, spaces and case "
            "aside): it is pinned, and every condensation must carry it from now on; "
            "check the text with `condense view`, or `condense pin --list`"
        )
    elif held:
        say(f"held by event{'s' if len(held) > 1 else ''} #{', #'.join(held[:5])}")
    if not in_log:
        where = pins_path(log)
        say(f"pinned in {where}" if add_pin(log, text) else f"already pinned in {where}")
        return
    with append_to_log(log, dialect=dialect) as locked:
        if text in locked.pins():
            say(f"already pinned in {log}")
            return
        locked.append(locked.pin_record(text))
    say(f"pinned in {log}")


def _held_by(replay: "Replay", text: str) -> list[str]:
    """The ids of the events of the log's history (or its view) that hold `text`."""

    events = [e for e in replay.history() if e is not None] if replay.simulates else None
    return [str(e.id) for e in holding(text, events if events is not None else replay.view())]
