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
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from condense_cli.core.errors import CondenserError, LogError
from condense_cli.core.events import (
    Condensation,
    CondensationRecord,
    Event,
    View,
    apply_condensation,
)
from condense_cli.core.intervals import runs
from condense_cli.core.jsonlines import as_dict
from condense_cli.core.logfile import LockedLog, LogSource
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
    NAME,
    OBSERVATION_KINDS,
    SUMMARY_KIND,
)
from condense_cli.dialects.reports import StatsReport, Threshold
from condense_cli.llm.messages import Conversion

if TYPE_CHECKING:
    from condense_cli.core.clientconfig import ClientConfig
    from condense_cli.core.usage import Spending, Usage
    from condense_cli.dialects.counting import TextCounts
    from condense_cli.dialects.openhands_v1.steps import Step
    from condense_cli.llm.tokens import Tokenizer

from condense_cli.dialects.openhands_v1.appending import (
    locked_events,
    new_condensation,
    new_condensation_request,
)
from condense_cli.dialects.openhands_v1.events import V1Event, month_name, unit_heads
from condense_cli.dialects.openhands_v1.facts import Entry, Summary, summary_of
from condense_cli.dialects.openhands_v1.generations import detect_generation, newest_date
from condense_cli.dialects.openhands_v1.replay import Replayed, cut_at, replay
from condense_cli.dialects.openhands_v1.storage import (
    MULTI_SUMMARY,
    Conversation,
    ReadCounting,
    StoredEvent,
    TextOf,
    read_folder,
    read_lines,
)

Made = dict[tuple[int, int | None], V1Event]  # events made for views, by position and unit
# A step's view after it keeps its events' facts (what `audit` reads of them) when their
# files come to at most this: the next step forgets most of them and asks again.
FACTS_KEPT_BYTES = 16 << 20


# The condensations' records; each one's line, the size of the view before it and
# whether a request was pending then.
Walked = tuple[list[CondensationRecord], list[tuple[int, int, bool]]]


class V1Replay(Replay):
    """A V1 conversation read and replayed the way the generation that wrote it did."""

    dialect = NAME
    converts_messages = audits = simulates = appends = True
    conversion_drops = False  # the view itself leaves out unmatched calls, as the SDK does
    steps_start_anywhere = True  # the walk up to the first step makes no view

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
        self._walk: Walked | None = None

    @property
    def keyed_summaries(self) -> bool:
        """Whether summaries can be forgotten by id (the multi-summary SDK)."""
        return self.detected.name == MULTI_SUMMARY

    @property
    def generation(self) -> str:
        newest = newest_date(self.conversation.records)
        return f"{self.detected.name} SDK" + (f" ({month_name(newest)})" if newest else "")

    @property
    def generation_reason(self) -> str:
        return self.detected.reason

    @property
    def forgotten_events(self) -> int:
        return self.replayed.forgotten

    @property
    def model(self) -> str | None:
        """The model of the agent's LLM in base_state.json."""
        agent = as_dict(as_dict(self.conversation.base_state).get("agent"))
        model = as_dict(agent.get("llm")).get("model")
        return model if isinstance(model, str) else None

    # --- the view --------------------------------------------------------------------

    def view(self) -> View:
        return self._view_of(self.replayed.events, self.replayed.pending_request)

    def _view_of(
        self,
        entries: Sequence[Entry],
        pending_request: bool,
        made: Made | None = None,
        into: Made | None = None,
    ) -> View:
        """The view of `entries`: its events are taken from `made` (those of earlier
        views, by position and unit) when there, and each is put `into` (so that a
        walk over the history reads an event's file once, not once a view)."""
        heads = unit_heads(entries)
        keys: dict[str, int | None] = {}
        events: list[Event] = []
        for entry in entries:
            if isinstance(entry, Summary):
                key = entry.condensation.position if self.keyed_summaries else None
                event = V1Event(entry.to_dict(), key, None)
            else:
                head = heads.get(entry.id)
                unit = keys.get(head) if head is not None else None
                found = made.get((entry.position, unit)) if made is not None else None
                event = found if found is not None else V1Event.of(entry, unit)
                if into is not None:
                    into[(entry.position, unit)] = event
            keys[event.id] = event.key
            events.append(event)
        summary, offset = self._latest_summary(entries, events)
        return View(events, pending_request, summary, offset, None, self._make_summary)

    # --- history -------------------------------------------------------------------------

    def _steps(self, first: int) -> Iterator[Step]:
        """Each condensation from the `first`-th on replayed with the views around it,
        in one walk (which makes no view before the first)."""
        from condense_cli.dialects.openhands_v1.steps import steps

        return steps(self.conversation, self.detected, self.replayed.condensations[first - 1 :])

    def condensation_steps(self) -> Iterator[CondensationStep]:
        return self.condensation_steps_from(1)

    @property
    def step_count(self) -> int:
        return len(self.replayed.condensations)  # without the walk `condensations` makes

    def condensation_steps_from(self, first: int) -> Iterator[CondensationStep]:
        last: Made = {}  # the events of the step before: most are in this step's views
        for step in self._steps(first):
            condensation = step.condensation
            made: Made = {}
            before = self._view_of(step.before, step.pending_before, last, made)
            after = self._view_of(step.after, False, made, made)
            _keep_facts_of(after, last, made)
            last = made
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
            records = records[: cut_at(list(records), self.upto, self.path)]
        for record in records:
            if record.kind == CONDENSATION_REQUEST:
                yield None
            elif record.sent and record.kind not in (CONDENSATION, SUMMARY_KIND):
                yield V1Event.of(record)  # its file read when asked, while the log is open

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

    def each_message(self, view: View, out: Conversion) -> Iterator[dict[str, Any]]:
        from condense_cli.dialects.openhands_v1.messages import each_message

        return each_message(view.events, merge_user_turns=self.keyed_summaries)

    @property
    def counted_while_read(self) -> bool:
        return self.conversation.counted is not None

    def conversion_cut(self, view: View) -> int | None:
        """The first tool result past the middle: a tool message, which neither joins
        the message before it nor takes in the next, and the SDK's conversion keeps
        no other state (`messages.each_message`)."""
        events = view.events
        for at in range(len(events) // 2, len(events)):
            stored = getattr(events[at], "stored", None)  # None for a summary
            if stored is not None and stored.kind in OBSERVATION_KINDS:
                return at
        return None

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
        return self._walked()[0]

    def _walked(self) -> Walked:
        """One walk over the condensations for what `stats` asks of them twice: their
        records, and (for the thresholds) the size of the view before each, with
        whether a request was pending then."""
        if self._walk is None:
            records, befores = [], []
            # every event's key by its id: made only when a condensation may ask for it
            keys = {v: k for k, v in self._ids_by_key().items()} if self.step_count else {}
            for step in self._steps(1):
                record = self._condensation_record(step, keys)
                records.append(record)
                befores.append((record.line, len(step.before), step.pending_before))
            self._walk = records, befores
        return self._walk

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

    def stats(self, tokenizer: Tokenizer | None, reading: Reading = quiet_reading) -> StatsReport:
        from condense_cli.dialects.counting import (
            Places,
            TextCounts,
            condensation_rows,
            largest_first,
            sizes,
        )

        records = self.conversation.records
        by_type: dict[str, dict[str, int]] = {}
        for record in records:
            tool = record.tool
            tool_event = record.kind == ACTION or record.kind in OBSERVATION_KINDS
            name = f"{record.kind}:{tool}" if tool_event and isinstance(tool, str) else record.kind
            slot = by_type.setdefault(name, {"events": 0, "bytes": 0})
            slot["events"] += 1
            slot["bytes"] += record.size
        view = self.view()
        sent = [r for r in records if r.sent]
        counts, counted = self.conversation.counts, self.conversation.counted
        if counts is None or counted is None or counts.tokenizer is not tokenizer:
            counts, text_of = TextCounts(tokenizer), _text_of()
            counted = counts.walk_log(
                sent,
                lambda r: text_of(r, *r.parsed()),
                sum(r.size for r in sent),
                reads=self.conversation.events_dir is not None,  # a folder: a file an event
            )
        # the view's events are the log's: their counts are taken, not made again
        places = Places(counts, [r.position for r in sent], counted)
        known: dict[int, int] = {}  # the view's counts, for its messages
        seen = places.tally(view, _position, known)
        self.token_counts = known
        rows = condensation_rows(self.condensations)
        return StatsReport(
            self.dialect,
            self.path,
            sum(r.size for r in records),
            len(records),
            len(sent),
            largest_first(by_type),
            rows,
            sum(1 for r in records if r.kind == CONDENSATION_REQUEST),
            self.replayed.pending_request,
            len(view),
            self.forgotten_events,
            *sizes(counted.full, seen, tokenizer),
            generation=(self.generation, self.generation_reason),
        )

    def usage(self) -> list[Usage]:
        from condense_cli.dialects.openhands_v1.usage import conversation_usage

        return conversation_usage(self.conversation.base_state)

    def spending(self) -> Spending:
        from condense_cli.dialects.openhands_v1.usage import conversation_spending

        return conversation_spending(self.conversation.base_state, self.conversation.records)

    def thresholds(self, client: ClientConfig | None = None) -> dict[int, Threshold]:
        """Each condensation against the condenser's `max_size` that the folder's
        `base_state.json` records (or the `[condenser]` of `client`, an OpenHands
        `config.toml`): the SDK condenses a view of more events than that; one a
        `CondensationRequest` asked for is manual."""
        from condense_cli.dialects.openhands_sizes import (
            configured_max_size,
            max_size_of,
            size_threshold,
        )

        found = configured_max_size(client) if client is not None else None
        if found is None:
            agent = as_dict(as_dict(self.conversation.base_state).get("agent"))
            condenser = as_dict(agent.get("condenser"))
            size = max_size_of(condenser)
            if size is None:
                return {}
            found = size, f"max_size {size} of the {condenser.get('kind')} in base_state.json"
        max_size, source = found
        return {  # (a view has an event for each entry)
            line: size_threshold(size, max_size, source, pending)
            for line, size, pending in self._walked()[1]
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
        counts: TextCounts | None = None,
    ) -> Iterator[Replay]:
        if source is not None:
            with super().reading(
                path, source, upto=upto, collect=collect, reading=reading
            ) as replay:
                yield replay
            return
        # each event file is parsed here: what `stats` counts is counted as it is
        counting = ReadCounting(counts, _text_of()) if counts is not None else None
        conversation = read_folder(path, counting)
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


def _text_of() -> TextOf:
    """What the model reads of a stored event, parsed as `data` from `raw`: the counting
    module is imported here, once a read or a walk (only `stats` counts), not an event."""
    from condense_cli.core.events import model_text

    def text_of(record: StoredEvent, data: dict[str, Any], raw: bytes) -> str:
        return model_text(V1Event(data, record.position, raw))

    return text_of


def _position(event: Event) -> int | None:
    """The position of the stored event an event of a view is (None for a summary)."""
    stored = event.stored if isinstance(event, V1Event) else None
    return stored.position if stored is not None else None


def _keep_facts_of(after: View, last: Made, made: Made) -> None:
    """Let the events of the step before that this step's views no longer hold let go
    of their facts, and the view after this step keep its events' facts once made
    (while their files come to at most `FACTS_KEPT_BYTES`): at most two views' facts
    are held, however long the walk."""
    for key, event in last.items():
        if key not in made:
            event.keep_facts(False)
    events = [e for e in after.events if isinstance(e, V1Event)]
    keep = sum(e.stored.size for e in events if e.stored is not None) <= FACTS_KEPT_BYTES
    for event in events:
        event.keep_facts(keep)
