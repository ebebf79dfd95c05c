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
`condense_cli.errors`, and problems that `check` lists are returned as values.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from condense_cli.dialects.openhands_v0 import LineProblem, decode_line, json_type
from condense_cli.errors import ConfigError, LogBusyError, LogError
from condense_cli.log import _lock, line_body, locked_log

# --------------------------------------------------------------------------------------
# The SDK's vocabulary

CONDENSATION = "Condensation"
CONDENSATION_REQUEST = "CondensationRequest"
SUMMARY_KIND = "CondensationSummaryEvent"
ACTION = "ActionEvent"

#: Kinds that answer a tool call (the SDK's `ObservationBaseEvent` subclasses).
OBSERVATION_KINDS = frozenset({"ObservationEvent", "UserRejectObservation", "AgentErrorEvent"})

#: Kinds the SDK converts to chat messages (`LLMConvertibleEvent` subclasses).
SENT_KINDS = frozenset(
    {"SystemPromptEvent", "MessageEvent", ACTION, SUMMARY_KIND} | OBSERVATION_KINDS
)

#: Kinds that exist but never reach the model.
UNSENT_KINDS = frozenset(
    {
        CONDENSATION,
        CONDENSATION_REQUEST,
        "PauseEvent",
        "InterruptEvent",
        "ConversationStateUpdateEvent",
        "ConversationErrorEvent",
        "ServerErrorEvent",
        "HookExecutionEvent",
        "LLMCompletionLogEvent",
        "ACPToolCallEvent",
        "StreamingDeltaEvent",
        "TokenEvent",
    }
)

KNOWN_KINDS = SENT_KINDS | UNSENT_KINDS

#: Events the SDK never takes as the head of a conversation tree.
BRANCH_ARTIFACT_KINDS = frozenset({"ConversationStateUpdateEvent", "ConversationErrorEvent"})

SOURCES = frozenset({"agent", "user", "environment", "hook"})

EVENTS_DIR = "events"
LOCK_FILE = ".eventlog.lock"
LOCK_TIMEOUT = 30.0  # seconds, as the SDK waits for its own lock

#: The event file names the SDK reads (5 or more digits, then a hex-and-dash id).
FILE_NAME_RE = re.compile(r"^event-(?P<index>\d{5,})-(?P<id>[0-9a-fA-F\-]{8,})\.json$")
ID_RE = re.compile(r"^[0-9a-fA-F\-]{8,}$")
ROOT_PARENT_ID = "__root__"

LAST_SUMMARY = "last-summary"
MULTI_SUMMARY = "multi-summary"
#: The SDK changed from one summary to several on this day (software-agent-sdk #1721).
MULTI_SUMMARY_SINCE = "2026-01-22"


# --------------------------------------------------------------------------------------
# What we read


@dataclass(frozen=True, slots=True)
class Problem:
    """One defect in a conversation: where it is, what is wrong, how bad."""

    path: str
    message: str
    line: int | None = None
    severity: str = "error"  # or "warning"

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass(frozen=True, slots=True, eq=False)
class Record:
    """One stored event: its place in the log, its id and kind, and the bytes as stored."""

    position: int  # the file index, or the event's ordinal in a JSONL file
    id: str
    kind: str
    raw: bytes
    data: dict[str, Any]
    path: str  # the event file, or the JSONL file
    line: int | None = None  # the line in a JSONL file

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
    records: tuple[Record, ...]
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
            return _read_jsonl(file, path)
    except FileNotFoundError:
        raise LogError(path, "no such file or folder", hint="check the path") from None
    except PermissionError:
        raise LogError(path, "permission denied") from None


def read_jsonl_bytes(data: bytes, name: str = "<stdin>") -> Conversation:
    """Read V1 events given as JSONL bytes (standard input, for instance)."""
    import io

    return _read_jsonl(io.BytesIO(data), name)


def _read_jsonl(file: BinaryIO, name: str) -> Conversation:
    records: list[Record] = []
    problems: list[Problem] = []
    seen: dict[str, Record] = {}
    for number, raw in enumerate(file, start=1):
        body = line_body(raw, first=number == 1)
        if not body.strip():
            continue
        record = _record(body, len(records), name, number, problems)
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
                Problem(
                    str(events_dir / name),
                    "not an event file name (event-NNNNN-<id>.json); the SDK ignores it",
                    severity="warning",
                )
            )
            continue
        index = int(match["index"])
        if index in by_index:
            problems.append(
                Problem(
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
            Problem(
                str(events_dir / first),
                f"index {count} is missing ({previous}); the SDK stops reading at the gap, "
                f"so this file and {len(beyond) - 1} later ones are not part of the "
                "conversation",
            )
        )
    records: list[Record] = []
    seen: dict[str, Record] = {}
    for index in range(count):
        name = by_index[index]
        file_path = str(events_dir / name)
        try:
            raw = (events_dir / name).read_bytes()
        except OSError as exc:
            problems.append(Problem(file_path, f"cannot read: {exc.strerror or exc}"))
            continue
        if not raw.strip():
            problems.append(Problem(file_path, "empty file; the SDK skips it"))
            continue
        record = _record(raw, index, file_path, None, problems)
        if record is None:
            continue
        name_id = FILE_NAME_RE.match(name)["id"]  # type: ignore[index]
        if name_id != record.id:
            problems.append(
                Problem(
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
        problems.append(Problem(str(state), f"unreadable: {exc}", severity="warning"))
        return None
    return data if isinstance(data, dict) else None


def _record(
    raw: bytes, position: int, path: str, line: int | None, problems: list[Problem]
) -> Record | None:
    """Parse and validate one event; None (and a problem) when it is not one."""
    try:
        data = decode_line(raw)
    except LineProblem as exc:
        problems.append(Problem(path, str(exc), line))
        return None
    message = event_problem(data)
    if message is not None:
        problems.append(Problem(path, message, line))
        return None
    return Record(position, data["id"], data["kind"], raw, data, path, line)


def _unique(record: Record, seen: dict[str, Record], problems: list[Problem]) -> bool:
    first = seen.setdefault(record.id, record)
    if first is record:
        return True
    problems.append(
        Problem(record.path, f"duplicate id {record.id} (first at {first.where})", record.line)
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
    return orjson.dumps(arguments).decode() if arguments is not None else ""


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


def facts(record: Record) -> Facts:
    """The neutral facts of one stored event."""
    data, kind = record.data, record.kind
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
    condensation: Record

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


Entry = Record | Summary


def summary_of(condensation: Record) -> Summary | None:
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
    """Tell from a log which generation of the SDK wrote it (strongest evidence first)."""
    records = conversation.records
    if any("parent_id" in r.data for r in records):
        return Generation(
            MULTI_SUMMARY, "events carry parent_id (an SDK from July 2026 on wrote them)"
        )
    if conversation.has_lock_file:
        return Generation(
            MULTI_SUMMARY, f"events/{LOCK_FILE} exists (an SDK from January 2026 on wrote it)"
        )
    for record in records:
        if record.kind == CONDENSATION and "llm_response_id" not in record.data:
            return Generation(
                LAST_SUMMARY,
                f"Condensation {record.id} has no llm_response_id "
                "(written by an SDK from before November 2025)",
            )
    dates = [
        r.data["timestamp"][:10]
        for r in records
        if isinstance(r.data.get("timestamp"), str)
        and re.match(r"\d{4}-\d{2}-\d{2}", r.data["timestamp"])
    ]
    if dates:
        newest = max(dates)
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
    return Generation(MULTI_SUMMARY, "no dated events; assuming the current SDK")


# --------------------------------------------------------------------------------------
# Replay


@dataclass(frozen=True)
class Replay:
    """A replayed view and what replaying it found."""

    generation: Generation
    events: tuple[Entry, ...]  # the view in order, summaries included
    forgotten: int  # events sent to the model that the view no longer holds
    pending_request: bool  # a CondensationRequest after the last Condensation
    condensations: tuple[Record, ...]  # the condensations applied, in order
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
) -> Replay:
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
    return Replay(
        generation=generation,
        events=tuple(view),
        forgotten=sum(1 for r in records if r.sent and r.id not in kept),
        pending_request=pending_request(records),
        condensations=tuple(r for r in records if r.kind == CONDENSATION),
        problems=tuple(problems),
        dropped=dropped,
    )


def _cut(records: list[Record], upto: int | str, path: str) -> int:
    """How many records come at or before `upto` (a position or an event id)."""
    if isinstance(upto, int):
        return sum(1 for r in records if r.position <= upto)
    for i, record in enumerate(records):
        if record.id == upto:
            return i + 1
    raise ConfigError(
        f"--upto {upto}: {path} has no event with this id",
        hint="give an event id from the log, or a position (the file index)",
    )


def pending_request(records: Sequence[Record]) -> bool:
    """Whether a CondensationRequest comes after the last Condensation."""
    for record in reversed(records):
        if record.kind == CONDENSATION:
            return False
        if record.kind == CONDENSATION_REQUEST:
            return True
    return False


def active_branch(records: list[Record], base_state: dict[str, Any] | None) -> list[Record]:
    """The events on the conversation tree's active branch, root first.

    Logs whose events carry no `parent_id` are one linear branch. Otherwise the
    branch runs from the head (`leaf_event_id` of base_state.json, else the newest
    event that is not a state or error artifact) back through each event's parent;
    an event without `parent_id` has the one stored before it as parent.
    """
    if not any("parent_id" in r.data for r in records):
        return records
    state = base_state or {}
    if state.get("head_is_empty"):
        return []
    by_id = {r.id: (i, r) for i, r in enumerate(records)}
    leaf = state.get("leaf_event_id")
    if not isinstance(leaf, str) or leaf not in by_id:
        leaf = next((r.id for r in reversed(records) if r.kind not in BRANCH_ARTIFACT_KINDS), None)
    chain: list[Record] = []
    seen: set[str] = set()
    current = leaf
    while current is not None and current in by_id and current not in seen:
        seen.add(current)
        index, record = by_id[current]
        chain.append(record)
        parent = record.data.get("parent_id")
        if parent == ROOT_PARENT_ID:
            break
        current = parent if isinstance(parent, str) else (records[index - 1].id if index else None)
    return chain[::-1]


def _condensation_problems(records: Sequence[Record], generation: str) -> list[Problem]:
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


def _warn(record: Record, message: str) -> Problem:
    return Problem(record.path, f"Condensation {record.id} {message}", record.line, "warning")


def _insert_summary(
    view: list[Entry], condensation: Record, problems: list[Problem]
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
    records: Sequence[Record], problems: list[Problem]
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
        view = _insert_summary(view, newest, problems)
    drop = _unmatched(view)
    dropped = {"tool_call_matching": tuple(e.id for e in view if e.id in drop)} if drop else {}
    return [e for e in view if e.id not in drop], dropped


def _multi_summary_view(
    records: Sequence[Record], problems: list[Problem]
) -> tuple[list[Entry], dict[str, tuple[str, ...]]]:
    """The current SDK's view: a fold over the log, then its properties enforced."""
    view: list[Entry] = []
    for record in records:
        if record.kind == CONDENSATION:
            forgotten = set(record.data.get("forgotten_event_ids", []))
            view = [e for e in view if e.id not in forgotten]
            view = _insert_summary(view, record, problems)
        elif record.sent:
            view.append(record)
    return enforce_properties(view, records)


# The view properties, each a function (view, all events) -> ids to drop. The SDK
# applies the first one that drops anything, then starts over, until none does.


def _kind(entry: Entry) -> str:
    return entry.kind


def _call_id(entry: Entry) -> str | None:
    return entry.data["tool_call_id"] if isinstance(entry, Record) else None


def _unique_observations(view: Sequence[Entry], _all: Sequence[Record]) -> set[str]:
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
        if _kind(event) == ACTION and isinstance(event, Record):
            batches.setdefault(event.data.get("llm_response_id"), set()).add(event.id)
    return batches


def _whole_batches(view: Sequence[Entry], all_events: Sequence[Record]) -> set[str]:
    """The tool calls of one model response are kept or dropped together."""
    everything = _batches(all_events)
    drop: set[str] = set()
    for response, ids in _batches(view).items():
        if ids != everything.get(response):
            drop |= ids
    return drop


def _unmatched(view: Sequence[Entry], _all: Sequence[Record] = ()) -> set[str]:
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
        if kind == ACTION and isinstance(event, Record) and event.data.get("thinking_blocks"):
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


def _whole_tool_loops(view: Sequence[Entry], all_events: Sequence[Record]) -> set[str]:
    """A thinking-led tool loop is kept whole or not at all."""
    kept = {e.id for e in view}
    drop: set[str] = set()
    for loop in tool_loops(all_events):
        if (loop & kept) and not loop <= kept:
            drop |= loop & kept
    return drop


PROPERTIES = (
    ("observation_uniqueness", _unique_observations),
    ("batch_atomicity", _whole_batches),
    ("tool_call_matching", _unmatched),
    ("tool_loop_atomicity", _whole_tool_loops),
)


def enforce_properties(
    view: list[Entry], all_events: Sequence[Record]
) -> tuple[list[Entry], dict[str, tuple[str, ...]]]:
    """Drop events until every view property holds; say which rule dropped what."""
    dropped: dict[str, tuple[str, ...]] = {}
    while True:
        for name, rule in PROPERTIES:
            drop = rule(view, all_events)
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
) -> dict[str, Any]:
    """A `Condensation` the current SDK loads (fields it would leave out are left out).

    `llm_response_id` is the model response that wrote the summary; a condensation
    made without a model gets a fresh uuid, as the SDK's own agents do.
    """
    if (summary is None) != (summary_offset is None):
        raise ValueError("summary and summary_offset go together")
    if summary_offset is not None and summary_offset < 0:
        raise ValueError("summary_offset must be 0 or more")
    event: dict[str, Any] = {
        "kind": CONDENSATION,
        "id": str(uuid.uuid4()),
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

    def append(self, event: dict[str, Any], expected_next: int | None = None) -> Path:
        """Write `event` as the next event file; its path.

        With `expected_next`, refuse (LogBusyError) when another writer has added
        events since the caller read the conversation.
        """
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
        _write_new_file(target, orjson.dumps(event))
        return target


def _write_new_file(target: Path, data: bytes) -> None:
    """Create `target` holding `data`, whole or not at all: temp file, fsync, link, fsync."""
    folder = target.parent
    temp = folder / f".{target.name}.{os.getpid()}.tmp"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(temp, target)
    except FileExistsError:
        raise LogBusyError(
            f"{target}: another writer created this event file; nothing was appended",
            hint="run the command again",
        ) from None
    except OSError as exc:
        raise LogError(str(target), f"could not write: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


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
        _lock(fd, str(events_dir), timeout)
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
        return events.append(event, expected_next)


def append_jsonl(
    path: str,
    event: dict[str, Any],
    *,
    expected_size: int | None = None,
    timeout: float = LOCK_TIMEOUT,
) -> None:
    """Append one event as a line of a JSONL file, with the guarantees of V0 appends."""
    message = event_problem(event)
    if message is not None:
        raise LogError(path, f"cannot append: {message}")
    with locked_log(path, timeout) as log:
        size = os.fstat(log.fd).st_size
        if size and os.pread(log.fd, 1, size - 1) != b"\n":
            last = _last_line(log.fd, size)
            try:
                decode_line(line_body(last))
            except LineProblem:
                raise LogError(
                    path,
                    "the last line is torn (no newline, not a complete event); "
                    "nothing was appended",
                    hint="repair or remove the last line",
                ) from None
        log.append_line(orjson.dumps(event), size if expected_size is None else expected_size)


def _last_line(fd: int, size: int, chunk: int = 1 << 16) -> bytes:
    """The bytes after the last newline of a file that does not end with one."""
    end = size
    parts: list[bytes] = []
    while end > 0:
        start = max(0, end - chunk)
        data = os.pread(fd, end - start, start)
        cut = data.rfind(b"\n")
        if cut >= 0:
            parts.append(data[cut + 1 :])
            break
        parts.append(data)
        end = start
    return b"".join(reversed(parts))
