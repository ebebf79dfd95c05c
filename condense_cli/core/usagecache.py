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
import os
import sqlite3
import stat
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from condense_cli.core.files import cache_dir, held_path

if TYPE_CHECKING:
    from condense_cli.core.usage import Usage

CACHE_FILE = "usage.sqlite"
BUSY_SECONDS = 5.0  # another `cost` writing its reads: wait this long for it
LOOKUP_BATCH = 500  # paths looked up in one query (SQLite allows 32,766 parameters)


@functools.cache
def readers() -> str:
    """What the code that reads logs is now: a checksum of its modules' sizes and times
    (zlib's: a change detector needs no cryptographic hash, and loading OpenSSL for
    one took 2 ms of every `search`)."""
    from condense_cli import __version__

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = [__version__]
    for folder in ("core", "dialects"):
        found += sorted(_modules(package, folder))
    text = "\n".join(found).encode()
    return f"{zlib.crc32(text):08x}{zlib.adler32(text):08x}"


def _modules(package: str, folder: str) -> list[str]:
    """`folder/name.py:size:time` of each module under `folder` of `package`."""
    found, folders = [], [folder]
    while folders:
        below = folders.pop()
        with os.scandir(os.path.join(package, below)) as listing:
            for entry in listing:
                name = f"{below}/{entry.name}"
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        folders.append(name)
                elif entry.name.endswith(".py"):
                    info = entry.stat()
                    found.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
    return found


def file_state(path: str, taken: os.stat_result | None = None) -> str | None:
    """What a log file is now (or was when `taken`), as the caches compare it: its
    device, inode, size and time, and the code that reads it (None: no such file)."""
    try:
        info = taken or os.stat(path)
    except (OSError, ValueError):
        return None
    return orjson.dumps(
        [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, readers()]
    ).decode()


class KnownFiles:
    """The dialect each file a cache holds was read as, and its state then: called
    with a file's path and `lstat`, its dialect if it is as it was (`discovery.Known`).
    The state of each file it was called with is kept (`now`), so that the cache need
    not look at the file again this run."""

    def __init__(self, rows: Iterable[tuple[str, str, str]]) -> None:
        self.held = {path: (state, dialect) for path, state, dialect in rows}
        self.now: dict[str, str | None] = {}  # log -> its state when called with it

    def __call__(self, log: str, taken: os.stat_result) -> str | None:
        link = stat.S_ISLNK(taken.st_mode)  # (its target's state, then)
        now = self.now[log] = file_state(log, None if link else taken)
        state, dialect = self.held.get(held_path(log, link), (None, None))
        return dialect if state is not None and state == now else None


class UsageCache:
    """The calls of the log files read before, as they were then."""

    def __init__(self, folder: Path | None = None) -> None:
        self.db: sqlite3.Connection | None = None
        self.seen: dict[str, tuple[str, str]] = {}  # log -> its real path, its state
        self.found = KnownFiles(())  # (what `files` gave the tree's walk)
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

    def files(self) -> KnownFiles | None:
        """What the cache knows of the files it read (None: no cache)."""
        if self.db is None:
            return None
        try:
            self.found = KnownFiles(self.db.execute("SELECT path, state, dialect FROM calls"))
        except sqlite3.Error:
            return None
        return self.found

    def known(self, logs: list[str]) -> dict[str, tuple[str, list[Usage]]]:
        """The logs of `logs` read before and the same files now, with their dialect
        and calls (the state of each of the others is kept for `put`)."""
        from condense_cli.core.usage import decode_calls

        if self.db is None:
            return {}
        now: dict[str, tuple[str, str]] = {}  # real path -> its log, its state now
        for log in logs:
            real = held_path(log)
            state = self.found.now.get(log)  # (a file of a tree: as the walk found it)
            if state is None:
                try:
                    found = os.stat(real)
                except (OSError, ValueError):
                    continue
                state = file_state(real, found) if stat.S_ISREG(found.st_mode) else None
            if state is not None:
                self.seen[log] = (real, state)
                now[real] = (log, state)
        kept: dict[str, tuple[str, str, bytes]] = {}
        paths = list(now)
        try:
            for at in range(0, len(paths), LOOKUP_BATCH):
                batch = paths[at : at + LOOKUP_BATCH]
                marks = ",".join("?" * len(batch))
                kept.update(
                    (path, (state, dialect, body))
                    for path, state, dialect, body in self.db.execute(
                        f"SELECT path, state, dialect, calls FROM calls WHERE path IN ({marks})",
                        batch,
                    )
                )
        except sqlite3.Error:
            return {}
        hits = {}
        for real, (log, state) in now.items():
            row = kept.get(real)
            if row is None or row[0] != state:
                continue
            try:
                calls = decode_calls(row[2])
            except (TypeError, ValueError):  # (orjson's errors are ValueErrors)
                continue
            hits[log] = (row[1], calls)
        return hits

    def put(self, log: str, dialect: str, body: bytes) -> None:
        """Keep the calls read of `log` (`encode_calls`), as it was when `known` looked
        it up."""
        seen = self.seen.get(log)
        if self.db is None or seen is None:
            return
        real, state = seen
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
            there = {real for real, _ in self.seen.values()}  # (just looked at)
            paths = [row[0] for row in db.execute("SELECT path FROM calls")]
            gone = [(p,) for p in paths if p not in there and not os.path.exists(p)]
            db.executemany("DELETE FROM calls WHERE path = ?", gone)
            db.commit()
        except sqlite3.Error:
            pass
        finally:
            db.close()
