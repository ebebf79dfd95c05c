"""The model calls of each log file, kept in condense's cache so that `cost` over a
whole history reads again only the files that changed since it last read them.

A file's calls are kept under its real path with what it was when read: device,
inode, size and modification time, and the code that read it (the size and time of
every module of `core/` and `dialects/`, and condense's version). A file that differs
in any of them is read again; one that is gone is forgotten as a run ends. The cache
is one SQLite file; only the command's own process reads and writes it (its workers
read the logs), and a cache that cannot be opened or written is no cache: the logs
are read.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
from dataclasses import fields
from pathlib import Path

import orjson

from condense_cli.core.files import cache_dir
from condense_cli.core.usage import Usage

CACHE_FILE = "usage.sqlite"
FIELDS = [f.name for f in fields(Usage)]
BUSY_SECONDS = 5.0  # another `cost` writing its reads: wait this long for it


@functools.cache
def readers() -> str:
    """What the code that reads logs is now: a digest of its modules' sizes and times."""
    from condense_cli import __version__

    package = Path(__file__).resolve().parent.parent
    found = [__version__]
    for folder in ("core", "dialects"):
        for path in sorted((package / folder).rglob("*.py")):
            stat = path.stat()
            found.append(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(found).encode()).hexdigest()[:16]


def file_state(path: str) -> str | None:
    """What a log file is now, as the caches compare it: its device, inode, size and
    time, and the code that reads it (None: no such file)."""
    try:
        stat = os.stat(path)
    except (OSError, ValueError):
        return None
    return orjson.dumps(
        [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, readers()]
    ).decode()


class UsageCache:
    """The calls of the log files read before, as they were then."""

    def __init__(self, folder: Path | None = None) -> None:
        self.db: sqlite3.Connection | None = None
        self.seen: dict[str, tuple[str, str]] = {}  # log -> its real path, its state
        try:
            where = folder or cache_dir()
            where.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(where / CACHE_FILE, timeout=BUSY_SECONDS)
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS calls (path TEXT PRIMARY KEY, state TEXT, "
                "dialect TEXT, calls BLOB)"
            )
        except (OSError, sqlite3.Error):
            self.db = None

    def known(self, logs: list[str]) -> dict[str, tuple[str, list[Usage]]]:
        """The logs of `logs` read before and the same files now, with their dialect
        and calls."""
        found = {}
        for log in logs:
            hit = self.get(log)
            if hit is not None:
                found[log] = hit
        return found

    def get(self, log: str) -> tuple[str, list[Usage]] | None:
        """The dialect and calls of `log` as read before, if it is the same file now
        (None: read it; its state now is kept for `put`)."""
        if self.db is None:
            return None
        real = os.path.realpath(log)
        state = file_state(real) if os.path.isfile(real) else None
        if state is None:
            return None
        self.seen[log] = (real, state)
        try:
            row = self.db.execute(
                "SELECT dialect, calls FROM calls WHERE path = ? AND state = ?", (real, state)
            ).fetchone()
        except sqlite3.Error:
            return None
        if row is None:
            return None
        try:
            calls = [Usage(*call) for call in orjson.loads(row[1])]  # in the order of FIELDS
        except (orjson.JSONDecodeError, TypeError, ValueError):
            return None
        return row[0], calls

    def put(self, log: str, dialect: str, calls: list[Usage]) -> None:
        """Keep the calls read of `log` (as it was when `get` looked it up)."""
        seen = self.seen.get(log)
        if self.db is None or seen is None:
            return
        real, state = seen
        body = orjson.dumps([[getattr(call, name) for name in FIELDS] for call in calls])
        try:
            self.db.execute(
                "INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?)", (real, state, dialect, body)
            )
        except sqlite3.Error:
            self.close()

    def close(self) -> None:
        """Write what was kept, forget the files that are gone, and let the file go."""
        db, self.db = self.db, None
        if db is None:
            return
        try:
            paths = [row[0] for row in db.execute("SELECT path FROM calls")]
            gone = [(path,) for path in paths if not os.path.exists(path)]
            db.executemany("DELETE FROM calls WHERE path = ?", gone)
            db.commit()
        except sqlite3.Error:
            pass
        finally:
            db.close()
