"""Progress bars on stderr, only when stderr is a terminal: while a big log is read,
and over many logs."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from condense_cli.core.logfile import LogSource
from condense_cli.core.text import sanitize
from condense_cli.terminal.output import stderr_may_be_a_terminal

if TYPE_CHECKING:
    from rich.console import Console

THRESHOLD = 50 * 1024 * 1024


@contextlib.contextmanager
def progress(source: LogSource, description: str, console: Console | None = None) -> Iterator[None]:
    """Show how much of `source` has been read while the block runs."""
    if source.size < THRESHOLD or (console is None and not stderr_may_be_a_terminal()):
        yield
        return
    # rich.progress takes ~15 ms to import: only for a log big enough to show a bar.
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    console = console or Console(stderr=True)
    if not console.is_terminal:
        yield
        return
    bar = Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    with bar:
        task = bar.add_task(sanitize(description, one_line=True), total=source.size)
        source.on_progress = lambda done: bar.update(task, completed=done)
        try:
            yield
        finally:
            source.on_progress = None


@contextlib.contextmanager
def logs_progress(logs: Sequence[str], description: str) -> Iterator[Callable[[], None]]:
    """A bar of the logs done, and their bytes, while the block runs (only for several
    logs and a terminal on stderr); the block calls what it is given once per log done."""
    if len(logs) < 2 or not stderr_may_be_a_terminal():
        yield lambda: None
        return
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda: None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    from condense_cli.core.logfile import log_bytes

    sizes = [log_bytes(log) for log in logs]
    bar = Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        TextColumn("{task.fields[logs]}", markup=False),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    done = iter(range(1, len(logs) + 1))
    with bar:
        task = bar.add_task(description, total=sum(sizes) or None, logs=f"0/{len(logs):,} logs")

        def tick() -> None:
            count = next(done)
            bar.update(task, advance=sizes[count - 1], logs=f"{count:,}/{len(logs):,} logs")

        yield tick
