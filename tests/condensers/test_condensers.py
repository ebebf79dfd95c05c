"""Each rule-based condenser against results computed by hand (SPEC sections 3 and 9)."""

from __future__ import annotations

from typing import Any

import pytest

from condense_cli.config.loading import LLMTables, build_condenser
from condense_cli.core.errors import ConfigError
from condense_cli.core.events import Condensation, View, apply_condensation
from condense_cli.dialects.openhands_v0.events import condensation_args
from condense_cli.dialects.openhands_v0.replay import load_view
from tests.conftest import SAMPLES, condensation, msg, request, run_action, run_obs


def make(type: str, **config: Any):
    return build_condenser({"type": type, **config}, LLMTables({}))


def view_of(make_log, events: list[dict[str, Any]]) -> View:
    return load_view(str(make_log(events)))[0]


def ids(view: View) -> list[Any]:
    return ["S" if e.is_summary else e.id for e in view]


def pairs(first_id: int, count: int) -> list[dict[str, Any]]:
    """`count` run action/observation pairs starting at `first_id`."""
    out: list[dict[str, Any]] = []
    for k in range(count):
        a = first_id + 2 * k
        out += [run_action(a, f"call{a}"), run_obs(a + 1, a, f"call{a}")]
    return out


# --- noop -------------------------------------------------------------------------


def test_noop_returns_the_view_unchanged(make_log) -> None:
    view = view_of(make_log, [msg(0), msg(1)])
    result = make("noop").condense(view)
    assert isinstance(result, View)
    assert result.events == view.events


# --- observation_masking ------------------------------------------------------------


def test_observation_masking_masks_observations_outside_the_window(make_log) -> None:
    view = view_of(make_log, [msg(0), *pairs(1, 4)])  # ids 0..8, observations 2, 4, 6, 8
    result = make("observation_masking", attention_window=3).condense(view)
    assert isinstance(result, View)
    contents = {e.id: e.data.get("content") for e in result if not e.is_action}
    assert contents == {2: "<MASKED>", 4: "<MASKED>", 6: "out6", 8: "out8"}
    assert ids(result) == list(range(9))  # placeholders keep their ids
    assert result[1] is view[1]  # actions untouched


def test_observation_masking_never_masks_the_summary(make_log) -> None:
    events = [msg(0), msg(1), *pairs(2, 3), condensation(8, ids=[1], summary="sum", offset=1)]
    view = view_of(make_log, events)
    result = make("observation_masking", attention_window=1).condense(view)
    assert result[1].is_summary
    assert result[1].text == "sum"


def test_observation_masking_default_window_is_five() -> None:
    assert make("observation_masking").config.attention_window == 5


# --- browser_output ------------------------------------------------------------------


def test_browser_output_keeps_only_the_newest_page() -> None:
    view, _ = load_view(str(SAMPLES / "browsing_session.jsonl"))
    result = make("browser_output").condense(view)
    browse = {e.id: e.text for e in result if not e.is_action and e.type == "browse"}
    assert browse[5] == "Visited URL https://alpha.example.org/LICENSE\nContent omitted"
    assert browse[7] == "Visited URL https://alpha.example.org/docs/faq\nContent omitted"
    assert browse[9] == "Visited URL https://beta.example.org/LICENSE\nContent omitted"
    assert browse[11].startswith("Beta commercial use. Section 0")


def test_browser_output_window_two_and_alias() -> None:
    view, _ = load_view(str(SAMPLES / "browsing_session.jsonl"))
    result = make("browser_output_masking", attention_window=2).condense(view)
    kept = [
        e.id for e in result if e.type == "browse" and not e.is_action and "omitted" not in e.text
    ]
    assert kept == [9, 11]


# --- recent_events -------------------------------------------------------------------


def test_recent_events_keeps_head_and_newest(make_log) -> None:
    view = view_of(make_log, [msg(i) for i in range(10)])
    result = make("recent_events", keep_first=2, max_events=5).condense(view)
    assert ids(result) == [0, 1, 7, 8, 9]


def test_recent_events_leaves_a_view_that_fits(make_log) -> None:
    # SPEC 9: OpenHands repeats head events on a short view; we leave it unchanged.
    view = view_of(make_log, [msg(i) for i in range(5)])
    result = make("recent", keep_first=2, max_events=5).condense(view)
    assert ids(result) == [0, 1, 2, 3, 4]


# --- amortized_forgetting ------------------------------------------------------------


def test_amortized_does_not_fire_at_max_size(make_log) -> None:
    view = view_of(make_log, [msg(i) for i in range(10)])
    result = make("amortized_forgetting", max_size=10).condense(view)
    assert isinstance(result, View)
    assert result.note and "within max_size 10" in result.note


def test_amortized_fires_at_max_size_plus_one(make_log) -> None:
    view = view_of(make_log, [msg(i) for i in range(11)])
    result = make("amortized_forgetting", max_size=10, keep_first=1).condense(view)
    assert result == Condensation((1, 2, 3, 4, 5, 6))
    assert condensation_args(result, view)["forgotten_events_start_id"] == 1
    assert condensation_args(result, view)["forgotten_events_end_id"] == 6
    assert ids(apply_condensation(view, result)) == [0, 7, 8, 9, 10]


def test_amortized_keep_first_zero(make_log) -> None:
    view = view_of(make_log, [msg(i) for i in range(11)])
    result = make("amortized", max_size=10, keep_first=0, keep_task=False).condense(view)
    assert result == Condensation((0, 1, 2, 3, 4, 5))


def test_amortized_fires_on_request_with_a_short_view(make_log) -> None:
    view = view_of(make_log, [msg(i) for i in range(7)] + [request(7)])
    result = make("amortized", max_size=10, keep_first=1).condense(view)
    assert result == Condensation((1, 2))


def test_amortized_request_on_a_view_that_is_all_head_and_tail(make_log) -> None:
    view = view_of(make_log, [msg(i) for i in range(5)] + [request(5)])
    result = make("amortized", max_size=10, keep_first=1).condense(view)
    assert isinstance(result, View)
    assert result.note and result.note.startswith("nothing to forget")


def test_amortized_never_splits_an_action_from_its_observation(make_log) -> None:
    # 0 message, pairs 1/2 3/4 5/6 7/8 9/10, 11 message: 12 events.
    # The tail of 4 would be [8, 9, 10, 11] and start on observation 8 of action 7.
    view = view_of(make_log, [msg(0), *pairs(1, 5), msg(11)])
    result = make("amortized", max_size=10, keep_first=1).condense(view)
    assert result == Condensation((1, 2, 3, 4, 5, 6, 7, 8))
    assert ids(apply_condensation(view, result)) == [0, 9, 10, 11]


def test_amortized_pairs_by_cause_without_tool_call_ids(make_log) -> None:
    events = [msg(0), run_action(1), run_obs(2, 1), run_action(3), run_obs(4, 3), msg(5), msg(6)]
    view = view_of(make_log, events)
    result = make("amortized", max_size=6, keep_first=1).condense(view)
    # tail of 2 is [5, 6]; middle 1..4 holds whole pairs
    assert result == Condensation((1, 2, 3, 4))


def test_amortized_after_a_summary_keeps_the_head(make_log) -> None:
    # SPEC 9: forgotten ids are real ids; the summary (no id) is never forgotten.
    events = [msg(0), msg(1), msg(2), condensation(3, ids=[1], summary="s", offset=1)]
    events += [msg(i) for i in range(4, 12)]
    view = view_of(make_log, events)
    assert ids(view) == [0, "S", 2, 4, 5, 6, 7, 8, 9, 10, 11]
    result = make("amortized", max_size=10, keep_first=1).condense(view)
    assert isinstance(result, Condensation)
    assert 0 not in result.forgotten
    assert result.forgotten == (2, 4, 5, 6, 7)
    assert ids(apply_condensation(view, result)) == [0, "S", 8, 9, 10, 11]


def summary_at_4() -> list[dict[str, Any]]:
    """A view [0, 1, 2, 3, S] (the summary at offset 4), then three run pairs 6..11."""
    head = [msg(i) for i in range(5)]
    return [*head, condensation(5, ids=[4], summary="s", offset=4), *pairs(6, 3)]


def test_amortized_keeps_every_event_before_the_summary(make_log) -> None:
    view = view_of(make_log, summary_at_4())
    assert ids(view) == [0, 1, 2, 3, "S", 6, 7, 8, 9, 10, 11]
    result = make("amortized", max_size=10, keep_first=1).condense(view)
    # forgetting 1..3 would put the summary back at offset 4: between 10 and 11
    assert result == Condensation((6, 7))
    assert ids(apply_condensation(view, result)) == [0, 1, 2, 3, "S", 8, 9, 10, 11]


def test_amortized_with_the_summary_at_the_end_has_nothing_to_forget(make_log) -> None:
    events = [msg(0), msg(1), msg(2), condensation(3, ids=[2], summary="s", offset=9), request(4)]
    view = view_of(make_log, events)
    assert ids(view) == [0, 1, "S"]
    result = make("amortized", max_size=2, keep_first=0, keep_task=False).condense(view)
    assert isinstance(result, View)
    assert result.note == (
        "nothing to forget: the view has 3 events, and the condenser keeps the events up to "
        "the summary and the last 1"
    )


def test_pair_with_the_newest_event_is_kept_whole(make_log) -> None:
    # The newest event answers an action outside the tail of 1: both stay.
    view = view_of(make_log, [msg(0), run_action(1, "c1"), run_obs(2, 1, "c1")])
    result = make("amortized", max_size=2, keep_first=0, keep_task=False).condense(view)
    assert result == Condensation((0,))
    assert ids(apply_condensation(view, result)) == [1, 2]


def test_a_view_of_one_pair_has_nothing_to_forget(make_log) -> None:
    view = view_of(make_log, [run_action(0, "c0"), run_obs(1, 0, "c0"), request(2)])
    result = make("amortized", max_size=2, keep_first=0).condense(view)
    assert isinstance(result, View)
    assert result.note and result.note.startswith("nothing to forget")


def test_range_or_list_form(make_log) -> None:
    events = [msg(0), msg(1), msg(2), condensation(3, ids=[2]), *[msg(i) for i in range(4, 10)]]
    view = view_of(make_log, events)  # ids 0 1 4 5 6 7 8 9
    contiguous = Condensation((1, 4, 5))  # every view id between 1 and 5
    assert condensation_args(contiguous, view)["forgotten_events_start_id"] == 1
    gappy = Condensation((1, 5))
    assert condensation_args(gappy, view)["forgotten_event_ids"] == [1, 5]


# --- conversation_window -------------------------------------------------------------


def opening(task: str = "do it") -> list[dict[str, Any]]:
    return [
        {"id": 0, "source": "agent", "action": "system", "args": {"content": "sys"}},
        msg(1, task),
        {"id": 2, "source": "user", "action": "recall", "args": {"query": task}},
        {"id": 3, "source": "environment", "observation": "recall", "content": "", "cause": 2},
    ]


def test_conversation_window_waits_for_a_request(make_log) -> None:
    view = view_of(make_log, [*opening(), *pairs(4, 5)])
    result = make("conversation_window").condense(view)
    assert isinstance(result, View)


def test_conversation_window_keeps_essentials_and_newer_half(make_log) -> None:
    view = view_of(make_log, [*opening(), *pairs(4, 5), request(14)])
    result = make("conversation_window").condense(view)
    # 14 events, 4 essential, keep 5 newest: slice starts at observation 9 -> start at 10
    assert result == Condensation(tuple(range(4, 10)))
    assert ids(apply_condensation(view, result)) == [0, 1, 2, 3, 10, 11, 12, 13]


def test_conversation_window_keeps_every_event_before_the_summary(make_log) -> None:
    events = [*opening(), msg(4, "more", source="agent")]
    events += [condensation(5, ids=[4], summary="s", offset=4), *pairs(6, 4), request(14)]
    view = view_of(make_log, events)
    assert ids(view) == [0, 1, 2, 3, "S", *range(6, 14)]
    result = make("conversation_window").condense(view)
    assert result == Condensation((6, 7, 8, 9))
    assert ids(apply_condensation(view, result)) == [0, 1, 2, 3, "S", 10, 11, 12, 13]


def test_conversation_window_with_the_summary_past_the_essentials(make_log) -> None:
    events = [*opening(), *pairs(4, 2), msg(8, "x", source="agent")]
    events += [condensation(9, ids=[8], summary="s", offset=6), *pairs(10, 4), request(18)]
    view = view_of(make_log, events)
    assert ids(view) == [0, 1, 2, 3, 4, 5, "S", 6, 7, *range(10, 18)]
    result = make("conversation_window").condense(view)
    # events 4 and 5 precede the summary: kept, so it stays between 5 and the newer half
    assert result == Condensation((6, 7, 10, 11))
    assert ids(apply_condensation(view, result)) == [0, 1, 2, 3, 4, 5, "S", *range(12, 18)]


def test_conversation_window_without_user_message_appends_nothing(make_log) -> None:
    events = [
        {"id": 0, "source": "agent", "action": "system", "args": {}},
        *pairs(1, 4),
        request(9),
    ]
    result = make("conversation_window").condense(view_of(make_log, events))
    assert isinstance(result, View)
    assert result.note == "nothing to forget: the view has no user message to keep"


# --- pipeline -----------------------------------------------------------------------


def test_pipeline_masks_then_forgets_real_ids() -> None:
    view, _ = load_view(str(SAMPLES / "browsing_session.jsonl"))
    pipeline = make(
        "pipeline",
        condensers=[{"type": "browser_output"}, {"type": "amortized", "max_size": 8}],
    )
    result = pipeline.condense(view)
    # 13 events: keep the system prompt and the user's task (0, 1) and the 3 newest
    # (10, 11, 12): forget 2..9
    assert result == Condensation(tuple(range(2, 10)))


def test_pipeline_returns_the_last_view_when_nothing_condenses() -> None:
    view, _ = load_view(str(SAMPLES / "browsing_session.jsonl"))
    result = make(
        "pipeline", condensers=[{"type": "browser_output"}, {"type": "amortized"}]
    ).condense(view)
    assert isinstance(result, View)
    assert "Content omitted" in result[5].text
    assert result[5].id == 5


def test_pipeline_keeps_every_event_before_the_summary(make_log) -> None:
    view = view_of(make_log, summary_at_4())
    stages = [
        {"type": "observation_masking", "attention_window": 1},
        {"type": "amortized", "max_size": 10},
    ]
    result = make("pipeline", condensers=stages).condense(view)
    assert result == Condensation((6, 7))


def test_pipeline_stops_at_the_first_condensation(make_log) -> None:
    view = view_of(make_log, [msg(i) for i in range(11)])
    stages = [{"type": "amortized", "max_size": 10}, {"type": "amortized", "max_size": 4}]
    assert make("pipeline", condensers=stages).condense(view) == Condensation((1, 2, 3, 4, 5, 6))


# --- validation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"type": "amortized", "max_size": 1}, "[condenser] max_size must be at least 2 (got 1)"),
        (
            {"type": "amortized", "max_size": 10, "keep_first": 5},
            "[condenser] keep_first (5) must be less than max_size // 2 (5) so at least one "
            "recent event is kept; raise max_size (now 10) or lower keep_first",
        ),
        (
            {"type": "amortized", "keep_first": -1},
            "[condenser] keep_first must not be negative (got -1)",
        ),
        (
            {"type": "observation_masking", "attention_window": 0},
            "[condenser] attention_window must be at least 1",
        ),
        (
            {"type": "browser_output", "attention_window": 0},
            "[condenser] attention_window must be at least 1",
        ),
        ({"type": "recent", "max_events": 0}, "[condenser] max_events must be at least 1 (got 0)"),
        (  # SPEC 9: OpenHands would show the head plus the whole view, events twice
            {"type": "recent", "keep_first": 5, "max_events": 5},
            "[condenser] keep_first (5) must be less than max_events (5)",
        ),
        (
            {"type": "recent_events", "keep_first": 9, "max_events": 3},
            "[condenser] keep_first (9) must be less than max_events (3)",
        ),
        ({"type": "pipeline"}, "[condenser] condensers must list at least one condenser table"),
        (
            {"type": "pipeline", "condensers": [{"type": "amortized", "max_size": 0}]},
            "[condenser.condensers[0]] max_size must be at least 2 (got 0)",
        ),
    ],
)
def test_bad_values_are_configuration_errors(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        build_condenser(table, LLMTables({}))
    assert caught.value.message == message
