"""How the SDK stores a conversation, and reading it: event files (or JSONL lines)
checked and indexed in file order, with the problems `check` lists."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from sys import intern
from typing import TYPE_CHECKING, Any

import orjson

from condense_cli.core.errors import LogError
from condense_cli.core.events import Problem
from condense_cli.core.jsonlines import LineProblem, decode_line
from condense_cli.core.logfile import line_body
from condense_cli.dialects.openhands_v1.detect import (
    CONDENSATION,
    CONDENSATION_REQUEST,
    EVENTS_DIR,
    FILE_NAME_RE,
    SENT_KINDS,
)
from condense_cli.dialects.openhands_v1.shapes import event_problem
from condense_cli.fast.halves import splits
from condense_cli.fast.lines import collector_paused

if TYPE_CHECKING:  # only `stats` counts, and its caller imports them
    from condense_cli.dialects.counting import Counted, TextCounts

#: Kinds `condense` appends itself.
APPENDED_KINDS = frozenset({CONDENSATION, CONDENSATION_REQUEST})

#: Events the SDK never takes as the head of a conversation tree.
BRANCH_ARTIFACT_KINDS = frozenset({"ConversationStateUpdateEvent", "ConversationErrorEvent"})


LOCK_FILE = ".eventlog.lock"
LOCK_TIMEOUT = 30.0  # seconds, as the SDK waits for its own lock
# A folder is read in two processes from `halves.SPLIT_MIN_BYTES` of log, an event
# file counting as this many bytes: reading one (open, read, parse, check) costs
# about what 4 KB of a JSONL log do.
FILE_BYTES = 4096
CHUNK_FILES = 2048  # the events a child reading a folder sends at once

ID_RE = re.compile(r"^[0-9a-fA-F\-]{8,}$")
ROOT_PARENT_ID = "__root__"

LAST_SUMMARY = "last-summary"
MULTI_SUMMARY = "multi-summary"
#: The SDK changed from one summary to several on this day (software-agent-sdk #1721).
MULTI_SUMMARY_SINCE = "2026-01-22"
#: The SDK took `events/.eventlog.lock` when appending from this day on (#1614).
LOCK_FILE_SINCE = "2026-01-12"
DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


def problem_at(
    path: str, message: str, line: int | None = None, severity: str = "error"
) -> Problem:
    """A defect found in the file `path` (an event file, or the JSONL log)."""
    return Problem(line, message, severity, path)


#: `StoredEvent.parent` of an event without a `parent_id` key.
class _NoParent:
    """The one `NO_PARENT`, also once sent from a forked reader (pickled by name)."""

    def __reduce__(self) -> str:
        return "NO_PARENT"

    def __repr__(self) -> str:
        return "NO_PARENT"


NO_PARENT = _NoParent()


class StoredEvent:
    """One stored event: its place in the log, its id and kind, the bytes as stored,
    and the few fields replay reads of every event. The parsed event (`data`) is
    kept only for condensations; other events are parsed again when a view shows
    them, so that a replay holds bytes, not every event's objects. An event of a
    conversation folder does not even keep its bytes: its file is read again when
    they are wanted (`keep=False`).

    One is kept for every event of a conversation, so it holds little: the strings
    that repeat (its kind, tool and date) once for all events, ids once for the
    events that repeat them (`Shared`), and an event file's path only when its name
    is not the one the SDK gives (else the folder, shared, and the name is made).
    """

    __slots__ = (
        "_data",
        "_folder",
        "_path",
        "_raw",
        "call",
        "date",
        "id",
        "kind",
        "line",
        "parent",
        "position",
        "response",
        "size",
        "thinking",
        "tool",
    )

    def __init__(
        self,
        position: int,  # the file index, or the event's ordinal in a JSONL file
        id: str,
        kind: str,
        raw: bytes,
        data: dict[str, Any],
        path: str,  # the event file, or the JSONL file
        line: int | None = None,  # the line in a JSONL file
        keep: bool = True,  # keep `raw` (else it is read again from `path`, a file)
        folder: str | None = None,  # the folder `path` is in (with its final slash)
    ) -> None:
        self.position = position
        self.id = id
        self.kind = intern(kind)
        self._raw = raw if keep else None
        self.size = len(raw)
        self._folder = folder
        self._path: str | None = path
        if folder is not None and path == folder + self._sdk_name():
            self._path = None
        self.line = line
        self._data = data if kind == CONDENSATION else None
        get = data.get
        self.parent: Any = get("parent_id", NO_PARENT)
        stamp = get("timestamp")
        self.date = intern(stamp[:10]) if isinstance(stamp, str) and DATE_RE.match(stamp) else None
        self.response: Any = get("llm_response_id")  # one model response's tool calls
        self.thinking = bool(get("thinking_blocks"))
        self.call: Any = get("tool_call_id")
        tool = get("tool_name")
        self.tool: Any = intern(tool) if type(tool) is str else tool

    def _sdk_name(self) -> str:
        """The name the SDK gives this event's file."""
        return f"event-{self.position:05d}-{self.id}.json"

    @property
    def path(self) -> str:
        """The event's file, or the JSONL file it is a line of."""
        path = self._path
        return path if path is not None else self._folder + self._sdk_name()  # type: ignore[operator]

    @property
    def raw(self) -> bytes:
        """The bytes as stored: kept, or the event file read again."""
        raw = self._raw
        if raw is not None:
            return raw
        try:
            raw = read_event_file(self.path)
        except OSError as exc:
            raise LogError(self.path, f"cannot be read again: {refusal(exc)}") from None
        if len(raw) != self.size:
            raise LogError(
                self.path,
                f"changed while condense was reading the conversation ({self.size:,} bytes, "
                f"now {len(raw):,}); the SDK never rewrites an event file",
                hint="run the command again",
            )
        return raw

    @property
    def data(self) -> dict[str, Any]:
        """The event as parsed (again, for all but condensations)."""
        data = self._data
        return data if data is not None else orjson.loads(self.raw)

    def parsed(self) -> tuple[dict[str, Any], bytes]:
        """The event as parsed and its bytes, read once."""
        raw = self.raw
        return (self._data if self._data is not None else orjson.loads(raw)), raw

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    @property
    def sent(self) -> bool:
        """Whether the SDK sends this event to the model at all."""
        return self.kind in SENT_KINDS


class Shared:
    """The ids events repeat of earlier events, so that each is held once: a model
    response's (its events follow each other), a tool call's (the action's, for its
    observation), the ids a condensation forgets (the events' own)."""

    def __init__(self, seen: dict[str, StoredEvent]) -> None:
        self.seen = seen  # the events so far, by id
        self.calls: dict[str, str] = {}  # call ids seen once
        self.previous: StoredEvent | None = None

    def take(self, record: StoredEvent) -> None:
        """`record`, the next event, given the strings it shares with earlier ones."""
        previous = self.previous
        if previous is not None and previous.response == record.response:
            record.response = previous.response
        call = record.call
        if type(call) is str:
            first = self.calls.pop(call, None)
            if first is None:
                self.calls[call] = call
            else:
                record.call = first
        ids = record._data.get("forgotten_event_ids") if record._data is not None else None
        if type(ids) is list:
            seen = self.seen
            ids[:] = [seen[x].id if type(x) is str and x in seen else x for x in ids]
        self.previous = record


@dataclass(frozen=True)
class Conversation:
    """The valid events of a conversation in order, and every problem met reading it."""

    path: str
    records: tuple[StoredEvent, ...]
    problems: tuple[Problem, ...]
    events_dir: Path | None = None  # None for JSONL input
    base_state: dict[str, Any] | None = None
    has_lock_file: bool = False
    # What a read that counted (`ReadCounting`) counted of the events the model reads
    counted: Counted | None = None
    counts: TextCounts | None = None


# The text the model reads of an event the read has just parsed (its data and bytes)
TextOf = Callable[["StoredEvent", dict[str, Any], bytes], str]


class ReadCounting:
    """Counting, as a folder is read, the text the model reads of each event it sends
    (`StoredEvent.sent`), while the event's file is read and parsed anyway, so that
    `stats` reads and parses no file again for it. `counted` holds the counts in the
    events' order."""

    def __init__(self, counts: TextCounts, text_of: TextOf) -> None:
        self.counts = counts
        self.text_of = text_of
        self.counted = counts.counted()

    def part(self) -> ReadCounting:
        """The same counting of the next part of the folder, on its own."""
        return ReadCounting(self.counts, self.text_of)

    def note(self, record: StoredEvent, data: dict[str, Any], raw: bytes) -> None:
        """Count the text of `record` (parsed as `data` from `raw`), if it is sent."""
        if record.sent:
            self.counts.note(self.counted, self.text_of(record, data, raw))


def events_dir_of(path: str | Path) -> Path:
    """The `events/` folder of a conversation folder (or the folder itself)."""
    folder = Path(path)
    if not folder.exists():
        raise LogError(str(path), "no such file or folder", hint="check the path")
    if not folder.is_dir():
        raise LogError(str(path), "is a file, not a conversation folder")
    for candidate in (folder / "event_service" / EVENTS_DIR, folder / EVENTS_DIR):
        if candidate.is_dir():
            return candidate
    if folder.name == EVENTS_DIR or any(FILE_NAME_RE.match(n) for n in os.listdir(folder)):
        return folder
    raise LogError(
        str(path),
        "no events/ folder here",
        hint="give the conversation folder (holding event_service/ or events/) "
        "or its events/ folder",
    )


def read_conversation(path: str) -> Conversation:
    """Read a conversation folder, or a JSONL file of V1 events."""
    if os.path.isdir(path):
        return read_folder(path)
    try:
        with open(path, "rb") as file:
            return read_lines(file, path)
    except FileNotFoundError:
        raise LogError(path, "no such file or folder", hint="check the path") from None
    except PermissionError:
        raise LogError(path, "permission denied") from None


def read_jsonl_bytes(data: bytes, name: str = "<stdin>") -> Conversation:
    """Read V1 events given as JSONL bytes (standard input, for instance)."""
    return read_lines(data.splitlines(keepends=True), name)


def read_lines(lines: Iterable[bytes], name: str) -> Conversation:
    """Read V1 events, one per line (each line as read, newline included).

    A summary line as `condense view --format jsonl` prints it is an event like
    the others: a summary the view keeps.
    """
    records: list[StoredEvent] = []
    problems: list[Problem] = []
    seen: dict[str, StoredEvent] = {}
    shared = Shared(seen)
    for number, raw in enumerate(lines, start=1):
        body = line_body(raw, first=number == 1)
        if not body.strip():
            continue
        found: list[Problem] = []
        record = _record(body, len(records), name, number, found)
        if found and not raw.endswith(b"\n"):
            found = [
                problem_at(
                    name,
                    f"the last line is incomplete ({found[0].message}); "
                    "a writer probably stopped in the middle of it",
                    number,
                )
            ]
        problems += found
        if record is not None and _unique(record, seen, problems):
            shared.take(record)
            records.append(record)
    return Conversation(name, tuple(records), tuple(problems))


class NotRegular(OSError):
    """An event file that is not a regular file (a folder, a FIFO, a device)."""


def read_event_file(file_path: str) -> bytes:
    """The bytes of one event file (or the folder's `base_state.json`). A symbolic link
    is refused without being followed, and anything but a regular file without being
    read: nothing outside the conversation folder is ever opened, and no FIFO can
    block the read."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open(file_path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file")
        # one read of one byte more than its size finds the end: no file object
        # (half the cost of a small file's read); a file that grew is read on
        wanted = info.st_size + 1
        data = os.read(fd, wanted)
        if len(data) < wanted:
            return data
        parts = [data]
        while more := os.read(fd, 1 << 20):
            parts.append(more)
        return b"".join(parts)
    finally:
        os.close(fd)


def refusal(exc: OSError) -> str:
    """What to say of an event file that could not be read."""
    if isinstance(exc, NotRegular):
        return "not a regular file: refused without reading it"
    if exc.errno == errno.ELOOP:
        return "a symbolic link: event files must be regular files; refused without following it"
    return f"cannot read: {exc.strerror or exc}"


def read_folder(path: str | Path, counting: ReadCounting | None = None) -> Conversation:
    """Read a conversation folder the way the SDK's event log does (with `counting`,
    counting what the model reads of each event as it goes).

    Files are taken by index from 0 up to the first missing index; files after
    a gap are not part of the conversation (the SDK stops there), and the gap
    is reported. A big folder is read in two processes (`halves.in_two`), a forked
    child reading the second half of the files; what is read is the same.
    """
    events_dir = events_dir_of(path)
    problems: list[Problem] = []
    by_index: dict[int, str] = {}
    for name in sorted(os.listdir(events_dir)):
        if name.startswith("."):
            continue  # the lock file, and our own temporary files
        match = FILE_NAME_RE.match(name)
        if match is None:
            problems.append(
                problem_at(
                    str(events_dir / name),
                    "not an event file name (event-NNNNN-<id>.json); the SDK ignores it",
                    severity="warning",
                )
            )
            continue
        index = int(match["index"])
        if index in by_index:
            problems.append(
                problem_at(
                    str(events_dir / name),
                    f"index {index} is also used by {by_index[index]}; "
                    "the SDK reads only one of them",
                )
            )
            continue
        by_index[index] = name
    count = 0
    while count in by_index:
        count += 1
    beyond = sorted(i for i in by_index if i > count)
    if beyond:
        first = by_index[beyond[0]]
        previous = f"after {by_index[count - 1]}" if count else "at the start"
        problems.append(
            problem_at(
                str(events_dir / first),
                f"index {count} is missing ({previous}); the SDK stops reading at the gap, "
                f"so this file and {len(beyond) - 1} later ones are not part of the "
                "conversation",
            )
        )
    # str(events_dir / name) without pathlib's cost per file ("." joins as pathlib does)
    folder = "" if str(events_dir) == "." else os.path.join(str(events_dir), "")
    names = [by_index[index] for index in range(count)]
    del by_index
    records: list[StoredEvent] = []
    seen: dict[str, StoredEvent] = {}
    shared = Shared(seen)
    with collector_paused():
        # Each event is taken as it is read: the strings it repeats of earlier ones
        # are let go at once, not once the whole folder is read.
        if splits(count * FILE_BYTES):
            read = _read_in_two(folder, names, counting)
        else:
            read = _read_files(folder, names, 0, count, counting)
        for item in read:
            if type(item) is not StoredEvent:
                problems.append(item)  # type: ignore[arg-type]
            elif _unique(item, seen, problems):
                shared.take(item)
                records.append(item)
            elif item.sent:
                counting = None  # its counts no longer follow the events kept
    del names
    base_state = _base_state(events_dir, problems)  # before the problems are frozen
    return Conversation(
        str(path),
        tuple(records),
        tuple(problems),
        events_dir=events_dir,
        base_state=base_state,
        has_lock_file=(events_dir / LOCK_FILE).exists(),
        counted=counting.counted if counting is not None else None,
        counts=counting.counts if counting is not None else None,
    )


def _read_files(
    folder: str, names: list[str], start: int, stop: int, counting: ReadCounting | None = None
) -> Iterator[StoredEvent | Problem]:
    """The event files `names[start:stop]` of `folder` read, in order: each an event,
    after the problems found in reading it (or only those); each counted by
    `counting`."""
    for index in range(start, stop):
        name = names[index]
        file_path = folder + name
        try:
            raw = read_event_file(file_path)
        except OSError as exc:
            yield problem_at(file_path, refusal(exc))
            continue
        if not raw.strip():
            yield problem_at(file_path, "empty file; the SDK skips it")
            continue
        found: list[Problem] = []
        record = _record(raw, index, file_path, None, found, False, folder, counting)
        yield from found
        if record is None:
            continue
        name_id = FILE_NAME_RE.match(name)["id"]  # type: ignore[index]
        if name_id != record.id:
            yield problem_at(
                file_path, f"the file name says id {name_id} but the event's id is {record.id}"
            )
        yield record


def _read_in_two(
    folder: str, names: list[str], counting: ReadCounting | None
) -> Iterator[StoredEvent | Problem]:
    """`_read_files` of every file, a forked child reading the second half and sending
    it `CHUNK_FILES` at a time (each pickled alone, so that pickling holds little),
    with its counts; what the child did not send is read here."""
    from condense_cli.fast.halves import Worker

    count = len(names)
    half = count // 2

    def second() -> Iterator[tuple[list[StoredEvent | Problem], Counted | None]]:
        for start in range(half, count, CHUNK_FILES):
            part = counting.part() if counting is not None else None
            stop = min(start + CHUNK_FILES, count)
            read = list(_read_files(folder, names, start, stop, part))
            yield read, part.counted if part is not None else None

    child = Worker.start(second)
    done = half
    try:
        yield from _read_files(folder, names, 0, half, counting)
        if child is not None:
            for read, counted in child.items():
                yield from read
                if counting is not None and counted is not None:
                    counting.counted.extend(counted)
                done = min(done + CHUNK_FILES, count)
    finally:
        if child is not None:
            child.stop()
    yield from _read_files(folder, names, done, count, counting)


def _base_state(events_dir: Path, problems: list[Problem]) -> dict[str, Any] | None:
    state = events_dir.parent / "base_state.json"
    if not os.path.lexists(state):
        return None
    try:
        data = orjson.loads(read_event_file(str(state)))
    except OSError as exc:
        problems.append(problem_at(str(state), refusal(exc), severity="warning"))
        return None
    except orjson.JSONDecodeError as exc:
        problems.append(problem_at(str(state), f"unreadable: {exc}", severity="warning"))
        return None
    return data if isinstance(data, dict) else None


def _record(
    raw: bytes,
    position: int,
    path: str,
    line: int | None,
    problems: list[Problem],
    keep: bool = True,
    folder: str | None = None,
    counting: ReadCounting | None = None,
) -> StoredEvent | None:
    """Parse and validate one event; None (and a problem) when it is not one (`keep`,
    `folder`: see `StoredEvent`; counted by `counting`)."""
    try:
        data = decode_line(raw)
    except LineProblem as exc:
        problems.append(problem_at(path, str(exc), line))
        return None
    message = event_problem(data)
    if message is not None:
        problems.append(problem_at(path, message, line))
        return None
    record = StoredEvent(position, data["id"], data["kind"], raw, data, path, line, keep, folder)
    if counting is not None:
        counting.note(record, data, raw)
    return record


def _unique(record: StoredEvent, seen: dict[str, StoredEvent], problems: list[Problem]) -> bool:
    first = seen.setdefault(record.id, record)
    if first is record:
        return True
    problems.append(
        problem_at(record.path, f"duplicate id {record.id} (first at {first.where})", record.line)
    )
    return False
