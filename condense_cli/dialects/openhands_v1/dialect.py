"""OpenHands V1 (software-agent-sdk) conversations: read, replay, append.

A V1 conversation is a folder of event files, `events/event-NNNNN-<id>.json`, one
pydantic event per file with a `kind` naming its class; the file index, not the
id, orders them. The same events can also come one per line in a JSONL file.

Replay reproduces the SDK's `View` in the two generations that matter:
`last-summary` (SDKs before 22 January 2026: the union of every forgotten id,
the newest summary only, unmatched tool calls dropped) and `multi-summary`
(condensations applied in order to the view so far, each adding its own summary,
then the view properties enforced until stable). `detect_generation` says which
one wrote a log, and why.

Nothing here knows about the command line; errors are the typed ones of
`condense_cli.core.errors`, and problems that `check` lists are returned as values.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from condense_cli.core.errors import CondenserError, ConfigError, LogBusyError, LogError
from condense_cli.core.events import (
    Condensation,
    CondensationRecord,
    Event,
    Problem,
    View,
    apply_condensation,
)
from condense_cli.core.intervals import runs
from condense_cli.core.jsonlines import LineProblem, decode_line, encode, json_type
from condense_cli.core.logfile import LockedLog, LogSource, line_body, lock_exclusively
from condense_cli.core.messages import Conversion
from condense_cli.dialects.base import (
    CondensationStep,
    Dialect,
    Reading,
    Record,
    Replay,
    quiet_reading,
)
from condense_cli.dialects.openhands_v1.detect import (
    ACTION,
    CONDENSATION,
    CONDENSATION_REQUEST,
    EVENTS_DIR,
    FILE_NAME_RE,
    KNOWN_KINDS,
    NAME,
    OBSERVATION_KINDS,
    SENT_KINDS,
    SUMMARY_KIND,
)

if TYPE_CHECKING:
    from condense_cli.dialects.openhands_v1.steps import Step

# --------------------------------------------------------------------------------------
# The SDK's vocabulary (its event kinds and folder layout are in `openhands_v1_detect`)

#: Kinds `condense` appends itself.
APPENDED_KINDS = frozenset({CONDENSATION, CONDENSATION_REQUEST})

#: Events the SDK never takes as the head of a conversation tree.
BRANCH_ARTIFACT_KINDS = frozenset({"ConversationStateUpdateEvent", "ConversationErrorEvent"})

SOURCES = frozenset({"agent", "user", "environment", "hook"})

LOCK_FILE = ".eventlog.lock"
LOCK_TIMEOUT = 30.0  # seconds, as the SDK waits for its own lock

ID_RE = re.compile(r"^[0-9a-fA-F\-]{8,}$")
ROOT_PARENT_ID = "__root__"

LAST_SUMMARY = "last-summary"
MULTI_SUMMARY = "multi-summary"
#: The SDK changed from one summary to several on this day (software-agent-sdk #1721).
MULTI_SUMMARY_SINCE = "2026-01-22"
#: The SDK took `events/.eventlog.lock` when appending from this day on (#1614).
LOCK_FILE_SINCE = "2026-01-12"
DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


# --------------------------------------------------------------------------------------
# What we read


def _problem(path: str, message: str, line: int | None = None, severity: str = "error") -> Problem:
    """A defect found in the file `path` (an event file, or the JSONL log)."""
    return Problem(line, message, severity, path)


#: `StoredEvent.parent` of an event without a `parent_id` key.
NO_PARENT = object()


class StoredEvent:
    """One stored event: its place in the log, its id and kind, the bytes as stored,
    and the few fields replay reads of every event. The parsed event (`data`) is
    kept only for condensations; other events are parsed again when a view shows
    them, so that a replay holds bytes, not every event's objects."""

    __slots__ = (
        "_data",
        "call",
        "date",
        "id",
        "kind",
        "line",
        "parent",
        "path",
        "position",
        "raw",
        "response",
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
    ) -> None:
        self.position = position
        self.id = id
        self.kind = kind
        self.raw = raw
        self.path = path
        self.line = line
        self._data = data if kind == CONDENSATION else None
        get = data.get
        self.parent: Any = get("parent_id", NO_PARENT)
        stamp = get("timestamp")
        self.date = stamp[:10] if isinstance(stamp, str) and DATE_RE.match(stamp) else None
        self.response: Any = get("llm_response_id")  # one model response's tool calls
        self.thinking = bool(get("thinking_blocks"))
        self.call: Any = get("tool_call_id")
        self.tool: Any = get("tool_name")

    @property
    def data(self) -> dict[str, Any]:
        """The event as parsed (again, for all but condensations)."""
        data = self._data
        return data if data is not None else orjson.loads(self.raw)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    @property
    def sent(self) -> bool:
        """Whether the SDK sends this event to the model at all."""
        return self.kind in SENT_KINDS


@dataclass(frozen=True)
class Conversation:
    """The valid events of a conversation in order, and every problem met reading it."""

    path: str
    records: tuple[StoredEvent, ...]
    problems: tuple[Problem, ...]
    events_dir: Path | None = None  # None for JSONL input
    base_state: dict[str, Any] | None = None
    has_lock_file: bool = False


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
    for number, raw in enumerate(lines, start=1):
        body = line_body(raw, first=number == 1)
        if not body.strip():
            continue
        found: list[Problem] = []
        record = _record(body, len(records), name, number, found)
        if found and not raw.endswith(b"\n"):
            found = [
                _problem(
                    name,
                    f"the last line is incomplete ({found[0].message}); "
                    "a writer probably stopped in the middle of it",
                    number,
                )
            ]
        problems += found
        if record is not None and _unique(record, seen, problems):
            records.append(record)
    return Conversation(name, tuple(records), tuple(problems))


def read_folder(path: str | Path) -> Conversation:
    """Read a conversation folder the way the SDK's event log does.

    Files are taken by index from 0 up to the first missing index; files after
    a gap are not part of the conversation (the SDK stops there), and the gap
    is reported.
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
                _problem(
                    str(events_dir / name),
                    "not an event file name (event-NNNNN-<id>.json); the SDK ignores it",
                    severity="warning",
                )
            )
            continue
        index = int(match["index"])
        if index in by_index:
            problems.append(
                _problem(
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
            _problem(
                str(events_dir / first),
                f"index {count} is missing ({previous}); the SDK stops reading at the gap, "
                f"so this file and {len(beyond) - 1} later ones are not part of the "
                "conversation",
            )
        )
    records: list[StoredEvent] = []
    seen: dict[str, StoredEvent] = {}
    # str(events_dir / name) without pathlib's cost per file ("." joins as pathlib does)
    folder = "" if str(events_dir) == "." else os.path.join(str(events_dir), "")
    for index in range(count):
        name = by_index[index]
        file_path = folder + name
        try:
            with open(file_path, "rb") as file:
                raw = file.read()
        except OSError as exc:
            problems.append(_problem(file_path, f"cannot read: {exc.strerror or exc}"))
            continue
        if not raw.strip():
            problems.append(_problem(file_path, "empty file; the SDK skips it"))
            continue
        record = _record(raw, index, file_path, None, problems)
        if record is None:
            continue
        name_id = FILE_NAME_RE.match(name)["id"]  # type: ignore[index]
        if name_id != record.id:
            problems.append(
                _problem(
                    file_path,
                    f"the file name says id {name_id} but the event's id is {record.id}",
                )
            )
        if _unique(record, seen, problems):
            records.append(record)
    return Conversation(
        str(path),
        tuple(records),
        tuple(problems),
        events_dir=events_dir,
        base_state=_base_state(events_dir, problems),
        has_lock_file=(events_dir / LOCK_FILE).exists(),
    )


def _base_state(events_dir: Path, problems: list[Problem]) -> dict[str, Any] | None:
    state = events_dir.parent / "base_state.json"
    if not state.is_file():
        return None
    try:
        data = orjson.loads(state.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        problems.append(_problem(str(state), f"unreadable: {exc}", severity="warning"))
        return None
    return data if isinstance(data, dict) else None


def _record(
    raw: bytes, position: int, path: str, line: int | None, problems: list[Problem]
) -> StoredEvent | None:
    """Parse and validate one event; None (and a problem) when it is not one."""
    try:
        data = decode_line(raw)
    except LineProblem as exc:
        problems.append(_problem(path, str(exc), line))
        return None
    message = event_problem(data)
    if message is not None:
        problems.append(_problem(path, message, line))
        return None
    return StoredEvent(position, data["id"], data["kind"], raw, data, path, line)


def _unique(record: StoredEvent, seen: dict[str, StoredEvent], problems: list[Problem]) -> bool:
    first = seen.setdefault(record.id, record)
    if first is record:
        return True
    problems.append(
        _problem(record.path, f"duplicate id {record.id} (first at {first.where})", record.line)
    )
    return False


def event_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with one parsed event, or None when the SDK would load it."""
    kind = data.get("kind")
    if kind is None:
        return 'no "kind"; a V1 event names its class in "kind"'
    if not isinstance(kind, str):
        return f'"kind" must be a string, got {json_type(kind)}'
    if kind not in KNOWN_KINDS:
        return f"unknown event kind {kind!r}"
    event_id = data.get("id")
    if event_id is None:
        return 'missing "id"'
    if not isinstance(event_id, str) or not event_id:
        return f'"id" must be a non-empty string, got {json_type(event_id)}'
    source = data.get("source")
    if source is not None and source not in SOURCES:
        return f'"source" must be one of agent, user, environment, hook; got {source!r}'
    tool_kind = kind == ACTION or kind in OBSERVATION_KINDS
    if tool_kind and not isinstance(data.get("tool_call_id"), str):
        return f'{kind} without a string "tool_call_id"'
    response = data.get("llm_response_id")
    if kind == ACTION and response is not None and not isinstance(response, str):
        return f'"llm_response_id" must be a string, got {json_type(response)}'
    if kind == CONDENSATION:
        return _condensation_problem(data)
    return None


def _condensation_problem(data: dict[str, Any]) -> str | None:
    ids = data.get("forgotten_event_ids", [])
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return '"forgotten_event_ids" must be a list of event id strings'
    summary = data.get("summary")
    if summary is not None and not isinstance(summary, str):
        return f'"summary" must be a string or null, got {json_type(summary)}'
    offset = data.get("summary_offset")
    if offset is not None and (not isinstance(offset, int) or isinstance(offset, bool)):
        return f'"summary_offset" must be an integer or null, got {json_type(offset)}'
    if offset is not None and offset < 0:
        return f'"summary_offset" must be 0 or more, got {offset}'
    return None


# --------------------------------------------------------------------------------------
# Neutral facts


@dataclass(frozen=True, slots=True)
class Facts:
    """What other code needs to know of an event, without V1's keys."""

    source: str  # user, agent, environment (or hook)
    role: str | None  # the chat role it is sent as; None when it is not sent
    type: str  # the tool name for tool calls and results, else a short kind
    text: str  # what the model reads of it
    thought: str  # the text the model wrote before a tool call
    reasoning: str  # reasoning / thinking text, when the model exposed it
    tool_call_id: str | None
    llm_response_id: str | None  # one model response: its parallel tool calls share it
    sent: bool
    thinking: bool  # a tool call with thinking blocks: it starts a tool loop


def _texts(content: Any) -> str:
    """The text parts of a message content list (or a plain string)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        item["text"]
        for item in content
        if isinstance(item, dict) and isinstance(item.get("text"), str)
    ]
    return "\n".join(parts)


def _tool_arguments(call: Any) -> str:
    """A tool call's arguments: `arguments` now, `function.arguments` in 2025."""
    if not isinstance(call, dict):
        return ""
    arguments = call.get("arguments")
    if arguments is None and isinstance(call.get("function"), dict):
        arguments = call["function"].get("arguments")
    if isinstance(arguments, str):
        return arguments
    return encode(arguments).decode() if arguments is not None else ""


def _observation_text(observation: Any) -> str:
    """The text of a tool result: its content, else its output or message."""
    if not isinstance(observation, dict):
        return ""
    for key in ("content", "output", "message"):
        value = observation.get(key)
        text = _texts(value)
        if text:
            return text
    return ""


def _reasoning(data: dict[str, Any]) -> str:
    parts = []
    if isinstance(data.get("reasoning_content"), str):
        parts.append(data["reasoning_content"])
    for block in data.get("thinking_blocks") or ():
        if isinstance(block, dict) and isinstance(block.get("thinking"), str):
            parts.append(block["thinking"])
    return "\n".join(p for p in parts if p)


def facts(data: dict[str, Any]) -> Facts:
    """The neutral facts of one (validated) event."""
    kind = data["kind"]
    source = data.get("source") if isinstance(data.get("source"), str) else ""
    tool_call_id = data.get("tool_call_id") if isinstance(data.get("tool_call_id"), str) else None
    response = data.get("llm_response_id")
    response_id = response if isinstance(response, str) else None
    thought, reasoning, thinking = "", "", False
    role: str | None = None
    if kind == ACTION:
        role, type_ = "assistant", str(data.get("tool_name") or "tool")
        text = _tool_arguments(data.get("tool_call"))
        thought = _texts(data.get("thought"))
        reasoning = _reasoning(data)
        thinking = bool(data.get("thinking_blocks"))
    elif kind in OBSERVATION_KINDS:
        role, type_ = "tool", str(data.get("tool_name") or "tool")
        if kind == "AgentErrorEvent":
            text = str(data.get("error") or "")
        elif kind == "UserRejectObservation":
            text = f"Action rejected: {data.get('rejection_reason', 'User rejected the action')}"
        else:
            text = _observation_text(data.get("observation"))
    elif kind == "MessageEvent":
        message = data.get("llm_message") if isinstance(data.get("llm_message"), dict) else {}
        role, type_ = str(message.get("role") or source or "user"), "message"
        text = "\n".join(
            t for t in (_texts(message.get("content")), _texts(data.get("extended_content"))) if t
        )
        reasoning = _reasoning(message)
    elif kind == "SystemPromptEvent":
        role, type_ = "system", "system"
        prompt = data.get("system_prompt")
        context = data.get("dynamic_context")
        text = "\n".join(
            t["text"]
            for t in (prompt, context)
            if isinstance(t, dict) and isinstance(t.get("text"), str)
        )
    elif kind == SUMMARY_KIND:
        role, type_, text = "user", "summary", str(data.get("summary") or "")
    elif kind == CONDENSATION:
        type_, text = "condensation", str(data.get("summary") or "")
    elif kind == CONDENSATION_REQUEST:
        type_, text = "condensation_request", ""
    else:
        type_, text = kind, ""
    return Facts(
        source=source or "",
        role=role,
        type=type_,
        text=text,
        thought=thought,
        reasoning=reasoning,
        tool_call_id=tool_call_id,
        llm_response_id=response_id,
        sent=kind in SENT_KINDS,
        thinking=thinking,
    )


@dataclass(frozen=True, slots=True)
class Summary:
    """A condensation's summary as it stands in a view (a user message to the model)."""

    id: str  # "<condensation id>-summary"
    text: str
    condensation: StoredEvent

    kind = SUMMARY_KIND

    @property
    def facts(self) -> Facts:
        return Facts(
            source=str(self.condensation.data.get("source") or "environment"),
            role="user",
            type="summary",
            text=self.text,
            thought="",
            reasoning="",
            tool_call_id=None,
            llm_response_id=None,
            sent=True,
            thinking=False,
        )

    def to_dict(self) -> dict[str, Any]:
        """The summary as the SDK's CondensationSummaryEvent shape."""
        return {"kind": SUMMARY_KIND, "id": self.id, "summary": self.text}


Entry = StoredEvent | Summary


def summary_of(condensation: StoredEvent) -> Summary | None:
    """The summary a condensation inserts, when it has both a summary and an offset."""
    data = condensation.data
    text, offset = data.get("summary"), data.get("summary_offset")
    if text is None or offset is None:
        return None
    return Summary(f"{condensation.id}-summary", text, condensation)


# --------------------------------------------------------------------------------------
# Generations


@dataclass(frozen=True, slots=True)
class Generation:
    """Which SDK view algorithm replays a log, and the evidence for it."""

    name: str  # LAST_SUMMARY or MULTI_SUMMARY
    reason: str


def detect_generation(conversation: Conversation) -> Generation:
    """Tell from a log which generation of the SDK wrote it (strongest evidence first).

    What `condense` appends itself (a Condensation with an `llm_response_id`, a
    CondensationRequest, the lock file it shares with the SDK, today's timestamps)
    is no evidence: appending must not change how a log replays.
    """
    records = conversation.records
    if any(r.parent is not NO_PARENT for r in records):
        return Generation(
            MULTI_SUMMARY, "events carry parent_id (an SDK from July 2026 on wrote them)"
        )
    for record in records:
        if record.kind == CONDENSATION and "llm_response_id" not in record.data:
            return Generation(
                LAST_SUMMARY,
                f"Condensation {record.id} has no llm_response_id "
                "(written by an SDK from before November 2025)",
            )
    newest = newest_date(records)
    if conversation.has_lock_file and (newest is None or newest >= LOCK_FILE_SINCE):
        return Generation(
            MULTI_SUMMARY, f"events/{LOCK_FILE} exists (an SDK from January 2026 on wrote it)"
        )
    if newest is None:
        return Generation(MULTI_SUMMARY, "no dated events; assuming the current SDK")
    if newest < MULTI_SUMMARY_SINCE:
        return Generation(
            LAST_SUMMARY,
            f"the newest event is dated {newest}, before the SDK showed several "
            f"summaries ({MULTI_SUMMARY_SINCE})",
        )
    return Generation(
        MULTI_SUMMARY,
        f"the newest event is dated {newest}, when the SDK showed several summaries",
    )


def newest_date(records: Sequence[StoredEvent]) -> str | None:
    """The newest `YYYY-MM-DD` among the events the agent wrote (not the condensations
    and requests, which `condense` may have appended)."""
    dates = [r.date for r in records if r.kind not in APPENDED_KINDS and r.date is not None]
    return max(dates, default=None)


# --------------------------------------------------------------------------------------
# Replay


@dataclass(frozen=True)
class Replayed:
    """A replayed view and what replaying it found."""

    generation: Generation
    events: tuple[Entry, ...]  # the view in order, summaries included
    forgotten: int  # events sent to the model that the view no longer holds
    pending_request: bool  # a CondensationRequest after the last Condensation
    condensations: tuple[StoredEvent, ...]  # the condensations applied, in order
    problems: tuple[Problem, ...]  # condensations that do not replay cleanly
    dropped: dict[str, tuple[str, ...]] = field(default_factory=dict)  # rule -> event ids

    @property
    def summaries(self) -> list[Summary]:
        return [e for e in self.events if isinstance(e, Summary)]

    @property
    def ids(self) -> list[str]:
        return [e.id for e in self.events]


def replay(
    conversation: Conversation,
    generation: Generation | None = None,
    upto: int | str | None = None,
) -> Replayed:
    """The view the agent saw: the SDK's `View` of the generation that wrote the log.

    `upto` replays only the events up to an id (a string) or a position (an int).
    """
    records = list(conversation.records)
    if upto is not None:
        records = records[: _cut(records, upto, conversation.path)]
    generation = generation or detect_generation(conversation)
    if generation.name == MULTI_SUMMARY:
        records = active_branch(records, conversation.base_state)
    problems = _condensation_problems(records, generation.name)
    if generation.name == LAST_SUMMARY:
        view, dropped = _last_summary_view(records, problems)
    else:
        view, dropped = _multi_summary_view(records, problems)
    kept = {e.id for e in view}
    return Replayed(
        generation=generation,
        events=tuple(view),
        forgotten=sum(1 for r in records if r.sent and r.id not in kept),
        pending_request=pending_request(records),
        condensations=tuple(r for r in records if r.kind == CONDENSATION),
        problems=tuple(problems),
        dropped=dropped,
    )


def _cut(records: list[StoredEvent], upto: int | str, path: str) -> int:
    """How many records come at or before `upto`: an event id, or a position
    (the file index) given as an int or as a string of digits."""
    if isinstance(upto, str):
        for i, record in enumerate(records):
            if record.id == upto:
                return i + 1
        if not upto.isdigit():
            raise ConfigError(
                f"--upto {upto}: {path} has no event with this id",
                hint="give an event id from the log, or a position (the file index)",
            )
        upto = int(upto)
    return sum(1 for r in records if r.position <= upto)


def pending_request(records: Sequence[StoredEvent]) -> bool:
    """Whether a CondensationRequest comes after the last Condensation."""
    for record in reversed(records):
        if record.kind == CONDENSATION:
            return False
        if record.kind == CONDENSATION_REQUEST:
            return True
    return False


def active_branch(
    records: list[StoredEvent], base_state: dict[str, Any] | None
) -> list[StoredEvent]:
    """The events on the conversation tree's active branch, root first.

    Logs whose events carry no `parent_id` are one linear branch. Otherwise the
    branch runs from the head (`leaf_event_id` of base_state.json, else the newest
    event that is not a state or error artifact) back through each event's parent;
    an event without `parent_id` has the one stored before it as parent.
    """
    if all(r.parent is NO_PARENT for r in records):
        return records
    state = base_state or {}
    if state.get("head_is_empty"):
        return []
    by_id = {r.id: (i, r) for i, r in enumerate(records)}
    leaf = state.get("leaf_event_id")
    if not isinstance(leaf, str) or leaf not in by_id:
        leaf = next((r.id for r in reversed(records) if r.kind not in BRANCH_ARTIFACT_KINDS), None)
    chain: list[StoredEvent] = []
    seen: set[str] = set()
    current = leaf
    while current is not None and current in by_id and current not in seen:
        seen.add(current)
        index, record = by_id[current]
        chain.append(record)
        parent = record.parent
        if parent == ROOT_PARENT_ID:
            break
        current = parent if isinstance(parent, str) else (records[index - 1].id if index else None)
    return chain[::-1]


def _condensation_problems(records: Sequence[StoredEvent], generation: str) -> list[Problem]:
    """Warnings about condensations: ids they cannot forget, summaries they cannot show."""
    problems: list[Problem] = []
    position = {r.id: i for i, r in enumerate(records)}
    summary_ids: set[str] = set()
    shown_summary = False
    for i, record in enumerate(records):
        if record.kind != CONDENSATION:
            continue
        data = record.data
        unknown, later = [], []
        for event_id in data.get("forgotten_event_ids", []):
            if event_id not in position:
                if event_id not in summary_ids:
                    unknown.append(event_id)
            elif position[event_id] > i:
                later.append(event_id)
        # The 2025 SDK gave each shown summary a fresh random id, and its condenser
        # forgot that id with the events around it: one such id is expected.
        if generation == LAST_SUMMARY and shown_summary and unknown:
            unknown.pop(0)
        if unknown:
            problems.append(
                _warn(record, f"forgets {len(unknown)} id(s) not in the log, e.g. {unknown[0]}")
            )
        if later:
            problems.append(
                _warn(record, f"forgets {len(later)} event(s) stored after it, e.g. {later[0]}")
            )
        has_text = data.get("summary") is not None
        has_offset = data.get("summary_offset") is not None
        if has_text != has_offset:
            problems.append(
                _warn(record, "has a summary or a summary_offset but not both; no summary shown")
            )
        if has_text and has_offset:
            summary_ids.add(f"{record.id}-summary")
            shown_summary = True
    return problems


def _warn(record: StoredEvent, message: str) -> Problem:
    return _problem(record.path, f"Condensation {record.id} {message}", record.line, "warning")


def insert_summary(
    view: list[Entry], condensation: StoredEvent, problems: list[Problem]
) -> list[Entry]:
    summary = summary_of(condensation)
    if summary is None:
        return view
    offset = condensation.data["summary_offset"]
    if offset > len(view):
        problems.append(
            _warn(
                condensation,
                f"puts its summary at offset {offset}, past the end of the view "
                f"({len(view)} events); it goes at the end",
            )
        )
    view.insert(offset, summary)
    return view


def _last_summary_view(
    records: Sequence[StoredEvent], problems: list[Problem]
) -> tuple[list[Entry], dict[str, tuple[str, ...]]]:
    """The 2025 SDK's view: forget the union, show the newest summary, drop unmatched calls."""
    forgotten: set[str] = set()
    for record in records:
        if record.kind == CONDENSATION:
            forgotten.update(record.data.get("forgotten_event_ids", []))
    view: list[Entry] = [r for r in records if r.sent and r.id not in forgotten]
    newest = next(
        (r for r in reversed(records) if r.kind == CONDENSATION and summary_of(r) is not None),
        None,
    )
    if newest is not None:
        view = insert_summary(view, newest, problems)
    drop = unmatched(view)
    dropped = {"tool_call_matching": tuple(e.id for e in view if e.id in drop)} if drop else {}
    return [e for e in view if e.id not in drop], dropped


def _multi_summary_view(
    records: Sequence[StoredEvent], problems: list[Problem]
) -> tuple[list[Entry], dict[str, tuple[str, ...]]]:
    """The current SDK's view: a fold over the log, then its properties enforced."""
    view: list[Entry] = []
    for record in records:
        if record.kind == CONDENSATION:
            view = fold_condensation(view, record, problems)
        elif record.sent:
            view.append(record)
    return enforce_properties(view, Context.of(records))


def fold_condensation(
    view: list[Entry], condensation: StoredEvent, problems: list[Problem]
) -> list[Entry]:
    """The multi-summary view once `condensation` applies to `view`."""
    forgotten = set(condensation.data.get("forgotten_event_ids", []))
    view = [e for e in view if e.id not in forgotten]
    return insert_summary(view, condensation, problems)


class Context:
    """What the view properties need to know of every event so far, not only of the
    view's: how many tool calls each model response made, and which thinking-led
    tool loop each event belongs to (with each loop's size). Built in one pass,
    and grown one event at a time, so that replaying up to each condensation in
    turn costs the view, not the log."""

    __slots__ = ("_open", "calls", "loop_of", "loop_sizes")

    def __init__(self) -> None:
        self.calls: dict[Any, int] = {}  # llm_response_id -> tool calls
        self.loop_of: dict[str, int] = {}  # event id -> its loop's number
        self.loop_sizes: list[int] = []
        self._open: int | None = None  # the loop the next tool event joins

    @classmethod
    def of(cls, records: Iterable[StoredEvent]) -> Context:
        context = cls()
        for record in records:
            context.add(record)
        return context

    def add(self, record: StoredEvent) -> None:
        """Take in the next event of the log (the same runs as `tool_loops`)."""
        kind = record.kind
        if kind == ACTION:
            response = record.response
            self.calls[response] = self.calls.get(response, 0) + 1
            if record.thinking:
                self._open = len(self.loop_sizes)
                self.loop_sizes.append(0)
        elif kind not in OBSERVATION_KINDS:
            self._open = None
            return
        if self._open is not None:
            self.loop_of[record.id] = self._open
            self.loop_sizes[self._open] += 1


# The view properties, each a function (view, context) -> ids to drop. The SDK
# applies the first one that drops anything, then starts over, until none does.


def _kind(entry: Entry) -> str:
    return entry.kind


def _call_id(entry: Entry) -> str | None:
    return entry.call if isinstance(entry, StoredEvent) else None


def _unique_observations(view: Sequence[Entry], _context: Context) -> set[str]:
    """One result per tool call: a later result for the same call is dropped."""
    seen: set[str | None] = set()
    drop: set[str] = set()
    for entry in view:
        if _kind(entry) in OBSERVATION_KINDS:
            call = _call_id(entry)
            if call in seen:
                drop.add(entry.id)
            seen.add(call)
    return drop


def _batches(events: Iterable[Entry]) -> dict[str | None, set[str]]:
    batches: dict[str | None, set[str]] = {}
    for event in events:
        if _kind(event) == ACTION and isinstance(event, StoredEvent):
            batches.setdefault(event.response, set()).add(event.id)
    return batches


def _whole_batches(view: Sequence[Entry], context: Context) -> set[str]:
    """The tool calls of one model response are kept or dropped together (the view's
    calls are some of the log's, so all of them are there when the counts agree)."""
    drop: set[str] = set()
    for response, ids in _batches(view).items():
        if len(ids) != context.calls.get(response):
            drop |= ids
    return drop


def unmatched(view: Sequence[Entry], _context: Context | None = None) -> set[str]:
    """Tool calls without a result in the view, and results without their call."""
    calls = {_call_id(e) for e in view if _kind(e) == ACTION}
    results = {_call_id(e) for e in view if _kind(e) in OBSERVATION_KINDS}
    return {
        e.id
        for e in view
        if (_kind(e) == ACTION and _call_id(e) not in results)
        or (_kind(e) in OBSERVATION_KINDS and _call_id(e) not in calls)
    }


def tool_loops(events: Iterable[Entry]) -> list[set[str]]:
    """Runs of tool calls and results that start at a call with thinking blocks."""
    loops: list[set[str]] = []
    current: set[str] | None = None
    for event in events:
        kind = _kind(event)
        if kind == ACTION and isinstance(event, StoredEvent) and event.thinking:
            if current is not None:
                loops.append(current)
            current = {event.id}
        elif kind == ACTION or kind in OBSERVATION_KINDS:
            if current is not None:
                current.add(event.id)
        elif current is not None:
            loops.append(current)
            current = None
    if current is not None:
        loops.append(current)
    return loops


def _whole_tool_loops(view: Sequence[Entry], context: Context) -> set[str]:
    """A thinking-led tool loop is kept whole or not at all."""
    loop_of = context.loop_of
    kept: dict[str, int] = {}
    for entry in view:
        loop = loop_of.get(entry.id)
        if loop is not None:
            kept[entry.id] = loop
    held: dict[int, int] = {}
    for loop in kept.values():
        held[loop] = held.get(loop, 0) + 1
    sizes = context.loop_sizes
    return {event_id for event_id, loop in kept.items() if held[loop] != sizes[loop]}


PROPERTIES = (
    ("observation_uniqueness", _unique_observations),
    ("batch_atomicity", _whole_batches),
    ("tool_call_matching", unmatched),
    ("tool_loop_atomicity", _whole_tool_loops),
)


def enforce_properties(
    view: list[Entry], context: Context
) -> tuple[list[Entry], dict[str, tuple[str, ...]]]:
    """Drop events until every view property holds; say which rule dropped what.
    `context` is what the rules need of every event of the log replayed."""
    dropped: dict[str, tuple[str, ...]] = {}
    while True:
        for name, rule in PROPERTIES:
            drop = rule(view, context)
            if drop:
                dropped[name] = dropped.get(name, ()) + tuple(e.id for e in view if e.id in drop)
                view = [e for e in view if e.id not in drop]
                break
        else:
            return view, dropped


# --------------------------------------------------------------------------------------
# New events


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


# --------------------------------------------------------------------------------------
# Appending


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


# --------------------------------------------------------------------------------------
# The dialect: V1 behind the seam

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


class V1Event(Event):
    """A V1 event in neutral terms. Its key is its position (the file index), its id
    the SDK's string id. A summary in a view is `{"kind": "CondensationSummaryEvent",
    "id": "<condensation id>-summary", "summary": ...}`, keyed by its condensation's
    position when the SDK can forget it (multi-summary), else without a key."""

    __slots__ = ("_facts", "_unit")

    def __init__(
        self, data: dict[str, Any], key: int | None, raw: bytes | None, unit: int | None = None
    ) -> None:
        super().__init__(data, key, raw)
        self._facts = facts(data)
        self._unit = unit

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def v1_kind(self) -> str:
        """The SDK's event class, e.g. `ActionEvent`."""
        return str(self.data["kind"])

    @property
    def source(self) -> str:
        return self._facts.source

    @property
    def is_action(self) -> bool:
        return self.v1_kind not in OBSERVATION_KINDS

    @property
    def type(self) -> str:
        return self._facts.type

    @property
    def text(self) -> str:
        return self._facts.text

    @property
    def thought(self) -> str:
        return self._facts.thought

    @property
    def tool_call_id(self) -> str | None:
        return self._facts.tool_call_id

    @property
    def is_summary(self) -> bool:
        return self.v1_kind == SUMMARY_KIND

    @property
    def tool_call(self) -> tuple[str, dict[str, Any]] | None:
        if self.v1_kind != ACTION:
            return None
        return self.type, _arguments(self.text)

    @property
    def unit(self) -> int | None:
        return self._unit

    @property
    def url(self) -> str:
        observation = self._observation()
        url = observation.get("url") if observation is not None else None
        return url if isinstance(url, str) else ""

    @property
    def exit_code(self) -> int | None:
        observation = self._observation()
        if observation is None:
            return None
        code = observation.get("exit_code")
        metadata = observation.get("metadata")
        if code is None and isinstance(metadata, dict):
            code = metadata.get("exit_code")
        # The SDK writes -1 when a command has no exit code (it is still running).
        if isinstance(code, int) and not isinstance(code, bool) and code >= 0:
            return code
        return None

    def _observation(self) -> dict[str, Any] | None:
        observation = self.data.get("observation")
        if self.v1_kind != "ObservationEvent" or not isinstance(observation, dict):
            return None
        return observation

    def masked(self, text: str) -> V1Event:
        """A copy whose tool result reads `text`, stored where and as V1 stores it."""
        data = dict(self.data)
        kind = self.v1_kind
        if kind == "AgentErrorEvent":
            data["error"] = text
        elif kind == "UserRejectObservation":
            data["rejection_reason"] = text
        elif kind == "ObservationEvent":
            observation = dict(self._observation() or {})
            field = _text_field(observation)
            shaped = isinstance(observation.get(field), str)
            observation[field] = text if shaped else [{"type": "text", "text": text}]
            data["observation"] = observation
        else:
            raise ValueError(f"a {kind} has no tool result to rewrite")
        return V1Event(data, self.key, None, self._unit)


def _arguments(text: str) -> dict[str, Any]:
    """A tool call's arguments as an object (empty when they are not one)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _text_field(observation: dict[str, Any]) -> str:
    """The field that holds a tool result's text: the one `facts` reads, else the
    first one present, else `content` (the current SDK's field)."""
    fields = ("content", "output", "message")
    for field_ in fields:
        if _texts(observation.get(field_)):
            return field_
    return next((f for f in fields if isinstance(observation.get(f), str | list)), "content")


def _units(view: Sequence[Entry]) -> dict[str, str]:
    """Event id -> the id of the first event of its unit: a thinking-led tool loop,
    else the parallel tool calls of one model response. Events alone are left out."""
    order = {e.id: i for i, e in enumerate(view)}
    heads: dict[str, str] = {}
    for response, ids in _batches(view).items():
        if response is not None and len(ids) > 1:
            head = min(ids, key=order.__getitem__)
            heads.update(dict.fromkeys(ids, head))
    for loop in tool_loops(view):
        head = min(loop, key=order.__getitem__)
        heads.update(dict.fromkeys(loop, head))
    return heads


def _month(date: str) -> str:
    return f"{MONTHS[int(date[5:7]) - 1]} {date[:4]}"


class V1Replay(Replay):
    """A V1 conversation read and replayed the way the generation that wrote it did."""

    dialect = NAME

    def __init__(
        self,
        path: str,
        conversation: Conversation,
        upto: str | None = None,
        writer: Callable[[bytes], object] | None = None,
    ) -> None:
        self.path = path
        self.conversation = conversation
        self.detected = detect_generation(conversation)
        self.replayed = replay(conversation, self.detected, upto)
        self.upto = upto
        self.problems = [*conversation.problems, *self.replayed.problems]
        self._writer = writer
        records = conversation.records
        self.next_key = records[-1].position + 1 if records else 0
        self.next_id = str(uuid.uuid4())  # of the condensation this replay may append
        self._condensations: list[CondensationRecord] | None = None

    @property
    def keyed_summaries(self) -> bool:
        """Whether summaries can be forgotten by id (the multi-summary SDK)."""
        return self.detected.name == MULTI_SUMMARY

    @property
    def generation(self) -> str:
        newest = newest_date(self.conversation.records)
        return f"{self.detected.name} SDK" + (f" ({_month(newest)})" if newest else "")

    @property
    def generation_reason(self) -> str:
        return self.detected.reason

    @property
    def forgotten_events(self) -> int:
        return self.replayed.forgotten

    # --- the view --------------------------------------------------------------------

    def view(self) -> View:
        return self._view_of(self.replayed.events, self.replayed.pending_request)

    def _view_of(self, entries: Sequence[Entry], pending_request: bool) -> View:
        heads = _units(entries)
        keys: dict[str, int | None] = {}
        events: list[Event] = []
        for entry in entries:
            if isinstance(entry, Summary):
                key = entry.condensation.position if self.keyed_summaries else None
                event = V1Event(entry.to_dict(), key, None)
            else:
                head = heads.get(entry.id)
                unit = keys.get(head) if head is not None else None
                event = V1Event(entry.data, entry.position, entry.raw, unit)
            keys[event.id] = event.key
            events.append(event)
        summary, offset = self._latest_summary(entries, events)
        return View(events, pending_request, summary, offset, None, self._make_summary)

    # --- history -------------------------------------------------------------------------

    def _steps(self) -> Iterator[Step]:
        """Each condensation replayed with the views around it, in one walk."""
        from condense_cli.dialects.openhands_v1.steps import steps

        return steps(self.conversation, self.detected, self.replayed.condensations)

    def condensation_steps(self) -> Iterator[CondensationStep]:
        for step in self._steps():
            condensation = step.condensation
            before = self._view_of(step.before, step.pending_before)
            after = self._view_of(step.after, False)
            kept = {e.id for e in after}
            gone = [e for e in before if e.id not in kept and not e.is_summary]
            summary = summary_of(condensation)
            yield CondensationStep(
                condensation.id,
                condensation.line if condensation.line is not None else condensation.position,
                before,
                gone,
                summary.text if summary is not None else None,
                after,
            )

    def history(self) -> Iterator[Event | None]:
        records = self.conversation.records
        if self.upto is not None:
            records = records[: _cut(list(records), self.upto, self.path)]
        for record in records:
            if record.kind == CONDENSATION_REQUEST:
                yield None
            elif record.sent and record.kind not in (CONDENSATION, SUMMARY_KIND):
                yield V1Event(record.data, record.position, record.raw)

    @staticmethod
    def _latest_summary(
        entries: Sequence[Entry], events: list[Event]
    ) -> tuple[Event | None, int | None]:
        """The summary of the newest condensation in the view and its offset, else the
        last summary line of a piped view and its place."""
        inserted = [
            (e.condensation.position, i) for i, e in enumerate(entries) if isinstance(e, Summary)
        ]
        if inserted:
            _, at = max(inserted)
            return events[at], entries[at].condensation.data["summary_offset"]  # type: ignore[union-attr]
        stored = [i for i, e in enumerate(events) if e.is_summary]
        return (events[stored[-1]], stored[-1]) if stored else (None, None)

    def _make_summary(self, text: str) -> V1Event:
        """The summary a condensation appended by this replay will show."""
        data = {"kind": SUMMARY_KIND, "id": f"{self.next_id}-summary", "summary": text}
        return V1Event(data, self.next_key if self.keyed_summaries else None, None)

    def messages(self, view: View) -> Conversion:
        from condense_cli.dialects.openhands_v1.messages import convert

        return Conversion(convert(view.events, merge_user_turns=self.keyed_summaries))

    def view_lines(self) -> Iterator[bytes]:
        for event in self.view():
            yield event.to_json() + b"\n"

    # --- what the condensations did ------------------------------------------------------

    def _ids_by_key(self) -> dict[int, str]:
        """Key -> id: a record's position, and a condensation's position for its summary
        (a condensation is never in a view, so its position is free)."""
        ids = {r.position: r.id for r in self.conversation.records}
        for record in self.conversation.records:
            if record.kind == CONDENSATION:
                ids[record.position] = f"{record.id}-summary"
        return ids

    @property
    def condensations(self) -> list[CondensationRecord]:
        if self._condensations is None:
            keys = {v: k for k, v in self._ids_by_key().items()}
            self._condensations = [self._condensation_record(s, keys) for s in self._steps()]
        return self._condensations

    def _condensation_record(self, step: Step, keys: dict[str, int]) -> CondensationRecord:
        condensation = step.condensation
        kept = {e.id for e in step.after}
        gone = [
            e
            for e in step.before
            if e.id not in kept and (isinstance(e, StoredEvent) or self.keyed_summaries)
        ]
        data = condensation.data
        forgotten = [keys[i] for i in data.get("forgotten_event_ids", []) if i in keys]
        summary = summary_of(condensation)
        return CondensationRecord(
            id=condensation.id,
            line=condensation.line if condensation.line is not None else condensation.position,
            ranges=runs(forgotten),
            forgotten_events=len(gone),
            summary_chars=len(summary.text) if summary is not None else None,
            view_size=len(step.after),
        )

    def stats(self, tokenizer: Any, reading: Reading = quiet_reading) -> dict[str, Any]:
        from condense_cli.dialects.counting import (
            TextCounts,
            condensation_rows,
            model_text,
            tally_numbers,
        )

        records = self.conversation.records
        by_type: dict[str, dict[str, int]] = {}
        for record in records:
            tool = record.tool
            tool_event = record.kind == ACTION or record.kind in OBSERVATION_KINDS
            name = f"{record.kind}:{tool}" if tool_event and isinstance(tool, str) else record.kind
            slot = by_type.setdefault(name, {"events": 0, "bytes": 0})
            slot["events"] += 1
            slot["bytes"] += len(record.raw)
        view = self.view()
        view_texts = [model_text(event) for event in view]
        counts = TextCounts(tokenizer, again=view_texts)  # the view's texts: counted once
        sent = [r for r in records if r.sent]
        full = counts.tally_log(
            sent,
            lambda r: model_text(V1Event(r.data, r.position, r.raw)),
            sum(len(r.raw) for r in sent),
        )
        seen = counts.tally(view_texts)
        return {
            "dialect": self.dialect,
            "generation": {"name": self.generation, "reason": self.generation_reason},
            "log": self.path,
            "bytes": sum(len(r.raw) for r in records),
            "events": len(records),
            "visible_events": sum(1 for r in records if r.sent),
            "by_type": dict(sorted(by_type.items(), key=lambda kv: -kv[1]["bytes"])),
            "condensations": condensation_rows(self.condensations),
            "requests": sum(1 for r in records if r.kind == CONDENSATION_REQUEST),
            "unhandled_request": self.replayed.pending_request,
            "view": {"events": len(view), "forgotten_events": self.forgotten_events},
            **tally_numbers(full, seen, tokenizer),
        }

    # --- appending --------------------------------------------------------------------

    def condensation_record(self, view: View, condensation: Condensation) -> Record:
        """A `Condensation` whose replay gives exactly `apply_condensation(view, …)`.

        Keys become ids. The SDK puts a summary at its offset *before* it drops
        unmatched tool calls, so when such events sit before the summary the offset
        is moved past them; a record that would still replay otherwise is refused.
        """
        wanted = [e.id for e in apply_condensation(view, condensation)]
        by_key = self._ids_by_key()
        ids = [by_key[k] for k in sorted(condensation.forgotten)] + self._lost_results()
        summary_id = f"{self.next_id}-summary"
        offset = condensation.summary_offset
        got: list[str] = []
        for _ in range(len(wanted) + 1):
            event = new_condensation(
                ids, summary=condensation.summary, summary_offset=offset, event_id=self.next_id
            )
            body = orjson.dumps(event)
            got = self._replayed_with(body).ids
            if got == wanted:
                return Record(body, self.next_id)
            if offset is None or summary_id not in got or summary_id not in wanted:
                break
            shift = wanted.index(summary_id) - got.index(summary_id)
            if shift <= 0:
                break
            offset += shift
        differ = next(
            (i for i, (a, b) in enumerate(zip(got, wanted, strict=False)) if a != b),
            min(len(got), len(wanted)),
        )
        raise CondenserError(
            f"{self.path}: this condensation would not replay as the condenser decided "
            f"(the views differ from position {differ} on); nothing was appended",
            hint="this is a bug in condense; please report it with the conversation",
        )

    def _lost_results(self) -> list[str]:
        """Tool results the replay dropped for good, their call being forgotten.

        The SDK counts a summary's offset before it drops them: listing them as
        forgotten makes it count the way the view does (they stay out either way).
        """
        records = self.conversation.records
        forgotten = {
            event_id
            for r in records
            if r.kind == CONDENSATION
            for event_id in r.data.get("forgotten_event_ids", [])
        }
        calls = {r.call for r in records if r.kind == ACTION and r.id not in forgotten}
        dropped = {event_id for ids in self.replayed.dropped.values() for event_id in ids}
        return [
            r.id
            for r in records
            if r.id in dropped and r.kind in OBSERVATION_KINDS and r.call not in calls
        ]

    def _replayed_with(self, body: bytes) -> Replayed:
        """The replay once `body` is stored as the next event (the lock file then exists)."""
        data = orjson.loads(body)
        record = StoredEvent(self.next_key, data["id"], data["kind"], body, data, self.path)
        conversation = replace(
            self.conversation,
            records=(*self.conversation.records, record),
            has_lock_file=self.conversation.has_lock_file
            or self.conversation.events_dir is not None,
        )
        return replay(conversation)

    def request_record(self) -> Record:
        event = new_condensation_request()
        return Record(orjson.dumps(event), event["id"])

    def append(self, record: Record) -> None:
        if self._writer is None:
            raise ValueError("this conversation was opened read-only")
        self._writer(record.body)


class OpenHandsV1(Dialect):
    """OpenHands V1 (software-agent-sdk): a folder of event files, or their JSONL."""

    name = NAME
    label = "OpenHands V1 conversation"

    def replay_file(
        self,
        source: LogSource,
        *,
        upto: str | None = None,
        collect: bool = False,
        locked: LockedLog | None = None,
    ) -> Replay:
        conversation = read_lines(source.raw_lines(), source.path)
        if not collect:
            _refuse_invalid(conversation)
        if locked is None:
            return V1Replay(source.path, conversation, upto)
        size = source.size
        return V1Replay(source.path, conversation, writer=lambda b: locked.append_line(b, size))

    @contextlib.contextmanager
    def reading(
        self,
        path: str,
        source: LogSource | None,
        *,
        upto: str | None = None,
        collect: bool = False,
        reading: Reading = quiet_reading,
    ) -> Iterator[Replay]:
        if source is not None:
            with super().reading(
                path, source, upto=upto, collect=collect, reading=reading
            ) as replay:
                yield replay
            return
        conversation = read_folder(path)
        if not collect:
            _refuse_invalid(conversation)
        yield V1Replay(conversation.path, conversation, upto)

    @contextlib.contextmanager
    def appending(
        self, path: str, lock_timeout: float, reading: Reading = quiet_reading
    ) -> Iterator[Replay]:
        if not Path(path).is_dir():
            with super().appending(path, lock_timeout, reading) as replay:
                yield replay
            return
        with locked_events(path, lock_timeout) as events:
            conversation = read_folder(path)
            _refuse_invalid(conversation)
            expected = len(conversation.records)
            yield V1Replay(path, conversation, writer=lambda b: events.append(b, expected))


def _refuse_invalid(conversation: Conversation) -> None:
    """Raise the first error of a conversation that `view`, `run` and `request` refuse."""
    errors = [p for p in conversation.problems if p.severity == "error"]
    if errors:
        first = errors[0]
        more = f" ({len(errors)} problems in all)" if len(errors) > 1 else ""
        raise LogError(
            first.path or conversation.path,
            first.message,
            first.line,
            hint=f"run `condense check` on {conversation.path} to list every problem{more}",
        )
