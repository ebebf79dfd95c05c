"""Work over many logs on several processes: results in the order of the inputs,
whatever order the workers finish in, so the output is the same for any `jobs`
and either engine.

The local engine is a pool of forked worker processes; the Ray engine
(`core.rayengine`) runs the same work as Ray tasks on a cluster."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Literal, TypeVar

In = TypeVar("In")
Out = TypeVar("Out")
Engine = Literal["local", "ray"]
ENGINES: tuple[Engine, ...] = ("local", "ray")


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@contextlib.contextmanager
def ordered_map(
    work: Callable[[In], Out],
    items: Sequence[In],
    jobs: int,
    engine: Engine = "local",
    address: str | None = None,
) -> Iterator[Iterator[Out]]:
    """`work` of each item, in the items' order: in this process for one job or one
    item, else in a pool of `jobs` worker processes, or as Ray tasks on the cluster
    at `address` (`work` must be a module-level function or a partial of one, and its
    results picklable). Leaving the block, however it is left (an error, Ctrl-C),
    ends the workers: none outlives the command, holding its output open."""
    if engine == "ray":
        from condense_cli.core.rayengine import ray_map

        with ray_map(work, items, address) as results:
            yield results
        return
    if jobs <= 1 or len(items) <= 1:
        yield map(work, items)
        return
    import multiprocessing

    context = multiprocessing.get_context("fork")
    pool = context.Pool(min(jobs, len(items)), initializer=_ignore_interrupts)
    try:
        # a few items per message once there are many: for small logs the pipe
        # between the processes costs as much as the work
        yield pool.imap(work, items, chunksize=batch_size(len(items), jobs))
    finally:
        pool.terminate()
        pool.join()


def in_worker() -> bool:
    """Whether this process is a worker of `ordered_map`'s pool."""
    import multiprocessing

    return multiprocessing.parent_process() is not None


def batch_size(items: int, workers: int) -> int:
    """Items sent to a worker at once: about 8 batches per worker, 1 to 16 items each,
    so the work stays spread evenly and the order of the output moves in small steps."""
    return max(1, min(16, items // (workers * 8)))


def _ignore_interrupts() -> None:
    """In a worker: Ctrl-C is the parent's to handle (it ends the workers), so a
    worker never prints a traceback of its own; and a worker ends when its parent
    does, however the parent ended (a `kill -9`, the kernel's OOM killer), where the
    system can say so (Linux's PR_SET_PDEATHSIG)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()


def _die_with_parent() -> None:
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the parent's `terminate` still ends them
        return
    if os.getppid() == 1:  # the parent is gone already
        os._exit(1)


PR_SET_PDEATHSIG = 1


def capped_jobs(jobs: int | None) -> tuple[int, str | None]:
    """The workers to start for `jobs` (default: the cores): at most the cores, as
    more only compete for them (10,000 logs with `--jobs 10000` started a process each
    and ran out of memory); and a note when `jobs` was cut."""
    cores = default_jobs()
    if jobs is None:
        return cores, None
    if jobs <= cores:
        return jobs, None
    return cores, f"--jobs {jobs:,} is more than the {cores} cores here: {cores} workers run"
