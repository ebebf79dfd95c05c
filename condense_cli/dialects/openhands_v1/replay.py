"""Replay: the SDK's `View` of a conversation, in the generation that wrote it, with
the active branch, pending requests and each condensation's problems."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from condense_cli.core.errors import ConfigError
from condense_cli.core.events import Problem
from condense_cli.dialects.openhands_v1.detect import CONDENSATION, CONDENSATION_REQUEST
from condense_cli.dialects.openhands_v1.facts import Entry, Summary, summary_of
from condense_cli.dialects.openhands_v1.generations import Generation, detect_generation
from condense_cli.dialects.openhands_v1.properties.context import Context
from condense_cli.dialects.openhands_v1.properties.enforcing import enforce_properties
from condense_cli.dialects.openhands_v1.properties.tool_call_matching import unmatched
from condense_cli.dialects.openhands_v1.storage import (
    BRANCH_ARTIFACT_KINDS,
    LAST_SUMMARY,
    MULTI_SUMMARY,
    NO_PARENT,
    ROOT_PARENT_ID,
    Conversation,
    StoredEvent,
    problem_at,
)


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
        records = records[: cut_at(records, upto, conversation.path)]
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


def cut_at(records: list[StoredEvent], upto: int | str, path: str) -> int:
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
    return problem_at(record.path, f"Condensation {record.id} {message}", record.line, "warning")


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
