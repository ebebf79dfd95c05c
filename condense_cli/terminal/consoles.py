"""The rich consoles condense draws with, for people on a terminal and for tables.

Kept apart from `output` because rich takes ~30 ms to import: only what draws
(the text view on a terminal, `stats` tables, messages on stderr) imports this.
"""

from __future__ import annotations

import errno

from rich.console import Console


class StdoutConsole(Console):
    """A rich console on stdout whose closed pipe is a BrokenPipeError, as anywhere else
    (rich itself would exit 1, turning `condense stats | head` into a failure)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "standard output closed")


def stderr_console() -> Console:
    """The console for one-line messages on stderr: no highlighting, never wrapped."""
    return Console(stderr=True, highlight=False, soft_wrap=True)
