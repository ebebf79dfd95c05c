"""`condense pin`: a fact every condensation of a log must carry.

No `from __future__ import annotations` (see `common`).
"""

from typing import Annotated

import typer

from condense_cli.cli.common import LogArg, emit, guarded, say, usage_error
from condense_cli.core.text import sanitize


@guarded
def pin(
    log: LogArg,
    text: Annotated[
        str | None, typer.Argument(help="The fact to pin, as the summary must carry it.")
    ] = None,
    list_pins: Annotated[bool, typer.Option("--list", help="Print the log's pins.")] = False,
) -> None:
    """Pin a fact: every condensation `run` makes must carry it (or is refused), and
    `audit` reports the compactions that dropped it. Kept beside the log
    (LOG.pins.json), never in it."""
    from condense_cli.core.logfile import is_stream
    from condense_cli.core.pins import add_pin, pins_path, read_pins

    if is_stream(log):
        raise usage_error(f"{log}: pins are kept beside a log file; give its path")
    if list_pins:
        for pinned in read_pins(log):
            emit(sanitize(pinned, one_line=True))
        return
    if text is None:
        raise usage_error("give the text to pin, or --list")
    added = add_pin(log, text)
    where = pins_path(log)
    say(f"pinned in {where}" if added else f"already pinned in {where}")
