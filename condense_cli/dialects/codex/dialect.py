"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).

Each line is `{"timestamp", "type", "payload"}`. The model sees the payloads of
`response_item` lines, replayed the way Codex rebuilds its history on resume:
a `compacted` line replaces the history with its `replacement_history` (or,
for a legacy line without one, with the earlier real user messages and its
`message` as a summary), an `event_msg` `thread_rolled_back` drops the newest
user turns, and every other line (`event_msg`, `turn_context`, `session_meta`,
`world_state`, …) is not model input.

Keys and ids: a key is the item's position in the view (the summary has none),
which is all a condenser needs, since a Codex compaction records the history
it leaves rather than what it forgot. The id shown for an item is its line, or
`L.i` for the i-th item (from 1) of the replacement history on line L.

`condense run` appends a `compacted` line whose `replacement_history` is the
condensed view (a new summary is a user message marked, as Codex marks its own,
with the content kind `compaction.summary`), then the `context_compacted` event
Codex writes after one. `condense request` appends a `condensation_request`
line: Codex skips line types it does not know when it resumes, and condense
reads it as a pending request until the next compaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from condense_cli.core.errors import ConfigError, LogError
from condense_cli.core.events import Condensation, CondensationRecord, Event, Problem, View
from condense_cli.core.jsonlines import LineProblem, decode_line, encode, json_type
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
from condense_cli.dialects.codex.detect import LINE_TYPES, NAME, REQUEST

CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "tool_search_call"})
OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
ITEM_TYPES = (
    CALLS
    | OUTPUTS
    | {
        "message",
        "reasoning",
        "web_search_call",
        "image_generation_call",
        "compaction",
        "compaction_summary",
        "additional_tools",
        "ghost_snapshot",
    }
)
NOT_SENT = frozenset({"ghost_snapshot"})  # recorded by Codex, never sent to the model
SUMMARY_KIND = "compaction.summary"
# User messages Codex writes itself (context, not something the user typed).
CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<skill>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
)


def _texts(value: Any) -> list[str]:
    """The texts of a content list (or a plain string)."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        return []
    return [
        part["text"]
        for part in value
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


class CodexEvent(Event):
    """One response item; `data` is the item (the payload), `raw` its whole line."""

    __slots__ = ("answers", "line", "sub", "summary")

    def __init__(
        self, data: dict[str, Any], raw: bytes | None, line: int | None, sub: int = 0
    ) -> None:
        super().__init__(data, None, raw)
        self.line = line
        self.sub = sub
        self.summary = False
        self.answers: int | None = None  # the key of the call an output answers

    @property
    def id(self) -> object:
        if self.line is None:
            return None
        return f"{self.line}.{self.sub}" if self.sub else self.line

    @property
    def item_type(self) -> str:
        return _str(self.data.get("type"))

    @property
    def role(self) -> str:
        return _str(self.data.get("role"))

    @property
    def source(self) -> str:
        if self.item_type in OUTPUTS:
            return "environment"
        return "user" if self.role == "user" else "agent"

    @property
    def is_action(self) -> bool:
        return self.item_type not in OUTPUTS

    @property
    def type(self) -> str:
        if self.item_type == "message" and self.role == "developer":
            return "system"
        return self.item_type

    @property
    def text(self) -> str:
        data, kind = self.data, self.item_type
        if kind == "message":
            return "\n".join(_texts(data.get("content")))
        if kind == "reasoning":
            return "\n".join(_texts(data.get("summary")) + _texts(data.get("content")))
        if kind == "function_call":
            return f"{_str(data.get('name'))}({_str(data.get('arguments'))})"
        if kind == "custom_tool_call":
            return f"{_str(data.get('name'))}: {_str(data.get('input'))}"
        if kind in OUTPUTS:
            return "\n".join(_texts(data.get("output")))
        if kind in ("compaction", "compaction_summary"):
            return f"(encrypted summary, {len(_str(data.get('encrypted_content'))):,} chars)"
        return encode(data).decode()

    @property
    def tool_call_id(self) -> str | None:
        if self.item_type in CALLS or self.item_type in OUTPUTS:
            call = self.data.get("call_id")
            return call if isinstance(call, str) else None
        return None

    @property
    def cause(self) -> int | None:
        return self.answers

    @property
    def is_summary(self) -> bool:
        return self.summary

    @property
    def marks_summary(self) -> bool:
        """Codex's own summaries: a compaction item, or a user message of that kind."""
        if self.item_type in ("compaction", "compaction_summary"):
            return True
        meta = self.data.get("internal_chat_message_metadata_passthrough")
        kinds = meta.get("content_item_kinds") if isinstance(meta, dict) else None
        return self.role == "user" and isinstance(kinds, list) and SUMMARY_KIND in kinds

    @property
    def is_user_turn(self) -> bool:
        """A message the user typed (Codex's user-turn boundary)."""
        if self.item_type != "message" or self.role != "user" or self.marks_summary:
            return False
        texts = _texts(self.data.get("content"))
        return not (texts and texts[0].lstrip().startswith(CONTEXT_PREFIXES))

    @property
    def tool_call(self) -> tuple[str, dict[str, Any]] | None:
        data, kind = self.data, self.item_type
        if kind == "function_call":
            try:
                arguments = orjson.loads(_str(data.get("arguments")))
            except orjson.JSONDecodeError:
                arguments = None
            return _str(data.get("name")), arguments if isinstance(arguments, dict) else {}
        if kind == "custom_tool_call":
            return _str(data.get("name")), {"input": _str(data.get("input"))}
        if kind == "local_shell_call":
            action = data.get("action")
            return "local_shell", action if isinstance(action, dict) else {}
        return None

    @property
    def is_instruction(self) -> bool:
        return self.is_user_turn

    def masked(self, text: str) -> CodexEvent:
        if self.item_type not in OUTPUTS:
            raise NotImplementedError(f"a {self.item_type} item cannot be masked")
        copy = CodexEvent({**self.data, "output": text}, None, self.line, self.sub)
        copy.key = self.key
        copy.summary = self.summary
        copy.answers = self.answers
        return copy

    def to_json(self) -> bytes:
        return encode(self.data)


def summary_item(text: str) -> dict[str, Any]:
    """A summary as condense writes it: a user message of Codex's summary kind."""
    return {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": text}],
        "internal_chat_message_metadata_passthrough": {"content_item_kinds": [SUMMARY_KIND]},
    }


def _new_summary(text: str) -> CodexEvent:
    event = CodexEvent(summary_item(text), None, None)
    event.summary = True
    return event


@dataclass
class Compaction:
    """What one `compacted` line did, and what the log says about it."""

    line: int
    before: int  # view size before it
    after: int  # view size right after it
    summary_chars: int | None
    says: dict[str, Any] = field(default_factory=dict)


@dataclass
class _State:
    """The history as Codex rebuilds it, line by line."""

    history: list[CodexEvent] = field(default_factory=list)
    summary: CodexEvent | None = None
    request_pending: bool = False
    requests: int = 0
    compactions: list[Compaction] = field(default_factory=list)
    tokens_seen: int | None = None  # the context size the last token_count reported
    compacted_raw: dict[int, bytes] = field(default_factory=dict)  # line -> its bytes


class CodexReplay(Replay):
    """A rollout read and replayed; the view is kept in memory (it is what Codex keeps)."""

    dialect = NAME

    def __init__(
        self,
        source: LogSource,
        state: _State,
        problems: list[Problem],
        lines: int,
        locked: LockedLog | None = None,
        upto: str | None = None,
    ) -> None:
        self.upto = upto
        self.source = source
        self.path = source.path
        self.state = state
        self.problems = problems
        self.lines = lines  # lines read
        self.locked = locked

    @property
    def forgotten_events(self) -> int:
        return sum(max(0, c.before - c.after) for c in self.state.compactions)

    @property
    def condensations(self) -> list[CondensationRecord]:
        return [
            CondensationRecord(
                c.line, c.line, [], max(0, c.before - c.after), c.summary_chars, c.after
            )
            for c in self.state.compactions
        ]

    def view(self) -> View:
        return _view_of(self.state.history, self.state.summary, self.state.request_pending)

    # --- history -------------------------------------------------------------------------

    def condensation_steps(self) -> Iterator[CondensationStep]:
        reader = _Reader(self.path, collect=True, record=True)
        _read_lines(reader, self.source, self.upto)
        for line, before, old, after, new in reader.steps:
            view = _view_of(before, old, False)
            kept = {encode(e.data) for e in after}
            gone = [e for e in before if not e.is_summary and encode(e.data) not in kept]
            summary = new.text if new is not None else None
            yield CondensationStep(line, line, view, gone, summary, _view_of(after, new, False))

    def history(self) -> Iterator[Event | None]:
        reader = _Reader(self.path, collect=True, record=True)
        _read_lines(reader, self.source, self.upto)
        calls: dict[str, int] = {}
        key = 0
        for number, payload, body in reader.sent:
            if payload is None:
                yield None
                continue
            event = CodexEvent(payload, body, number)
            event.key = key
            key += 1
            call = event.tool_call_id
            if call is not None and event.is_action:
                calls[call] = event.key
            elif call is not None:
                event.answers = calls.get(call)
            yield event

    def messages(self, view: View) -> Conversion:
        from condense_cli.dialects.codex.messages import convert

        places = {id(e.data): (e.id, e.line) for e in view}
        return convert([e.data for e in view], lambda item: places.get(id(item), (None, None)))

    def view_lines(self) -> Iterator[bytes]:
        """Kept response_item lines byte-for-byte, after one `compacted` line for
        the items that have no line of their own (the original line when they are
        its whole replacement history, else a new one)."""
        events = self.state.history
        cut = max((i + 1 for i, e in enumerate(events) if e.sub != 0), default=0)
        head = events[:cut]
        if head:
            lines = {e.line for e in head}
            line = head[0].line
            original = self.state.compacted_raw.get(line) if line is not None else None
            whole = original is not None and len(lines) == 1 and all(e.sub for e in head)
            if whole and len(head) == _history_length(original):
                yield original + b"\n"  # type: ignore[operator]
            else:
                yield compacted_line(head, self.state.summary) + b"\n"
        for event in events[cut:]:
            assert event.raw is not None
            yield event.raw + b"\n"
        if self.state.request_pending:
            yield request_line() + b"\n"

    def stats(self, tokenizer: Any, reading: Reading = quiet_reading) -> dict[str, Any]:
        from condense_cli.dialects.codex.stats import rollout_stats

        with reading(self.source):
            return rollout_stats(self, tokenizer)

    # --- appending -------------------------------------------------------------------

    def condensation_record(self, view: View, condensation: Condensation) -> Record:
        from condense_cli.core.events import apply_condensation

        after = apply_condensation(view, condensation)
        items = [event.data for event in after.events]
        stamp = _now()
        compacted = {
            "timestamp": stamp,
            "type": "compacted",
            "payload": {"message": condensation.summary or "", "replacement_history": items},
        }
        event = {"timestamp": stamp, "type": "event_msg", "payload": {"type": "context_compacted"}}
        body = encode(compacted) + b"\n" + encode(event)
        return Record(body, f"on line {self.lines + 1}")

    def request_record(self) -> Record:
        return Record(request_line(), f"on line {self.lines + 1}")

    def append(self, record: Record) -> None:
        if self.locked is None:
            raise ValueError("this log was opened read-only")
        self.locked.append_line(record.body, self.source.size)


def _view_of(history: list[CodexEvent], summary: CodexEvent | None, pending: bool) -> View:
    """The view of a history: keys are positions (the summary has none)."""
    events = list(history)
    offset = None
    position = 0
    calls: dict[str, int] = {}
    for index, event in enumerate(events):
        if event is summary:
            event.key = None
            offset = index
            continue
        event.key = position
        position += 1
        call = event.tool_call_id
        if call is not None and event.is_action:
            calls[call] = event.key
        elif call is not None:
            event.answers = calls.get(call)
    return View(
        events,
        unhandled_request=pending,
        summary=summary,
        summary_offset=offset,
        make_summary=_new_summary,
    )


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def request_line() -> bytes:
    payload = {"requested_by": "condense", "note": "condense run will compact this session"}
    return orjson.dumps({"timestamp": _now(), "type": REQUEST, "payload": payload})


def compacted_line(events: list[CodexEvent], summary: CodexEvent | None) -> bytes:
    message = summary.text if summary is not None and summary.item_type == "message" else ""
    items = [e.data for e in events]
    payload = {"message": message, "replacement_history": items}
    return orjson.dumps({"type": "compacted", "payload": payload})


def _history_length(raw: bytes) -> int:
    history = orjson.loads(raw)["payload"]["replacement_history"]
    return len(history)


def _is_sent(item: dict[str, Any]) -> bool:
    """Whether Codex sends this recorded item to the model."""
    kind = item.get("type")
    if not isinstance(kind, str) or kind not in ITEM_TYPES or kind in NOT_SENT:
        return False
    return not (kind == "message" and item.get("role") == "system")


# --- reading -------------------------------------------------------------------------


class _Reader:
    """Validates lines and rebuilds the history; problems are collected or raised."""

    def __init__(self, path: str, collect: bool, record: bool = False) -> None:
        self.path = path
        self.collect = collect
        self.problems: list[Problem] = []
        self.state = _State()
        # With `record`: each compaction (line, history and summary before, after),
        # and every item sent in file order (a request as None), for `history`.
        self.record = record
        self.steps: list[tuple[int, list[CodexEvent], Any, list[CodexEvent], Any]] = []
        self.sent: list[tuple[int, dict[str, Any] | None, bytes]] = []

    def problem(self, line: int | None, message: str, severity: str = "error") -> None:
        if severity == "error" and not self.collect:
            raise LogError(self.path, message, line)
        self.problems.append(Problem(line, message, severity))

    def read_line(self, number: int, body: bytes) -> dict[str, Any] | None:
        try:
            data = decode_line(body)
        except LineProblem as exc:
            self.problem(number, str(exc))
            return None
        kind = data.get("type")
        if not isinstance(kind, str):
            self.problem(number, f'"type" must be a string, not {json_type(kind)}')
            return None
        payload = data.get("payload")
        if kind in LINE_TYPES and kind != REQUEST and not isinstance(payload, dict):
            self.problem(
                number, f'a {kind} line needs an object "payload", not {json_type(payload)}'
            )
            return None
        if kind == "response_item":
            self.item(number, payload, body)
        elif kind == "compacted":
            self.compacted(number, payload, body)
        elif kind == REQUEST:
            self.state.request_pending = True
            self.state.requests += 1
            if self.record:
                self.sent.append((number, None, body))
        elif kind == "event_msg":
            self.event(payload)
        elif kind not in LINE_TYPES:
            self.problem(number, f"unknown line type {kind!r}; Codex skips it", "warning")
        return data

    def item(self, number: int, payload: dict[str, Any], body: bytes) -> None:
        kind = payload.get("type")
        if not isinstance(kind, str):
            self.problem(number, f'a response item needs a string "type", not {json_type(kind)}')
            return
        if kind not in ITEM_TYPES:
            self.problem(
                number, f"unknown response item type {kind!r}; Codex does not send it", "warning"
            )
            return
        if _is_sent(payload):
            self.state.history.append(CodexEvent(payload, body, number))
            if self.record:
                self.sent.append((number, payload, body))

    def compacted(self, number: int, payload: dict[str, Any], body: bytes) -> None:
        state = self.state
        message = payload.get("message")
        history = payload.get("replacement_history")
        before = len(state.history)
        previous, previous_summary = list(state.history), state.summary
        if history is not None:
            if not isinstance(history, list) or not all(isinstance(i, dict) for i in history):
                self.problem(number, "replacement_history must be an array of objects")
                return
            events = [CodexEvent(item, None, number, i) for i, item in enumerate(history, 1)]
            events = [e for e in events if _is_sent(e.data)]
            state.compacted_raw[number] = body
            summaries = [e for e in events if e.marks_summary]
        else:
            if not isinstance(message, str):
                self.problem(number, "a compacted line needs a replacement_history or a message")
                return
            users = [e for e in state.history if e.is_user_turn]
            summary = CodexEvent(summary_item(message), None, number, 1)
            events = [*users, summary]
            summaries = [summary]
        state.history = events
        state.summary = summaries[-1] if summaries else None
        if state.summary is not None:
            state.summary.summary = True
        state.request_pending = False
        summary_chars = len(state.summary.text) if state.summary is not None else None
        says: dict[str, Any] = {"items": len(events)}
        if history is None:
            says["legacy"] = True
        for key in ("window_number",):
            if isinstance(payload.get(key), int):
                says[key] = payload[key]
        if any(e.item_type in ("compaction", "compaction_summary") for e in events):
            says["summary"] = "encrypted (remote compaction)"
        if state.tokens_seen is not None:
            says["tokens_before"] = state.tokens_seen
        state.compactions.append(Compaction(number, before, len(events), summary_chars, says))
        if self.record:
            self.steps.append((number, previous, previous_summary, list(events), state.summary))

    def event(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind == "thread_rolled_back":
            turns = payload.get("num_turns")
            if isinstance(turns, int) and turns > 0:
                self.roll_back(turns)
        elif kind == "token_count":
            info = payload.get("info")
            last = info.get("last_token_usage") if isinstance(info, dict) else None
            total = last.get("total_tokens") if isinstance(last, dict) else None
            if isinstance(total, int):
                self.state.tokens_seen = total

    def roll_back(self, turns: int) -> None:
        """Drop the newest `turns` user turns, as Codex's thread rollback does."""
        history = self.state.history
        starts = [i for i, e in enumerate(history) if e.is_user_turn]
        if not starts:
            return
        cut = starts[0] if turns >= len(starts) else starts[-turns]
        self.state.history = history[:cut]
        if self.state.summary is not None and self.state.summary not in self.state.history:
            self.state.summary = None

    def check_pairs(self) -> None:
        """Calls without outputs and outputs without calls, in the view."""
        calls: dict[str, CodexEvent] = {}
        answered: set[str] = set()
        for event in self.state.history:
            call = event.tool_call_id
            if call is None:
                continue
            if event.is_action:
                calls[call] = event
            elif call not in calls:
                self.problem(
                    event.line,
                    f"{event.item_type} for call {call!r} has no call before it in the view; "
                    "the model would see an answer to nothing",
                )
            else:
                answered.add(call)
        for call, event in calls.items():
            if call not in answered:
                self.problem(
                    event.line,
                    f"{event.item_type} {call!r} has no output in the view; Codex answers it "
                    '"aborted" when the session is resumed',
                    "warning",
                )


def read_rollout(
    source: LogSource, upto: str | None, collect: bool
) -> tuple[_State, list[Problem], int]:
    """Validate and replay a rollout; return its state, problems and lines read."""
    reader = _Reader(source.path, collect)
    lines = _read_lines(reader, source, upto)
    if lines == 0 and not reader.problems:
        reader.problem(None, "the file is empty; a Codex rollout has one JSON object per line")
    reader.check_pairs()
    return reader.state, reader.problems, lines


def _read_lines(reader: _Reader, source: LogSource, upto: str | None) -> int:
    """Feed every line (up to `upto`) to `reader`; return how many were read."""
    limit, wanted = _parse_upto(upto)
    lines = 0
    found = wanted is None
    for number, raw in enumerate(source.raw_lines(), start=1):
        if limit is not None and number > limit:
            break
        lines = number
        body = line_body(raw, first=number == 1)
        if not body.strip():
            continue
        if not raw.endswith(b"\n") and not _complete(body):
            reader.problem(number, "the last line is cut off (torn write); it is not read")
            continue
        data = reader.read_line(number, body)
        if wanted is not None and isinstance(data, dict):
            payload = data.get("payload")
            if isinstance(payload, dict) and wanted in (payload.get("id"), payload.get("call_id")):
                found = True
                break
    if not found:
        raise ConfigError(f"--upto {upto}: {source.path} has no item with this id")
    return lines


def _complete(body: bytes) -> bool:
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError:
        return False
    return True


def _parse_upto(upto: str | None) -> tuple[int | None, str | None]:
    """`--upto`: a line number, or the id of an item (`msg_…`, a call id)."""
    if upto is None:
        return None, None
    if upto.isdigit():
        return int(upto), None
    return None, upto


class Codex(Dialect):
    """Codex CLI: `{"timestamp", "type", "payload"}` lines, response items replayed."""

    name = NAME
    label = "Codex CLI rollout"

    def replay_file(
        self,
        source: LogSource,
        *,
        upto: str | None = None,
        collect: bool = False,
        locked: LockedLog | None = None,
    ) -> Replay:
        state, problems, lines = read_rollout(source, upto, collect)
        return CodexReplay(source, state, problems, lines, locked, upto=upto)
