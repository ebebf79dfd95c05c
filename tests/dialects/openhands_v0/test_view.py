"""Replay: hand-computed views for the samples and for every condensation shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from condense_cli.dialects.openhands_v0.replay import load_view
from tests.conftest import (
    SAMPLES,
    condensation,
    hidden_setup_run,
    msg,
    request,
    run_action,
    run_obs,
)


def view_ids(path: Path, upto: int | None = None) -> list[int | str]:
    """The view as ids, with "S" where the summary stands."""
    view, _ = load_view(str(path), upto)
    return ["S" if e.is_summary else e.id for e in view]  # type: ignore[misc]


def test_coding_sample_second_summary_supersedes_first() -> None:
    view, index = load_view(str(SAMPLES / "coding_session.jsonl"))
    assert ["S" if e.is_summary else e.id for e in view] == [0, 1, "S", 17, 18, 20, 21]
    assert view[2].text.endswith("PENDING: report to the user")
    assert index.forgotten_events == 14
    assert len(index.condensations) == 2
    assert not view.unhandled_request


def test_coding_sample_upto_shows_the_first_summary() -> None:
    view, _ = load_view(str(SAMPLES / "coding_session.jsonl"), upto=18)
    assert ["S" if e.is_summary else e.id for e in view] == [0, 1, "S", *range(11, 19)]
    assert view[2].text.endswith("PENDING: rerun tests")


def test_upto_before_any_condensation_is_the_raw_log() -> None:
    assert view_ids(SAMPLES / "coding_session.jsonl", upto=9) == list(range(10))


def test_browsing_sample_has_no_condensation() -> None:
    assert view_ids(SAMPLES / "browsing_session.jsonl") == list(range(13))


def test_pending_request_sample() -> None:
    view, index = load_view(str(SAMPLES / "pending_request.jsonl"))
    assert [e.id for e in view] == [0, 1, 2, 3, 8, 9, 11, 12, 13, 14]
    assert view.unhandled_request
    assert index.requests == 1


def test_list_form(make_log) -> None:
    log = make_log([msg(i) for i in range(6)] + [condensation(6, ids=[1, 3, 4])])
    assert view_ids(log) == [0, 2, 5]


def test_range_form_covers_ids_absent_from_the_log(make_log) -> None:
    log = make_log([msg(0), msg(2), msg(5), msg(9), msg(12), condensation(13, start=1, end=9)])
    assert view_ids(log) == [0, 12]


def test_overlapping_condensations_union(make_log) -> None:
    events = [msg(i) for i in range(10)]
    events += [condensation(10, start=2, end=5), condensation(11, ids=[4, 5, 6, 7])]
    assert view_ids(make_log(events)) == [0, 1, 8, 9]


def test_sparse_ids(make_log) -> None:
    events = [msg(0), msg(10), msg(20), msg(30), msg(400), condensation(1000, ids=[10, 30])]
    assert view_ids(make_log(events)) == [0, 20, 400]


def test_later_summary_supersedes_earlier(make_log) -> None:
    events = [msg(i) for i in range(8)]
    events.insert(4, condensation(4, start=1, end=2, summary="first", offset=1))
    events += [condensation(8, start=5, end=6, summary="second", offset=2)]
    events = [e for e in events if not (e["action"] == "message" and e["id"] == 4)]
    view, _ = load_view(str(make_log(events)))
    assert ["S" if e.is_summary else e.id for e in view] == [0, 3, "S", 7]
    assert view[2].text == "second"


def test_condensation_without_summary_keeps_earlier_summary(make_log) -> None:
    # OpenHands quirk, part of the contract: the old summary stays.
    events = [msg(i) for i in range(6)]
    events += [condensation(6, start=1, end=2, summary="kept", offset=1)]
    events += [condensation(7, ids=[3])]
    view, _ = load_view(str(make_log(events)))
    assert ["S" if e.is_summary else e.id for e in view] == [0, "S", 4, 5]


def test_summary_offset_at_the_end(make_log) -> None:
    events = [msg(i) for i in range(4)] + [condensation(4, ids=[1], summary="s", offset=3)]
    assert view_ids(make_log(events)) == [0, 2, 3, "S"]


def test_summary_offset_past_the_end_is_clamped(make_log) -> None:
    events = [msg(i) for i in range(4)] + [condensation(4, ids=[1], summary="s", offset=50)]
    assert view_ids(make_log(events)) == [0, 2, 3, "S"]


def test_summary_offset_zero(make_log) -> None:
    events = [msg(i) for i in range(3)] + [condensation(3, ids=[0], summary="s", offset=0)]
    assert view_ids(make_log(events)) == ["S", 1, 2]


def test_condensation_can_forget_ids_that_come_after_it(make_log) -> None:
    # OpenHands quirk: the range is applied to the whole log, later events included.
    events = [msg(0), msg(1), condensation(2, start=1, end=5), msg(3), msg(6)]
    assert view_ids(make_log(events)) == [0, 6]


def test_request_is_handled_by_a_later_condensation(make_log) -> None:
    events = [msg(0), msg(1), request(2), condensation(3, ids=[1])]
    view, _ = load_view(str(make_log(events)))
    assert [e.id for e in view] == [0]
    assert not view.unhandled_request


def test_request_after_condensation_is_unhandled(make_log) -> None:
    events = [msg(0), msg(1), condensation(2, ids=[1]), msg(3), request(4)]
    view, _ = load_view(str(make_log(events)))
    assert [e.id for e in view] == [0, 3]
    assert view.unhandled_request


def test_events_the_agent_never_sees_are_left_out(make_log) -> None:
    events = [
        msg(0),
        {"id": 1, "action": "change_agent_state", "args": {"agent_state": "running"}},
        {"id": 2, "observation": "agent_state_changed", "content": "", "extras": {}},
        {"id": 3, "observation": "null", "content": "", "cause": 0, "extras": {}},
        {"id": 4, "action": "null", "args": {}},
        *hidden_setup_run(5),
        msg(7),
    ]
    _, index = load_view(str(make_log(events)))
    assert view_ids(make_log(events)) == [0, 7]
    assert index.events == 8


def test_hidden_inside_args_and_extras_hides_the_event(make_log) -> None:
    action, observation = hidden_setup_run(1)
    assert view_ids(make_log([msg(0), action, msg(2)])) == [0, 2]
    assert view_ids(make_log([msg(0), observation, msg(3)])) == [0, 3]


def test_hidden_false_and_hidden_in_the_other_object_keep_the_event(make_log) -> None:
    events = [
        msg(0),
        {**run_action(1), "args": {"command": "ls", "hidden": False}},
        {**run_obs(2, 1), "extras": {"hidden": False}},
        {**run_action(3), "extras": {"hidden": True}},  # actions keep fields in args
        {**run_obs(4, 3), "args": {"hidden": True}},  # observations keep them in extras
    ]
    assert view_ids(make_log(events)) == [0, 1, 2, 3, 4]


def test_top_level_hidden_is_ignored_as_openhands_ignores_it(make_log) -> None:
    events = [msg(0), {**msg(1), "hidden": True}, {**run_obs(2, 1), "hidden": True}]
    assert view_ids(make_log(events)) == [0, 1, 2]


def test_hidden_condensation_is_not_applied(make_log) -> None:
    hidden = condensation(2, ids=[1])
    hidden["args"]["hidden"] = True
    assert view_ids(make_log([msg(0), msg(1), hidden])) == [0, 1]
    top_level = {**condensation(2, ids=[1]), "hidden": True}
    assert view_ids(make_log([msg(0), msg(1), top_level])) == [0]


def test_kept_pairs_keep_their_original_bytes(make_log) -> None:
    log = make_log([msg(0), run_action(1, "t1"), run_obs(2, 1, "t1"), condensation(3, ids=[0])])
    view, _ = load_view(str(log))
    raw_lines = log.read_bytes().splitlines()
    assert [e.raw for e in view] == raw_lines[1:3]


def test_summary_line_without_id_is_kept_where_it_stands(make_log) -> None:
    summary = {"source": "agent", "observation": "condense", "content": "earlier", "extras": {}}
    view, _ = load_view(str(make_log([msg(0), summary, msg(1), condensation(2, ids=[1])])))
    assert [("S" if e.is_summary else e.id) for e in view] == [0, "S"]


@pytest.mark.parametrize("upto", [0, 1, 3])
def test_upto_ignores_later_condensations(make_log, upto: int) -> None:
    log = make_log([msg(0), msg(1), msg(2), condensation(3, ids=[1]), msg(4)])
    expected = {0: [0], 1: [0, 1], 3: [0, 2]}[upto]
    assert view_ids(log, upto) == expected


# --- negative ids (OpenHands writes -1, its summary placeholder's id) ---------------


def test_minus_one_in_a_forgotten_list_forgets_nothing_else(make_log) -> None:
    events = [
        msg(0),
        msg(1),
        condensation(2, ids=[1], summary="s1", offset=1),
        msg(3),
        msg(4),
        condensation(5, ids=[-1, 3], summary="s2", offset=1),
    ]
    assert view_ids(make_log(events)) == [0, "S", 4]


def test_a_range_from_minus_one_forgets_the_real_ids_it_covers(make_log) -> None:
    events = [msg(0), msg(1), msg(2), condensation(3, start=-1, end=1), msg(4)]
    assert view_ids(make_log(events)) == [2, 4]


def test_a_wholly_negative_range_forgets_nothing(make_log) -> None:
    events = [msg(0), msg(1), condensation(2, start=-5, end=-1), request(3)]
    view, index = load_view(str(make_log(events)))
    assert [e.id for e in view] == [0, 1]
    assert view.unhandled_request
    assert index.kept_events == 2
