"""How condense ends on Ctrl-C: at once, quietly, with the exit code shells expect.

Shared by the entry point (before the CLI is imported) and the CLI (while it works).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from types import FrameType

from condense_cli.core.errors import CondenserError

INTERRUPTED = 130  # 128 + SIGINT, what shells report for a Ctrl-C


def quit_now(signum: int, frame: FrameType | None) -> None:
    """A signal handler that ends the process at once with `INTERRUPTED`."""
    os._exit(INTERRUPTED)


class Expired(BaseException):
    """Raised by the timer of `time_limit`: not an `Exception`, so that no library's
    `except Exception` (litellm's retries) can take it for its own error."""


def _expire(signum: int, frame: FrameType | None) -> None:
    raise Expired


# Once `time_limit`'s time is up, its timer fires again this often until the work
# stops: a library that swallows one `Expired` (a bare `except:` around a socket read)
# gets the next one.
EXPIRED_AGAIN = 0.1


@contextlib.contextmanager
def time_limit(seconds: float | None, what: str) -> Iterator[None]:
    """Stop `what` with a `CondenserError` (exit 3) once it has taken `seconds`."""
    if not seconds:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, seconds, EXPIRED_AGAIN)
    try:
        try:
            yield
        finally:  # (an `Expired` that lands here still reaches the `except` below)
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    except Expired:
        raise CondenserError(
            f"{what} took longer than --timeout {seconds:g} s",
            hint="nothing was appended; raise --timeout, or use a faster model",
        ) from None
