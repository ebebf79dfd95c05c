"""The views around each condensation of a V1 conversation come from one walk over
the log, and are exactly the replays up to each condensation in turn."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from condense_cli.dialects.openhands_v1.dialect import V1Replay
from condense_cli.dialects.openhands_v1.generations import Generation
from condense_cli.dialects.openhands_v1.replay import replay
from condense_cli.dialects.openhands_v1.steps import linear, steps
from condense_cli.dialects.openhands_v1.storage import (
    LAST_SUMMARY,
    MULTI_SUMMARY,
    Conversation,
    read_conversation,
)
from tests.dialects.openhands_v1.test_properties import conversations
from tests.dialects.openhands_v1.test_replay import _id, call, condensation, conv, message, result

LAST = Generation(LAST_SUMMARY, "test")
MULTI = Generation(MULTI_SUMMARY, "test")
ARTIFACT = "ConversationStateUpdateEvent"


@st.composite
def trees(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """A generated conversation, with state artifacts here and there, and parents
    that are the previous event (a linear tree), or sometimes another one (a
    branching tree); and maybe a base state naming a leaf."""
    events: list[dict[str, Any]] = []
    for n, event in enumerate(draw(conversations())):
        if draw(st.integers(0, 6)) == 0:
            artifact = f"{n:08x}-aaaa-4000-8000-000000000000"
            events.append({"kind": ARTIFACT, "id": artifact, "source": "environment"})
        events.append(dict(event))
    shape = draw(st.sampled_from(["none", "linear", "linear", "some", "branching"]))
    for i, event in enumerate(events):
        if shape == "none" or (shape == "some" and draw(st.booleans())):
            continue
        parent = events[i - 1]["id"] if i else "__root__"
        if shape == "branching" and i > 1 and draw(st.integers(0, 4)) == 0:
            parent = events[draw(st.integers(0, i - 1))]["id"]
        event["parent_id"] = parent
    leaf = draw(st.one_of(st.none(), st.integers(0, len(events) - 1)))
    state = {"leaf_event_id": events[leaf]["id"]} if leaf is not None else None
    return events, state


def replayed_steps(conversation: Conversation, generation: Generation) -> list[tuple]:
    """The definition: a replay up to just before, and up to, each condensation."""
    wanted = replay(conversation, generation).condensations
    out = []
    for c in wanted:
        before = replay(conversation, generation, c.position - 1)
        after = replay(conversation, generation, c.position)
        out.append((c, before.events, before.pending_request, after.events))
    return out


@settings(max_examples=400, deadline=None)
@given(trees(), st.sampled_from([LAST, MULTI]))
def test_the_walk_gives_the_replay_up_to_each_condensation(
    tree: tuple[list[dict[str, Any]], dict[str, Any] | None], generation: Generation
) -> None:
    events, state = tree
    conversation = Conversation("t", conv(events).records, (), base_state=state)
    wanted = replay(conversation, generation).condensations
    walked = [
        (s.condensation, s.before, s.pending_before, s.after)
        for s in steps(conversation, generation, wanted)
    ]
    assert walked == replayed_steps(conversation, generation)


@settings(max_examples=200, deadline=None)
@given(trees(), st.sampled_from([LAST, MULTI]), st.integers(0, 8))
def test_a_walk_from_any_condensation_gives_the_replays_from_there(
    tree: tuple[list[dict[str, Any]], dict[str, Any] | None], generation: Generation, skip: int
) -> None:
    """`audit` starts its child's walk at the middle condensation: the steps from
    there are the replays up to each condensation from there (no view is made for
    the condensations before)."""
    events, state = tree
    conversation = Conversation("t", conv(events).records, (), base_state=state)
    wanted = replay(conversation, generation).condensations
    walked = [
        (s.condensation, s.before, s.pending_before, s.after)
        for s in steps(conversation, generation, wanted[skip:])
    ]
    assert walked == replayed_steps(conversation, generation)[skip:]


def test_the_steps_from_a_condensation_are_the_tail_of_all_steps(tmp_path: Path) -> None:
    from tests.dialects.openhands_v1.test_replay import write_folder

    events = [message(0), message(1)]
    for n in range(2, 62, 10):
        events += [call(n, f"r{n}"), result(n + 1, n), message(n + 2), message(n + 3)]
        events += [call(n + 4, f"r{n}"), result(n + 5, n + 4), message(n + 6), message(n + 7)]
        events += [message(n + 8), condensation(n + 9, [n, n + 1, n + 4, n + 5], 1)]
    folder = write_folder(tmp_path / "c", events)
    for generation in (LAST, MULTI):
        replay_ = V1Replay(str(folder), read_conversation(str(folder)))
        replay_.detected = generation
        assert replay_.steps_start_anywhere and replay_.step_count == 6

        def seen(step: Any) -> Any:
            views = [[(e.key, e.to_json()) for e in v] for v in (step.before, step.after)]
            return step.id, step.line, views, [e.key for e in step.forgotten], step.summary

        whole = [seen(s) for s in replay_.condensation_steps()]
        assert len(whole) == 6
        for first in range(1, 7):
            assert [seen(s) for s in replay_.condensation_steps_from(first)] == whole[first - 1 :]


def test_a_linear_tree_names_the_previous_event_as_each_parent() -> None:
    events = [message(0) | {"parent_id": "__root__"}, message(1) | {"parent_id": _id(0)}]
    assert linear(conv(events).records)
    assert linear(conv([message(0), message(1)]).records)  # no parents: stored order
    branch = [*events, message(2) | {"parent_id": _id(0)}]
    assert not linear(conv(branch).records)
    restart = [*events, message(2) | {"parent_id": "__root__"}]
    assert not linear(conv(restart).records)


class CountedRecords(tuple):
    """The records of a conversation, counting how often something walks them all."""

    walks = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        CountedRecords.walks += 1
        return super().__iter__()


def long_conversation(condensations: int) -> Conversation:
    """Tool calls and results, condensed every 10 events down to the first two and
    the newest ones (forgetting the previous summary with the middle)."""
    events: list[dict[str, Any]] = [message(0), message(1)]
    view = [_id(0), _id(1)]
    while sum(e["kind"] == "Condensation" for e in events) < condensations:
        n = len(events)
        events += [call(n, f"resp{n}"), result(n + 1, n)]
        view += [_id(n), _id(n + 1)]
        if len(view) > 10:
            c = len(events)
            events.append(condensation(c, [], 2) | {"forgotten_event_ids": view[2:-4]})
            view = [*view[:2], f"{_id(c)}-summary", *view[-4:]]
    records = CountedRecords(conv(events).records)
    return Conversation("t", records, ())


def walks_of(condensations: int, generation: str) -> dict[str, int]:
    """How often `stats`, `audit`'s steps and the condensation rows walk the log."""
    conversation = long_conversation(condensations)
    replay = V1Replay("t", conversation)
    replay.detected = Generation(generation, "test")
    counts = {}
    for name, work in (
        ("stats", lambda: replay.stats(None)),
        ("steps", lambda: list(replay.condensation_steps())),
    ):
        replay._condensations = None
        CountedRecords.walks = 0
        work()
        counts[name] = CountedRecords.walks
    return counts


def test_stats_and_steps_walk_the_log_as_often_for_4_condensations_as_for_40() -> None:
    """Replaying up to each condensation in turn walked the log twice per
    condensation (10k events: 4 s, 100k: minutes); one walk serves them all."""
    for generation in (MULTI_SUMMARY, LAST_SUMMARY):
        few, many = walks_of(4, generation), walks_of(40, generation)
        assert many == few, generation
        assert few["steps"] <= 2


def test_a_replay_holds_parsed_events_only_for_condensations(tmp_path: Path) -> None:
    """Memory grows with the bytes read, not with every event's objects: an
    ordinary event is parsed again each time its data is asked for."""
    events = [message(0), call(1, "r1"), result(2, 1), condensation(3, [1, 2], 1), message(4)]
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
    records = read_conversation(str(path)).records
    assert [r.data for r in records] == events
    assert [r.data is r.data for r in records] == [False, False, False, True, False]
    assert [(r.call, r.response, r.date) for r in records[:3]] == [
        (None, None, None),
        ("call1", "r1", None),
        ("call1", None, None),
    ]


def _folder_condensed_every_9_events(tmp_path: Path) -> Path:
    from tests.dialects.openhands_v1.test_replay import write_folder

    events = [message(0), message(1)]
    for n in range(2, 62, 10):  # a condensation after every 9 events, forgetting 4 of
        # them and 2 messages the step before kept
        events += [call(n, f"r{n}"), result(n + 1, n), message(n + 2), message(n + 3)]
        events += [call(n + 4, f"r{n}"), result(n + 5, n + 4), message(n + 6), message(n + 7)]
        kept_before = [n - 8, n - 7] if n > 2 else []
        forgotten = [*kept_before, n, n + 1, n + 4, n + 5]
        events += [message(n + 8), condensation(n + 9, forgotten, 1)]
    return write_folder(tmp_path / "c", events)


def test_the_steps_read_each_event_file_once_for_every_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The views around one condensation, and those around the next, hold mostly the
    same events: a walk over the steps makes an event once, not once a view (and
    reads no file until an event is asked for), and the views are those made one by
    one."""
    from condense_cli.dialects.openhands_v1 import storage

    folder = _folder_condensed_every_9_events(tmp_path)
    reads: list[str] = []
    read = storage.read_event_file
    monkeypatch.setattr(storage, "read_event_file", lambda p: reads.append(p) or read(p))
    replay = V1Replay(str(folder), storage.read_folder(folder))
    reads.clear()
    steps = list(replay.condensation_steps())
    assert len(steps) == 6
    assert reads == []  # an event reads its file when asked for its data
    for step, following in pairwise(steps):
        made = {id(e) for e in step.after}
        assert sum(id(e) in made for e in following.before) > len(step.after) // 2
    alone = [  # the views made one by one
        (replay._view_of(raw.before, raw.pending_before), replay._view_of(raw.after, False))
        for raw in replay._steps(1)
    ]
    assert not {id(e) for e in alone[1][0]} & {id(e) for e in alone[0][1]}
    for step, (before, after) in zip(steps, alone, strict=True):
        assert [(e.key, e.to_json()) for e in step.before] == [(e.key, e.to_json()) for e in before]
        assert [(e.key, e.to_json()) for e in step.after] == [(e.key, e.to_json()) for e in after]


def _reads_of_an_audit_walk(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Counter[str], list[tuple[list[Any], list[Any]]]]:
    """How often each event file is read while each step's forgotten events and then
    its view after it are asked what they say, as `audit` asks; and at each step, of
    the events the steps before made, those that still hold their facts and those no
    view of this step holds."""
    from condense_cli.dialects.openhands_v1 import storage

    reads: Counter[str] = Counter()
    read = storage.read_event_file
    monkeypatch.setattr(storage, "read_event_file", lambda p: reads.update([p]) or read(p))
    replay = V1Replay(str(folder), storage.read_folder(folder))
    reads.clear()
    seen: dict[int, Any] = {}
    found = []
    for step in replay.condensation_steps():
        here = {id(e) for e in [*step.before, *step.after]}
        holding = [e for e in seen.values() if e.stored is not None and e._facts_kept is not None]
        assert {id(e) for e in holding} <= here  # only this step's views hold facts
        found.append((holding, [e for i, e in seen.items() if i not in here]))
        for event in [*step.forgotten, *step.after]:
            assert (event.text, event.thought, event.exit_code, event.url) is not None
        seen |= {id(e): e for e in [*step.before, *step.after]}
    return reads, found


def test_an_event_a_step_keeps_is_read_once_when_the_next_step_forgets_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`audit` asks what a step's view after it says, then what the next step's
    forgotten events say: mostly the same events. They keep their facts from one
    step to the next, so each file is read once however many steps' views hold it;
    the events the views no longer hold let theirs go."""
    folder = _folder_condensed_every_9_events(tmp_path)
    reads, found = _reads_of_an_audit_walk(folder, monkeypatch)
    assert len(reads) == 56 and max(reads.values()) == 1
    for step, (holding, gone) in enumerate(found[1:], start=1):
        assert holding and gone, step


def test_a_view_after_a_step_over_the_budget_keeps_no_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from condense_cli.dialects.openhands_v1 import dialect

    monkeypatch.setattr(dialect, "FACTS_KEPT_BYTES", 0)
    folder = _folder_condensed_every_9_events(tmp_path)
    reads, found = _reads_of_an_audit_walk(folder, monkeypatch)
    assert max(reads.values()) == 6  # the first user messages, read at every step
    assert not any(holding for holding, _ in found)


def test_stats_reads_each_event_file_once_after_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`stats` tallies the texts of the log, then those of the view: the view's events
    are the log's, so their counts are taken by position, not read and made again."""
    from condense_cli.core.events import model_text
    from condense_cli.dialects.openhands_v1 import storage

    folder = _folder_condensed_every_9_events(tmp_path)
    reads: Counter[str] = Counter()
    read = storage.read_event_file
    monkeypatch.setattr(storage, "read_event_file", lambda p: reads.update([p]) or read(p))
    replay = V1Replay(str(folder), storage.read_folder(folder))
    reads.clear()
    report = replay.stats(None)
    assert len(reads) == 56 and max(reads.values()) == 1  # every event sent to the model
    view = replay.view()
    assert any(e.is_summary for e in view)
    assert report.chars.view == sum(len(model_text(e)) for e in view)
    assert report.chars.log == sum(len(model_text(e)) for e in replay.history() if e)
