"""Property tests of the V1 replay over generated conversations."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from condense_cli.dialects.base import Record
from condense_cli.dialects.openhands_v1.detect import OBSERVATION_KINDS
from condense_cli.dialects.openhands_v1.facts import Entry, Summary, summary_of
from condense_cli.dialects.openhands_v1.generations import Generation
from condense_cli.dialects.openhands_v1.properties.tool_loop_atomicity import tool_loops
from condense_cli.dialects.openhands_v1.replay import pending_request, replay
from condense_cli.dialects.openhands_v1.storage import LAST_SUMMARY, MULTI_SUMMARY
from tests.dialects.openhands_v1.test_replay import (
    _id,
    call,
    condensation,
    conv,
    message,
    request,
    result,
    system,
)

LAST = Generation(LAST_SUMMARY, "test")
MULTI = Generation(MULTI_SUMMARY, "test")


@st.composite
def conversations(draw: st.DrawFn, tools: bool = True) -> list[dict[str, Any]]:
    """A system prompt and a user message, then messages, tool-call batches (some
    results missing or doubled), condensations forgetting earlier events and
    summaries, and requests."""
    events: list[dict[str, Any]] = [system(0), message(1)]
    forgettable: list[str] = [_id(0), _id(1)]
    steps = ["message", "condense", "request"] + (["batch"] if tools else [])
    for step in draw(st.lists(st.sampled_from(steps), max_size=25)):
        n = len(events)
        if step == "message":
            events.append(message(n))
            forgettable.append(_id(n))
        elif step == "batch":
            size = draw(st.integers(1, 3))
            thinking = draw(st.booleans())
            calls = [call(n + i, f"resp{n}", thinking and i == 0) for i in range(size)]
            events += calls
            for c in calls:
                answers = draw(st.sampled_from([1, 1, 1, 0, 2]))
                for _ in range(answers):
                    events.append(result(len(events), int(c["id"][:8], 16)))
            forgettable += [e["id"] for e in events[n:]]
        elif step == "condense":
            forget = draw(st.lists(st.sampled_from(forgettable), unique=True, max_size=8))
            offset = draw(st.one_of(st.none(), st.integers(0, len(events))))
            event = condensation(n, [], offset) | {"forgotten_event_ids": forget}
            events.append(event)
            if offset is not None:
                forgettable.append(f"{_id(n)}-summary")
        else:
            events.append(request(n))
    return events


def _calls_and_results(view: tuple[Entry, ...]) -> tuple[list[str], list[str]]:
    calls = [e.data["tool_call_id"] for e in view if e.kind == "ActionEvent"]
    results = [e.data["tool_call_id"] for e in view if e.kind in OBSERVATION_KINDS]
    return calls, results


@settings(max_examples=300, deadline=None)
@given(conversations())
def test_current_view_holds_every_sdk_property(events: list[dict[str, Any]]) -> None:
    conversation = conv(events)
    replayed = replay(conversation, MULTI)
    view = replayed.events
    records = conversation.records
    # Every kept tool call has exactly one result, and every result its call.
    calls, results = _calls_and_results(view)
    assert sorted(calls) == sorted(results)
    assert len(set(results)) == len(results)
    # The calls of one model response are all there or none is.
    kept = {e.id for e in view}
    for response in {e.data["llm_response_id"] for e in view if e.kind == "ActionEvent"}:
        batch = {r.id for r in records if r.kind == "ActionEvent"}
        batch &= {r.id for r in records if r.data.get("llm_response_id") == response}
        assert batch <= kept
    # Thinking-led tool loops are whole or absent.
    for loop in tool_loops(records):
        assert loop <= kept or not loop & kept
    # The view keeps log order, holds each event once, and only events sent to the model.
    positions = [e.position for e in view if isinstance(e, Record)]
    assert positions == sorted(set(positions))
    assert all(e.sent for e in view if isinstance(e, Record))
    assert replayed.pending_request == pending_request(records)


@settings(max_examples=300, deadline=None)
@given(conversations())
def test_what_a_condensation_forgot_never_comes_back(events: list[dict[str, Any]]) -> None:
    conversation = conv(events)
    kept = set(replay(conversation, MULTI).ids)
    for record in conversation.records:
        if record.kind == "Condensation":
            # the generator only forgets ids stored (or summaries shown) before it
            assert kept.isdisjoint(record.data["forgotten_event_ids"])
    # The 2025 view forgets events by id, but shows the newest summary whatever
    # forgot it (its summaries had fresh random ids).
    last = replay(conversation, LAST)
    assert {e.id for e in last.events if isinstance(e, Record)}.isdisjoint(
        i
        for r in conversation.records
        if r.kind == "Condensation"
        for i in r.data["forgotten_event_ids"]
    )
    calls, results = _calls_and_results(last.events)
    assert set(calls) == set(results)


@settings(max_examples=300, deadline=None)
@given(conversations(tools=False))
def test_summaries_land_at_their_offsets_and_forgetting_is_monotone(
    events: list[dict[str, Any]],
) -> None:
    conversation = conv(events)
    shown: set[str] = set()  # the view one event earlier
    existed: set[str] = set()  # every event and summary id up to one event earlier
    for record in conversation.records:
        ids = replay(conversation, MULTI, upto=record.position).ids
        # Once out of the view, an event or summary stays out.
        assert set(ids) & existed <= shown
        if record.kind == "Condensation" and summary_of(record) is not None:
            where = min(record.data["summary_offset"], len(ids) - 1)
            assert ids[where] == f"{record.id}-summary"
            existed.add(f"{record.id}-summary")
        existed.add(record.id)
        shown = set(ids)
    last = replay(conversation, LAST)
    summaries = [e for e in last.events if isinstance(e, Summary)]
    newest = [r for r in conversation.records if summary_of(r) is not None][-1:]
    assert [s.condensation for s in summaries] == newest
