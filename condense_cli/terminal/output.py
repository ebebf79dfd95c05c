"""The process's standard output: a failed write says what failed, and a closed
pipe stays a BrokenPipeError, told apart from it (see `cli.guarded` for the rule);
and whether standard error may be a terminal.

No rich here: piped output and JSON never import it (see `consoles` for the rich
console on stdout)."""

from __future__ import annotations

import errno
import io
import os
import sys
from collections.abc import Iterable
from typing import Any

from condense_cli.core.errors import OutputError


class StdoutWriter(io.RawIOBase):
    """Descriptor 1: a failed write (a full device, a closed stdout) becomes an
    OutputError that names it; a closed pipe stays a BrokenPipeError."""

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return 1

    def isatty(self) -> bool:
        return os.isatty(1)

    def write(self, data: Any) -> int:
        try:
            return os.write(1, data)
        except BrokenPipeError:
            raise
        except OSError as exc:
            if exc.errno == errno.EBADF:
                raise OutputError(
                    "cannot write to standard output: it is closed",
                    hint="send the output somewhere, e.g. > file or | less",
                ) from None
            raise OutputError(
                f"cannot write to standard output: {exc.strerror or exc}",
                hint="free some space, or send the output elsewhere",
            ) from None


def install_stdout() -> None:
    """Make `sys.stdout` write through StdoutWriter (for the real process only)."""
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(StdoutWriter()),
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=os.isatty(1),
    )


def silence_stdout() -> None:
    """After a closed pipe or a failed write, point stdout at /dev/null: later
    writes and the exit flush then go nowhere, quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def stderr_may_be_a_terminal() -> bool:
    """False when rich would surely find that stderr is no terminal: it is not a tty
    and neither `TTY_COMPATIBLE` nor `FORCE_COLOR` says otherwise. Importing rich
    takes about 30 ms, which a piped command need not spend."""
    if "TTY_COMPATIBLE" in os.environ or "FORCE_COLOR" in os.environ:
        return True  # rich decides
    try:
        return sys.stderr.isatty()
    except ValueError:  # closed
        return False


MESSAGE_CHARS = 1000  # the longest line `say` writes


def write_pieces(pieces: Iterable[bytes], end: bytes = b"") -> None:
    """Bytes on stdout as they are made, then `end`: a big document is never whole
    in memory."""
    sys.stdout.flush()
    out = sys.stdout.buffer
    for piece in pieces:
        out.write(piece)
    out.write(end)
    out.flush()


def say(message: str) -> None:
    """One line for people on stderr: secrets masked, names and values made safe,
    and never more than MESSAGE_CHARS (values are quoted short where they are named;
    this is the net under that)."""
    from condense_cli.core.redact import mask
    from condense_cli.core.text import sanitize

    line = sanitize(mask(message), one_line=True)
    if len(line) > MESSAGE_CHARS:
        half = MESSAGE_CHARS // 2
        line = f"{line[:half]} … {line[-half:]}"
    if stderr_may_be_a_terminal():
        from condense_cli.terminal.consoles import stderr_console

        stderr_console().print(line, markup=False)
    else:  # no terminal: the line as it is, without importing rich
        sys.stderr.write(line + "\n")
