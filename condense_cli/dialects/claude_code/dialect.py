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
from collections import deque
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

from condense_cli.core.events import Condensation, CondensationRecord, Event, Problem, View
from condense_cli.core.intervals import runs
from condense_cli.core.jsonlines import as_dict, as_str, encode
from condense_cli.core.logfile import LockedLog, LogSource
from condense_cli.dialects.base import (
    CondensationStep,
    Dialect,
    Reading,
    Record,
    Replay,
    quiet_reading,
)
from condense_cli.dialects.claude_code.chain import (
    active_chain,
    preserved_segment,
    read_session,
    walk,
)
from condense_cli.dialects.claude_code.copies import copy_line
from condense_cli.dialects.claude_code.detect import NAME
from condense_cli.dialects.claude_code.events import (
    BASE_FIELDS,
    MESSAGE_TYPES,
    PIN_TYPE,
    REQUEST_TYPE,
    ClaudeEvent,
    each_api_message,
    summary_event,
)
from condense_cli.dialects.claude_code.lines import Line, Session, tool_blocks
from condense_cli.dialects.claude_code.requests import request_problems
from condense_cli.dialects.claude_code.resume import (
    compaction_threshold,
    last_model,
    resume_compaction,
    resume_notes,
    usage_tokens,
)
from condense_cli.dialects.reports import StatsReport, Threshold
from condense_cli.llm.messages import Conversion

if TYPE_CHECKING:
    from condense_cli.core.clientconfig import ClientConfig
    from condense_cli.core.usage import Spending, Usage
    from condense_cli.llm.tokens import Tokenizer

# --- the replay ----------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ClaudeReplay(Replay):
    """A Claude Code session read and replayed to its active chain."""

    dialect = NAME
    provider = "anthropic"
    converts_messages = audits = simulates = appends = pins_in_log = True
    conversion_drops = False  # a result without its call is a problem of the replay
    thresholds_after_steps = True  # the steps' walk keeps the models before (`_made`)

    def __init__(
        self, session: Session, locked: LockedLog | None = None, checking: bool = False
    ) -> None:
        self.session = session
        self.path = session.path
        self.locked = locked
        self.chain = active_chain(session)
        self.events = self._events(self.chain.lines)
        problems = session.problems + self._chain_problems()
        problems += resume_notes(session.lines, self.events)
        if checking:  # the log's own record of what the client sent, a second oracle
            problems += request_problems(session.lines, self._view_from)
        self.problems = sorted(problems, key=lambda p: p.line or 0)
        self._records: list[CondensationRecord] | None = None
        # The size of the view right before each compaction (by its boundary's line),
        # made with the records; and the model that answered last in that view, when
        # they were made while the log was open (for `thresholds`).
        self._sizes_before: dict[int, int] = {}
        self._models_before: dict[int, str | None] | None = None

    def _events(self, lines: list[Line]) -> list[ClaudeEvent]:
        """The events of `lines`, each reading its line's bytes when asked for them
        (from the log while it is open, for the fast path's lines: see `hold`); a
        copy `condense run` wrote is numbered as its original."""
        events: list[ClaudeEvent] = []
        uses: dict[str, int] = {}
        for line in lines:
            if line.type not in MESSAGE_TYPES:
                continue
            key = None if line.compact_summary else line.number
            event = ClaudeEvent(line._data, key, None, line.number, line)
            if line.copy and key is not None:
                original = self.session.by_uuid.get(str(event.copy_of))
                event.number = original.number if original is not None else None
            for use, call in tool_blocks(line.tools) if line.tools else ():
                if use:
                    uses[call] = line.number
                elif event.answers is None and isinstance(call, str):
                    event.answers = uses.get(call)
            events.append(event)
        return events

    # --- check ------------------------------------------------------------------------

    def _view_from(self, leaf: Line | None) -> list[ClaudeEvent]:
        """The view whose newest message is `leaf` (empty for None)."""
        return self._events(active_chain(self.session, leaf).lines) if leaf is not None else []

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
            for use, call in tool_blocks(line.tools) if line.tools else ():
                if use:
                    uses[call] = line.number
                elif isinstance(call, str) and call in uses:  # (a list id cannot be)
                    answered.add(call)
                else:
                    problems.append(
                        Problem(line.number, f"tool_result for {call}: no tool_use before it")
                    )
        last_user = max((x.number for x in lines if x.type == "user"), default=0)
        for call, at in uses.items():
            if call not in answered:
                pending = at > last_user  # the session stopped while the tool ran
                problems.append(
                    Problem(
                        at,
                        f"tool_use {call} has no tool_result"
                        + (
                            ": the session ended while it ran; Claude Code answers it as "
                            "interrupted when the session resumes"
                            if pending
                            else ""
                        ),
                        "warning" if pending else "error",
                    )
                )
        return problems

    # --- view ------------------------------------------------------------------------

    @property
    def forgotten_events(self) -> int:
        return sum(record.forgotten_events for record in self.condensations)

    @property
    def model(self) -> str | None:
        return last_model(self.chain.lines)

    @property
    def condensations(self) -> list[CondensationRecord]:
        return self._made()[0]

    def _made(self, models: bool = False) -> tuple[list[CondensationRecord], dict[int, int]]:
        """The records, and the size of the view before each compaction, made once
        (with `models`, the models before each too: only while the log is open)."""
        if self._records is None or (models and self._models_before is None):
            for _ in self._each_around(models):
                pass
        return self._records or [], self._sizes_before

    def _each_around(self, models: bool) -> Iterator[tuple[Line, list[Line], list[ClaudeEvent]]]:
        """Each compaction's boundary with the view right before it (its messages, as
        lines: most callers only count them) and the view right after it; a walk to
        the end keeps the records and the sizes of the views before, so that the
        views are made once for all of them (not once each). With `models` (the log
        is open: a model's name is read from a line), it keeps the models before."""
        records: list[CondensationRecord] = []
        sizes: dict[int, int] = {}
        found: dict[int, str | None] = {}
        for boundary in self.boundaries():
            before, after = self._messages_before(boundary), self.after(boundary)
            records.append(self._record(boundary, before, after))
            sizes[boundary.number] = len(before)
            if models:
                found[boundary.number] = last_model(before)
            yield boundary, before, after
        self._records, self._sizes_before = records, sizes
        if models:
            self._models_before = found

    def walk_compactions(self) -> None:
        """Make the records, the sizes before and what `thresholds` reads of the views
        before, in one walk of the compactions (the log must be open)."""
        self._made(models=True)

    def size_before(self, boundary: Line) -> int:
        """The number of events in the view right before the compaction at `boundary`."""
        return self._made()[1][boundary.number]

    def boundaries(self) -> list[Line]:
        """The session's compactions (their `compact_boundary` lines), in order."""
        return [line for line in self.session.lines if line.is_boundary]

    def before(self, boundary: Line) -> list[ClaudeEvent]:
        """The view right before the compaction at `boundary`."""
        return self._events(self._messages_before(boundary))

    def _messages_before(self, boundary: Line) -> list[Line]:
        """The lines of the messages of the view right before the compaction at
        `boundary` (an event each)."""
        session = self.session
        logical = session.by_uuid.get(str(boundary.data.get("logicalParentUuid")))
        segment = preserved_segment(boundary)
        if segment is not None and segment[1] == boundary.uuid:
            # "summarize from here": the logical parent is the end of what it kept
            # (the head of the conversation); the conversation went on to the line
            # right before the boundary
            logical = session.line_before(boundary)
        if logical is None:
            return []
        return [x for x in active_chain(session, logical).lines if x.type in MESSAGE_TYPES]

    def after(self, boundary: Line) -> list[ClaudeEvent]:
        """The view right after the compaction at `boundary`."""
        end = _block_end(self.session, boundary)
        return self._events(active_chain(self.session, end).lines)

    @staticmethod
    def _record(boundary: Line, before: list[Line], after: list[ClaudeEvent]) -> CondensationRecord:
        """What the compaction at `boundary` did, from the views around it (the view
        before as the lines of its events: an event's key is its line's number, but a
        summary's, which has none; its uuid is its line's)."""
        kept = {e.copy_of or e.uuid for e in after}
        forgotten = [x.number for x in before if not x.compact_summary and x.uuid not in kept]
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

    def hold(self, view: View) -> None:
        for event in view:
            event.raw = event.raw  # a line the fast path left in the log is read now

    def usage(self) -> list[Usage]:
        from condense_cli.dialects.claude_code.usage import session_usage

        return session_usage(self.session)

    def spending(self) -> Spending:
        from condense_cli.dialects.claude_code.usage import session_spending

        return session_spending(self.session)

    def thresholds(self, client: ClientConfig | None = None) -> dict[int, Threshold]:
        found = {}
        self.walk_compactions()  # the log is open: `boundary.data` is read too
        models = self._models_before or {}
        for boundary in self.boundaries():
            meta = as_dict(boundary.data.get("compactMetadata"))
            version = boundary.data.get("version")
            model = models[boundary.number]
            threshold = compaction_threshold(meta, version, model, client)
            if threshold is not None:
                found[boundary.number] = threshold
        return found

    def resume_figure(self, client: ClientConfig | None = None) -> dict[str, Any] | None:
        compaction = resume_compaction(self.events, None, client)
        return compaction.to_json() if compaction is not None else None

    def compaction_guard(self) -> str | None:
        from condense_cli.dialects.claude_code.guard import guard_reason

        last = (self.condensations[-1].line or 0) if self.condensations else None
        view = [e for e in self.view() if isinstance(e, ClaudeEvent)]
        return guard_reason(self.events, view, last)

    def on_resume(self) -> list[str]:
        compaction = resume_compaction(self.events)
        return [compaction.describe()] if compaction is not None and compaction.near else []

    # --- history -------------------------------------------------------------------------

    def condensation_steps(self) -> Iterator[CondensationStep]:
        for boundary, lines, after in self._each_around(models=True):
            before = self._events(lines)
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
        chain), each once and in file order, copies taken as their originals; each
        reads its line when asked, while the log is open."""
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
        """The view's lines byte for byte, as a session of its own: the compaction's
        boundary first when there is one (a piped view keeps its preserved messages
        and its summary's parent), and a line whose parent is a line the view leaves
        out (an attachment, a progress or system line between two messages) made a
        child of its nearest ancestor in the view, so the chain the client walks is
        the same and `check` finds no dangling parentUuid."""
        emitted: set[str] = set()
        boundary = self.chain.boundary
        if boundary is not None:
            yield boundary.raw + b"\n"
            if boundary.uuid is not None:
                emitted.add(boundary.uuid)
        by_uuid = self.session.by_uuid
        for event in self.events:
            line = event.read_from
            raw = event.to_json()
            if line is not None and line.parent is not None and line.parent not in emitted:
                raw = _relinked(raw, _ancestor_in(line.parent, by_uuid, emitted))
            if line is not None and line.uuid is not None:
                emitted.add(line.uuid)
            yield raw + b"\n"

    def each_message(self, view: View, out: Conversion) -> Iterator[dict[str, Any]]:
        from condense_cli.dialects.claude_code.messages import each_chat_message, resume_repairs

        events, inserted = resume_repairs(view.events)
        out.inserted += inserted
        return each_chat_message(each_api_message(events))

    def stats(self, tokenizer: Tokenizer | None, reading: Reading = quiet_reading) -> StatsReport:
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
        summary = any(e.is_summary for e in after.events)  # `condense`: condense's mark
        meta = {
            "trigger": "manual",
            "preTokens": _context_tokens(view),
            "condense": {"summary": summary},
        }
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
            copy = copy_line(event, base, stamp, parent, new_ids, message_ids)
            lines.append(copy)
            parent = copy["uuid"]
        body = b"\n".join(encode(x) for x in lines)
        return Record(body, boundary_id)

    def request_record(self) -> Record:
        request_id = str(uuidlib.uuid4())
        return Record(self._own_line(REQUEST_TYPE, requestUuid=request_id), request_id)

    def _own_line(self, kind: str, **fields: str) -> bytes:
        """A line of condense's own (the client skips it): its type, `fields`, the
        time and the session's id."""
        leaf = self.chain.lines[-1] if self.chain.lines else None
        session = leaf.data.get("sessionId") if leaf is not None else None
        line = {"type": kind, **fields, "timestamp": _now(), "sessionId": session}
        return orjson.dumps(line)

    def append(self, record: Record) -> None:
        if self.locked is None:
            raise ValueError("this session was opened read-only")
        self.locked.append_line(record.body, self.session.size)

    def log_pins(self) -> list[str]:
        found = (as_str(x.data.get("pin")) for x in self.session.lines if x.type == PIN_TYPE)
        return list(dict.fromkeys(pin for pin in found if pin))

    def pin_record(self, text: str) -> Record:
        return Record(self._own_line(PIN_TYPE, pin=text), text)


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
            return usage_tokens(usage, output=False)
    return 0


# --- the dialect ---------------------------------------------------------------------


class ClaudeCode(Dialect):
    """Claude Code: a tree of lines linked by uuid, one session per file."""

    name = NAME
    label = "Claude Code session"

    def usage_of(self, path: str, source: LogSource | None) -> list[Usage] | None:
        from condense_cli.dialects.claude_code.usage import file_usage

        return file_usage(source) if source is not None else super().usage_of(path, source)

    def replay_file(
        self,
        source: LogSource,
        *,
        upto: str | None = None,
        collect: bool = False,
        locked: LockedLog | None = None,
    ) -> Replay:
        session = read_session(source, upto=upto, collect=collect)
        return ClaudeReplay(session, locked, checking=collect)


def _ancestor_in(parent: str, by_uuid: dict[str, Line], emitted: set[str]) -> str | None:
    """The nearest of `parent` and its ancestors that is in `emitted` (None: none is)."""
    seen: set[str] = set()
    current: str | None = parent
    while current is not None and current not in emitted and current not in seen:
        seen.add(current)
        line = by_uuid.get(current)
        current = line.parent if line is not None else None
    return current if current in emitted else None


def _relinked(raw: bytes, parent: str | None) -> bytes:
    """A session line with its `parentUuid` set to `parent` (the rest as it was)."""
    data = orjson.loads(raw)
    data["parentUuid"] = parent
    return orjson.dumps(data)
