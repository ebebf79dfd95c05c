"""Property-based tests: replay, every rule-based condenser, and the reader under mutation."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense_cli.condensers.runner import run_condenser
from condense_cli.config.loading import LLMTables, build_condenser
from condense_cli.core.errors import LogError
from condense_cli.core.events import Condensation, apply_condensation
from condense_cli.core.logfile import LogSource
from condense_cli.dialects.openhands_v0.replay import load_view, scan_log, view_lines
from tests.conftest import lines_of
from tests.reference import reference_view

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def logs(draw: Any) -> list[dict[str, Any]]:
    """Valid logs: increasing sparse ids, pairs, hidden events, condensations (with -1
    among their ids, as OpenHands writes), requests."""
    events: list[dict[str, Any]] = []
    next_id = draw(st.integers(0, 3))
    last_action: int | None = None
    for _ in range(draw(st.integers(1, 40))):
        kind = draw(
            st.sampled_from(
                ["message", "run", "obs", "browse", "hidden", "condensation", "request"]
            )
        )
        eid = next_id
        next_id += draw(st.integers(1, 3))
        if kind == "message":
            events.append(
                {
                    "id": eid,
                    "source": draw(st.sampled_from(["user", "agent"])),
                    "action": "message",
                    "args": {"content": f"m{eid}"},
                }
            )
        elif kind == "run":
            events.append(
                {
                    "id": eid,
                    "source": "agent",
                    "action": "run",
                    "args": {"command": f"c{eid}"},
                    "tool_call_metadata": {"tool_call_id": f"t{eid}"},
                }
            )
            last_action = eid
        elif kind == "obs" and last_action is not None:
            events.append(
                {
                    "id": eid,
                    "source": "agent",
                    "observation": "run",
                    "content": f"o{eid}",
                    "extras": {},
                    "cause": last_action,
                    "tool_call_metadata": {"tool_call_id": f"t{last_action}"},
                }
            )
            last_action = None
        elif kind == "browse":
            events.append(
                {
                    "id": eid,
                    "source": "agent",
                    "observation": "browse",
                    "content": "page",
                    "extras": {"url": f"u{eid}"},
                }
            )
        elif kind == "hidden":
            events.append(draw(st.sampled_from(hidden_events(eid))))
        elif kind == "request":
            events.append(
                {"id": eid, "source": "agent", "action": "condensation_request", "args": {}}
            )
        elif kind == "condensation" and events:
            earlier = [e["id"] for e in events] + [-1]  # OpenHands writes -1 too
            if draw(st.booleans()):
                ids = sorted(draw(st.sets(st.sampled_from(earlier), max_size=6)))
                args: dict[str, Any] = {
                    "forgotten_event_ids": ids,
                    "forgotten_events_start_id": None,
                    "forgotten_events_end_id": None,
                }
            else:
                start = draw(st.sampled_from(earlier))
                end = draw(st.integers(max(start, 0), eid + 4))  # may pass itself (allowed)
                args = {
                    "forgotten_event_ids": None,
                    "forgotten_events_start_id": start,
                    "forgotten_events_end_id": end,
                }
            if draw(st.booleans()):
                args |= {"summary": f"summary at {eid}", "summary_offset": draw(st.integers(0, 8))}
            else:
                args |= {"summary": None, "summary_offset": None}
            events.append({"id": eid, "source": "agent", "action": "condensation", "args": args})
    return events or [{"id": 0, "source": "user", "action": "message", "args": {"content": "x"}}]


def hidden_events(eid: int) -> list[dict[str, Any]]:
    """Events of the kinds the agent never sees, and look-alikes that it does see."""
    return [
        {"id": eid, "observation": "agent_state_changed", "content": "", "extras": {}},
        {"id": eid, "action": "change_agent_state", "args": {"agent_state": "running"}},
        # OpenHands' own form: `hidden` inside args / extras
        {"id": eid, "action": "run", "args": {"command": "setup", "hidden": True}},
        {"id": eid, "observation": "run", "content": "", "extras": {"hidden": True}},
        {"id": eid, "action": "run", "args": {"command": "c", "hidden": False}},
        # a top-level key is not OpenHands': the event is seen
        {"id": eid, "action": "message", "args": {"content": "h"}, "hidden": True},
    ]


def write(events: list[dict[str, Any]], folder: str) -> Path:
    path = Path(folder) / "log.jsonl"
    path.write_bytes(lines_of(events))
    return path


def as_ids(view: Any) -> list[Any]:
    return [("S", e.text) if e.is_summary else e.id for e in view]


@SETTINGS
@given(logs())
def test_replay_matches_the_reference(events: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = write(events, folder)
        view, index = load_view(str(path))
        expected, pending = reference_view(events)
        assert as_ids(view) == expected
        assert view.unhandled_request == pending
        assert not any(e.id in index.forgotten for e in view if e.id is not None)
        again, _ = load_view(str(path))
        assert as_ids(again) == as_ids(view)  # deterministic
        by_id = {e["id"]: orjson.dumps(e) for e in events}
        with LogSource.open(str(path)) as source:
            lines = b"".join(view_lines(source, scan_log(source))).splitlines()
        assert [by_id[i] for i in expected if not isinstance(i, tuple)] == [
            line for line in lines if b'"observation":"condense"' not in line or b'"id"' in line
        ]


CONDENSERS = st.sampled_from(
    [
        {"type": "amortized_forgetting", "max_size": 4, "keep_first": 1},
        {"type": "amortized_forgetting", "max_size": 6, "keep_first": 0},
        {"type": "amortized_forgetting", "max_size": 10, "keep_first": 2},
        {"type": "conversation_window"},
        {"type": "observation_masking", "attention_window": 2},
        {"type": "browser_output", "attention_window": 1},
        {"type": "recent_events", "keep_first": 1, "max_events": 5},
        {"type": "noop"},
        {
            "type": "pipeline",
            "condensers": [{"type": "browser_output"}, {"type": "amortized", "max_size": 6}],
        },
    ]
)


@SETTINGS
@given(logs(), CONDENSERS, st.booleans())
def test_appending_a_condensation_replays_to_the_intended_view(
    events: list[dict[str, Any]], table: dict[str, Any], force: bool
) -> None:
    condenser = build_condenser(table, LLMTables({}))
    with tempfile.TemporaryDirectory() as folder:
        path = write(events, folder)
        before, _ = load_view(str(path))
        outcome = run_condenser(str(path), condenser, force=force)
        after, _ = load_view(str(path))
        if isinstance(outcome.result, Condensation):
            intended = apply_condensation(before, outcome.result)
            assert as_ids(after) == as_ids(intended)
            assert not set(outcome.result.forgotten) & set(after.keys)
            assert outcome.result.forgotten  # never an empty condensation
            assert set(outcome.result.forgotten) <= set(before.keys)  # real log ids only
            kept = set(after.keys)
            for event in before:  # an action and its observation stay together
                if event.cause is not None and event.cause in before.keys:
                    assert (event.id in kept) == (event.cause in kept), (event.id, event.cause)
        else:
            assert path.read_bytes() == lines_of(events)
            assert [e.id for e in outcome.result] == [e.id for e in outcome.result.events]
        with LogSource.open(str(path)) as source:
            assert scan_log(source, collect=True).errors == []


FORGETTING = st.sampled_from(
    [
        {"type": "amortized_forgetting", "max_size": 2, "keep_first": 0},
        {"type": "amortized_forgetting", "max_size": 4, "keep_first": 1},
        {"type": "amortized_forgetting", "max_size": 6, "keep_first": 0},
        {"type": "amortized_forgetting", "max_size": 10, "keep_first": 2},
        {"type": "conversation_window"},
        {
            "type": "pipeline",
            "condensers": [{"type": "browser_output"}, {"type": "amortized", "max_size": 4}],
        },
        {
            "type": "pipeline",
            "condensers": [
                {"type": "observation_masking", "attention_window": 1},
                {"type": "conversation_window"},
            ],
        },
    ]
)


def split_by_summary(view: Any) -> set[tuple[int, int]]:
    """The (action, observation) pairs of the view with a summary between them."""
    position = {e.id: i for i, e in enumerate(view) if e.id is not None}
    summaries = [i for i, e in enumerate(view) if e.is_summary]
    split = set()
    for event in view:
        if event.is_action or event.id is None:
            continue
        partners = [
            a.id
            for a in view
            if a.is_action
            and a.id is not None
            and (
                a.id == event.cause
                or (event.tool_call_id is not None and a.tool_call_id == event.tool_call_id)
            )
        ]
        for action in partners:
            low, high = sorted((position[action], position[event.id]))
            if any(low < s < high for s in summaries):
                split.add((action, event.id))
    return split


@SETTINGS
@given(logs(), FORGETTING)
def test_forgetting_never_wedges_a_summary_nor_empties_the_view(
    events: list[dict[str, Any]], table: dict[str, Any]
) -> None:
    condenser = build_condenser(table, LLMTables({}))
    with tempfile.TemporaryDirectory() as folder:
        path = write(events, folder)
        before, _ = load_view(str(path))
        outcome = run_condenser(str(path), condenser, force=True)
        after, _ = load_view(str(path))
        if not isinstance(outcome.result, Condensation):
            assert as_ids(after) == as_ids(before)
            return
        assert any(not e.is_summary for e in after)
        assert split_by_summary(after) <= split_by_summary(before)
        # the summary keeps its place: every event before it is kept
        assert [i for i, e in enumerate(after) if e.is_summary] == [
            i for i, e in enumerate(before) if e.is_summary
        ]


@SETTINGS
@given(
    logs(),
    st.lists(
        st.tuples(
            st.sampled_from(["flip", "insert", "delete", "cut"]),
            st.integers(0, 10**6),
            st.binary(min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_mutated_logs_parse_or_name_a_line(
    events: list[dict[str, Any]], mutations: list[Any]
) -> None:
    data = bytearray(lines_of(events))
    for op, where, blob in mutations:
        if not data:
            break
        at = where % len(data)
        if op == "flip":
            data[at] = blob[0]
        elif op == "insert":
            data[at:at] = blob
        elif op == "delete":
            del data[at : at + len(blob)]
        else:
            del data[at:]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.jsonl"
        path.write_bytes(bytes(data))
        with LogSource.open(str(path)) as source:
            problems = scan_log(source, collect=True).problems
            try:
                scan_log(source)
            except LogError as exc:
                assert exc.line is not None or "empty" in exc.message
                assert any(p.message == exc.problem for p in problems)


@SETTINGS
@given(logs(), st.lists(st.integers(0, 200), max_size=5), st.booleans())
def test_crlf_blank_lines_and_bom_do_not_change_the_view(
    events: list[dict[str, Any]], blanks: list[int], bom: bool
) -> None:
    lines = lines_of(events).splitlines()
    for at in blanks:
        lines.insert(at % (len(lines) + 1), b"   ")
    messy = (b"\xef\xbb\xbf" if bom else b"") + b"\r\n".join(lines) + b"\r\n"
    with tempfile.TemporaryDirectory() as folder:
        clean_path = write(events, folder)
        messy_path = Path(folder) / "messy.jsonl"
        messy_path.write_bytes(messy)
        outputs = []
        for path in (clean_path, messy_path):
            with LogSource.open(str(path)) as source:
                outputs.append(b"".join(view_lines(source, scan_log(source))))
        assert outputs[0] == outputs[1]
