"""The console-script entry point: set up the process before the heavy imports.

Importing typer, rich and orjson takes a few tenths of a second. A Ctrl-C in that
time used to print a traceback from the middle of an import (or, rarely, crash
orjson's initialisation), so the interrupt handler is installed first: until the
CLI is ready, Ctrl-C ends the process at once with exit 130 and says nothing.
Standard streams that the caller closed are reopened on /dev/null, so that no
file condense opens later can take their descriptor (a log opened as descriptor 1
would receive the output); a closed stdout then fails every write with EBADF.
"""

from __future__ import annotations

import os
import signal
import sys

from condense_cli.core.interrupts import quit_now


def _reopen_closed_streams() -> None:
    """Put /dev/null on closed descriptors 0-2: stdin reads as empty, stderr swallows
    messages (the exit code still tells), and stdout is opened read-only, so that
    every write fails and is reported (on stderr, when there is one)."""
    for fd, flags in ((0, os.O_RDONLY), (1, os.O_RDONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, flags)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    # Python leaves sys.stdin / sys.stderr as None for descriptors closed at start-up.
    if sys.stdin is None:
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(2, "w", closefd=False, errors="backslashreplace")  # noqa: SIM115


def main() -> None:
    """`condense`: quiet interrupts from the first instant, then the typer app."""
    signal.signal(signal.SIGINT, quit_now)
    _reopen_closed_streams()
    if sys.argv[1:2] == ["search"]:  # (its query ranked while the rest is imported)
        from condense_cli.cli import search_ahead

        search_ahead.start(sys.argv[2:])
    from condense_cli.cli.app import run_app  # typer, rich, orjson

    signal.signal(signal.SIGINT, signal.default_int_handler)
    run_app()
