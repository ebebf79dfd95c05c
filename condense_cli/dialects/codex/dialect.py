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
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import orjson

from condense_cli.core.events import Condensation, CondensationRecord, Event, Problem, View
from condense_cli.core.jsonlines import encode
from condense_cli.core.logfile import LockedLog, LogSource
from condense_cli.dialects.base import (
    CondensationStep,
    Dialect,
    Reading,
    Record,
    Replay,
    quiet_reading,
)
from condense_cli.dialects.codex.detect import NAME, REQUEST
from condense_cli.dialects.codex.items import CodexEvent, new_summary
from condense_cli.dialects.codex.reading import History, Reader, history_length
from condense_cli.dialects.codex.resume import (
    ResumeCompaction,
    after_compaction,
    compaction_threshold,
    resume_compaction,
)
from condense_cli.dialects.codex.rollout import feed_lines, read_rollout
from condense_cli.dialects.reports import StatsReport, Threshold
from condense_cli.llm.messages import Conversion

if TYPE_CHECKING:
    from condense_cli.core.clientconfig import ClientConfig
    from condense_cli.core.usage import Spending, Usage
    from condense_cli.llm.tokens import Tokenizer


class CodexReplay(Replay):
    """A rollout read and replayed: the history Codex keeps, each item where its line
    is in the log (a big rollout's items are read back when asked for)."""

    dialect = NAME
    provider = "openai"
    converts_messages = audits = simulates = appends = True
    steps_start_anywhere = True  # after a compaction that replaced the history

    def __init__(
        self,
        source: LogSource,
        state: History,
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
        return sum(c.forgot for c in self.state.compactions)

    @property
    def model(self) -> str | None:
        return self.state.model

    @property
    def condensations(self) -> list[CondensationRecord]:
        return [
            CondensationRecord(
                c.id, c.line, [], c.forgot, c.summary_chars, c.after, view_size_before=c.before
            )
            for c in self.state.compactions
        ]

    def view(self) -> View:
        return _view_of(self.state.history, self.state.summary, self.state.request_pending)

    def resume_compaction(self, client: ClientConfig | None = None) -> ResumeCompaction | None:
        """Where the rollout stands against the client's auto-compact limit."""
        state = self.state
        return resume_compaction(self.path, state.token_info, state.token_line, client)

    def resume_figure(self, client: ClientConfig | None = None) -> dict[str, Any] | None:
        compaction = self.resume_compaction(client)
        return compaction.to_json() if compaction is not None else None

    def usage(self) -> list[Usage]:
        from condense_cli.dialects.codex.usage import rollout_usage

        return self.state.calls(self.source) if self.upto is None else rollout_usage(self.source)

    def spending(self) -> Spending:
        from condense_cli.dialects.codex.usage import rollout_spending

        # (the compactions of a fork's base rollout are in another file)
        made = [c for c in self.state.compactions if not c.origin]
        # the calls its read took, when it read the whole rollout
        taken = self.state.calls(self.source) if self.upto is None else None
        return rollout_spending(self.source, [(c.line, "by" in c.says) for c in made], taken)

    def thresholds(self, client: ClientConfig | None = None) -> dict[int, Threshold]:
        state = self.state
        found = {}
        for c in state.compactions:
            if "by" in c.says:  # condense's, or the model's reset: no limit of Codex's
                continue
            tokens = c.says.get("tokens_before")
            threshold = compaction_threshold(self.path, state.token_info, tokens, client)
            if threshold is not None:
                found[c.line] = threshold
        return found

    def on_resume(self) -> list[str]:
        compaction = self.resume_compaction()
        return [compaction.describe()] if compaction is not None and compaction.over else []

    # --- history -------------------------------------------------------------------------

    def forked(self) -> None:
        self.source.detach()  # its steps read the log again, line by line

    def condensation_steps(self) -> Iterator[CondensationStep]:
        if not self.state.compactions:
            return  # never compacted: nothing to read again
        yield from self._steps((0, 0))

    def condensation_steps_from(self, first: int) -> Iterator[CondensationStep]:
        """From the `first`-th compaction on, read from the compaction before it when
        that one replaced the whole history (a `replacement_history`) in this rollout:
        the steps after it depend on nothing before. Else from the start."""
        state = self.state
        compactions = state.compactions
        if (
            self.upto is not None
            or not 1 < first <= len(compactions)
            or any(c.origin for c in compactions)  # a fork's base has its own
            or compactions[first - 2].line not in state.compacted_raw
        ):
            yield from super().condensation_steps_from(first)
            return
        line = compactions[first - 2].line
        steps = self._steps((self.source.line_start(line), line - 1))
        next(steps)  # that compaction's own step: the history before it is not read
        yield from steps

    def _steps(self, begin: tuple[int, int]) -> Iterator[CondensationStep]:
        """The steps of the compactions from `begin` (an offset, and the lines before
        it) on."""
        reader = Reader(self.path, collect=True, keep_steps=True)
        for _ in feed_lines(reader, self.source, self.upto, begin):
            steps, reader.steps = reader.steps, []
            for line, before, old, after, new in steps:
                view = _view_of(before, old, False)
                kept = {encode(e.data) for e in after}
                # An item of a kind `after` has none of is not kept, and is not parsed
                # to say so: the fast path's items know their kind.
                kinds = {e.item_type for e in after}
                gone = [
                    e
                    for e in before
                    if not e.is_summary and (e.item_type not in kinds or encode(e.data) not in kept)
                ]
                summary = new.text if new is not None else None
                after_view = _view_of(after, new, False)
                yield CondensationStep(line, line, view, gone, summary, after_view)

    def history(self) -> Iterator[Event | None]:
        reader = Reader(self.path, collect=True, keep_sent=True)
        calls: dict[str, int | None] = {}
        key = 0
        for _ in feed_lines(reader, self.source, self.upto):
            sent, reader.sent = reader.sent, []
            for event in sent:
                if event is None:
                    yield None
                    continue
                event.key = key
                key += 1
                _pair(event, calls)
                yield event

    def hold(self, view: View) -> None:
        for event in view:
            event.data = event.data  # an item the fast path left in the log is parsed

    def each_message(self, view: View, out: Conversion) -> Iterator[dict[str, Any]]:
        from condense_cli.dialects.codex.messages import view_messages

        return view_messages(cast(list[CodexEvent], view.events), out)

    def conversion_cut(self, view: View) -> int | None:
        from condense_cli.dialects.codex.messages import conversion_cuts

        return next(conversion_cuts(cast(list[CodexEvent], view.events)), None)

    def conversion_changes(self, view: View) -> Conversion:
        from condense_cli.dialects.codex.messages import view_changes

        return view_changes(cast(list[CodexEvent], view.events))

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
            if original is not None and whole and len(head) == history_length(original):
                yield original + b"\n"
            else:
                yield compacted_line(head, self.state.summary) + b"\n"
        for event in events[cut:]:
            raw = event.raw
            assert raw is not None
            yield raw + b"\n"
        if self.state.request_pending:
            yield request_line() + b"\n"

    def stats(self, tokenizer: Tokenizer | None, reading: Reading = quiet_reading) -> StatsReport:
        from condense_cli.dialects.codex.stats import rollout_stats

        with reading(self.source):
            return rollout_stats(self, tokenizer)

    # --- appending -------------------------------------------------------------------

    def condensation_record(self, view: View, condensation: Condensation) -> Record:
        from condense_cli.core.events import apply_condensation

        after = apply_condensation(view, condensation)
        items = [event.data for event in after.events]
        payload = {"message": condensation.summary or "", "replacement_history": items}
        lines = [
            self.line("compacted", payload, 0),
            self.line("event_msg", {"type": "context_compacted"}, 1),
        ]
        state = self.state
        if state.token_info is not None and state.tokens_seen is not None:
            # what Codex writes after its own compaction: without it, the old count
            # makes Codex compact the condensed thread again as soon as it resumes
            sizes = [sum(len(encode(e.data)) for e in v.events) for v in (view, after)]
            count = after_compaction(state.token_info, state.rate_limits, state.tokens_seen, *sizes)
            lines.append(self.line("event_msg", count, 2))
        return Record(b"\n".join(map(encode, lines)), f"on line {self.lines + 1}")

    def request_record(self) -> Record:
        return Record(encode(self.line(REQUEST, REQUEST_PAYLOAD, 0)), f"on line {self.lines + 1}")

    def line(self, kind: str, payload: dict[str, Any], index: int) -> dict[str, Any]:
        """The `index`-th new line: numbered after the last line read when the rollout
        is paginated, the way Codex numbers the lines it appends."""
        line: dict[str, Any] = {"timestamp": _now()}
        if self.state.paginated and self.state.next_ordinal is not None:
            line["ordinal"] = self.state.next_ordinal + index
        return line | {"type": kind, "payload": payload}

    def append(self, record: Record) -> None:
        if self.locked is None:
            raise ValueError("this log was opened read-only")
        self.locked.append_line(record.body, self.source.size)


def _view_of(history: list[CodexEvent], summary: CodexEvent | None, pending: bool) -> View:
    """The view of a history: keys are positions (the summary has none)."""
    events = list(history)
    offset = None
    position = 0
    calls: dict[str, int | None] = {}
    for index, event in enumerate(events):
        if event is summary:
            event.key = None
            offset = index
            continue
        event.key = position
        position += 1
        _pair(event, calls)
    return View(
        cast(list[Event], events),
        unhandled_request=pending,
        summary=summary,
        summary_offset=offset,
        make_summary=new_summary,
    )


def _pair(event: CodexEvent, calls: dict[str, int | None]) -> None:
    """Pair tool calls and outputs by call id: a call's key is remembered in `calls`,
    an output answers the key of its call (None when no call came before it)."""
    call = event.tool_call_id
    if call is not None and event.is_action:
        calls[call] = event.key
    elif call is not None:
        event.answers = calls.get(call)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


REQUEST_PAYLOAD = {"requested_by": "condense", "note": "condense run will compact this session"}


def request_line() -> bytes:
    return orjson.dumps({"timestamp": _now(), "type": REQUEST, "payload": REQUEST_PAYLOAD})


def compacted_line(events: list[CodexEvent], summary: CodexEvent | None) -> bytes:
    message = summary.text if summary is not None and summary.item_type == "message" else ""
    items = [e.data for e in events]
    payload = {"message": message, "replacement_history": items, "condense": True}
    return orjson.dumps({"type": "compacted", "payload": payload})


class Codex(Dialect):
    """Codex CLI: `{"timestamp", "type", "payload"}` lines, response items replayed."""

    name = NAME
    label = "Codex CLI rollout"

    def usage_of(self, path: str, source: LogSource | None) -> list[Usage] | None:
        from condense_cli.dialects.codex.usage import rollout_usage

        return rollout_usage(source) if source is not None else super().usage_of(path, source)

    def replay_file(
        self,
        source: LogSource,
        *,
        upto: str | None = None,
        collect: bool = False,
        locked: LockedLog | None = None,
    ) -> Replay:
        state, problems, lines = read_rollout(source, upto, collect)
        replay = CodexReplay(source, state, problems, lines, locked, upto=upto)
        compaction = replay.resume_compaction() if upto is None else None
        if compaction is not None and compaction.over:
            problems.append(Problem(compaction.line, compaction.describe(), "warning"))
        return replay
