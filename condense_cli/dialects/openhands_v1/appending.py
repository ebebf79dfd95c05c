"""New events as the SDK writes them, and appending them: a new event file under the
SDK's own lock, written to a temp file then linked in, file and folder fsynced."""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from condense_cli.core.errors import LogBusyError, LogError
from condense_cli.core.jsonlines import LineProblem, decode_line
from condense_cli.core.logfile import lock_exclusively
from condense_cli.dialects.openhands_v1.detect import (
    CONDENSATION,
    CONDENSATION_REQUEST,
    FILE_NAME_RE,
)
from condense_cli.dialects.openhands_v1.shapes import event_problem
from condense_cli.dialects.openhands_v1.storage import (
    ID_RE,
    LOCK_FILE,
    LOCK_TIMEOUT,
    events_dir_of,
)


def _now() -> str:
    """A timestamp as the SDK writes one (local time, ISO 8601, no zone)."""
    return datetime.now().isoformat()


def new_condensation(
    forgotten_event_ids: Iterable[str],
    *,
    summary: str | None = None,
    summary_offset: int | None = None,
    llm_response_id: str | None = None,
    parent_id: str | None = None,
    event_id: str | None = None,
) -> dict[str, Any]:
    """A `Condensation` the current SDK loads (fields it would leave out are left out).

    `llm_response_id` is the model response that wrote the summary; a condensation
    made without a model gets a fresh uuid, as the SDK's own agents do. The id is
    a fresh uuid unless `event_id` is given.
    """
    if (summary is None) != (summary_offset is None):
        raise ValueError("summary and summary_offset go together")
    if summary_offset is not None and summary_offset < 0:
        raise ValueError("summary_offset must be 0 or more")
    event: dict[str, Any] = {
        "kind": CONDENSATION,
        "id": event_id or str(uuid.uuid4()),
        "timestamp": _now(),
        "source": "environment",
        "forgotten_event_ids": list(dict.fromkeys(forgotten_event_ids)),
        "summary": summary,
        "summary_offset": summary_offset,
        "llm_response_id": llm_response_id or str(uuid.uuid4()),
        "parent_id": parent_id,
    }
    return {k: v for k, v in event.items() if v is not None}


def new_condensation_request(parent_id: str | None = None) -> dict[str, Any]:
    """A `CondensationRequest` the current SDK loads."""
    event: dict[str, Any] = {
        "kind": CONDENSATION_REQUEST,
        "id": str(uuid.uuid4()),
        "timestamp": _now(),
        "source": "environment",
    }
    if parent_id is not None:
        event["parent_id"] = parent_id
    return event


def event_file_name(index: int, event_id: str) -> str:
    """The name the SDK gives the event file at `index`."""
    return f"event-{index:05d}-{event_id}.json"


class LockedEvents:
    """An `events/` folder held under the SDK's own lock, for one read-decide-append."""

    def __init__(self, events_dir: Path) -> None:
        self.events_dir = events_dir

    def stored(self) -> tuple[int, set[str]]:
        """How many event files the SDK reads (the next index), and their ids."""
        by_index: dict[int, str] = {}
        for name in os.listdir(self.events_dir):
            match = FILE_NAME_RE.match(name)
            if match:
                by_index[int(match["index"])] = match["id"]
        count = 0
        while count in by_index:
            count += 1
        if any(i > count for i in by_index):
            raise LogError(
                str(self.events_dir),
                f"event index {count} is missing; the SDK stops reading there, "
                "so nothing is appended after the gap",
                hint="run condense check on the conversation",
            )
        return count, {by_index[i] for i in range(count)}

    def append(self, body: bytes, expected_next: int | None = None) -> Path:
        """Write the event `body` (its JSON) as the next event file; its path.

        With `expected_next`, refuse (LogBusyError) when another writer has added
        events since the caller read the conversation.
        """
        try:
            event = decode_line(body)
        except LineProblem as exc:
            raise LogError(str(self.events_dir), f"cannot append: {exc}") from None
        message = event_problem(event)
        event_id = event.get("id")
        if message is None and not ID_RE.match(str(event_id)):
            message = f"id {event_id!r} cannot name an event file (hex digits and dashes)"
        if message is not None:
            raise LogError(str(self.events_dir), f"cannot append: {message}")
        index, ids = self.stored()
        if expected_next is not None and index != expected_next:
            raise LogBusyError(
                f"{self.events_dir}: the conversation changed while condense was working "
                f"({expected_next} events read, {index} now); nothing was appended",
                hint="run the command again",
            )
        if event_id in ids:
            raise LogError(str(self.events_dir), f"cannot append: id {event_id} is taken")
        target = self.events_dir / event_file_name(index, str(event_id))
        _write_new_file(target, body)
        return target


def _write_new_file(target: Path, data: bytes) -> None:
    """Create `target` holding `data`, whole or not at all.

    The data goes to a temporary file in the same folder, is fsynced, and only
    then linked under its name (a link never replaces a file); then the folder is
    fsynced. The temporary file is unnamed (O_TMPFILE) where the file system
    allows it, so a writer killed at any moment leaves no file behind; elsewhere
    it is a dot file, which the SDK and `condense` ignore, removed after the link.
    """
    folder = target.parent
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        try:
            fd = os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o644)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
            _link_named_temp(folder, target.name, data, dir_fd)
        else:
            try:
                _write_all(fd, data)
                os.link(f"/proc/self/fd/{fd}", target.name, dst_dir_fd=dir_fd)
            finally:
                os.close(fd)
        os.fsync(dir_fd)
    except FileExistsError:
        raise LogBusyError(
            f"{target}: another writer created this event file; nothing was appended",
            hint="run the command again",
        ) from None
    except OSError as exc:
        raise LogError(
            str(target), f"could not write: {exc.strerror or exc}; nothing was appended"
        ) from None
    finally:
        os.close(dir_fd)


def _link_named_temp(folder: Path, name: str, data: bytes, dir_fd: int) -> None:
    temp = f".{name}.{os.getpid()}.tmp"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=dir_fd)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


@contextlib.contextmanager
def locked_events(path: str | Path, timeout: float = LOCK_TIMEOUT) -> Iterator[LockedEvents]:
    """Hold the SDK's lock, `events/.eventlog.lock` (an exclusive flock, as the SDK's
    `filelock.FileLock` takes), for the duration of the block."""
    events_dir = events_dir_of(path)
    lock_path = events_dir / LOCK_FILE
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise LogError(str(lock_path), f"cannot open the lock: {exc.strerror or exc}") from None
    try:
        lock_exclusively(fd, str(events_dir), timeout)
        yield LockedEvents(events_dir)
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def append_event(
    path: str | Path,
    event: dict[str, Any],
    *,
    expected_next: int | None = None,
    timeout: float = LOCK_TIMEOUT,
) -> Path:
    """Append one event to a conversation folder under the SDK's lock; its new file."""
    with locked_events(path, timeout) as events:
        return events.append(orjson.dumps(event), expected_next)
