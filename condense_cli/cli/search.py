"""`condense search`: every session of every dialect, searched at once.

No `from __future__ import annotations` (see `options`).
"""

from enum import StrEnum
from functools import partial
from typing import Annotated

import orjson
import typer

from condense_cli.analysis.search_query import DEFAULT_LIMIT
from condense_cli.cli.guard import guarded
from condense_cli.cli.many import client_folders, each_log, said_logs, some_logs
from condense_cli.cli.options import (
    DAY,
    DEFAULT_WORKERS,
    DialectOpt,
    Workers,
    day_of,
    with_workers,
)
from condense_cli.cli.output import echo
from condense_cli.core.text import plural
from condense_cli.terminal.output import say


class SearchFormat(StrEnum):
    text = "text"
    json = "json"
    jsonl = "jsonl"


class Who(StrEnum):
    user = "user"
    agent = "agent"
    tool = "tool"


@guarded
@with_workers
def search(
    query: Annotated[str, typer.Argument(help="The words to look for (any of them, best first).")],
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[PATH...]",
            help="Sessions: files, folders, trees (default: the clients' own folders, "
            "~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp, "
            "~/.openhands/conversations).",
        ),
    ] = None,
    who: Annotated[
        Who | None, typer.Option("--who", help="Only what the user, the agent or a tool wrote.")
    ] = None,
    forgotten: Annotated[
        bool, typer.Option("--forgotten", help="Only events a condensation forgot.")
    ] = False,
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            help="Only sessions whose project (the folder the session worked in, where "
            "it is recorded, else its folder) holds this text.",
        ),
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", metavar=DAY, help="Only events on this day or later.")
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", metavar=DAY, help="Only events on this day or earlier."),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="Hits at most.")
    ] = DEFAULT_LIMIT,
    open_: Annotated[
        bool,
        typer.Option(
            "--open",
            help="Under each hit, the command that shows the view as it was when the "
            "event came (`condense view LOG --upto ID`).",
        ),
    ] = False,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Index every session again, from nothing.")
    ] = False,
    format: Annotated[
        SearchFormat, typer.Option("--format", "-f", help="text, json or jsonl (a hit a line).")
    ] = SearchFormat.text,
    dialect: DialectOpt = None,
    workers: Workers = DEFAULT_WORKERS,
) -> None:
    """Search every session of every dialect: ranked hits, in view or forgotten.

    Each hit gives the session, its dialect and project, the event's id (as `view`
    prints it), who wrote it, when, whether the view still holds it or which
    condensation forgot it, and a snippet.

    The sessions are indexed in condense's cache (SQLite FTS5), each again only when
    it changed; their texts are masked before they are stored.
    """
    from condense_cli.analysis.search_query import Filters, rank_ahead
    from condense_cli.cli import search_ahead
    from condense_cli.core.files import cache_dir

    filters = Filters(who.value if who else None, forgotten, day_of(since), day_of(until))
    # ranked in a thread from the process's start, else from here, while the sessions
    # are found: taken when none changed
    ahead = search_ahead.taken()
    if ahead is None and not rebuild:
        ahead = rank_ahead(cache_dir(), query, filters, limit)
    from condense_cli.analysis.search import SearchIndex, hit_json, index_known

    index = SearchIndex()
    try:
        found = some_logs(paths or client_folders(), dialect, None if rebuild else index.files())
        if rebuild:
            index.clear()
        index.forget_gone(found.logs)
        stale = index.stale(found.logs)
        if stale and ahead is not None:
            ahead.stop()  # (the index is written: the ranking is of what it was)
        failed = 0
        work = partial(index_known, kept=dict(stale), dialect=dialect)
        with each_log(work, [log for log, _ in stale], workers, "indexing") as done:
            for message in index.refresh(stale, done):
                say(f"Error: {message}")
                failed += 1
        logs = [log for log in found.logs if project is None or project in index.project_of(log)]
        hits = list(index.search(query, logs, limit, filters, ahead=ahead))
        logs_held, events_held = index.counts()
    finally:
        if ahead is not None:
            ahead.stop()
        index.close()
    if format is SearchFormat.json:
        data = {"query": query, "hits": [hit_json(h) for h in hits]}
        echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    elif format is SearchFormat.jsonl:
        echo("".join(orjson.dumps(hit_json(h)).decode() + "\n" for h in hits))
    else:
        from condense_cli.terminal.search_text import hits_text

        echo(hits_text(query, hits, len(logs), len(stale), open_))
    say(f"index: {plural(logs_held, 'session')}, {plural(events_held, 'event')}")
    said_logs(found, failed)
