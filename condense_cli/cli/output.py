"""What commands write beside their results: text as it is, lines of `check`, notes,
the change an install made, a progress bar while a log is read.

No `from __future__ import annotations` (see `options`).
"""

from typing import TYPE_CHECKING

import typer

from condense_cli.terminal.output import say, silence_stdout

if TYPE_CHECKING:
    from rich.console import Console

    from condense_cli.dialects.base import Reading


def tell_change(path: object, done: str | None, dry_run: bool, what: str) -> None:
    """What `agent.install.edit_settings` did to a client's settings at `path`: the diff
    of a dry run on stdout, else one line on stderr (`what` it did, or nothing)."""
    if done is None:
        say(f"{path}: nothing to change")
    elif dry_run:
        typer.echo(done, nl=False)
    else:
        say(f"{path}: {what}")


def echo(text: str) -> None:
    """Text on stdout as it is (its own line endings)."""
    typer.echo(text, nl=False)


def stderr() -> "Console":
    from condense_cli.terminal.consoles import stderr_console

    return stderr_console()


def emit(line: str) -> None:
    """Print one line of `check` output; after a closed pipe, keep checking silently."""
    try:
        typer.echo(line)
    except BrokenPipeError:
        silence_stdout()


def reading(description: str) -> "Reading":
    """A progress bar while a big log is read (only when stderr is a terminal)."""
    from condense_cli.terminal.progress import progress

    return lambda source: progress(source, description)


def print_notes(notes: list[str]) -> None:
    for note in notes:
        say(f"Note: {note}")
