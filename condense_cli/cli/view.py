"""`condense view`: replay every condensation and print what the model sees.

No `from __future__ import annotations` (see `common`).
"""

import io
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from condense_cli.cli.common import (
    DialectOpt,
    LogArg,
    UptoOpt,
    ViewFormat,
    guarded,
    reading,
    say,
)
from condense_cli.core.jsonlines import encode
from condense_cli.core.text import plural

if TYPE_CHECKING:
    from condense_cli.core.events import View
    from condense_cli.core.messages import Conversion
    from condense_cli.dialects.base import Gap, Replay


@guarded
def view(
    log: LogArg,
    format: Annotated[
        ViewFormat,
        typer.Option(
            "--format",
            "-f",
            help="text for people, json/jsonl for scripts, messages: the chat messages "
            "the agent sends for the view.",
        ),
    ] = ViewFormat.text,
    upto: UptoOpt = None,
    full: Annotated[
        bool, typer.Option("--full", help="Show whole event texts, not previews.")
    ] = False,
    no_pager: Annotated[
        bool,
        typer.Option(
            "--no-pager", help="On a terminal, print long text output instead of paging it."
        ),
    ] = False,
    dialect: DialectOpt = None,
) -> None:
    """Replay every condensation and print what the model sees.

    On a terminal, text that does not fit on the screen is paged through $PAGER
    (default: less -R), unless --no-pager.
    """
    from condense_cli.dialects import read_log

    with read_log(log, dialect=dialect, upto=upto, reading=reading("reading")) as replay:
        for warning in replay.on_resume() if upto is None else []:
            say(f"{replay.path}: {warning}")
        if format is ViewFormat.jsonl:
            sys.stdout.flush()
            sys.stdout.buffer.writelines(replay.view_lines())
            sys.stdout.buffer.flush()
            return
        if format is ViewFormat.messages:
            replay.require("converts_messages")
        current = replay.view()
        gaps = replay.gaps()
        conversion = replay.messages(current) if format is ViewFormat.messages else None
    title = replay.path if upto is None else f"{replay.path} (up to {upto})"
    print_view(
        current, replay, format, title, full, gaps=gaps, page=not no_pager, conversion=conversion
    )


def say_changes(title: str, events: int, conversion: "Conversion") -> None:
    """One line on stderr when the messages are not the view one for one."""
    parts = [
        f"{what} {plural(len(changes), noun)}"
        for what, changes, noun in (
            ("dropped", conversion.dropped, "event"),
            ("put in", conversion.inserted, "message"),
            ("approximated", conversion.approximated, "message"),
        )
        if changes
    ]
    if parts:
        counted = f"{plural(len(conversion.messages), 'message')} from {plural(events, 'event')}"
        say(f"{title}: {counted}; the conversion {', '.join(parts)} (see condense stats -f json)")


def print_view(
    current: "View",
    replay: "Replay",
    format: ViewFormat,
    title: str,
    full: bool,
    *,
    gaps: "list[Gap] | None" = None,
    page: bool = False,
    conversion: "Conversion | None" = None,
) -> None:
    """Print a view in the chosen format: rich on a terminal (paged when `page` and
    longer than the screen), plain when piped; `conversion` is the view as messages."""
    from condense_cli.terminal.render import (
        header_line,
        print_rich,
        view_json,
        write_jsonl,
        write_plain,
    )

    if format is not ViewFormat.text:
        sys.stdout.flush()
        if conversion is not None:
            sys.stdout.buffer.write(encode(conversion.messages, indent=True))
            sys.stdout.buffer.write(b"\n")
            say_changes(title, len(current), conversion)
        elif format is ViewFormat.json:
            sys.stdout.buffer.write(view_json(current, replay) + b"\n")
        else:
            write_jsonl((event.to_json() for event in current), sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    header = header_line(current, replay, title)
    if not sys.stdout.isatty():
        write_plain(current, sys.stdout, header, full, gaps)
        return
    from rich.console import Console

    from condense_cli.terminal.consoles import StdoutConsole

    console = StdoutConsole(highlight=False)
    if not page:
        print_rich(current, console, header, full, gaps)
        return
    from condense_cli.terminal.pager import show

    screen = io.StringIO()
    rendered = Console(
        file=screen,
        force_terminal=True,
        color_system=console.color_system,  # type: ignore[arg-type]  # (the name it took)
        width=console.width,
        highlight=False,
    )
    print_rich(current, rendered, header, full, gaps)
    show(screen.getvalue(), console.height)
