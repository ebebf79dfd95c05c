"""Commands over many logs: finding them, working through them on processes or Ray
with a bar of what is done, and the lines and exit code at the end.

No `from __future__ import annotations` (see `options`).
"""

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from condense_cli.cli.guard import usage_error
from condense_cli.cli.options import EngineName, GroupBy, Workers
from condense_cli.terminal.output import say

if TYPE_CHECKING:
    from condense_cli.dialects.discovery import Found, Known


R = TypeVar("R")


def grouping(group_by: GroupBy | None) -> Callable[[dict[str, Any]], str] | None:
    """What names a row's group for `--group-by` (None: a row per log)."""
    if group_by is None:
        return None
    from condense_cli.dialects.discovery import group_of

    return lambda row: group_of(row, group_by.value)


@contextlib.contextmanager
def each_log(
    work: Callable[[str], R],
    logs: list[str],
    workers: Workers,
    doing: str = "reading",
) -> Iterator[Iterator[R]]:
    """`work` of each log, in the logs' order, on `workers.jobs` processes (default:
    the cores) or Ray; a bar of the logs and bytes done on a terminal."""
    from condense_cli.core.pool import capped_jobs, ordered_map
    from condense_cli.terminal.progress import logs_progress

    engine = workers.engine
    if workers.address is not None and engine is not EngineName.ray:
        raise usage_error("--address is for --engine ray")
    jobs, note = capped_jobs(workers.jobs)
    if note is not None and engine is EngineName.local:
        say(f"Note: {note}")
    with (
        ordered_map(work, logs, jobs, engine.value, workers.address) as results,
        logs_progress(logs, doing) as done,
    ):
        yield _ticking(results, done)


def some_logs(logs: list[str], dialect: str | None, known: "Known | None" = None) -> "Found":
    """The logs in `logs` (`discovery.find_logs`); none is a usage error (exit 2), after
    what was passed over."""
    from condense_cli.dialects.discovery import find_logs

    found = find_logs(logs, dialect, known)
    if not found.logs:
        for line in found.says():
            say(line)
        raise usage_error("no log found in what was given")
    return found


def said_logs(found: "Found", failed: int) -> None:
    """After a command over many logs: what the search passed over, then exit 1 when
    a log could not be read (`failed` of them) or none was found."""
    from condense_cli.core.text import plural

    for line in found.says():
        say(line)
    if not found.logs:
        say("no log found in what was given")
        raise typer.Exit(1)
    if failed:
        say(f"{failed} of {plural(len(found.logs), 'log')} could not be read")
        raise typer.Exit(1)


def _ticking(results: Iterator[R], done: Callable[[], None]) -> Iterator[R]:
    for result in results:
        done()
        yield result


def client_folders() -> list[str]:
    """The clients' session folders under the user's home that are there
    (`dialects.discovery.client_folders`); none is a usage error (exit 2)."""
    from condense_cli.dialects.discovery import client_folders as present

    found = present()
    if not found:
        raise usage_error("no sessions in the clients' folders; name a log or a folder")
    return found
