"""OpenHands V1 conversations: reading, neutral facts, both SDK views, appending."""

from __future__ import annotations

import fcntl
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.core.errors import ConfigError, LogBusyError, LogError
from condense_cli.core.events import Problem, model_text
from condense_cli.dialects.counting import TextCounts
from condense_cli.dialects.openhands_v1.appending import (
    append_event,
    event_file_name,
    new_condensation,
    new_condensation_request,
)
from condense_cli.dialects.openhands_v1.detect import SENT_KINDS, UNSENT_KINDS
from condense_cli.dialects.openhands_v1.events import V1Event
from condense_cli.dialects.openhands_v1.facts import Facts, Summary
from condense_cli.dialects.openhands_v1.facts import facts as facts_of
from condense_cli.dialects.openhands_v1.generations import Generation, detect_generation
from condense_cli.dialects.openhands_v1.replay import Replayed, replay
from condense_cli.dialects.openhands_v1.storage import (
    LAST_SUMMARY,
    MULTI_SUMMARY,
    Conversation,
    StoredEvent,
    event_problem,
    read_conversation,
    read_folder,
    read_jsonl_bytes,
)
from tests.conftest import ROOT

V1_CORPUS = ROOT.parent / "shared" / "corpus" / "openhands-v1"
LAST = Generation(LAST_SUMMARY, "test")
MULTI = Generation(MULTI_SUMMARY, "test")

NO_CONDENSATION = "b2688296b4844863aaede6f60a88b9da"
ONE_CONDENSATION = "2fede959a09e489bb4c97f4f81c5830a"
FOUR_CONDENSATIONS = "81f92eeb84c0468dbc1837c63c4f72ec"


def said(problem: Problem) -> str:
    """A problem as `check` prints it: `file:line: message`."""
    return f"{problem.where('?')}: {problem.message}"


def conversations() -> list[Path]:
    return sorted(p for p in V1_CORPUS.glob("*") if p.is_dir())


def corpus(name: str) -> Path:
    """A corpus conversation; skip (fail under CI) when the corpus is not beside the repo."""
    if not V1_CORPUS.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"the V1 corpus is missing at {V1_CORPUS} (CI is set)")
        pytest.skip(f"the V1 corpus is not at {V1_CORPUS}")
    return V1_CORPUS / name


def test_the_corpus_is_present() -> None:
    assert len(os.listdir(corpus(""))) >= 28
    assert len(conversations()) == 28


# --------------------------------------------------------------------------------------
# Corpus: every conversation reads and replays cleanly


@pytest.mark.parametrize("folder", conversations(), ids=lambda p: p.name[:8])
def test_corpus_conversation_reads_and_replays_without_problems(folder: Path) -> None:
    conversation = read_folder(folder)
    files = sorted((folder / "event_service" / "events").glob("event-*.json"))
    assert conversation.problems == ()
    assert [r.position for r in conversation.records] == list(range(len(files)))
    assert [r.raw for r in conversation.records] == [f.read_bytes() for f in files]
    result = replay(conversation)
    assert result.generation.name == LAST_SUMMARY
    assert result.problems == ()
    assert len(result.summaries) == (1 if result.condensations else 0)


def _shape(result: Replayed) -> list[int | str]:
    """The view as file indices, and "S<index of its condensation>" for summaries."""
    return [
        f"S{e.condensation.position}" if isinstance(e, Summary) else e.position
        for e in result.events
    ]


def test_hand_derived_view_without_condensation() -> None:
    # 40 files: system prompt, user message, then 19 tool calls each answered.
    conversation = read_folder(corpus(NO_CONDENSATION))
    for generation in (LAST, MULTI):
        result = replay(conversation, generation)
        assert _shape(result) == list(range(40))
        assert (result.forgotten, result.pending_request, result.dropped) == (0, False, {})


def test_hand_derived_view_with_one_condensation() -> None:
    # event-00082 forgets files 4..46 (43 ids), summary at offset 4. File 47 is the
    # result of the call in file 46, so it loses its call and is dropped.
    conversation = read_folder(corpus(ONE_CONDENSATION))
    expected = [0, 1, 2, 3, "S82", *range(48, 82), *range(83, 91)]
    for generation in (LAST, MULTI):
        result = replay(conversation, generation)
        assert _shape(result) == expected
        assert result.summaries[0].id == "8c818fa8-035d-40f1-9628-8b475c77b884-summary"
        assert result.forgotten == 44
        assert [c.position for c in result.condensations] == [82]
        assert result.dropped == {"tool_call_matching": (conversation.records[47].id,)}


def test_hand_derived_views_with_four_condensations() -> None:
    # Files 82, 125, 168, 211 are condensations, all with summary_offset 4. They forget
    # 4..46; 48..81 and 83..89; 91..124 and 126..132; 134..167 and 169..175. Each later
    # one also forgets one id that is in no file: the random id the 2025 SDK gave the
    # summary it showed. Results 47, 90, 133, 176 lose their calls (46, 89, 132, 175).
    conversation = read_folder(corpus(FOUR_CONDENSATIONS))
    tail = [*range(177, 211), *range(212, 222)]
    last = replay(conversation, LAST)
    assert _shape(last) == [0, 1, 2, 3, "S211", *tail]
    # The current SDK keeps every summary: the old ones' ids were never forgotten.
    multi = replay(conversation, MULTI)
    assert _shape(multi) == [0, 1, 2, 3, "S211", "S168", "S125", "S82", *tail]
    for result in (last, multi):
        assert result.forgotten == 218 - 48
        dropped = tuple(conversation.records[i].id for i in (47, 90, 133, 176))
        assert result.dropped == {"tool_call_matching": dropped}
    assert last.problems == ()
    # Read with the current SDK's rules, those ids are ids of nothing: check warns.
    assert [p.message for p in multi.problems] == [
        f"Condensation {c} forgets 1 id(s) not in the log, e.g. {u}"
        for c, u in [
            ("1c912230-8af2-4ee4-a8a4-27786f23c5f8", "412ef28c-bd86-4b8a-9764-a74bbc69313e"),
            ("9ff206fa-6424-4636-b85f-1ef97662da0b", "4d8eae3f-5416-4ac9-b27a-068fff7ee108"),
            ("5ded3944-c63c-4544-9003-44ba9ad26f37", "5e25ba0c-2df5-4878-b268-34da18e91840"),
        ]
    ]
    assert multi.problems[0].severity == "warning"


def test_upto_replays_the_view_as_it_was() -> None:
    conversation = read_folder(corpus(FOUR_CONDENSATIONS))
    by_position = replay(conversation, LAST, upto=124)
    assert _shape(by_position) == [0, 1, 2, 3, "S82", *range(48, 82), *range(83, 125)]
    by_id = replay(conversation, LAST, upto=conversation.records[124].id)
    assert by_id.ids == by_position.ids
    with pytest.raises(ConfigError, match="has no event with this id"):
        replay(conversation, LAST, upto="no-such-id")


def test_generation_detected_from_dates_and_fields() -> None:
    conversation = read_folder(corpus(ONE_CONDENSATION))
    assert detect_generation(conversation) == Generation(
        LAST_SUMMARY,
        "Condensation 8c818fa8-035d-40f1-9628-8b475c77b884 has no llm_response_id "
        "(written by an SDK from before November 2025)",
    )
    no_condensation = read_folder(corpus(NO_CONDENSATION))
    assert detect_generation(no_condensation).reason == (
        "the newest event is dated 2025-09-25, before the SDK showed several summaries (2026-01-22)"
    )


# --------------------------------------------------------------------------------------
# Neutral facts


def test_facts_of_corpus_events() -> None:
    records = read_folder(corpus(ONE_CONDENSATION)).records
    system, message, action, result = (facts_of(r.data) for r in records[:4])
    assert (system.role, system.type, system.sent) == ("system", "system", True)
    assert system.text.startswith("You are OpenHands agent, a helpful AI assistant")
    assert (message.source, message.role, message.type) == ("user", "user", "message")
    assert message.text.startswith("I have access to a python code repository in the direc")
    assert (action.source, action.role, action.type) == ("agent", "assistant", "think")
    assert action.text.startswith('{"thought": "Let me analyze the issue description:')
    assert action.thought.startswith("I'll help you implement the necessary changes")
    assert action.tool_call_id == "toolu_01EMuWneqQ7STYVQDrebS93t"
    assert action.llm_response_id == "chatcmpl-d60c1a8c-35c1-4fc1-a4be-3a4ab6add77b"
    assert result == Facts(
        source="environment",
        role="tool",
        type="think",
        text="Your thought has been logged.",
        thought="",
        reasoning="",
        tool_call_id="toolu_01EMuWneqQ7STYVQDrebS93t",
        llm_response_id=None,
        sent=True,
        thinking=False,
    )
    condensation = facts_of(records[82].data)
    assert (condensation.role, condensation.type, condensation.sent) == (
        None,
        "condensation",
        False,
    )


@pytest.mark.parametrize(
    ("event", "role", "text"),
    [
        ({"kind": "AgentErrorEvent", "error": "bad args"}, "tool", "bad args"),
        (
            {"kind": "UserRejectObservation", "rejection_reason": "no"},
            "tool",
            "Action rejected: no",
        ),
        (
            {"kind": "ObservationEvent", "observation": {"content": [{"text": "a"}]}},
            "tool",
            "a",
        ),
        (
            {"kind": "ObservationEvent", "observation": {"output": "out", "error": False}},
            "tool",
            "out",
        ),
    ],
)
def test_facts_of_tool_results(event: dict[str, Any], role: str, text: str) -> None:
    data = {"id": "abcdef12", "tool_name": "bash", "tool_call_id": "c1", **event}
    facts = facts_of(data)
    assert (facts.role, facts.type, facts.text, facts.tool_call_id) == (role, "bash", text, "c1")


PAGE = "https://example.com/a"


@pytest.mark.parametrize(
    ("observation", "kind", "url", "exit_code"),
    [
        ({"content": "ok", "exit_code": 0}, "ObservationEvent", "", 0),
        ({"content": "", "metadata": {"exit_code": 2}}, "ObservationEvent", "", 2),
        ({"exit_code": 3, "metadata": {"exit_code": 2}}, "ObservationEvent", "", 3),
        ({"exit_code": -1}, "ObservationEvent", "", None),  # still running
        ({"exit_code": True}, "ObservationEvent", "", None),
        ({"exit_code": "1"}, "ObservationEvent", "", None),
        ({"url": PAGE, "content": "page"}, "ObservationEvent", PAGE, None),
        ({"url": 7}, "ObservationEvent", "", None),
        ({"url": "https://example.com/", "exit_code": 1}, "AgentErrorEvent", "", None),
    ],
)
def test_facts_of_a_tool_result_give_its_address_and_exit_code(
    observation: dict[str, Any], kind: str, url: str, exit_code: int | None
) -> None:
    data = {"kind": kind, "id": "abcdef12", "tool_name": "bash", "observation": observation}
    facts = facts_of(data)
    assert (facts.url, facts.exit_code) == (url, exit_code)
    stored = V1Event.of(_record(data))
    assert (stored.url, stored.exit_code) == (url, exit_code)


@pytest.mark.parametrize("call", ["toolu_1", 7, None, ["c"]])
@pytest.mark.parametrize("kind", ["ActionEvent", "ObservationEvent", "MessageEvent"])
def test_an_event_pairs_by_its_stored_call_as_by_its_data(kind: str, call: Any) -> None:
    """A view's event pairs by the `tool_call_id` its file was read with (no parse),
    as the event made from its data does."""
    data = {"kind": kind, "id": "abcdef12", "source": "agent", "tool_call_id": call}
    stored = V1Event.of(_record(data))
    assert stored.tool_call_id == V1Event(data, 0, None).tool_call_id
    assert stored.tool_call_id == (call if isinstance(call, str) else None)


def test_corpus_events_pair_by_their_stored_calls_as_by_their_data() -> None:
    pairs = []
    for folder in conversations() or [corpus(NO_CONDENSATION)]:
        for record in read_folder(folder).records:
            event = V1Event.of(record)
            pairs.append((event.tool_call_id, V1Event(record.data, 0, None).tool_call_id))
    assert all(x == y for x, y in pairs) and sum(x is not None for x, _ in pairs) > 1000


def test_events_never_sent_to_the_model() -> None:
    for kind in sorted(UNSENT_KINDS):
        assert facts_of({"kind": kind, "id": "abcdef12"}).sent is False
    assert SENT_KINDS.isdisjoint(UNSENT_KINDS)


# --------------------------------------------------------------------------------------
# Synthetic conversations


def _record(data: dict[str, Any], position: int = 0) -> StoredEvent:
    return StoredEvent(position, data["id"], data["kind"], orjson.dumps(data), data, "t")


def _id(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-000000000000"


def system(n: int) -> dict[str, Any]:
    return {"kind": "SystemPromptEvent", "id": _id(n), "source": "agent"}


def message(n: int) -> dict[str, Any]:
    return {"kind": "MessageEvent", "id": _id(n), "source": "user", "llm_message": {}}


def call(n: int, response: str, thinking: bool = False) -> dict[str, Any]:
    event = {
        "kind": "ActionEvent",
        "id": _id(n),
        "source": "agent",
        "tool_name": "bash",
        "tool_call_id": f"call{n}",
        "llm_response_id": response,
        "thought": [],
    }
    if thinking:
        event["thinking_blocks"] = [{"type": "thinking", "thinking": "hm"}]
    return event


def result(n: int, call_n: int) -> dict[str, Any]:
    return {
        "kind": "ObservationEvent",
        "id": _id(n),
        "source": "environment",
        "tool_name": "bash",
        "tool_call_id": f"call{call_n}",
        "observation": {"content": [{"type": "text", "text": f"out{n}"}]},
    }


def condensation(n: int, forget: list[int], offset: int | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {
        "kind": "Condensation",
        "id": _id(n),
        "source": "environment",
        "forgotten_event_ids": [_id(i) for i in forget],
        "llm_response_id": "r",
    }
    if offset is not None:
        event |= {"summary": f"summary {n}", "summary_offset": offset}
    return event


def request(n: int) -> dict[str, Any]:
    return {"kind": "CondensationRequest", "id": _id(n), "source": "environment"}


def write_folder(folder: Path, events: list[dict[str, Any]]) -> Path:
    events_dir = folder / "events"
    events_dir.mkdir(parents=True)
    for i, event in enumerate(events):
        (events_dir / event_file_name(i, event["id"])).write_bytes(orjson.dumps(event))
    return folder


def write_jsonl(path: Path, events: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
    return path


def numbers(result: Replayed) -> list[int | str]:
    return [
        f"S{int(e.condensation.id[:8], 16)}" if isinstance(e, Summary) else int(e.id[:8], 16)
        for e in result.events
    ]


def conv(events: list[dict[str, Any]]) -> Conversation:
    records = tuple(_record(e, i) for i, e in enumerate(events))
    return Conversation("t", records, ())


def test_summaries_coexist_only_in_the_current_generation() -> None:
    events = [system(0), message(1), message(2), condensation(3, [2], 1), message(4)]
    events += [condensation(5, [4], 1)]
    assert numbers(replay(conv(events), MULTI)) == [0, "S5", "S3", 1]
    assert numbers(replay(conv(events), LAST)) == [0, "S5", 1]


def test_a_condensation_forgets_an_earlier_summary_by_its_id() -> None:
    events = [system(0), message(1), condensation(2, [1], 1), message(3)]
    events.append(condensation(4, [], 1) | {"forgotten_event_ids": [f"{_id(2)}-summary", _id(3)]})
    assert numbers(replay(conv(events), MULTI)) == [0, "S4"]


def test_forgetting_a_later_event_only_counts_in_the_2025_generation() -> None:
    events = [system(0), condensation(1, [2]), message(2)]
    assert numbers(replay(conv(events), MULTI)) == [0, 2]
    assert numbers(replay(conv(events), LAST)) == [0]
    (problem,) = replay(conv(events), MULTI).problems
    assert (
        problem.message
        == f"Condensation {_id(1)} forgets 1 event(s) stored after it, e.g. {_id(2)}"
    )


def test_a_summary_past_the_end_goes_at_the_end() -> None:
    events = [system(0), message(1), condensation(2, [1], 5)]
    result = replay(conv(events), MULTI)
    assert numbers(result) == [0, "S2"]
    assert [p.message for p in result.problems] == [
        f"Condensation {_id(2)} puts its summary at offset 5, past the end of the view "
        "(1 events); it goes at the end"
    ]


def test_a_request_after_the_last_condensation_is_pending() -> None:
    events = [system(0), request(1), condensation(2, []), message(3)]
    assert replay(conv(events)).pending_request is False
    assert replay(conv([*events, request(4)])).pending_request is True


def test_parallel_calls_are_kept_or_dropped_together() -> None:
    events = [system(0), call(1, "r1"), call(2, "r1"), result(3, 1), result(4, 2)]
    events.append(condensation(5, [2, 4]))
    assert numbers(replay(conv(events), MULTI)) == [0]
    assert numbers(replay(conv(events), LAST)) == [0, 1, 3]


def test_a_thinking_led_tool_loop_is_kept_whole() -> None:
    events = [system(0), message(1), call(2, "a", thinking=True), result(3, 2)]
    events += [call(4, "b"), result(5, 4), message(6), condensation(7, [4, 5])]
    result_ = replay(conv(events), MULTI)
    assert numbers(result_) == [0, 1, 6]
    assert result_.dropped == {"tool_loop_atomicity": (_id(2), _id(3))}


def test_a_second_result_for_one_call_is_dropped() -> None:
    events = [system(0), call(1, "a"), result(2, 1), result(3, 1)]
    assert numbers(replay(conv(events), MULTI)) == [0, 1, 2]
    assert numbers(replay(conv(events), LAST)) == [0, 1, 2, 3]


def test_events_not_sent_are_left_out() -> None:
    events = [system(0), {"kind": "PauseEvent", "id": _id(1), "source": "user"}, message(2)]
    events.append({"kind": "ConversationStateUpdateEvent", "id": _id(3), "source": "environment"})
    for generation in (LAST, MULTI):
        assert numbers(replay(conv(events), generation)) == [0, 2]


def test_only_the_active_branch_of_a_conversation_tree_is_replayed() -> None:
    events = [system(0), message(1) | {"parent_id": _id(0)}, message(2) | {"parent_id": _id(0)}]
    conversation = conv(events)
    assert numbers(replay(conversation)) == [0, 2]
    on_first = Conversation("t", conversation.records, (), base_state={"leaf_event_id": _id(1)})
    assert numbers(replay(on_first)) == [0, 1]
    assert detect_generation(conversation).name == MULTI_SUMMARY


# --------------------------------------------------------------------------------------
# Reading: folders, JSONL, and one problem per defect


def test_folder_and_jsonl_inputs_read_the_same(tmp_path: Path) -> None:
    folder = corpus(FOUR_CONDENSATIONS)
    files = sorted((folder / "event_service" / "events").glob("event-*.json"))
    jsonl = tmp_path / "events.jsonl"
    jsonl.write_bytes(b"".join(f.read_bytes() + b"\n" for f in files))
    from_folder = read_folder(folder)
    for from_jsonl in (read_conversation(str(jsonl)), read_jsonl_bytes(jsonl.read_bytes())):
        assert from_jsonl.problems == ()
        assert [(r.position, r.id, r.kind, r.raw) for r in from_jsonl.records] == [
            (r.position, r.id, r.kind, r.raw) for r in from_folder.records
        ]
        assert replay(from_jsonl).ids == replay(from_folder).ids
    assert from_jsonl.records[5].line == 6


def test_a_folder_read_holds_each_repeated_string_once_and_every_path_as_it_is(
    tmp_path: Path,
) -> None:
    events = [system(0), message(1), call(2, "r1"), call(3, "r1"), result(4, 2), result(5, 3)]
    events += [condensation(6, [2, 3, 4, 5], 1), message(7)]
    folder = write_folder(tmp_path / "c", events)
    odd = folder / "events" / f"event-000007-{_id(7)}.json"  # six digits: still read
    (folder / "events" / event_file_name(7, _id(7))).rename(odd)
    records = read_folder(folder).records
    files = [str(folder / "events" / event_file_name(i, _id(i))) for i in range(7)]
    assert [r.path for r in records] == [*files, str(odd)]  # made, or kept when odd
    assert [r._path for r in records] == [None] * 7 + [str(odd)]
    assert records[2].response is records[3].response  # one response's calls
    assert records[4].call is records[2].call and records[5].call is records[3].call
    assert [r.kind for r in records[4:6]] == ["ObservationEvent"] * 2
    assert records[4].kind is records[5].kind and records[2].tool is records[5].tool
    forgotten = records[6].data["forgotten_event_ids"]
    assert forgotten == [_id(i) for i in (2, 3, 4, 5)]
    assert all(x is records[i].id for x, i in zip(forgotten, (2, 3, 4, 5), strict=True))


@pytest.mark.parametrize(
    "given",
    ["", "event_service", "event_service/events"],
    ids=["conversation", "service", "events"],
)
def test_a_conversation_is_found_from_any_of_its_folders(given: str) -> None:
    folder = corpus(NO_CONDENSATION)
    assert len(read_folder(folder / given).records) == 40


def test_a_folder_without_events_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LogError, match="no events/ folder here"):
        read_folder(tmp_path)


def test_a_gap_ends_the_conversation_and_is_reported(tmp_path: Path) -> None:
    write_folder(tmp_path, [system(0), message(1), message(2), message(3), message(4)])
    events_dir = tmp_path / "events"
    (events_dir / event_file_name(2, _id(2))).unlink()
    conversation = read_folder(tmp_path)
    assert [r.position for r in conversation.records] == [0, 1]
    (problem,) = conversation.problems
    assert said(problem) == (
        f"{events_dir / event_file_name(3, _id(3))}: index 2 is missing "
        f"(after {event_file_name(1, _id(1))}); the SDK stops reading at the gap, "
        "so this file and 1 later ones are not part of the conversation"
    )
    with pytest.raises(LogError, match="event index 2 is missing"):
        append_event(tmp_path, new_condensation_request())


BAD_LINES = [
    (
        b"{nope",
        "invalid JSON at column 2: unexpected character, expected a string key "
        "(line starts '{nope')",
    ),
    (b"[1]", "expected a JSON object, got an array"),
    (b'{"id": "abcdef12"}', 'no "kind"; a V1 event names its class in "kind"'),
    (b'{"kind": "Nope", "id": "abcdef12"}', "unknown event kind 'Nope'"),
    (b'{"kind": "MessageEvent"}', 'missing "id"'),
    (b'{"kind": "MessageEvent", "id": 7}', '"id" must be a non-empty string, got an integer'),
    (
        b'{"kind": "ActionEvent", "id": "abcdef12"}',
        'ActionEvent without a string "tool_call_id"',
    ),
    (
        b'{"kind": "ActionEvent", "id": "abcdef12", "tool_call_id": "c1", '
        b'"llm_response_id": {"r": 1}}',
        '"llm_response_id" must be a string, got an object',
    ),
    (
        b'{"kind": "Condensation", "id": "abcdef12", "summary_offset": -1}',
        '"summary_offset" must be 0 or more, got -1',
    ),
    (
        b'{"kind": "Condensation", "id": "abcdef12", "forgotten_event_ids": [1]}',
        '"forgotten_event_ids" must be a list of event id strings',
    ),
]


@pytest.mark.parametrize(("line", "message"), BAD_LINES)
def test_one_clear_problem_per_bad_jsonl_line(line: bytes, message: str) -> None:
    good = orjson.dumps(system(0))
    conversation = read_jsonl_bytes(good + b"\n\n" + line + b"\n", "log.jsonl")
    assert [said(p) for p in conversation.problems] == [f"log.jsonl:3: {message}"]
    assert [r.id for r in conversation.records] == [_id(0)]


def test_duplicate_ids_are_reported_with_the_first_place() -> None:
    line = orjson.dumps(message(1))
    conversation = read_jsonl_bytes(line + b"\n" + line + b"\n", "log.jsonl")
    assert [said(p) for p in conversation.problems] == [
        f"log.jsonl:2: duplicate id {_id(1)} (first at log.jsonl:1)"
    ]


def test_folder_defects_are_each_reported_once(tmp_path: Path) -> None:
    write_folder(tmp_path, [system(0), message(1), message(2), message(3)])
    events_dir = tmp_path / "events"
    (events_dir / event_file_name(1, _id(1))).write_bytes(orjson.dumps(message(9)))
    (events_dir / event_file_name(2, _id(2))).write_bytes(b"")
    (events_dir / "event-00003-zzzz.json").write_bytes(b"{}")
    (events_dir / event_file_name(3, _id(7))).write_bytes(orjson.dumps(message(7)))
    (events_dir / "notes.txt").write_bytes(b"hi")
    problems = read_folder(tmp_path).problems
    ignored = "not an event file name (event-NNNNN-<id>.json); the SDK ignores it"
    twice = f"index 3 is also used by {event_file_name(3, _id(3))}; "
    assert [(Path(p.path).name, p.message, p.severity) for p in problems] == [
        (event_file_name(3, _id(7)), twice + "the SDK reads only one of them", "error"),
        ("event-00003-zzzz.json", ignored, "warning"),
        ("notes.txt", ignored, "warning"),
        (
            event_file_name(1, _id(1)),
            f"the file name says id {_id(1)} but the event's id is {_id(9)}",
            "error",
        ),
        (event_file_name(2, _id(2)), "empty file; the SDK skips it", "error"),
    ]


def _everything(conversation: Conversation) -> list[Any]:
    """What a read holds: every problem, and every slot of every record."""
    slots = [n for n in StoredEvent.__slots__ if n != "_raw"]
    held = [(p.path, p.line, p.message, p.severity) for p in conversation.problems]
    return held + [[getattr(r, n) for n in slots] + [r.path, r.raw] for r in conversation.records]


@pytest.mark.parametrize("chunk", [1, 2, 1000])
def test_a_folder_read_in_two_processes_is_the_one_read_in_one(
    chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from condense_cli.dialects.openhands_v1 import storage
    from condense_cli.fast.halves import Worker

    events = [system(0), message(1), call(2, "r1"), call(3, "r1", thinking=True), result(4, 2)]
    events += [result(5, 3), condensation(6, [2, 3, 4, 5], 1), message(7), message(8)]
    events += [message(9) | {"parent_id": _id(8)}, message(10) | {"parent_id": None}]
    events += [message(11), message(12), call(13, "r2"), result(14, 13), message(15)]
    folder = write_folder(tmp_path, events)
    events_dir = folder / "events"
    (events_dir / event_file_name(8, _id(8))).write_bytes(orjson.dumps(message(1)))  # twice
    (events_dir / event_file_name(11, _id(11))).write_bytes(b"")
    (events_dir / event_file_name(12, _id(12))).write_bytes(b"{not json")
    (events_dir / event_file_name(15, _id(15))).write_bytes(orjson.dumps(message(16)))
    monkeypatch.setattr(storage, "CHUNK_FILES", chunk)
    monkeypatch.setenv("CONDENSE_STATS_SPLIT_MIN_BYTES", str(1 << 60))
    alone = read_folder(folder)
    started: list[int] = []
    start = Worker.start.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Worker], task: Any) -> Worker | None:
        worker = start(cls, task)
        started.append(worker.pid if worker is not None else 0)
        return worker

    monkeypatch.setattr(Worker, "start", classmethod(counted))
    monkeypatch.setenv("CONDENSE_STATS_SPLIT_MIN_BYTES", "0")
    both = read_folder(folder)
    assert len(started) == 1 and started[0] > 0  # a child read the second half
    assert len(alone.problems) == 5 and len(alone.records) == 13
    assert _everything(both) == _everything(alone)
    assert [r.parent is storage.NO_PARENT for r in both.records[-5:]] == [False] * 2 + [True] * 3
    assert replay(both).ids == replay(alone).ids
    # counts that would not follow the events kept (a duplicate id dropped) are not kept
    counting = storage.ReadCounting(TextCounts(None), lambda *_: "text")
    assert read_folder(folder, counting).counted is None


@pytest.mark.parametrize(
    ("chunk", "split"), [(1000, str(1 << 60)), (1000, "0"), (1, "0"), (7, "0")]
)
def test_a_folder_read_counts_what_the_stats_walk_counts(
    chunk: int, split: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read asked to count gives the counts of the walk over the events it kept,
    in one process or two (its child sending its counts with each part)."""
    from condense_cli.dialects import read_log
    from condense_cli.dialects.openhands_v1 import storage
    from condense_cli.llm.tokens import tokenizer_for

    folder = corpus(FOUR_CONDENSATIONS)
    tokenizer = tokenizer_for("gpt-4o-mini")
    monkeypatch.setattr(storage, "CHUNK_FILES", chunk)
    monkeypatch.setenv("CONDENSE_STATS_SPLIT_MIN_BYTES", split)
    with read_log(str(folder), counts=TextCounts(tokenizer)) as replay:
        counted = replay.conversation.counted
        sent = [r for r in replay.conversation.records if r.sent]
    monkeypatch.setenv("CONDENSE_STATS_SPLIT_MIN_BYTES", str(1 << 60))
    walked = TextCounts(tokenizer).walk(model_text(V1Event.read(r)) for r in sent)
    assert counted is not None and len(counted.chars) == len(sent) > 100
    assert counted.full == walked.full and counted.full.tokens > 0
    assert (counted.chars, counted.tokens, counted.hashes) == (
        walked.chars,
        walked.tokens,
        walked.hashes,
    )


def test_a_view_converts_as_its_two_parts_cut_at_a_tool_result(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cut at any tool result, a view's two parts convert to the view's messages, with
    parallel calls and joined user turns; `conversion_cut` is the first past the
    middle, and `stats` converts the view in two processes from there."""
    from condense_cli.dialects import read_log

    events = [system(0), message(1) | {"parent_id": None}, message(2), call(3, "r1")]
    events += [call(4, "r1"), result(5, 3), result(6, 4), message(7), call(8, "r2")]
    events += [result(9, 8), message(10), message(11), call(12, "r3"), call(13, "r3")]
    events += [result(14, 12), result(15, 13), message(16), condensation(17, [7, 8, 9], 2)]
    folder = str(write_folder(tmp_path / "c", events))
    with read_log(folder) as replay:
        view = replay.view()
        assert replay.keyed_summaries  # user turns are joined
        whole = replay.messages(view).messages

        def in_parts(at: int) -> list[dict[str, Any]]:
            first = replay.messages(view.with_events(view.events[:at])).messages
            return first + replay.messages(view.with_events(view.events[at:])).messages

        results = [i for i, e in enumerate(view) if e.data["kind"] == "ObservationEvent"]
        assert [in_parts(at) == whole for at in results] == [True] * 4
        # no other cut: inside joined user turns (the summary's among them) or a batch
        assert [at for at in range(1, len(view)) if in_parts(at) != whole] == [2, 3, 5, 9, 11]
        cut = replay.conversion_cut(view)
        assert cut == min(i for i in results if i >= len(view) // 2)
    monkeypatch.setenv("CONDENSE_STATS_SPLIT_MIN_BYTES", str(1 << 60))
    one = cli("stats", folder, "-f", "json")
    monkeypatch.setenv("CONDENSE_STATS_SPLIT_MIN_BYTES", "0")
    two = cli("stats", folder, "-f", "json")
    assert one.stdout == two.stdout and orjson.loads(one.stdout)["messages"]["count"] == 10


def test_stats_takes_the_counts_of_a_folder_read_that_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`stats` reads no event file again when the read counted with its tokenizer, and
    gives the same report; counts made without that tokenizer are not taken."""
    from condense_cli.dialects import read_log
    from condense_cli.dialects.openhands_v1 import storage
    from condense_cli.llm.tokens import tokenizer_for

    folder = str(corpus(FOUR_CONDENSATIONS))
    tokenizer = tokenizer_for("gpt-4o-mini")
    with read_log(folder) as replay:
        plain = replay.stats(tokenizer).to_json()
        sent = sum(1 for r in replay.conversation.records if r.sent)
    reads: list[str] = []
    read_file = storage.read_event_file

    def read_again(path: str) -> bytes:
        reads.append(path)
        return read_file(path)

    for counts, again in ((TextCounts(tokenizer), 0), (TextCounts(None), sent)):
        with read_log(folder, counts=counts) as replay:
            reads.clear()
            monkeypatch.setattr(storage, "read_event_file", read_again)
            assert replay.stats(tokenizer).to_json() == plain
            monkeypatch.setattr(storage, "read_event_file", read_file)
        assert len(reads) == again


# --------------------------------------------------------------------------------------
# Appending


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def copied(tmp_path: Path) -> Path:
    target = tmp_path / "conversation"
    shutil.copytree(corpus(NO_CONDENSATION), target)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)  # the corpus is read-only
    return target


def test_new_condensation_has_the_fields_the_current_sdk_requires() -> None:
    event = new_condensation(["a", "b", "a"], summary="s", summary_offset=4)
    assert list(event) == [
        "kind",
        "id",
        "timestamp",
        "source",
        "forgotten_event_ids",
        "summary",
        "summary_offset",
        "llm_response_id",
    ]
    assert event["forgotten_event_ids"] == ["a", "b"]
    assert uuid.UUID(event["id"]).version == 4
    assert uuid.UUID(event["llm_response_id"]).version == 4
    assert event_problem(event) is None
    bare = new_condensation(["a"], llm_response_id="chatcmpl-1")
    assert "summary" not in bare and bare["llm_response_id"] == "chatcmpl-1"
    with pytest.raises(ValueError, match="go together"):
        new_condensation([], summary="s")
    assert list(new_condensation_request()) == ["kind", "id", "timestamp", "source"]


def test_append_writes_the_next_event_file_and_nothing_else(copied: Path) -> None:
    before = _snapshot(copied)
    event = new_condensation([_id(99)], summary="sum", summary_offset=1)
    path = append_event(copied, event, expected_next=40)
    events_dir = copied / "event_service" / "events"
    assert path == events_dir / f"event-00040-{event['id']}.json"
    assert path.read_bytes() == orjson.dumps(event)
    after = _snapshot(copied)
    assert after.pop(str(path.relative_to(copied))) == orjson.dumps(event)
    assert after.pop("event_service/events/.eventlog.lock") == b""
    assert after == before
    conversation = read_folder(copied)
    assert conversation.problems == ()
    assert conversation.records[-1].data == event
    assert conversation.records[-1].position == 40
    result = replay(conversation, MULTI)
    assert result.summaries[0].id == f"{event['id']}-summary"


def test_append_waits_for_the_sdk_lock(copied: Path) -> None:
    lock = copied / "event_service" / "events" / ".eventlog.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(LogBusyError, match="could not lock"):
            append_event(copied, new_condensation_request(), timeout=0.1)
    finally:
        os.close(fd)
    assert len(read_folder(copied).records) == 40


def test_append_excludes_the_sdk_own_filelock(copied: Path) -> None:
    filelock = pytest.importorskip("filelock")
    lock = filelock.FileLock(str(copied / "event_service" / "events" / ".eventlog.lock"))
    with lock, pytest.raises(LogBusyError):
        append_event(copied, new_condensation_request(), timeout=0.1)
    append_event(copied, new_condensation_request(), timeout=0.1)


def test_append_refuses_when_the_conversation_changed(copied: Path) -> None:
    with pytest.raises(LogBusyError, match="39 events read, 40 now"):
        append_event(copied, new_condensation_request(), expected_next=39)
    taken = read_folder(copied).records[3].id
    with pytest.raises(LogError, match=f"id {taken} is taken"):
        append_event(copied, new_condensation_request() | {"id": taken})
    with pytest.raises(LogError, match="cannot name an event file"):
        append_event(copied, new_condensation_request() | {"id": "not hex!"})
    assert len(read_folder(copied).records) == 40


# --- --format messages ---------------------------------------------------------------


def test_messages_batch_one_responses_calls_and_show_summaries_as_user_turns(
    tmp_path: Path, cli, proc
) -> None:
    bash = {
        "kind": "ExecuteBashObservation",
        "output": "hi",
        "error": False,
        "metadata": {"exit_code": 0, "working_dir": "/w", "prefix": "", "suffix": ""},
    }
    events = [
        {**system(0), "system_prompt": {"type": "text", "text": "You are an agent."}},
        {
            **message(1),
            "llm_message": {"role": "user", "content": [{"type": "text", "text": "go"}]},
        },
        {
            **call(2, "r1"),
            "thought": [{"type": "text", "text": "two"}],
            "tool_call": {
                "id": "call2",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"c":1}'},
            },
        },
        {
            **call(3, "r1"),
            "tool_call": {
                "id": "call3",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"c":2}'},
            },
        },
        {**result(4, 2), "observation": bash},
        result(5, 3),
        condensation(6, [], offset=1),
    ]
    path = write_jsonl(tmp_path / "conversation.jsonl", events)

    def calls(*ids: tuple[str, str]) -> list[dict[str, Any]]:
        return [
            {"id": i, "type": "function", "function": {"name": "bash", "arguments": a}}
            for i, a in ids
        ]

    expected = [
        {"role": "system", "content": "You are an agent."},
        {  # the multi-summary SDK joins a summary and the user message after it
            "role": "user",
            "content": [{"type": "text", "text": "summary 6"}, {"type": "text", "text": "go"}],
        },
        {
            "role": "assistant",
            "content": "two",
            "tool_calls": calls(("call2", '{"c":1}'), ("call3", '{"c":2}')),
        },
        {
            "role": "tool",
            "content": "hi\n[Current working directory: /w]\n[Command finished with exit code 0]",
            "tool_call_id": "call2",
            "name": "bash",
        },
        {"role": "tool", "content": "out5", "tool_call_id": "call3", "name": "bash"},
    ]
    done = cli("view", path, "-f", "messages", "--dialect", "openhands-v1")
    assert done.exit_code == 0, done.output
    assert orjson.loads(done.stdout_bytes) == expected
    assert orjson.loads(proc("view", path, "-f", "messages").stdout) == expected
