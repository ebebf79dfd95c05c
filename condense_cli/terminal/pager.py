"""Long text output on a terminal goes through a pager, the way git does it.

Only when stdout is a terminal and the output does not fit on the screen; the
pager is `$PAGER` (empty means none), by default `less -R`, and `$LESS` defaults
to `FRX` (quit if one screen, keep colours, leave the text on screen) as git sets it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

DEFAULT_PAGER = "less -R"


def pager_command() -> str | None:
    """The pager to use, or None for none (`PAGER=` or `PAGER=cat`)."""
    command = os.environ.get("PAGER", DEFAULT_PAGER).strip()
    return None if command in ("", "cat") else command


def show(text: str, screen_lines: int) -> None:
    """Write `text` to stdout, through the pager when it is longer than the screen."""
    command = pager_command()
    if command is None or text.count("\n") < screen_lines:
        sys.stdout.write(text)
        return
    env = {**os.environ, "LESS": os.environ.get("LESS", "FRX")}
    sys.stdout.flush()
    try:
        pager = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        sys.stdout.write(text)
        return
    # Ctrl-C belongs to the pager while it runs (less uses it to stop a search).
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert pager.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # the reader quit before the end
            pager.stdin.write(text.encode("utf-8", "backslashreplace"))
        with contextlib.suppress(BrokenPipeError):
            pager.stdin.close()
        pager.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
