"""The Ray engine: the work of `ordered_map` as Ray tasks, on an existing cluster
(`address`, or $RAY_ADDRESS) or on a Ray started on this machine for the command.

Items go out in batches (a task costs a few milliseconds to schedule, more than a
small log takes to read), a bounded number at a time, and results come back in the
items' order, as the local pool gives them. Each task works in the caller's folder,
so relative paths name the same logs (the cluster must see the files where the
caller does: a shared file system, or `s3://` URLs). Ray is imported only here.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from condense_cli.core.errors import ConfigError

In = TypeVar("In")
Out = TypeVar("Out")

TASKS_PER_CPU = 2  # batches in flight for each CPU of the cluster
MAX_BATCH = 32  # items in one task


@contextlib.contextmanager
def ray_map(
    work: Callable[[In], Out], items: Sequence[In], address: str | None
) -> Iterator[Iterator[Out]]:
    """`work` of each item as Ray tasks, in the items' order; the cluster is left as
    it was found (a Ray this command started is shut down)."""
    ray = _import_ray()
    started = not ray.is_initialized()
    if started:
        _connect(ray, address)
    pending: deque[Any] = deque()
    try:
        yield _results(ray, work, items, pending)
    finally:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        if started:
            ray.shutdown()


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--engine ray needs Ray, which is not installed",
            hint="pip install 'condense-cli[ray]' (on this machine and the cluster's nodes)",
        ) from None
    return ray


def _connect(ray: Any, address: str | None) -> None:
    """Join the cluster at `address` (None: $RAY_ADDRESS, else a Ray for this command)."""
    forwarded = {k: v for k, v in os.environ.items() if k.startswith("CONDENSE_")}
    options: dict[str, Any] = {
        "address": address,
        "logging_level": "ERROR",
        "log_to_driver": False,
        "configure_logging": False,
    }
    if address is None and not os.environ.get("RAY_ADDRESS"):  # a Ray of our own
        options["include_dashboard"] = False
    if forwarded:
        options["runtime_env"] = {"env_vars": forwarded}
    # Ray's notes as it starts (its token authentication) would make the output
    # differ from the local engine's: only its errors are shown
    logging.getLogger("ray").setLevel(logging.ERROR)
    where = address or os.environ.get("RAY_ADDRESS")
    if where:
        _check_reachable(where)
    try:
        ray.init(**options)
    except Exception as exc:  # ConnectionError, RuntimeError: Ray says which
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        what = f"cannot join the Ray cluster at {where}" if where else "Ray did not start"
        raise ConfigError(
            f"--engine ray: {what}: {first}",
            hint="start the cluster with `ray start --head`, or check --address"
            if where
            else "see Ray's logs under /tmp/ray",
        ) from None


def _check_reachable(address: str) -> None:
    """A cluster address (host:port) that nothing answers at is said at once: Ray
    itself would retry for minutes."""
    import socket

    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return  # `auto`, `ray://…`: Ray's own to resolve
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as exc:
        raise ConfigError(
            f"--engine ray: cannot join the Ray cluster at {address}: "
            f"{exc.strerror or type(exc).__name__}",
            hint="start the cluster with `ray start --head`, or check --address",
        ) from None


def _results(
    ray: Any, work: Callable[[In], Out], items: Sequence[In], pending: deque[Any]
) -> Iterator[Out]:
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    size = max(1, min(MAX_BATCH, len(items) // (cpus * TASKS_PER_CPU * 4)))
    batches = [items[i : i + size] for i in range(0, len(items), size)]
    task = ray.remote(_run_batch).options(num_cpus=1, max_retries=0)
    shared = ray.put(work)  # sent once, not with every task
    cwd = os.getcwd()
    upcoming = iter(batches)
    for batch in upcoming:
        pending.append(task.remote(shared, batch, cwd))
        if len(pending) >= cpus * TASKS_PER_CPU:
            break
    while pending:
        try:
            done = ray.get(pending[0])
        except ray.exceptions.RayTaskError as exc:  # the work raised: as the local pool would
            cause = getattr(exc, "cause", None)
            raise cause if isinstance(cause, Exception) else exc from None
        except ray.exceptions.RayError as exc:  # the cluster failed the task
            first = str(exc).strip().split("\\n")[0].splitlines()[0]
            raise ConfigError(
                f"--engine ray: a task failed on the cluster: {first}",
                hint="the cluster's nodes need the same condense-cli as this machine",
            ) from None
        pending.popleft()
        for batch in itertools.islice(upcoming, 1):
            pending.append(task.remote(shared, batch, cwd))
        yield from done


def _run_batch(work: Callable[[In], Out], batch: Sequence[In], cwd: str) -> list[Out]:
    """In a Ray worker: `work` of each item, from the caller's folder."""
    with contextlib.suppress(OSError):
        os.chdir(cwd)
    return [work(item) for item in batch]
