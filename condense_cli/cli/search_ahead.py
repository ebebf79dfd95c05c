"""`condense search`'s query ranked from the process's first instant (`entry.main`).

Importing typer and the app takes about 30 ms, and ranking every match about 45 ms
(SQLite's work, on a second core: `analysis.search_query`). Started before the
imports, the ranking is done by the time the command wants it. The arguments are
read here only as far as the ranking needs them (the query, --who, --forgotten,
--since, --until, --limit), and only when they are plain: anything else read here
starts nothing. The command takes the ranking only when its own reading of the
arguments asks the same (`Ahead.asked`), so a reading that differs costs nothing but
the head start.
"""

from __future__ import annotations

from condense_cli.analysis.search_query import DEFAULT_LIMIT, WHO, Ahead, Filters, rank_ahead
from condense_cli.core.files import cache_dir

# `search`'s options as the command declares them (a test holds the two together)
FLAGS = frozenset({"--forgotten", "--open", "--rebuild", "--debug", "--help"})
VALUED = frozenset(
    {
        "--who",
        "--project",
        "--since",
        "--until",
        "-n",
        "--limit",
        "-f",
        "--format",
        "-d",
        "--dialect",
        "-j",
        "--jobs",
        "--engine",
        "--address",
    }
)
_started: list[Ahead] = []


def start(args: list[str]) -> None:
    """Start ranking the query of `condense search ARGS`, when they are plain."""
    asked = asked_by(args)
    if asked is not None:
        ahead = rank_ahead(cache_dir(), *asked)
        if ahead is not None:
            _started.append(ahead)


def taken() -> Ahead | None:
    """The ranking `start` began (None: none)."""
    return _started.pop() if _started else None


def asked_by(args: list[str]) -> tuple[str, Filters, int] | None:
    """The query, filters and limit `search`'s arguments ask for, as far as they can
    be read here (None: they cannot, or they ask for no ranking: --rebuild, --help)."""
    query: str | None = None
    values: dict[str, str] = {}
    flags: set[str] = set()
    given = iter(args)
    options = True
    for arg in given:
        if not options or not arg.startswith("-") or arg == "-":
            query = arg if query is None else query
            continue
        if arg == "--":
            options = False
            continue
        name, equals, value = arg.partition("=")
        if name in FLAGS and not equals:
            flags.add(name)
        elif name in VALUED:
            if not equals:
                value = next(given, "")
            values["--limit" if name == "-n" else name] = value
        else:
            return None
    limit = values.get("--limit", str(DEFAULT_LIMIT))
    who = values.get("--who")
    if query is None or flags & {"--rebuild", "--help"} or not limit.isdecimal():
        return None
    if int(limit) < 1 or (who is not None and who not in WHO):
        return None
    filters = Filters(
        who, "--forgotten" in flags, values.get("--since", ""), values.get("--until", "")
    )
    return query, filters, int(limit)
