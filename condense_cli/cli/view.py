"""`condense view`: replay every condensation and print what the model sees.

No `from __future__ import annotations` (see `options`).
"""

import sys
from collections.abc import Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Annotated

import orjson
import typer

from condense_cli.cli.guard import guarded, usage_error
from condense_cli.cli.many import each_log, said_logs
from condense_cli.cli.options import (
    DEFAULT_WORKERS,
    DialectOpt,
    UptoOpt,
    Workers,
    local_paths,
    with_workers,
)
from condense_cli.cli.output import reading
from condense_cli.core.errors import CondenseError
from condense_cli.dialects import read_log
from condense_cli.dialects.discovery import find_logs
from condense_cli.llm.messages import Conversion
from condense_cli.terminal.output import say
from condense_cli.terminal.views import ViewFormat, print_view

if TYPE_CHECKING:
    from condense_cli.dialects.discovery import Found


@guarded
@with_workers
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
    workers: Workers = DEFAULT_WORKERS,
) -> None:
    """Replay every condensation and print what the model sees.

    On a terminal, text that does not fit on the screen is paged through $PAGER
    (default: less -R), unless --no-pager. Over several logs (json, jsonl), each
    log's view in turn, named by its log.
    """

    found = find_logs(logs, dialect)
    several = found.logs != logs  # several logs, or a tree searched for them
    if several and format in (ViewFormat.json, ViewFormat.jsonl):
        _view_many(found, format, upto, dialect, workers)
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
    workers: Workers,
) -> None:
    """Each log's view, in the logs' order: JSON `{"logs": [view, ...]}` (each view as
    one log's, with its `log` first), or JSONL lines `{"log", "event"}` (the event as
    its log line). A log that cannot be read is said on stderr and fails the command
    (exit 1) once the rest is out, so the document stays whole."""

    work = partial(view_of, format=format, upto=upto, dialect=dialect)
    out = sys.stdout.buffer
    sys.stdout.flush()
    failed = 0
    if format is ViewFormat.json:
        out.write(b'{"logs":[')
    first = True
    with each_log(work, found.logs, workers) as results:
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
