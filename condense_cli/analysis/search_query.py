"""A query of the search index (`analysis.search`): its words as FTS5 matches them, the
filters a hit must pass, and its best matches over the whole index ranked ahead.

Ranking every match by bm25 is most of a query's time (45 ms for 56,526 matches), and
SQLite lets go of the GIL while it ranks, so `search` has a thread of its own rank
them on a second core while the command imports the rest, finds the sessions and
compares their states. The ranking holds what the index held of each log when it
ranked (`HELD`, read in the same statement, so of the same moment): it is taken when
the index holds the same now and the query is of every session it holds, and is
otherwise dropped and the query run again. Kept light, so that `search` can start it
before its other imports.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INDEX_FILE = "search.sqlite"  # (its tables: `logs`, and `events` for FTS5)
TOKEN = re.compile(r"\w+", re.UNICODE)
WHO = ("user", "agent", "tool")
DEFAULT_LIMIT = 20  # hits `search` gives unless told
# what the index holds of each log (its path and state), as one text: two moments'
# texts are the same when the index held the same logs, as they were
HELD = (
    "SELECT group_concat(path || char(31) || state, char(30)) "
    "FROM (SELECT path, state FROM logs ORDER BY path)"
)


def fts_query(query: str, phrase: bool = False) -> str | None:
    """The words of `query` as an FTS5 query that matches any of them (best first by
    bm25), or with `phrase` all of them in a row; None when it has no word."""
    words = ['"' + w.replace('"', '""') + '"' for w in TOKEN.findall(query)]
    if not words:
        return None
    return " + ".join(words) if phrase else " OR ".join(words)


@dataclass(frozen=True)
class Filters:
    """What a hit must be besides a match: written by whom, forgotten, between days."""

    who: str | None = None
    forgotten: bool = False
    since: str = ""  # a day, YYYY-MM-DD ("": any)
    until: str = ""

    def clauses(self, match: str) -> tuple[list[str], list[Any]]:
        """The WHERE clauses of a query of the `events` table and their values."""
        where, values = ["events MATCH ?"], [match]
        if self.who:
            where.append("who = ?")
            values.append(self.who)
        if self.forgotten:
            where.append("forgotten != ''")
        if self.since:
            where.append("(stamp = '' OR substr(stamp, 1, 10) >= ?)")
            values.append(self.since)
        if self.until:
            where.append("(stamp = '' OR substr(stamp, 1, 10) <= ?)")
            values.append(self.until)
        return where, values


def ranking(where: list[str]) -> str:
    """The query of the rowids of the best matches (the limit its last value)."""
    return f"SELECT rowid FROM events WHERE {' AND '.join(where)} ORDER BY bm25(events) LIMIT ?"


class Ahead:
    """The best `limit` matches over the whole index at `path`, ranked in a thread."""

    def __init__(self, path: Path, match: str, filters: Filters, limit: int) -> None:
        self.held: str | None = None  # the index's `HELD` when it ranked
        self.ranked: list[int] | None = None
        self.asked = (match, filters, limit)
        self._db: sqlite3.Connection | None = None
        self._stopped = False
        self._lock = threading.Lock()
        where, values = filters.clauses(match)
        # one statement, so one moment of the index, and one step (a step lets go of
        # the GIL, and taking it back from a busy main thread can take milliseconds)
        sql = f"SELECT ({HELD}), (SELECT group_concat(rowid) FROM ({ranking(where)}))"
        self._thread = threading.Thread(
            target=self._rank, args=(path, sql, (*values, limit)), daemon=True
        )
        self._thread.start()

    def _rank(self, path: Path, sql: str, values: tuple[Any, ...]) -> None:
        try:  # (read only, and never waiting: an index being written is ranked later)
            uri = f"{path.absolute().as_uri()}?mode=ro"
            db = sqlite3.connect(uri, uri=True, timeout=0, check_same_thread=False)
        except (sqlite3.Error, ValueError):
            return
        with self._lock:
            if self._stopped:
                db.close()
                return
            self._db = db
        try:
            held, ranked = db.execute(sql, values).fetchone()
            self.ranked = [int(rowid) for rowid in ranked.split(",")] if ranked else []
            self.held = held or ""
        except sqlite3.Error:  # (interrupted by `stop`, or no index yet)
            pass
        finally:
            with self._lock:
                self._db = None
            db.close()

    def stop(self) -> None:
        """Stop ranking (the index is about to be written) and wait for the thread."""
        with self._lock:
            self._stopped = True
            if self._db is not None:
                self._db.interrupt()
        self._thread.join()

    def take(self, asked: tuple[str, Filters, int], held: str) -> list[int] | None:
        """The ranked rowids, when they answer `asked` (the match, filters and limit)
        and the index held `held` as it ranked them; else None."""
        if asked != self.asked:
            return None
        self._thread.join()
        return self.ranked if self.ranked is not None and self.held == held else None


def rank_ahead(folder: Path, query: str, filters: Filters, limit: int) -> Ahead | None:
    """Start ranking `query`'s best matches over the index in `folder` (None: it has no
    word, or there is no index yet)."""
    match = fts_query(query)
    path = folder / INDEX_FILE
    if match is None or not path.is_file():
        return None
    return Ahead(path, match, filters, limit)
