"""Every session searchable: one SQLite FTS5 index of the events of many logs, kept in
condense's cache and brought up to date as the logs change.

A log is indexed whole, each event of its history once: its id (the number `view`
prints), its place, who wrote it (the user, the agent, a tool), when, what it is, and
whether the log's current view still holds it or which condensation forgot it. Its
text is masked (`core.redact`) before it is stored. A log is indexed again when its
device, inode, size or time, or the code that reads it, changed; a log that is gone is
forgotten. Only the command's own process writes the index, in transactions of about
a second (whole logs, several when they come quickly); SQLite's locking lets several
`search` runs share it.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from condense_cli.analysis.search_query import (
    HELD,
    INDEX_FILE,
    Ahead,
    Filters,
    fts_query,
    ranking,
)
from condense_cli.core.files import cache_dir, held_path
from condense_cli.core.redact import mask
from condense_cli.core.remote import is_url
from condense_cli.core.usagecache import KnownFiles, file_state, readers

if TYPE_CHECKING:
    from condense_cli.core.events import Event
    from condense_cli.dialects.base import Replay

ANY = Filters()  # (no filter: every match)
BUSY_SECONDS = 30.0  # another `search` writing the index: wait this long for it
SNIPPET_TOKENS = 16
BATCH_SECONDS = 1.0  # `refresh` commits the logs it stored about this often


def kind_of(event: Event) -> str:
    """A short name for what an event is: a tool call, a tool's output, a message."""
    if event.tool_call is not None:
        return f"call to {event.tool_call[0]}"
    if event.tool_call_id is not None:
        return "tool output"
    if event.type == "message":
        return f"{event.source or ''} message".strip()
    return str(event.type or "event")


def text_of(event: Event) -> str:
    """An event's text as the agent saw it; a tool call as its name and arguments."""
    text = event.text or ""
    if event.tool_call is not None and not text:
        name, arguments = event.tool_call
        return f"{name} {orjson.dumps(arguments).decode()}"
    return text


def who_of(event: Event) -> str:
    """`user` (what the user typed), `tool` (a tool's output, the environment's) or
    `agent` (the rest: what the agent said and called)."""
    if event.is_instruction or (event.source == "user" and event.is_action):
        return "user"
    if not event.is_action and (
        event.tool_call_id is not None or event.cause is not None or event.source != "agent"
    ):
        return "tool"
    return "agent"


def state_of(path: str) -> str | None:
    """What a log file (or a conversation folder, or a log on a store) is now, as the
    index compares it: None when it is gone."""
    if is_url(path):
        from condense_cli.core.remote import state

        objects = state(path)
        return None if objects is None else orjson.dumps([objects, readers()]).decode()
    try:
        found = os.stat(path)
        if not stat.S_ISDIR(found.st_mode):
            return file_state(path, found)
        # a conversation folder: its newest file
        newest = max((e.stat().st_mtime_ns for e in os.scandir(path)), default=0)
        return orjson.dumps([found.st_ino, newest, readers()]).decode()
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class Row:
    """One event as the index keeps it."""

    id: str
    position: int  # 1, 2, ... in the order the agent saw them
    who: str
    kind: str
    when: str
    forgotten: str  # "": in the view now; else the condensation that forgot it ("?": unknown)
    text: str


def rows_of(replay: Replay, kept: int = 0) -> list[Row]:
    """Each event of a log's history (its view, for a dialect that keeps none), with
    whether its current view still holds it (the first `kept` without their text)."""
    view = list(replay.view())
    shown = {str(e.id) for e in view}
    by = _forgotten_by(replay)
    events = replay.history() if replay.simulates else iter(view)
    rows: list[Row] = []
    for event in events:
        if event is None or event.is_summary:
            continue
        key = str(event.id)
        forgotten = "" if key in shown else by.get(event.key, "?")
        rows.append(
            Row(
                key,
                len(rows) + 1,
                who_of(event),
                kind_of(event),
                event.timestamp,
                forgotten,
                mask(text_of(event)) if len(rows) >= kept else "",
            )
        )
    return rows


def _forgotten_by(replay: Replay) -> dict[object, str]:
    """Each forgotten key -> the number of the condensation that first forgot it."""
    found: dict[object, str] = {}
    for number, record in enumerate(replay.condensations, start=1):
        for first, last in record.first_forgotten or record.ranges:
            for key in range(first, last + 1):
                found.setdefault(key, str(number))
    return found


@dataclass(frozen=True)
class Hit:
    """One event that matched, ranked."""

    log: str
    dialect: str
    project: str
    row: Row
    snippet: str

    @property
    def command(self) -> str:
        """The command that shows the event in its session, the view as it was then."""
        return shlex.join(["condense", "view", self.log, "--upto", self.row.id])


class SearchIndex:
    """The index of every log searched so far."""

    def __init__(self, folder: Path | None = None) -> None:
        where = folder or cache_dir()
        where.mkdir(parents=True, exist_ok=True)
        self.path = where / INDEX_FILE
        self.db = sqlite3.connect(self.path, timeout=BUSY_SECONDS)
        self._create()
        self.db.commit()
        self.found = KnownFiles(())  # (what `files` gave the tree's walk)
        self.holds: dict[str, tuple[str, int]] | None = None  # (`_holds`)
        # each log's state when `stale` looked at it, before it was read: what `store`
        # records (a log written since is then found stale the next time)
        self.looked: dict[str, str | None] = {}

    def _create(self) -> None:
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS logs (path TEXT PRIMARY KEY, state TEXT, "
            "dialect TEXT, project TEXT, held INTEGER, number INTEGER UNIQUE)"
        )
        self.db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS events USING fts5(body, path UNINDEXED, "
            "id UNINDEXED, position UNINDEXED, who UNINDEXED, kind UNINDEXED, "
            "stamp UNINDEXED, forgotten UNINDEXED, tokenize='unicode61')"
        )

    def files(self) -> KnownFiles:
        """What the index knows of the files it holds (`discovery.Known`); what it
        holds of each log is kept for `forget_gone` and `stale` to come (one read)."""
        rows = self.db.execute("SELECT path, state, dialect, held FROM logs").fetchall()
        self.holds = {path: (state, held) for path, state, _, held in rows}
        self.found = KnownFiles((path, state, dialect) for path, state, dialect, _ in rows)
        return self.found

    def _holds(self) -> dict[str, tuple[str, int]]:
        """Each log the index holds, with its state and rows: as `files` read them
        (until `stale` has used them), else read now."""
        if self.holds is None:
            query = "SELECT path, state, held FROM logs"
            return {path: (state, held) for path, state, held in self.db.execute(query)}
        return self.holds

    def stale(self, logs: Iterable[str]) -> list[tuple[str, int]]:
        """The logs of `logs` that are not indexed as they are now, each with how many
        of its events the index holds where it only grew (the same file, longer, read
        by the same code: those are not masked and stored again), else 0."""
        known, self.holds = self._holds(), None
        found = []
        for log in logs:
            now = self.found.now[log] if log in self.found.now else state_of(log)
            self.looked[log] = now
            state, held = known.get(held_path(log), (None, 0))
            if state != now:
                found.append((log, held if _grew(state, now) else 0))
        return found

    def store(self, log: str, dialect: str, project: str, rows: list[Row], kept: int = 0) -> None:
        """`log`'s events, in place of those indexed before, within the transaction
        open (begun here when none is, taking the write lock at once: `refresh`
        commits it). A log's rows are numbered from its own number times `SPAN`, so
        they go by their numbers; with `kept` (the log only grew), its first `kept`
        rows stay and only their state (in view, or forgotten) is brought up to date,
        where their ids are those the index holds, else every row goes again."""
        path = held_path(log)
        if not self.db.in_transaction:  # (the number read here is then this writer's)
            self.db.execute("BEGIN IMMEDIATE")
        known = self.db.execute("SELECT number FROM logs WHERE path = ?", (path,)).fetchone()
        if known is None:
            (top,) = self.db.execute("SELECT COALESCE(MAX(number), 0) FROM logs").fetchone()
            number = top + 1
        else:
            number = known[0]
        base = number * SPAN
        if kept and not self._same_ids(base, rows[:kept]):
            kept = 0
        if kept:
            self.db.executemany(
                "UPDATE events SET forgotten = ? WHERE rowid = ? AND forgotten != ?",
                ((r.forgotten, base + r.position, r.forgotten) for r in rows[:kept]),
            )
            self.db.execute(
                "DELETE FROM events WHERE rowid > ? AND rowid < ?", (base + kept, base + SPAN)
            )
        elif known is not None:  # (a new log's number has no rows)
            self.db.execute("DELETE FROM events WHERE rowid > ? AND rowid < ?", (base, base + SPAN))
        self.db.executemany(
            "INSERT INTO events (rowid, body, path, id, position, who, kind, stamp, "
            "forgotten) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    base + r.position,
                    r.text,
                    path,
                    r.id,
                    r.position,
                    r.who,
                    r.kind,
                    r.when,
                    r.forgotten,
                )
                for r in rows[kept:]
            ),
        )
        self.db.execute(
            "INSERT OR REPLACE INTO logs VALUES (?, ?, ?, ?, ?, ?)",
            (path, self.looked.get(log) or state_of(log), dialect, project, len(rows), number),
        )

    def _same_ids(self, base: int, rows: list[Row]) -> bool:
        """Whether the index holds these rows' ids at their places."""
        held = self.db.execute(
            "SELECT id FROM events WHERE rowid > ? AND rowid <= ? ORDER BY rowid",
            (base, base + len(rows)),
        ).fetchall()
        return [key for (key,) in held] == [r.id for r in rows]

    def refresh(self, stale: list[tuple[str, int]], results: Iterable[Any]) -> Iterator[str]:
        """Store each log of `stale` as `index_log` read it (`results`, in the same
        order); the message of each that could not be read. The logs are committed
        about every `BATCH_SECONDS` (a commit waits for the disk); an error rolls back
        the logs not yet committed, which the next search indexes."""
        began = None
        try:
            for (log, kept), result in zip(stale, results, strict=True):
                if result[1] is None:
                    yield result[0]
                    continue
                name, project, rows = result
                self.store(log, name, project, rows, kept)
                began = began or time.monotonic()
                if time.monotonic() - began >= BATCH_SECONDS:
                    self.db.commit()
                    began = None
            self.db.commit()
        finally:
            if self.db.in_transaction:
                self.db.rollback()

    def _drop(self, path: str) -> None:
        """A log's rows and its entry gone (within the caller's transaction)."""
        known = self.db.execute("SELECT number FROM logs WHERE path = ?", (path,)).fetchone()
        if known is not None:
            base = known[0] * SPAN
            self.db.execute("DELETE FROM events WHERE rowid > ? AND rowid < ?", (base, base + SPAN))
            self.db.execute("DELETE FROM logs WHERE path = ?", (path,))

    def clear(self) -> None:
        """Forget every log (`--rebuild`): the tables made anew, in one transaction
        (deleting an FTS5 table's rows one by one took a third of a rebuild)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute("DROP TABLE events")
            self.db.execute("DROP TABLE logs")
            self._create()
            self.db.commit()
        finally:
            if self.db.in_transaction:
                self.db.rollback()

    def project_of(self, log: str) -> str:
        """The project a log is indexed under ("" when it is not)."""
        query = "SELECT project FROM logs WHERE path = ?"
        row = self.db.execute(query, (held_path(log),)).fetchone()
        return str(row[0]) if row else ""

    def forget_gone(self, present: Iterable[str] = ()) -> int:
        """Forget the logs that are no longer there (those of `present`, just found,
        are); how many."""
        there = {held_path(log) for log in present}
        gone = [p for p in self._holds() if p not in there and state_of(p) is None]
        with self.db:
            for path in gone:
                self._drop(path)
        return len(gone)

    def search(
        self,
        query: str,
        logs: list[str],
        limit: int,
        filters: Filters = ANY,
        phrase: bool = False,
        ahead: Ahead | None = None,
    ) -> Iterator[Hit]:
        """The events of `logs` that best match `query` and pass `filters`, best first
        (with `phrase`, those that hold its words in a row); ranked by `ahead` when it
        ranked this query over the index as it is and `logs` are all it holds."""
        match = fts_query(query, phrase)
        if match is None:
            return
        where, values = filters.clauses(match)
        wanted = {held_path(log) for log in logs}
        numbers = dict(self.db.execute("SELECT path, number FROM logs"))
        ranked = None
        if not wanted.issuperset(numbers):  # some of the index only: by the rows' numbers
            self.db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (number INTEGER PRIMARY KEY)")
            self.db.execute("DELETE FROM wanted")
            self.db.executemany(
                "INSERT INTO wanted VALUES (?)",
                ((numbers[path],) for path in wanted if path in numbers),
            )
            where.append(f"(rowid / {SPAN}) IN (SELECT number FROM wanted)")
        elif ahead is not None:
            held = self.db.execute(HELD).fetchone()[0] or ""
            ranked = ahead.take((match, filters, limit), held)
        if ranked is None:
            ranked = [rowid for (rowid,) in self.db.execute(ranking(where), (*values, limit))]
        # the columns and snippet of the best alone (in one query SQLite makes them
        # for every match before it sorts: 52 ms against 45 over 56,526 matches)
        marks = ",".join("?" * len(ranked))
        found = {
            rowid: rest
            for rowid, *rest in self.db.execute(
                "SELECT rowid, path, id, position, who, kind, stamp, forgotten, body, "
                "snippet(events, 0, '[', ']', ' … ', ?) FROM events "
                f"WHERE events MATCH ? AND rowid IN ({marks})",
                (SNIPPET_TOKENS, match, *ranked),
            )
        }
        meta: dict[str, tuple[str, str]] = {}
        for rowid in ranked:
            if rowid not in found:  # (its session indexed again since by another search)
                continue
            path, key, position, by, kind, stamp, gone, body, snippet = found[rowid]
            if path not in meta:
                query = "SELECT dialect, project FROM logs WHERE path = ?"
                meta[path] = self.db.execute(query, (path,)).fetchone() or ("", "")
            dialect, project = meta[path]
            row = Row(key, position, by, kind, stamp, gone, body)
            yield Hit(path, dialect, project, row, snippet)

    def event(self, log: str, key: str, logs: list[str]) -> Row | None:
        """The event `key` of `log` as the index holds it (None: not one of `logs`,
        or no such event)."""
        path = held_path(log)
        if path not in {held_path(x) for x in logs}:
            return None
        found = self.db.execute(
            "SELECT id, position, who, kind, stamp, forgotten, body FROM events "
            "WHERE rowid > (SELECT number FROM logs WHERE path = ?) * ? "
            "AND rowid < ((SELECT number FROM logs WHERE path = ?) + 1) * ? AND id = ?",
            (path, SPAN, path, SPAN, key),
        ).fetchone()
        return Row(*found) if found else None

    def counts(self) -> tuple[int, int]:
        """The logs and events the index holds."""
        logs, events = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(held), 0) FROM logs"
        ).fetchone()
        return int(logs), int(events)

    def close(self) -> None:
        self.db.close()


def index_log(log: str, dialect: str | None = None, kept: int = 0) -> Any:
    """One log's dialect, project and rows (in this process or a worker's; the texts
    of the first `kept` not read, which the index holds), or the message of why it
    cannot be read and None."""
    from condense_cli.core.errors import CondenseError
    from condense_cli.dialects import read_log
    from condense_cli.dialects.base import quiet_reading
    from condense_cli.dialects.discovery import group_of

    try:
        # (to its last whole line: a client may be writing the session now)
        with read_log(log, dialect=dialect, reading=quiet_reading, settled=True) as replay:
            rows = rows_of(replay, kept)
            name = replay.dialect
    except CondenseError as exc:
        return exc.message, None
    return name, group_of({"log": log, "dialect": name}, "project"), rows


SPAN = 1 << 32  # a log's rows are numbered from its own number times this


def _grew(before: str | None, now: str | None) -> bool:
    """Whether a log's state `now` is the same file as `before`, longer, read by the
    same code (a conversation folder, or a file rewritten in place, is not)."""
    if before is None or now is None:
        return False
    old, new = orjson.loads(before), orjson.loads(now)
    if len(old) != 5 or len(new) != 5:
        return False
    return bool(old[:2] == new[:2] and new[2] > old[2] and old[4] == new[4])


def index_known(log: str, kept: dict[str, int], dialect: str | None = None) -> Any:
    """`index_log` of `log`, the texts of its first `kept[log]` rows not read."""
    return index_log(log, dialect, kept.get(log, 0))


def hit_json(hit: Hit) -> dict[str, Any]:
    row = hit.row
    return {
        "log": hit.log,
        "dialect": hit.dialect,
        "project": hit.project,
        "id": row.id,
        "position": row.position,
        "who": row.who,
        "kind": row.kind,
        "when": row.when or None,
        "forgotten_by": (row.forgotten or None) if row.forgotten != "?" else "unknown",
        "in_view": not row.forgotten,
        "snippet": hit.snippet,
    }


def project_history(
    current: Path, walked: dict[str, list[str]] | None = None
) -> tuple[SearchIndex, list[str]]:
    """The index, brought up to date for the sessions of the project of `current` (in
    the clients' folders and its own, read in this process), and those sessions,
    `current` left out. `walked`: the logs found under each folder, kept across calls
    (a `report` of many logs walks each folder once)."""
    from condense_cli.dialects.discovery import client_folders, find_logs, group_of

    def project(log: str) -> str:
        return group_of({"log": log, "dialect": ""}, "project")

    walked = {} if walked is None else walked
    index = SearchIndex()
    known = index.files()
    found = []
    for root in dict.fromkeys([*client_folders(), str(current.parent)]):
        if root not in walked:
            walked[root] = find_logs([root], None, known).logs
        found += walked[root]
    own, here = project(str(current)), str(current.resolve())
    logs = [
        log
        for log in dict.fromkeys(found)
        if str(Path(log).resolve()) != here and project(log) == own
    ]
    stale = index.stale(logs)
    for _ in index.refresh(stale, (index_log(log, None, kept) for log, kept in stale)):
        pass  # (a session that cannot be read is left out)
    return index, logs


def mentions(
    index: SearchIndex, logs: list[str], text: str, after: str = "", limit: int = 3
) -> list[Hit]:
    """The events of `logs` that name `text` word for word (a path, an error's line),
    those written after `after` (an ISO 8601 moment; a hit with no time counts), best
    first."""
    hits = index.search(text, logs, limit * 4, phrase=True)
    return [h for h in hits if not (after and h.row.when and h.row.when <= after)][:limit]
