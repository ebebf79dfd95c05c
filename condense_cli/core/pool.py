"""Work over many logs on several processes: results in the order of the inputs,
whatever order the workers finish in, so the output is the same for any `jobs`."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

In = TypeVar("In")
Out = TypeVar("Out")


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@contextlib.contextmanager
def ordered_map(
    work: Callable[[In], Out], items: Sequence[In], jobs: int
) -> Iterator[Iterator[Out]]:
    """`work` of each item, in the items' order: in this process for one job or one
    item, else in a pool of `jobs` worker processes (`work` must be a module-level
    function and its results picklable). Leaving the block, however it is left (an
    error, Ctrl-C), ends the workers: none outlives the command, holding its output
    open."""
    if jobs <= 1 or len(items) <= 1:
        yield map(work, items)
        return
    import multiprocessing

    context = multiprocessing.get_context("fork")
    pool = context.Pool(min(jobs, len(items)), initializer=_ignore_interrupts)
    try:
        yield pool.imap(work, items)
    finally:
        pool.terminate()
        pool.join()


def _ignore_interrupts() -> None:
    """In a worker: Ctrl-C is the parent's to handle (it ends the workers), so a
    worker never prints a traceback of its own."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
