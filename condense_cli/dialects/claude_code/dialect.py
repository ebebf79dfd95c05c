"""Claude Code sessions (`~/.claude/projects/<project>/<session>.jsonl`).

A session is a tree of lines linked by `uuid`/`parentUuid`. What the model sees
is the active chain, measured against the real client (Claude Code 2.1.330):

- from the newest main-chain message (`user`/`assistant`, not `isSidechain`)
  back through `parentUuid`, stopping at the latest `compact_boundary`, whose
  `isCompactSummary` user line is the summary;
- a boundary's `compactMetadata.preservedSegment` splices the kept messages
  (head .. tail, by `parentUuid`) in right after its anchor (the summary);
- parallel tool calls: the client writes one assistant line per content block,
  and a second `tool_use` of the same response (same `message.id`) with its
  `tool_result` may hang off a side branch; the client puts them back in the
  turn, in file order (not inside a preserved segment);
- a `parentUuid` that points nowhere is an error for `check`; the view goes on
  with the line before it (so a view piped through `--format jsonl` reads back;
  the client itself jumps to the first message, dropping what lies between);
- `system` lines, `attachment` lines (the client renders some as reminders) and
  lines without a uuid (titles, queue operations, snapshots, ...) are not
  messages of the view.

Keys are line positions (1-based). `condense run` appends a boundary, the
summary and re-parented copies of every kept message (fresh uuids and fresh
`message.id`s, so the client neither loses nor merges them with the originals);
`condense request` appends a `condense-request` line, a type the client skips.
"""

from __future__ import annotations

import uuid as uuidlib
from bisect import bisect_left
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from condense_cli.core.errors import ConfigError, LogError
from condense_cli.core.events import Condensation, CondensationRecord, Event, Problem, View
from condense_cli.core.intervals import runs
from condense_cli.core.jsonlines import encode
from condense_cli.core.logfile import LockedLog, LogSource, line_body
from condense_cli.core.messages import Conversion
from condense_cli.dialects.base import (
    CondensationStep,
    Dialect,
    Reading,
    Record,
    Replay,
    quiet_reading,
)
from condense_cli.dialects.claude_code.detect import NAME
from condense_cli.fast import lines as fastlines

MESSAGE_TYPES = frozenset({"user", "assistant"})
TREE_TYPES = MESSAGE_TYPES | {"system", "attachment"}  # the lines linked by parentUuid
REQUEST_TYPE = "condense-request"
COPY_OF = "condenseCopyOf"  # on the copies `condense run` writes: the uuid copied
BOUNDARY = "compact_boundary"  # the `subtype` of a compaction's system line
BASE_FIELDS = ("isSidechain", "userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch")


# User lines the client writes itself (command output, reminders), not instructions.
CLIENT_PREFIXES = ("<local-command-", "<system-reminder>", "<command-message>")


class BadLine(Exception):
    """A line is not a valid session line; the message says what is wrong."""


# --- events --------------------------------------------------------------------------


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _block_text(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return encode(block.get("input")).decode()
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(_block_text(b) for b in _blocks(content))
    if kind == "image":
        return "[image]"
    return ""


class ClaudeEvent(Event):
    """One `user` or `assistant` line of the active chain; its key is its line.

    Made with `data` None (and its `raw` bytes), it parses them when first asked;
    made from a session `Line` (`read_from`), it answers what the line already
    knows (uuid, summary, copy) without parsing.
    """

    __slots__ = ("_data", "answers", "line", "read_from")

    def __init__(
        self,
        data: dict[str, Any] | None,
        key: int | None,
        raw: bytes | None,
        line: int | None = None,
        read_from: Line | None = None,
    ) -> None:
        super().__init__(data, key, raw)  # type: ignore[arg-type]
        self.line = line if line is not None else key  # its line in the session, if read
        self.answers: int | None = None  # key of the tool_use line a result answers
        self.read_from = read_from  # the session line it is (its data is the line's)

    @property  # type: ignore[override]
    def data(self) -> dict[str, Any]:
        data = self._data
        if data is None:
            data = self._data = orjson.loads(self.raw)  # type: ignore[arg-type]
        return data

    @data.setter
    def data(self, value: dict[str, Any] | None) -> None:
        self._data = value

    @property
    def message(self) -> dict[str, Any]:
        message = self.data.get("message")
        return message if isinstance(message, dict) else {}

    @property
    def blocks(self) -> list[dict[str, Any]]:
        return _blocks(self.message.get("content"))

    @property
    def uuid(self) -> str | None:
        if self.read_from is not None:
            return self.read_from.uuid
        value = self.data.get("uuid")
        return value if isinstance(value, str) else None

    @property
    def copy_of(self) -> Any:
        """The `condenseCopyOf` value of a copy `condense run` wrote (else None)."""
        if self.read_from is not None and not self.read_from.copy:
            return None
        return self.data.get(COPY_OF)

    @property
    def is_summary(self) -> bool:
        if self.read_from is not None:
            return self.read_from.compact_summary
        return self.data.get("isCompactSummary") is True

    @property
    def source(self) -> str:
        if self.data.get("type") == "assistant":
            return "agent"
        return "environment" if self._result is not None else "user"

    @property
    def _result(self) -> dict[str, Any] | None:
        return next((b for b in self.blocks if b.get("type") == "tool_result"), None)

    @property
    def _use(self) -> dict[str, Any] | None:
        return next((b for b in self.blocks if b.get("type") == "tool_use"), None)

    @property
    def is_action(self) -> bool:
        return self._result is None

    @property
    def type(self) -> str:
        if self.is_summary:
            return "summary"
        use = self._use
        if use is not None:
            return str(use.get("name") or "tool_use")
        if self._result is not None:
            return "tool_result"
        kinds = {b.get("type") for b in self.blocks}
        return "thinking" if kinds == {"thinking"} else "message"

    @property
    def text(self) -> str:
        return "\n".join(t for t in (_block_text(b) for b in self.blocks) if t)

    @property
    def thought(self) -> str:
        return "\n".join(
            str(b.get("thinking") or "") for b in self.blocks if b.get("type") == "thinking"
        ).strip()

    @property
    def tool_call(self) -> tuple[str, dict[str, Any]] | None:
        use = self._use
        if use is None:
            return None
        arguments = use.get("input")
        return str(use.get("name") or "tool_use"), arguments if isinstance(arguments, dict) else {}

    @property
    def is_instruction(self) -> bool:
        if not super().is_instruction or self.data.get("isMeta") is True:
            return False
        return not self.text.lstrip().startswith(CLIENT_PREFIXES)

    @property
    def tool_call_id(self) -> str | None:
        use = self._use
        if use is not None:
            return use.get("id") if isinstance(use.get("id"), str) else None
        result = self._result
        if result is not None and isinstance(result.get("tool_use_id"), str):
            return result["tool_use_id"]
        return None

    @property
    def cause(self) -> int | None:
        return self.answers

    @property
    def id(self) -> object:
        return self.key

    def masked(self, text: str) -> ClaudeEvent:
        blocks = [
            {**b, "content": text} if b.get("type") == "tool_result" else b for b in self.blocks
        ]
        data = {**self.data, "message": {**self.message, "content": blocks}}
        event = ClaudeEvent(data, self.key, None, self.line)
        event.answers = self.answers
        return event


def summary_event(text: str) -> ClaudeEvent:
    """The summary line a Claude Code view shows (the client's `isCompactSummary`)."""
    data = {
        "type": "user",
        "message": {"role": "user", "content": text},
        "isCompactSummary": True,
        "isVisibleInTranscriptOnly": True,
    }
    return ClaudeEvent(data, None, None)


def api_messages(events: list[Event]) -> list[dict[str, Any]]:
    """The view as the Messages API list the client builds from it.

    Every assistant line of one response (`message.id`) goes into one message,
    even when tool results were written between them (they follow it);
    consecutive user lines make one user message, as a list of blocks (a lone
    user line with string content stays a string), the last text block of each
    but the last ending with a newline.
    """
    messages: list[dict[str, Any]] = []
    turn: dict[str, Any] | None = None  # the assistant message of the current response
    turn_id: object = None
    for event in events:
        message = event.data.get("message") or {}
        role = message.get("role") or event.data.get("type")
        content = message.get("content")
        same_response = turn_id is not None and message.get("id") == turn_id
        if role == "assistant" and turn is not None and same_response:
            turn["content"] = _blocks(turn["content"]) + _blocks(content)
            continue
        if role == "user" and messages and messages[-1]["role"] == "user":
            earlier = [dict(b) for b in _blocks(messages[-1]["content"])]
            if earlier and earlier[-1].get("type") == "text":
                earlier[-1]["text"] = f"{earlier[-1].get('text', '')}\n"  # the client's joint
            messages[-1]["content"] = earlier + _blocks(content)
            continue
        messages.append({"role": role, "content": content})
        if role == "assistant":
            turn, turn_id = messages[-1], message.get("id")
    return messages


# --- reading a session ---------------------------------------------------------------


class Line:
    """One non-blank line: its position, its bytes, and what the replay reads of it.

    `data` (the parsed object) is parsed from `raw` when first asked for: the fast
    path (`claude_code_fast`) builds lines from a few decoded fields only.
    """

    __slots__ = (
        "_data",
        "compact_summary",
        "copy",
        "is_boundary",
        "message_id",
        "number",
        "parent",
        "raw",
        "sidechain",
        "tools",
        "type",
        "uuid",
    )

    def __init__(
        self,
        number: int,
        raw: bytes,
        data: dict[str, Any] | None,
        kind: str,
        uuid: str | None,
        parent: str | None,
        *,
        boundary: bool = False,
        sidechain: bool = False,
        compact_summary: bool = False,
        copy: bool = False,
        message_id: str | None = None,
        tools: tuple[tuple[bool, Any], ...] = (),
    ) -> None:
        self.number = number
        self.raw = raw
        self._data = data
        self.type = kind  # "" when the line has no type string
        self.uuid = uuid
        self.parent = parent
        self.is_boundary = boundary
        self.sidechain = sidechain  # `isSidechain` is true
        self.compact_summary = compact_summary  # `isCompactSummary` is true
        self.copy = copy  # has a `condenseCopyOf` key
        self.message_id = message_id
        # The tool blocks of a content list, in order: (True, id) for a `tool_use`
        # with a string id, (False, its `tool_use_id`) for a `tool_result`.
        self.tools = tools

    @classmethod
    def parsed(cls, number: int, data: dict[str, Any], raw: bytes) -> Line:
        """A line the exact path parsed (and `parse_line` accepted)."""
        message = data.get("message")
        message = message if isinstance(message, dict) else {}
        content = message.get("content")
        tools: tuple[tuple[bool, Any], ...] = ()
        if isinstance(content, list):
            tools = tuple(
                (True, b["id"]) if b.get("type") == "tool_use" else (False, b.get("tool_use_id"))
                for b in content
                if isinstance(b, dict)
                and (
                    (b.get("type") == "tool_use" and isinstance(b.get("id"), str))
                    or b.get("type") == "tool_result"
                )
            )
        kind, uuid, parent, message_id = (
            data.get("type"),
            data.get("uuid"),
            data.get("parentUuid"),
            message.get("id"),
        )
        kind = kind if isinstance(kind, str) else ""
        return cls(
            number,
            raw,
            data,
            kind,
            uuid if isinstance(uuid, str) else None,
            parent if isinstance(parent, str) else None,
            boundary=kind == "system" and data.get("subtype") == BOUNDARY,
            sidechain=data.get("isSidechain") is True,
            compact_summary=data.get("isCompactSummary") is True,
            copy=COPY_OF in data,
            message_id=message_id if isinstance(message_id, str) else None,
            tools=tools,
        )

    @property
    def data(self) -> dict[str, Any]:
        """The parsed line (parsed now if the fast path read it)."""
        data = self._data
        if data is None:
            data = self._data = orjson.loads(self.raw)
        return data

    @property
    def is_result(self) -> bool:
        return any(not use for use, _ in self.tools)


def line_problem(kind: Any, uuid: Any, parent: Any, message: bool, content: Any) -> str | None:
    """What is wrong with a session line, from its `type`, `uuid`, `parentUuid`,
    whether its `message` is an object and that message's `content` (None: nothing).
    The one statement of these rules, for the exact path and the fast path."""
    if not isinstance(kind, str):
        return 'has no "type" string'
    if kind in TREE_TYPES:
        if not isinstance(uuid, str):
            return f'a {kind} line needs a "uuid" string'
        if parent is not None and not isinstance(parent, str):
            return '"parentUuid" must be a string or null'
    if kind in MESSAGE_TYPES:
        if not message:
            return f'a {kind} line needs a "message" object'
        if not isinstance(content, str | list):
            return '"message.content" must be a string or an array of blocks'
    return None


def parse_line(raw: bytes) -> dict[str, Any]:
    """One line as a session line, or BadLine."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadLine(f"invalid JSON: {str(exc).split(':')[0]}") from None
    if not isinstance(data, dict):
        raise BadLine("expected a JSON object")
    message = data.get("message")
    is_object = isinstance(message, dict)
    content = message.get("content") if is_object else None
    wrong = line_problem(
        data.get("type"), data.get("uuid"), data.get("parentUuid"), is_object, content
    )
    if wrong is not None:
        raise BadLine(wrong)
    return data


@dataclass
class SideLines:
    """The lines of the main session (not `isSidechain`) that a chain can take back
    from a side branch, in file order: assistant lines by their response
    (`message.id`), and user lines holding a tool result by their `parentUuid`."""

    by_message: dict[str, list[Line]]
    results: dict[str, list[Line]]

    @classmethod
    def of(cls, lines: list[Line]) -> SideLines:
        by_message: dict[str, list[Line]] = {}
        results: dict[str, list[Line]] = {}
        for line in lines:
            if line.sidechain:
                continue
            if line.type == "assistant" and line.message_id is not None:
                by_message.setdefault(line.message_id, []).append(line)
            elif line.type == "user" and line.parent is not None and line.is_result:
                results.setdefault(line.parent, []).append(line)
        return cls(by_message, results)


def _number(line: Line) -> int:
    return line.number


@dataclass
class Session:
    """Every line of a session (up to `--upto`), indexed by uuid."""

    path: str
    lines: list[Line] = field(default_factory=list)
    by_uuid: dict[str, Line] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    size: int = 0
    _side: SideLines | None = None

    def add(self, line: Line) -> None:
        self.lines.append(line)
        key = line.uuid
        if key is not None and line.type in TREE_TYPES:
            first = self.by_uuid.get(key)
            if first is not None:
                self.problem(line.number, f"duplicate uuid {key} (first on line {first.number})")
            self.by_uuid[key] = line

    def position(self, line: Line) -> int:
        """Where `line` is in `lines` (found by its number: they increase down the list)."""
        return bisect_left(self.lines, line.number, key=_number)

    def line_before(self, line: Line) -> Line | None:
        """The nearest earlier line that belongs to the tree (has a uuid)."""
        lines = self.lines
        for at in range(self.position(line) - 1, -1, -1):
            earlier = lines[at]
            if earlier.uuid is not None and earlier.type in TREE_TYPES:
                return earlier
        return None

    @property
    def side(self) -> SideLines:
        """The lines `_with_siblings` may put back into a chain, indexed once."""
        if self._side is None:
            self._side = SideLines.of(self.lines)
        return self._side

    def problem(self, line: int | None, message: str, severity: str = "error") -> None:
        self.problems.append(Problem(line, message, severity))

    def read(self, number: int, raw: bytes, collect: bool) -> None:
        """The exact path for line `number` as read (newline included): a bad line
        raises LogError, or with `collect` is listed as a problem."""
        self.size += len(raw)
        body = line_body(raw, first=number == 1)
        if not body.strip():
            return
        try:
            data = parse_line(body)
        except BadLine as exc:
            if not collect:
                raise LogError(self.path, str(exc), number) from None
            self.problem(number, str(exc))
            return
        self.add(Line.parsed(number, data, body))


def read_session(source: LogSource, *, upto: str | None = None, collect: bool = False) -> Session:
    """Parse and index the session; bad lines raise LogError unless `collect`.

    Sessions of `FAST_MIN_BYTES` or more are read in blocks (`claude_code_fast`),
    but for their last unfinished line and unless `--upto` is a line position.
    """
    session = Session(source.path)
    limit = _line_limit(upto)
    done = offset = 0  # lines read in blocks, and where they end
    if limit is None and source.size >= fastlines.FAST_MIN_BYTES:
        from condense_cli.dialects.claude_code.fast import read_blocks

        done, offset = read_blocks(session, source, collect)
    for number, raw in enumerate(source.raw_lines(offset), start=done + 1):
        if limit is not None and number > limit:
            break
        session.read(number, raw, collect)
    if upto is not None and limit is None:
        line = session.by_uuid.get(upto)
        if line is None:
            raise ConfigError(f"--upto {upto!r}: no line of {source.path} has this uuid")
        session.lines = [x for x in session.lines if x.number <= line.number]
        session.by_uuid = {k: v for k, v in session.by_uuid.items() if v.number <= line.number}
    return session


def _line_limit(upto: str | None) -> int | None:
    if upto is None or not upto.isdigit():
        return None
    value = int(upto)
    if value < 1:
        raise ConfigError(f"--upto {upto!r}: a line position starts at 1")
    return value


@dataclass
class Chain:
    """The active chain: its lines in the order the client sends them."""

    lines: list[Line]
    boundary: Line | None
    dangling: Line | None = None  # a line whose parent is missing (the chain stops there)


def leaf_of(session: Session) -> Line | None:
    """The newest main-chain message."""
    for line in reversed(session.lines):
        if line.type in MESSAGE_TYPES and not line.sidechain:
            return line
    return None


def walk(session: Session, start: Line | None, stop_at: str | None = None) -> Chain:
    """From `start` back through `parentUuid` to the first boundary (or `stop_at`)."""
    found: list[Line] = []
    seen: set[int] = set()
    line, boundary, dangling = start, None, None
    while line is not None and line.number not in seen:
        seen.add(line.number)
        if line.is_boundary:
            boundary = line
            break
        found.append(line)
        if line.uuid == stop_at:
            break
        parent = line.parent
        if parent is None:
            break
        following = session.by_uuid.get(parent)
        if following is None:  # check reports it; a view piped through jsonl needs the bridge
            dangling = line
            following = session.line_before(line)
        line = following
    found.reverse()
    return Chain(found, boundary, dangling)


def active_chain(session: Session, leaf: Line | None = None) -> Chain:
    """The lines the client sends, in order (see the module's docstring)."""
    chain = walk(session, leaf if leaf is not None else leaf_of(session))
    segment = _preserved(chain.boundary)
    if segment is not None:
        head, anchor, tail = segment
        at = next((i for i, x in enumerate(chain.lines) if x.uuid == anchor), None)
        kept = walk(session, session.by_uuid.get(tail), stop_at=head).lines
        if at is not None and kept and kept[0].uuid == head:
            members = {x.number for x in kept}
            rest = [x for x in chain.lines if x.number not in members]
            at = next(i for i, x in enumerate(rest) if x.uuid == anchor)
            lines = _with_siblings(session, rest[: at + 1]) + kept
            lines += _with_siblings(session, rest[at + 1 :])
            return Chain(lines, chain.boundary, chain.dangling)
    return Chain(_with_siblings(session, chain.lines), chain.boundary, chain.dangling)


def _preserved(boundary: Line | None) -> tuple[str, str, str] | None:
    meta = boundary.data.get("compactMetadata") if boundary is not None else None
    segment = meta.get("preservedSegment") if isinstance(meta, dict) else None
    if not isinstance(segment, dict):
        return None
    parts = (segment.get("headUuid"), segment.get("anchorUuid"), segment.get("tailUuid"))
    return parts if all(isinstance(p, str) for p in parts) else None  # type: ignore[return-value]


def _with_siblings(session: Session, lines: list[Line]) -> list[Line]:
    """Put back the parallel tool calls of a response that hang off a side branch.

    For each response (`message.id`) in the chain: its assistant lines that are
    not on the chain, and the tool results chained on any of its lines that are
    not on the chain either, join the turn (the response's lines and the user
    lines after them), in file order. A response that comes back later in the
    chain takes no more lines. The work grows with the chain, not the session:
    the side lines are indexed once per session (`Session.side`).
    """
    side = session.side
    if not side.by_message and not side.results:
        return lines
    on_chain = {x.number for x in lines}
    taken: set[str] = set()  # the responses that already had their turn
    out: list[Line] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        response = line.message_id
        if line.type != "assistant" or response is None:
            out.append(line)
            i += 1
            continue
        end = i + 1
        while end < len(lines) and (
            lines[end].type != "assistant" or lines[end].message_id == response
        ):
            end += 1
        turn = lines[i:end]
        extra: list[Line] = []
        if response not in taken:
            taken.add(response)
            extra = [x for x in side.by_message.get(response, ()) if x.number not in on_chain]
        answered = {call for x in turn for call in _result_ids(x)}
        for member in [x for x in turn if x.type == "assistant"] + extra:
            for result in side.results.get(member.uuid or "", ()):
                if result.number in on_chain:
                    continue
                calls = _result_ids(result)
                if calls and not calls & answered:
                    extra.append(result)
                    answered |= calls
        out += sorted(turn + extra, key=_number) if extra else turn
        i = end
    return out


def _result_ids(line: Line) -> set[str]:
    return {call for use, call in line.tools if not use and isinstance(call, str)}


# --- the replay ----------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ClaudeReplay(Replay):
    """A Claude Code session read and replayed to its active chain."""

    dialect = NAME

    def __init__(self, session: Session, locked: LockedLog | None = None) -> None:
        self.session = session
        self.path = session.path
        self.locked = locked
        self.chain = active_chain(session)
        self.events = self._events(self.chain.lines)
        problems = session.problems + self._chain_problems()
        self.problems = sorted(problems, key=lambda p: p.line or 0)
        self._records: list[CondensationRecord] | None = None

    @staticmethod
    def _events(lines: list[Line]) -> list[ClaudeEvent]:
        events: list[ClaudeEvent] = []
        uses: dict[str, int] = {}
        for line in lines:
            if line.type not in MESSAGE_TYPES:
                continue
            key = None if line.compact_summary else line.number
            event = ClaudeEvent(line._data, key, line.raw, line.number, line)
            for use, call in line.tools:
                if use:
                    uses[call] = line.number
                elif event.answers is None and isinstance(call, str):
                    event.answers = uses.get(call)
            events.append(event)
        return events

    # --- check ------------------------------------------------------------------------

    def _chain_problems(self) -> list[Problem]:
        problems: list[Problem] = []
        session = self.session
        for line in session.lines:
            parent = line.parent
            if parent is not None and parent not in session.by_uuid:
                problems.append(
                    Problem(line.number, f"parentUuid {parent} points to no line of this session")
                )
        problems += self._pair_problems()
        summarised = set()
        for line in session.lines:
            if line.compact_summary:
                boundary = walk(session, line).boundary
                if boundary is not None:
                    summarised.add(boundary.number)
        for line in session.lines:
            if line.is_boundary and line.number not in summarised and not _no_summary(line):
                problems.append(
                    Problem(line.number, "compact_boundary without an isCompactSummary message")
                )
        return problems

    def _pair_problems(self) -> list[Problem]:
        uses: dict[str, int] = {}
        answered: set[str] = set()
        problems: list[Problem] = []
        lines = [x for x in self.chain.lines if x.type in MESSAGE_TYPES]  # the events'
        for line in lines:
            for use, call in line.tools:
                if use:
                    uses[call] = line.number
                elif isinstance(call, str) and call in uses:  # (a list id cannot be)
                    answered.add(call)
                else:
                    problems.append(
                        Problem(line.number, f"tool_result for {call}: no tool_use before it")
                    )
        last_user = max((x.number for x in lines if x.type == "user"), default=0)
        for call, line in uses.items():
            if call not in answered:
                pending = line > last_user  # the session stopped while the tool ran
                problems.append(
                    Problem(
                        line,
                        f"tool_use {call} has no tool_result"
                        + (" (the session ends before it)" if pending else ""),
                        "warning" if pending else "error",
                    )
                )
        return problems

    # --- view ------------------------------------------------------------------------

    @property
    def forgotten_events(self) -> int:
        return sum(record.forgotten_events for record in self.condensations)

    @property
    def condensations(self) -> list[CondensationRecord]:
        if self._records is None:
            self._records = [self._record(line) for line in self.boundaries()]
        return self._records

    def boundaries(self) -> list[Line]:
        """The session's compactions (their `compact_boundary` lines), in order."""
        return [line for line in self.session.lines if line.is_boundary]

    def before(self, boundary: Line) -> list[ClaudeEvent]:
        """The view right before the compaction at `boundary`."""
        session = self.session
        logical = session.by_uuid.get(str(boundary.data.get("logicalParentUuid")))
        return self._events(active_chain(session, logical).lines) if logical else []

    def after(self, boundary: Line) -> list[ClaudeEvent]:
        """The view right after the compaction at `boundary`."""
        return self._events(active_chain(self.session, _block_end(self.session, boundary)).lines)

    def around(self, boundary: Line) -> tuple[list[ClaudeEvent], list[ClaudeEvent]]:
        """The view right before the compaction at `boundary`, and right after it."""
        return self.before(boundary), self.after(boundary)

    def _record(self, boundary: Line) -> CondensationRecord:
        """What the compaction at `boundary` did."""
        before, after = self.around(boundary)
        kept = {e.copy_of or e.uuid for e in after}
        forgotten = [e.key for e in before if e.key is not None and e.uuid not in kept]
        summary = next((e for e in after if e.is_summary), None)
        return CondensationRecord(
            id=boundary.uuid,
            line=boundary.number,
            ranges=runs(forgotten),
            forgotten_events=len(forgotten),
            summary_chars=len(summary.text) if summary is not None else None,
            view_size=len(after),
        )

    def view(self) -> View:
        return _view_of(self.events, self._pending_request())

    # --- history -------------------------------------------------------------------------

    def condensation_steps(self) -> Iterator[CondensationStep]:
        for boundary in self.boundaries():
            before, after = self.around(boundary)
            kept = {_origin(e) for e in after}
            gone = [e for e in before if _origin(e) not in kept and not e.is_summary]
            summary = next((e.text for e in after if e.is_summary), None)
            yield CondensationStep(
                boundary.uuid,
                boundary.number,
                _view_of(before),
                list(gone),
                summary,
                _view_of(after),
            )

    def history(self) -> Iterator[Event | None]:
        """The messages of every segment (before each compaction, then the active
        chain), each once and in file order, copies taken as their originals."""
        seen: dict[str | None, ClaudeEvent] = {}
        for segment in [*map(self.before, self.boundaries()), self.events]:
            for event in segment:
                if not event.is_summary and event.copy_of is None:
                    seen.setdefault(event.uuid, event)
        events = sorted(seen.values(), key=lambda e: e.line or 0)
        requests = deque(x.number for x in self.session.lines if x.type == REQUEST_TYPE)
        for event in events:
            while requests and requests[0] < (event.line or 0):
                requests.popleft()
                yield None
            yield event
        for _ in requests:
            yield None

    def _pending_request(self) -> bool:
        since = self.chain.boundary.number if self.chain.boundary is not None else 0
        return any(x.type == REQUEST_TYPE and x.number > since for x in self.session.lines)

    def view_lines(self) -> Iterator[bytes]:
        boundary = self.chain.boundary
        if boundary is not None and _preserved(boundary) is not None:
            yield boundary.raw + b"\n"  # without it, a piped view loses the preserved messages
        for event in self.events:
            yield event.to_json() + b"\n"

    def messages(self, view: View) -> Conversion:
        from condense_cli.dialects.claude_code.messages import chat_messages

        return Conversion(chat_messages(api_messages(view.events)))

    def stats(self, tokenizer: Any, reading: Reading = quiet_reading) -> dict[str, Any]:
        from condense_cli.dialects.claude_code.stats import session_stats

        return session_stats(self, tokenizer)

    # --- appending ----------------------------------------------------------------------

    def condensation_record(self, view: View, condensation: Condensation) -> Record:
        from condense_cli.core.events import apply_condensation

        after = apply_condensation(view, condensation)
        leaf = self.chain.lines[-1] if self.chain.lines else None
        base = {k: leaf.data[k] for k in BASE_FIELDS if leaf is not None and k in leaf.data}
        base["isSidechain"] = False
        stamp = _now()
        boundary_id = str(uuidlib.uuid4())
        meta: dict[str, Any] = {"trigger": "manual", "preTokens": _context_tokens(view)}
        if all(not e.is_summary for e in after.events):
            meta["condense"] = {"summary": False}
        lines: list[dict[str, Any]] = [
            {
                "parentUuid": None,
                "logicalParentUuid": leaf.uuid if leaf is not None else None,
                **base,
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "timestamp": stamp,
                "uuid": boundary_id,
                "level": "info",
                "compactMetadata": meta,
            }
        ]
        parent = boundary_id
        new_ids: dict[str, str] = {}
        message_ids: dict[str, str] = {}
        for event in after.events:
            copy = _copy_line(event, base, stamp, parent, new_ids, message_ids)
            lines.append(copy)
            parent = copy["uuid"]
        body = b"\n".join(encode(x) for x in lines)
        return Record(body, boundary_id)

    def request_record(self) -> Record:
        request_id = str(uuidlib.uuid4())
        leaf = self.chain.lines[-1] if self.chain.lines else None
        line = {
            "type": REQUEST_TYPE,
            "requestUuid": request_id,
            "timestamp": _now(),
            "sessionId": leaf.data.get("sessionId") if leaf is not None else None,
        }
        return Record(orjson.dumps(line), request_id)

    def append(self, record: Record) -> None:
        if self.locked is None:
            raise ValueError("this session was opened read-only")
        self.locked.append_line(record.body, self.session.size)


def _origin(event: ClaudeEvent) -> str | None:
    """The uuid of the message an event is (a copy `condense run` wrote: its original)."""
    copied = event.copy_of
    return copied if isinstance(copied, str) else event.uuid


def _view_of(events: list[ClaudeEvent], pending: bool = False) -> View:
    summary_at = next((i for i, e in enumerate(events) if e.is_summary), None)
    return View(
        list(events),
        unhandled_request=pending,
        summary=events[summary_at] if summary_at is not None else None,
        summary_offset=summary_at,
        make_summary=summary_event,
    )


def _no_summary(boundary: Line) -> bool:
    """A boundary `condense run` wrote for a condensation without a summary."""
    meta = boundary.data.get("compactMetadata")
    marker = meta.get("condense") if isinstance(meta, dict) else None
    return isinstance(marker, dict) and marker.get("summary") is False


def _block_end(session: Session, boundary: Line) -> Line:
    """The last line of what a compaction wrote: its summary and kept copies."""
    end = boundary
    lines = session.lines
    for at in range(session.position(boundary) + 1, len(lines)):
        line = lines[at]
        if line.type in MESSAGE_TYPES and (line.compact_summary or line.copy):
            end = line
        elif line.type in MESSAGE_TYPES:
            break
    return end


def _context_tokens(view: View) -> int:
    """The context size the last answer of the view reports (the client's preTokens)."""
    for event in reversed(view.events):
        usage = (event.data.get("message") or {}).get("usage")
        if isinstance(usage, dict):
            keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            return sum(v for k in keys if isinstance(v := usage.get(k), int))
    return 0


def _copy_line(
    event: Event,
    base: dict[str, Any],
    stamp: str,
    parent: str,
    new_ids: dict[str, str],
    message_ids: dict[str, str],
) -> dict[str, Any]:
    """A kept message re-parented after the boundary, with fresh ids."""
    fresh = str(uuidlib.uuid4())
    if event.is_summary and event.raw is None:  # a new summary
        return {
            "parentUuid": parent,
            **base,
            "type": "user",
            "message": dict(event.data["message"]),
            "isCompactSummary": True,
            "isVisibleInTranscriptOnly": True,
            "uuid": fresh,
            "timestamp": stamp,
        }
    data = dict(event.data)
    original = data.get("uuid")
    if isinstance(original, str):
        new_ids[original] = fresh
        data[COPY_OF] = data.get(COPY_OF) or original
    data["uuid"] = fresh
    data["parentUuid"] = parent
    data.pop("requestId", None)
    message = data.get("message")
    if isinstance(message, dict) and isinstance(message.get("id"), str):
        mid = message["id"]
        new = message_ids.setdefault(mid, f"msg_condense_{uuidlib.uuid4().hex[:24]}")
        data["message"] = {**message, "id": new}
    source = data.get("sourceToolAssistantUUID")
    if isinstance(source, str) and source in new_ids:
        data["sourceToolAssistantUUID"] = new_ids[source]
    return data


# --- the dialect ---------------------------------------------------------------------


class ClaudeCode(Dialect):
    """Claude Code: a tree of lines linked by uuid, one session per file."""

    name = NAME
    label = "Claude Code session"

    def replay_file(
        self,
        source: LogSource,
        *,
        upto: str | None = None,
        collect: bool = False,
        locked: LockedLog | None = None,
    ) -> Replay:
        return ClaudeReplay(read_session(source, upto=upto, collect=collect), locked)
