"""Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-*.jsonl`), replayed the
way the client loads one when it resumes (`session.py`).

Every message is an event, numbered from 1 in the order it first appears; a
message a compression kept under a new id has its original's number. The view is
the client's list as it stands, less what the client never sends (its notes of
`info`, `error` and `warning`, slash commands); its context message leads it. A
compression is a condensation: what it left out is forgotten, and its state
snapshot is the summary.

`run` appends what a compression writes, a `$set` of the whole list: the condensed
view, a new summary as a user message of its own; the client loads it as it loads
its own (the real-client tests resume such a session). `request` appends a record
the client passes over (`session.REQUEST`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from condense_cli.core.events import (
    Condensation,
    CondensationRecord,
    Event,
    Problem,
    View,
    apply_condensation,
)
from condense_cli.core.intervals import runs
from condense_cli.core.jsonlines import as_dict, encode
from condense_cli.core.logfile import LockedLog, LogSource
from condense_cli.dialects.base import (
    Capability,
    CondensationStep,
    Dialect,
    Gap,
    Record,
    Replay,
    Unsupported,
)
from condense_cli.dialects.gemini_cli.detect import NAME
from condense_cli.dialects.gemini_cli.events import (
    GeminiEvent,
    is_context,
    is_sent,
    new_snapshot,
    response_parts,
)
from condense_cli.dialects.gemini_cli.session import (
    CONDENSED,
    REQUEST,
    SNAPSHOT,
    Session,
    read_session,
)
from condense_cli.dialects.gemini_cli.threshold import CLIENT, compression_threshold, standing
from condense_cli.dialects.reports import Threshold
from condense_cli.llm.messages import Conversion

if TYPE_CHECKING:
    from condense_cli.core.clientconfig import ClientConfig
    from condense_cli.core.usage import Spending, Usage


def shown(events: list[GeminiEvent]) -> list[GeminiEvent]:
    """What the model reads of a list: its context and what the client sends."""
    return [e for e in events if is_sent(e.data) or is_context(e.data)]


def view_of(events: list[GeminiEvent], keys: dict[int, int]) -> View:
    """A view of a list's events, each at the key of its number in the history
    (`keys`; a snapshot has none), each result answering its call's key."""
    kept: list[GeminiEvent] = []
    offset, summary = None, None
    calls: dict[str, int | None] = {}
    for event in shown(events):
        if event.snapshot:
            offset, summary = len(kept), event.placed(None)
            kept.append(summary)
            continue
        placed = event.placed(keys.get(event.number))
        _pair(placed, calls)
        kept.append(placed)
    return View(
        cast(list[Event], kept),
        summary=summary,
        summary_offset=offset,
        make_summary=new_snapshot,
    )


def in_history(session: Session) -> list[GeminiEvent]:
    """Every event the model read, by number: a rewind's are gone, as for the
    client, and so are snapshots (a condensation's, not the agent's)."""
    return [
        e
        for e in session.events
        if e.number not in session.rewound and not e.snapshot and shown([e])
    ]


def _pair(event: GeminiEvent, calls: dict[str, int | None]) -> None:
    call = event.tool_call_id
    if call is not None and event.is_action:
        calls[call] = event.key
    elif call is not None:
        event.answers = calls.get(call)


class GeminiReplay(Replay):
    """A session read and replayed: the client's list, and the compressions met."""

    dialect = NAME
    provider = "gemini"
    converts_messages = audits = simulates = appends = True

    def __init__(
        self,
        source: LogSource,
        session: Session,
        problems: list[Problem],
        locked: LockedLog | None = None,
    ) -> None:
        self.locked = locked
        self.source = source
        self.path = source.path
        self.session = session
        self.problems = problems
        self.keys = {e.number: key for key, e in enumerate(in_history(session)) if e.number}

    @property
    def model(self) -> str | None:
        return self.session.model

    def require(self, flag: Capability) -> None:
        if flag == "appends" and self.session.document:
            raise Unsupported(
                f"{self.path}: appending is not supported for a Gemini CLI session kept as "
                "one JSON document (2025 releases): the client rewrites such a file whole, "
                "and condense appends only to the JSON lines sessions of later releases"
            )
        super().require(flag)

    @property
    def forgotten_events(self) -> int:
        shown_now = {e.number for e in self.session.listed()}
        forgotten = {e.number for c in self.session.compressions for e in c.forgotten}
        return len(forgotten - shown_now)

    @property
    def condensations(self) -> list[CondensationRecord]:
        records = []
        first: set[int] = set()
        for compression in self.session.compressions:
            numbers = sorted(e.number for e in compression.forgotten)
            new = [n for n in numbers if n not in first]
            first.update(numbers)
            snapshot = compression.snapshot
            records.append(
                CondensationRecord(
                    compression.line,
                    compression.line,
                    runs(numbers),
                    len(numbers),
                    len(snapshot.text) if snapshot is not None else None,
                    len(shown(compression.after)),
                    runs(new),
                )
            )
        return records

    def view(self) -> View:
        view = view_of(self.session.listed(), self.keys)
        return view.with_request() if self.session.request_pending else view

    def view_lines(self) -> Iterator[bytes]:
        """The header, then each message of the view as its own record (the line it
        was read from when it had one)."""
        yield encode(self.session.header) + b"\n"
        view = self.view()
        for event in view:
            marked = encode(event.data | {SNAPSHOT: True}) if event.is_summary else None
            yield (marked or event.to_json()) + b"\n"
        if view.unhandled_request:
            yield encode(REQUEST_RECORD) + b"\n"

    def gaps(self) -> list[Gap]:
        """Each run of the history's events a compression forgot, by that compression
        (a rewind's, or a message the client dropped on its own, is no gap)."""
        by: dict[object, int] = {
            e.number: c.line for c in self.session.compressions for e in c.forgotten
        }
        shown = {e.id for e in self.view() if not e.is_summary}
        gaps: list[Gap] = []
        kept, run, line = 0, list[object](), 0
        for event in self.history():
            if event is None:
                continue
            number = event.id
            if run and (number in shown or by.get(number, line) != line):
                gaps.append(Gap(kept, len(run), run[0], run[-1], line))
                run = []
            if number in shown:
                kept += 1
            elif number in by:
                run.append(number)
                line = by[number]
        if run:
            gaps.append(Gap(kept, len(run), run[0], run[-1], line))
        return gaps

    def each_message(self, view: View, out: Conversion) -> Iterator[dict[str, Any]]:
        from condense_cli.dialects.gemini_cli.messages import view_messages

        return view_messages(cast(list[GeminiEvent], view.events), out)

    def history(self) -> Iterator[Event | None]:
        """Every event the model read, by number (`in_history`)."""
        calls: dict[str, int | None] = {}
        for key, event in enumerate(in_history(self.session)):
            placed = event.placed(key)
            _pair(placed, calls)
            yield placed

    def condensation_steps(self) -> Iterator[CondensationStep]:
        for compression in self.session.compressions:
            snapshot = compression.snapshot
            yield CondensationStep(
                compression.line,
                compression.line,
                view_of(compression.before, self.keys),
                [e.placed(self.keys.get(e.number)) for e in compression.forgotten],
                snapshot.text if snapshot is not None else None,
                view_of(compression.after, self.keys),
            )

    def unheard_compaction(self) -> CondensationStep | None:
        """Gemini CLI has no hook after a compression; the one before each prompt
        (`BeforeAgent`) reads the session before the prompt is written, so a
        compression with no typed message on a line after it is news to the model."""
        compressions = self.session.compressions
        if not compressions:
            return None
        if self.session.typed_line > compressions[-1].line:
            return None
        return list(self.condensation_steps())[-1]

    def resume_figure(self, client: ClientConfig | None = None) -> dict[str, Any] | None:
        session = self.session
        found = standing(session.model, session.prompt_tokens, session.tokens_line, client)
        return found.to_json() if found is not None else None

    def usage(self) -> list[Usage]:
        from condense_cli.dialects.gemini_cli.usage import session_usage

        return session_usage(self.source)

    def spending(self) -> Spending:
        """The session's calls and its compressions among them (the client records no
        call of a compression's own)."""
        from condense_cli.core.usage import placed

        lines = [c.line for c in self.session.compressions]
        return placed(self.usage(), lines, {})

    def thresholds(self, client: ClientConfig | None = None) -> dict[int, Threshold]:
        found = {}
        for compression in self.session.compressions:
            threshold = compression_threshold(self.session.model, compression.prompt_tokens, client)
            if threshold is not None:
                found[compression.line] = threshold
        return found

    # --- appending -------------------------------------------------------------------

    def condensation_record(self, view: View, condensation: Condensation) -> Record:
        after = apply_condensation(view, condensation)
        listed = [event.data for event in after.events]
        record = {"$set": {"messages": listed}, CONDENSED: {"by": "condense"}}
        return Record(encode(record), f"on line {self.session.lines + 1}")

    def request_record(self) -> Record:
        return Record(encode(REQUEST_RECORD), f"on line {self.session.lines + 1}")

    def append(self, record: Record) -> None:
        if self.locked is None:
            raise ValueError("this log was opened read-only")
        self.locked.append_line(record.body, self.source.size)


REQUEST_RECORD = {REQUEST: {"requestedBy": "condense", "note": "condense run will compress this"}}


class GeminiCli(Dialect):
    """Gemini CLI: a header, message records, `$set` and `$rewindTo`, as JSON lines."""

    name = NAME
    label = "Gemini CLI session"

    def usage_of(self, path: str, source: LogSource | None) -> list[Usage] | None:
        from condense_cli.dialects.gemini_cli.usage import session_usage

        return session_usage(source) if source is not None else super().usage_of(path, source)

    def replay_file(
        self,
        source: LogSource,
        *,
        upto: str | None = None,
        collect: bool = False,
        locked: LockedLog | None = None,
    ) -> Replay:
        session, problems = read_session(source, upto, collect)
        replay = GeminiReplay(source, session, problems, locked)
        if upto is None:
            problems += [Problem(line, said, "note") for line, said in client_notes(replay)]
        return replay


def client_notes(replay: GeminiReplay) -> Iterator[tuple[int | None, str]]:
    """What the client does with this session that a reader would not expect."""
    answered: dict[str, int] = {}
    twice: list[tuple[int, str, int, int]] = []  # line, call, first, second
    for event in replay.session.listed():
        parts = response_parts(event.data) if event.message_type == "gemini" else []
        responses = [as_dict(p.get("functionResponse")) for p in parts] or event.responses
        for response in responses:
            call = response.get("id")
            if not isinstance(call, str):
                continue
            if call in answered:
                twice.append((event.line, call, answered[call], event.number))
            answered.setdefault(call, event.number)
    if twice:
        line, call, first, second = twice[0]
        more = f" (and {len(twice) - 1:,} more)" if len(twice) > 1 else ""
        yield (
            line,
            (
                f"{CLIENT} sends the result of call {call} twice when it resumes this session "
                f"(#{first} and #{second}){more}: the model reads each such result twice"
            ),
        )
    if not any(is_sent(e.data) for e in replay.session.listed()):
        header = replay.session.header
        suffix = str(header.get("sessionId", ""))[:8]
        here = Path(replay.path)
        others = [
            p.name
            for p in here.parent.glob(f"session-*-{suffix}.json*")
            if suffix and p != here and p.is_file()
        ]
        if others:
            yield (
                None,
                (
                    "this file holds only the start of a run of the client (its context); the "
                    f"conversation of session {header.get('sessionId')} is in {sorted(others)[-1]}"
                ),
            )
