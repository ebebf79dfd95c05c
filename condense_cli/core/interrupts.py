"""How condense ends on Ctrl-C: at once, quietly, with the exit code shells expect.

Shared by the entry point (before the CLI is imported) and the CLI (while it works).
"""

from __future__ import annotations

import os
from types import FrameType

INTERRUPTED = 130  # 128 + SIGINT, what shells report for a Ctrl-C


def quit_now(signum: int, frame: FrameType | None) -> None:
    """A signal handler that ends the process at once with `INTERRUPTED`."""
    os._exit(INTERRUPTED)
