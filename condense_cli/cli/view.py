"""`condense view`: replay every condensation and print what the model sees.

No `from __future__ import annotations` (see `common`).
"""

import io
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Annotated, Any

import orjson
import typer

from condense_cli.cli.common import (
    AddressOpt,
    DialectOpt,
    EngineName,
    EngineOpt,
    JobsOpt,
    UptoOpt,
    ViewFormat,
    each_log,
    guarded,
    local_paths,
    reading,
    said_logs,
    say,
    usage_error,
    write_pieces,
)
from condense_cli.core.text import plural

if TYPE_CHECKING:
    from condense_cli.core.events import View
    from condense_cli.core.messages import Conversion
    from condense_cli.dialects.base import Gap, Replay
    from condense_cli.dialects.discovery import Found


@guarded
def view(
    logs: Annotated[
        list[str],
        typer.Argument(
            metavar="LOG...",
            callback=local_paths,
            help="The session log (JSONL), a conversation folder, or - for standard input; "
            "with --format json or jsonl, several logs or trees searched for logs.",
        ),
    ],
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
    jobs: JobsOpt = None,
    engine: EngineOpt = EngineName.local,
    address: AddressOpt = None,
) -> None:
    """Replay every condensation and print what the model sees.

    On a terminal, text that does not fit on the screen is paged through $PAGER
    (default: less -R), unless --no-pager. Over several logs (json, jsonl), each
    log's view in turn, named by its log.
    """
    from condense_cli.dialects import read_log
    from condense_cli.dialects.discovery import find_logs

    found = find_logs(logs, dialect)
    several = found.logs != logs  # several logs, or a tree searched for them
    if several and format in (ViewFormat.json, ViewFormat.jsonl):
        _view_many(found, format, upto, dialect, jobs, engine, address)
        return
    if len(logs) > 1 or len(found.logs) > 1:
        raise usage_error(f"several logs are viewed as json or jsonl, not {format.value}")
    log = found.logs[0] if found.logs else logs[0]  # (none: reading it says why)

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
        conversion = messages = None
        if format is ViewFormat.messages:
            from condense_cli.core.messages import Conversion

            conversion = Conversion()
            messages = replay.each_message(current, conversion)
        title = replay.path if upto is None else f"{replay.path} (up to {upto})"
        # printed while the log is open: a view's events may read their lines back
        print_view(
            current,
            replay,
            format,
            title,
            full,
            gaps=gaps,
            page=not no_pager,
            conversion=conversion,
            messages=messages,
        )


def _view_many(
    found: "Found",
    format: ViewFormat,
    upto: str | None,
    dialect: str | None,
    jobs: int | None,
    engine: EngineName,
    address: str | None,
) -> None:
    """Each log's view, in the logs' order: JSON `{"logs": [view, ...]}` (each view as
    one log's, with its `log` first), or JSONL lines `{"log", "event"}` (the event as
    its log line). A log that cannot be read is said on stderr and fails the command
    (exit 1) once the rest is out, so the document stays whole."""
    from functools import partial

    work = partial(view_of, format=format, upto=upto, dialect=dialect)
    out = sys.stdout.buffer
    sys.stdout.flush()
    failed = 0
    if format is ViewFormat.json:
        out.write(b'{"logs":[')
    first = True
    with each_log(work, found.logs, jobs, engine, address) as results:
        for body, notes in results:
            for note in notes:
                say(note)
            if body is None:
                failed += 1
                continue
            if format is ViewFormat.json and not first:
                out.write(b",")
            out.write(body)
            first = False
    if format is ViewFormat.json:
        out.write(b"]}\n")
    out.flush()
    said_logs(found, failed)


def view_of(
    log: str, format: ViewFormat, upto: str | None, dialect: str | None
) -> tuple[bytes | None, list[str]]:
    """One log's view for `_view_many` (in this process or a worker's), and the lines
    to say on stderr (what the client will do on resume; why the log cannot be read)."""
    from condense_cli.core.errors import CondenseError
    from condense_cli.dialects import read_log
    from condense_cli.terminal.render import view_json

    try:
        with read_log(log, dialect=dialect, upto=upto) as replay:
            notes = [f"{replay.path}: {w}" for w in (replay.on_resume() if upto is None else [])]
            name = orjson.dumps(replay.path)
            if format is ViewFormat.json:
                return b'{"log":' + name + b"," + view_json(replay.view(), replay)[1:], notes
            return b"".join(_named(name, replay.view_lines())), notes
    except CondenseError as exc:
        return None, [f"Error: {exc.message}"]


def _named(name: bytes, chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Each JSON line of `chunks` (whole lines, one or more per chunk) as the line
    `{"log": name, "event": line}`, the line's bytes as they are."""
    head = b'{"log":' + name + b',"event":'
    for chunk in chunks:
        for line in chunk.split(b"\n"):
            line = line.removesuffix(b"\r")
            if line.strip():
                yield head + line + b"}\n"


class Counted:
    """An iterable that counts the items taken from it."""

    def __init__(self, items: Iterable[Any]) -> None:
        self.items = items
        self.count = 0

    def __iter__(self) -> Iterator[Any]:
        for item in self.items:
            self.count += 1
            yield item


def say_changes(title: str, events: int, conversion: "Conversion", messages: int) -> None:
    """One line on stderr when the `messages` messages are not the view one for one."""
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
        counted = f"{plural(messages, 'message')} from {plural(events, 'event')}"
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
    messages: "Iterable[dict[str, Any]] | None" = None,
) -> None:
    """Print a view in the chosen format: rich on a terminal (paged when `page` and
    longer than the screen), plain when piped; `conversion` is the view as messages
    (`messages`, when given, are its messages as they are made)."""
    from condense_cli.core.jsonlines import Items, indented
    from condense_cli.terminal.render import (
        header_line,
        print_rich,
        view_json_pieces,
        write_jsonl,
        write_plain,
    )

    if format is not ViewFormat.text:
        sys.stdout.flush()
        if conversion is not None:
            given = Counted(conversion.messages if messages is None else messages)
            write_pieces(indented(Items(given)), b"\n")
            say_changes(title, len(current), conversion, given.count)
        elif format is ViewFormat.json:
            write_pieces(view_json_pieces(current, replay), b"\n")
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
