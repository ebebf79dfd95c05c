"""`condense check`: validate logs and their condensations, for CI.

No `from __future__ import annotations` (see `common`).
"""

from typing import Annotated

import typer

from condense_cli.cli.common import DialectOpt, emit, guarded, reading, say
from condense_cli.core.errors import CondenseError
from condense_cli.core.redact import mask
from condense_cli.core.text import plural, sanitize


@guarded
def check(
    logs: Annotated[
        list[str],
        typer.Argument(
            metavar="LOG...",
            help="Logs to check: files (- for standard input), conversation folders, or "
            "trees searched for logs of every dialect.",
        ),
    ],
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail on warnings too, not only on errors.")
    ] = False,
    dialect: DialectOpt = None,
    deep: Annotated[
        bool,
        typer.Option(
            "--deep",
            help="Also warn of compactions that lost again the files and commands the agent "
            "read anew after the one before lost them (walks every compaction; slower).",
        ),
    ] = False,
) -> None:
    """Validate logs and their condensations.

    One `file:line: message` per problem; exit 1 on errors (or warnings with --strict).
    """
    from collections import Counter

    from condense_cli.analysis.checks import lost_context, lost_pins
    from condense_cli.analysis.thrash import thrash_problems
    from condense_cli.dialects import read_log
    from condense_cli.dialects.discovery import find_logs

    found_logs = find_logs(logs, dialect)
    logs = found_logs.logs
    failed = 0
    problems = 0
    dialects: set[str] = set()
    replayed_as: Counter[str] = Counter()  # said once for all the logs
    first_of: dict[str, tuple[str, str]] = {}
    for path in logs:
        try:
            with read_log(
                path, dialect=dialect, collect=True, reading=reading(f"checking {path}")
            ) as replay:
                name = replay.path
                dialects.add(replay.dialect)
                found = replay.problems
                if not replay.errors:
                    found = lost_pins(replay) + found + lost_context(replay)
                    found += thrash_problems(replay, deep)
        except CondenseError as exc:
            emit(sanitize(mask(exc.message), one_line=True))
            failed += 1
            problems += 1
            continue
        for problem in found:
            prefix = "" if problem.severity == "error" else f"{problem.severity}: "
            emit(sanitize(f"{problem.where(name)}: {prefix}{problem.message}", one_line=True))
        found = [p for p in found if p.severity != "note"]
        if replay.generation is not None:
            replayed_as[replay.generation] += 1
            first_of.setdefault(replay.generation, (name, replay.generation_reason or ""))
        problems += len(found)
        bad = replay.errors or (strict and found)
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
