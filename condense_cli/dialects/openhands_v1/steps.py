"""Each condensation of a V1 conversation with the views just before and just after
it, in one walk over the log (`audit`, `diff`, `stats` ask for them).

Replaying the log up to each condensation in turn costs the log once per
condensation: events x condensations. The walk keeps what a replay of the log so
far would hold (the fold of the view, the union of forgotten ids, the pending
request, the view properties' `Context`) and finishes a view only at each
condensation, so it costs the log once plus the views. It gives exactly what
`replay` up to the condensation gives: the multi-summary SDK replays the active
branch of the events so far, which is all of them whenever every event's parent
is the one stored before it (`linear`); a conversation that branches is replayed
up to each condensation in turn, as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from condense_cli.dialects.openhands_v1.detect import CONDENSATION, CONDENSATION_REQUEST
from condense_cli.dialects.openhands_v1.facts import Entry, summary_of
from condense_cli.dialects.openhands_v1.generations import Generation
from condense_cli.dialects.openhands_v1.properties.context import Context
from condense_cli.dialects.openhands_v1.properties.enforcing import enforce_properties
from condense_cli.dialects.openhands_v1.properties.tool_call_matching import unmatched
from condense_cli.dialects.openhands_v1.replay import fold_condensation, insert_summary, replay
from condense_cli.dialects.openhands_v1.storage import (
    MULTI_SUMMARY,
    ROOT_PARENT_ID,
    Conversation,
    StoredEvent,
)


@dataclass(frozen=True, slots=True)
class Step:
    """A condensation, the view just before it (and whether a request was pending
    then) and the view right after it (when no request is pending)."""

    condensation: StoredEvent
    before: tuple[Entry, ...]
    pending_before: bool
    after: tuple[Entry, ...]


def linear(records: Sequence[StoredEvent]) -> bool:
    """Whether every event's `parent_id` (when it names one) is the event stored just
    before it: then the active branch of the events up to any condensation on it is
    those events (less trailing state artifacts, which no view holds)."""
    ids: set[str] | None = None
    previous: str | None = None
    for record in records:
        parent = record.parent
        if isinstance(parent, str):
            if previous is None:
                if ids is None:
                    ids = {r.id for r in records}
                if parent != ROOT_PARENT_ID and parent in ids:
                    return False
            elif parent != previous or parent == ROOT_PARENT_ID:
                return False
        previous = record.id
    return True


def steps(
    conversation: Conversation, generation: Generation, wanted: Sequence[StoredEvent]
) -> Iterator[Step]:
    """A `Step` for each condensation of `wanted` (condensations of the conversation,
    in log order), each exactly as `replay` up to it and up to just before it."""
    if not wanted:
        return
    records = conversation.records
    multi = generation.name == MULTI_SUMMARY
    if multi and not linear(records):
        for condensation in wanted:
            before = replay(conversation, generation, condensation.position - 1)
            after = replay(conversation, generation, condensation.position)
            yield Step(condensation, before.events, before.pending_request, after.events)
        return
    context = Context()
    view: list[Entry] = []
    forgotten: set[str] = set()  # last-summary: every id forgotten so far
    newest: StoredEvent | None = None  # last-summary: the newest condensation with a summary
    pending = False
    targets = iter(wanted)
    target: StoredEvent | None = next(targets)

    def finish() -> tuple[Entry, ...]:
        if multi:
            return tuple(enforce_properties(view, context)[0])
        shown = insert_summary(list(view), newest, []) if newest is not None else view
        drop = unmatched(shown)
        return tuple(e for e in shown if e.id not in drop)

    for record in records:
        if multi:
            context.add(record)  # a condensation only ends a tool loop: no view changes
        kind = record.kind
        if kind == CONDENSATION:
            shown = finish() if record is target else ()
            if multi:
                view = fold_condensation(view, record, [])
            else:
                ids = record.data.get("forgotten_event_ids", [])
                forgotten.update(ids)
                gone = set(ids)
                view = [e for e in view if e.id not in gone]
                if summary_of(record) is not None:
                    newest = record
            if record is target:
                yield Step(record, shown, pending, finish())
                target = next(targets, None)
                if target is None:
                    return
            pending = False
            continue
        if kind == CONDENSATION_REQUEST:
            pending = True
        elif record.sent and (multi or record.id not in forgotten):
            view.append(record)
    raise ValueError("a wanted condensation is not in the conversation")
