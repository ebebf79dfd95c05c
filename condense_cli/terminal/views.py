"""A view printed: rich on a terminal (paged when asked), plain text when piped, JSON,
JSONL or the chat messages for pipelines (`condense view`, and `condense run` for a
view result)."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from condense_cli.core.text import plural
from condense_cli.terminal.output import say, write_pieces

if TYPE_CHECKING:
    from condense_cli.core.events import View
    from condense_cli.dialects.base import Gap, Replay
    from condense_cli.llm.messages import Conversion


class ViewFormat(StrEnum):
    text = "text"
    json = "json"
    jsonl = "jsonl"
    messages = "messages"


class Counting:
    """An iterable that counts the items taken from it."""

    def __init__(self, items: Iterable[Any]) -> None:
        self.items = items
        self.count = 0

    def __iter__(self) -> Iterator[Any]:
        for item in self.items:
            self.count += 1
            yield item


def say_changes(title: str, events: int, conversion: Conversion, messages: int) -> None:
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
    current: View,
    replay: Replay,
    format: ViewFormat,
    title: str,
    full: bool,
    *,
    gaps: list[Gap] | None = None,
    page: bool = False,
    conversion: Conversion | None = None,
    messages: Iterable[dict[str, Any]] | None = None,
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
            given = Counting(conversion.messages if messages is None else messages)
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
