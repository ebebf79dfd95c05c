"""Many logs: the logs in what the user names (files, conversation folders, trees).

A file is a log as given (`-` is standard input). A folder that a dialect reads as
one log (an OpenHands V1 conversation) is one log. Any other folder is a tree,
searched for logs of every dialect: a folder a dialect reads is one log (and is not
searched further), a file is a log when a dialect claims its first JSON object (the
rules detection uses). Everything else is counted as skipped. Symbolic links are
never followed (one out of the tree could lead anywhere; one inside it leads to
what is searched anyway), only counted. A file a cache holds as it is now (`Known`:
`cost`'s cache, `search`'s index) is taken as the log of the dialect the cache read it
as, without being opened again.
`dialect` keeps the logs of one dialect. Logs come out sorted by path within each
input, inputs in the order given.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from condense_cli.core.errors import ConfigError
from condense_cli.core.logfile import is_stream
from condense_cli.core.remote import is_url
from condense_cli.dialects import DIALECTS, SNIFF_BYTES, claimant, first_lines, first_value

LOG_SUFFIXES = (".jsonl", ".json", ".ndjson")
# What a cache knows of a file in a tree: the dialect it read it as when the file was
# as it is now (given its path and `stat`), else None; the file is then not opened
# to be detected.
Known = Callable[[str, os.stat_result], "str | None"]
# Where the clients keep their sessions, under the user's home: what `cost`, `search`
# and MCP's `search_history` read when no log is named.
CLIENT_FOLDERS = (
    ".claude/projects",
    ".codex/sessions",
    ".gemini/tmp",
    ".openhands/conversations",
)


def client_folders() -> list[str]:
    """The clients' session folders under the user's home that are there."""
    return [str(p) for p in (Path.home() / f for f in CLIENT_FOLDERS) if p.is_dir()]


@dataclass
class Found:
    """The logs found, and how many files were passed over (and why, by reason)."""

    logs: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def says(self) -> list[str]:
        """One line per reason a file was skipped."""
        return [
            f"{count:,} {'file' if count == 1 else 'files'} skipped: {reason}"
            for reason, count in sorted(self.skipped.items())
        ]


def find_logs(
    inputs: Iterable[str], dialect: str | None = None, known: Known | None = None
) -> Found:
    """The logs in `inputs` (a name that is no folder is taken as a log file); a file
    of a tree that `known` knows is taken as it says."""
    if dialect is not None and dialect not in DIALECTS:
        from condense_cli.dialects import choices

        raise ConfigError(f"--dialect {dialect!r} is not a dialect; choose one of: {choices()}")
    found = Found()
    for name in inputs:
        if is_url(name):
            found.logs += _remote_logs(name, dialect, found)
            continue
        path = Path(name)
        if is_stream(name) or not path.is_dir():  # a file (or none: reading it will say so)
            found.logs.append(name)
            continue
        if _folder_dialect(path, dialect) is not None:
            found.logs.append(name)
            continue
        found.logs += sorted(_walk(path, dialect, found, known))
    return found


def _walk(
    root: Path, dialect: str | None, found: Found, known: Known | None = None
) -> Iterator[str]:
    """The logs in the tree at `root` (a folder no dialect reads as one log). A special
    file (a FIFO, a socket, a device) is never opened, only counted; a folder that
    cannot be read is counted; a file named as a log that cannot be read is given as a
    log, so reading it says why and fails the command (exit 1). Each folder is listed
    once: its listing says whether a dialect reads it as one log, and what it says of
    an entry (a link, a folder, a regular file) is not asked of the file again."""
    top = root.resolve()
    folders = [str(root)]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
            if folder != str(root) and _listing_dialect(entries, dialect) is not None:
                yield folder  # one log: not searched further
                continue
        except OSError:
            found.skip("a folder that cannot be read")
            continue
        below = []
        for entry in entries:
            try:
                if entry.is_symlink():
                    _skip_link(Path(entry.path), top, found)
                elif entry.is_dir(follow_symlinks=False):
                    below.append(entry.path)
                elif not entry.is_file(follow_symlinks=False):
                    found.skip("not a regular file (a FIFO, a socket or a device)")
                elif _known(entry, dialect, known) or _file_dialect(entry.path, dialect):
                    yield entry.path
                else:
                    found.skip("not a session log")
            except _Unreadable:
                yield entry.path  # reading it says it cannot be read
            except OSError:
                found.skip("a folder that cannot be read")
        folders.extend(reversed(below))


def _known(entry: os.DirEntry[str], dialect: str | None, known: Known | None) -> bool:
    """Whether `known` knows the file as a log (of `dialect`, when one is named)."""
    if known is None or not entry.name.endswith(LOG_SUFFIXES):
        return False
    name = known(entry.path, entry.stat(follow_symlinks=False))
    return name is not None and dialect in (None, name)


class _Unreadable(Exception):
    """A file named as a log that cannot be opened."""


def _skip_link(path: Path, top: Path, found: Found) -> None:
    """A link is never followed: out of the tree it could lead anywhere, inside it
    its target is searched where it is."""
    found.skip("a link inside the tree" if _inside(path, top) else "a link out of the tree")


def _inside(path: Path, top: Path) -> bool:
    try:
        return path.resolve().is_relative_to(top)
    except OSError:
        return False


def _folder_dialect(path: Path, dialect: str | None) -> str | None:
    for name, registered in DIALECTS.items():
        if dialect in (None, name) and registered.claims_folder(path):
            return name
    return None


def _listing_dialect(entries: list[os.DirEntry[str]], dialect: str | None) -> str | None:
    """The dialect that reads a folder holding `entries` as one log (`claims_listing`,
    a folder among them as a link to one counts), or None."""
    folders = [entry.name for entry in entries if entry.is_dir()]
    files = [entry.name for entry in entries if not entry.is_dir()]
    for name, registered in DIALECTS.items():
        if dialect in (None, name) and registered.claims_listing(folders, files):
            return name
    return None


def _file_dialect(path: str, dialect: str | None) -> str | None:
    """The dialect that claims the file (by its first JSON object), or None; raises
    `_Unreadable` for a file named as a log that cannot be opened."""
    if not path.endswith(LOG_SUFFIXES):
        return None
    try:
        with open(path, "rb") as file:
            first = first_value(first_lines(file))
    except PermissionError as exc:
        raise _Unreadable from exc
    except OSError:
        return None
    registered = claimant(first, dialect)
    return None if registered is None else registered.name


def _remote_logs(url: str, dialect: str | None, found: Found) -> list[str]:
    """The logs at a URL: an object is a log as given; a folder a dialect reads (by
    its listing) is one log; any other folder is searched as a tree is."""
    from condense_cli.core.remote import head, is_folder, walk

    if not is_folder(url):
        return [url]
    logs = []
    for folder, dirs, files in walk(url):
        if any(
            dialect in (None, name) and registered.claims_listing(dirs, files)
            for name, registered in DIALECTS.items()
        ):
            logs.append(folder)  # one log: not searched further
            dirs[:] = []
            continue
        for name in files:
            if name.endswith(LOG_SUFFIXES):
                first = first_value(head(f"{folder}/{name}", SNIFF_BYTES).splitlines())
                if claimant(first, dialect) is not None:
                    logs.append(f"{folder}/{name}")
                    continue
            found.skip("not a session log")
    return sorted(logs)


GROUPS = ("dialect", "project", "day", "model")


def group_of(row: dict[str, Any], by: str) -> str:
    """What a log's row (`log`, `dialect`, `model`) is grouped under: its `dialect`;
    its `model` (the one the agent used last); its `project` (where its dialect records
    one, `Registered.project_of`, asked of every dialect where the log's is not known
    yet: the folder a Claude Code session, a Codex rollout or an OpenHands V1
    conversation worked in, a Gemini CLI session's project; else the folder the log is
    in: an evaluation run's folder); the `day` it was last written (UTC)."""
    if by in ("dialect", "model"):
        return str(row.get(by) or f"no {by} recorded")
    path = Path(row["log"])
    if by == "day":
        from datetime import UTC, datetime

        try:
            stamp = path.stat().st_mtime
        except OSError:
            return "-"
        return datetime.fromtimestamp(stamp, UTC).date().isoformat()
    for name, registered in DIALECTS.items():
        if row.get("dialect") in (name, "", None):
            project = registered.project_of(row["log"])
            if project is not None:
                return project
    return path.parent.name or "."
