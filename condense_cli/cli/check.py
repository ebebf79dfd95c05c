"""`condense check`: validate logs and their condensations, for CI.

No `from __future__ import annotations` (see `options`).
"""

from collections import Counter
from dataclasses import dataclass
from functools import partial
from typing import Annotated

import typer

from condense_cli.analysis.checks import lost_context, lost_pins
from condense_cli.analysis.thrash import thrash_problems
from condense_cli.cli.guard import guarded
from condense_cli.cli.many import each_log
from condense_cli.cli.options import (
    DEFAULT_WORKERS,
    DeepOpt,
    DialectOpt,
    Workers,
    local_paths,
    with_workers,
)
from condense_cli.cli.output import emit, reading
from condense_cli.core.errors import CondenseError
from condense_cli.core.redact import mask
from condense_cli.core.text import plural, sanitize
from condense_cli.dialects import read_log
from condense_cli.dialects.base import quiet_reading
from condense_cli.dialects.discovery import find_logs
from condense_cli.terminal.output import say


@guarded
@with_workers
def check(
    logs: Annotated[
        list[str],
        typer.Argument(
            metavar="LOG...",
            callback=local_paths,
            help="Logs to check: files (- for standard input), conversation folders, or "
            "trees searched for logs of every dialect.",
        ),
    ],
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail on warnings too, not only on errors.")
    ] = False,
    dialect: DialectOpt = None,
    workers: Workers = DEFAULT_WORKERS,
    deep: DeepOpt = False,
) -> None:
    """Validate logs and their condensations.

    One `file:line: message` per problem; exit 1 on errors (or warnings with --strict).
    """

    found_logs = find_logs(logs, dialect)
    logs = found_logs.logs
    failed = 0
    problems = 0
    dialects: set[str] = set()
    replayed_as: Counter[str] = Counter()  # said once for all the logs
    first_of: dict[str, tuple[str, str]] = {}
    # one log's reading gets a bar of its own; many logs, one bar for them all
    work = partial(check_one, dialect=dialect, deep=deep, progress=len(logs) == 1)
    with each_log(work, logs, workers, "checking") as results:
        for checked in results:
            for line in checked.lines:
                emit(line)
            if checked.unreadable:
                failed += 1
                problems += 1
                continue
            dialects.add(checked.dialect)
            if checked.generation is not None:
                replayed_as[checked.generation] += 1
                first_of.setdefault(checked.generation, (checked.name, checked.why))
            problems += checked.problems
            bad = checked.errors or (strict and checked.problems)
            failed += 1 if bad else 0
    for generation, count in replayed_as.items():
        first, why = first_of[generation]
        if count == 1:
            say(f"{first}: replayed as the {generation} showed it ({why})")
        else:
            say(f"{count:,} logs replayed as the {generation} showed them ({first}: {why}; ...)")
    for line in found_logs.says():
        say(line)
    if not logs:
        say("no log found in what was given")
        raise typer.Exit(1)
    if failed:
        counted = plural(problems, "problem")
        say(f"{failed} of {plural(len(logs), 'log')} failed the check ({counted})")
        raise typer.Exit(1)
    notes = [", ".join(sorted(dialects))] + ([plural(problems, "warning")] if problems else [])
    say(f"{plural(len(logs), 'log')} ok ({'; '.join(notes)})")


@dataclass(frozen=True)
class Checked:
    """One log checked: the lines to print, and what the verdict needs."""

    name: str
    lines: list[str]
    unreadable: bool = False
    dialect: str = ""
    problems: int = 0  # errors and warnings (not notes)
    errors: bool = False
    generation: str | None = None
    why: str = ""


def check_one(path: str, dialect: str | None, deep: bool, progress: bool) -> Checked:
    """Check one log (in this process or a worker's; a progress bar when `progress`)."""

    try:
        shown = reading(f"checking {path}") if progress else quiet_reading
        with read_log(path, dialect=dialect, collect=True, reading=shown) as replay:
            name = replay.path
            found = replay.problems
            if not replay.errors:
                found = lost_pins(replay) + found + lost_context(replay)
                found += thrash_problems(replay, deep)
    except CondenseError as exc:
        return Checked(path, [sanitize(mask(exc.message), one_line=True)], unreadable=True)
    lines = []
    for problem in found:
        prefix = "" if problem.severity == "error" else f"{problem.severity}: "
        lines.append(sanitize(f"{problem.where(name)}: {prefix}{problem.message}", one_line=True))
    counted = sum(1 for p in found if p.severity != "note")
    return Checked(
        name,
        lines,
        dialect=replay.dialect,
        problems=counted,
        errors=bool(replay.errors),
        generation=replay.generation,
        why=replay.generation_reason or "",
    )
