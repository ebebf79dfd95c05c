"""A Gemini CLI session read as the client's loader reads it: records that replace a
message, `$set` lists, rewinds, a run's first `$set`, compressions and their copies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from condense_cli.dialects import read_log
from condense_cli.dialects.base import Replay
from tests.dialects.gemini_cli.story import HEADER, TS

CONTEXT = {
    "id": "ctx",
    "timestamp": TS,
    "type": "user",
    "content": [{"text": "<session_context>\nlinux\n</session_context>"}],
}


def user(n: int, text: str) -> dict[str, Any]:
    return {"id": f"u{n}", "timestamp": TS, "type": "user", "content": [{"text": text}]}


def model(n: int, text: str, **more: Any) -> dict[str, Any]:
    return {
        "id": f"g{n}",
        "timestamp": TS,
        "type": "gemini",
        "content": text,
        "model": "gemini-2.5-pro",
    } | more


def write(path: Path, records: list[dict[str, Any]], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return path


def shown(replay: Replay) -> list[tuple[object, str]]:
    return [(e.id, e.text) for e in replay.view()]


def start(*messages: dict[str, Any]) -> list[dict[str, Any]]:
    return [HEADER, {"$set": {"messages": [CONTEXT]}}, *messages]


def test_a_record_that_repeats_an_id_replaces_the_message_where_it_stood(tmp_path: Path) -> None:
    call = {"id": "c1", "name": "read_file", "args": {"file_path": "a.txt"}, "result": "A"}
    log = write(
        tmp_path / "s.jsonl",
        start(
            user(1, "Read a.txt"), model(1, ""), model(1, "", toolCalls=[call]), model(2, "Done.")
        ),
    )
    with read_log(str(log)) as replay:
        assert replay.dialect == "gemini-cli"
        assert [e.type for e in replay.view()] == ["context", "message", "read_file", "message"]
        assert [e.id for e in replay.view()] == [1, 2, 3, 4]
        assert replay.model == "gemini-2.5-pro"


def test_a_rewind_drops_the_message_and_every_later_one(tmp_path: Path) -> None:
    records = start(user(1, "First"), model(1, "One"), user(2, "Second"), model(2, "Two"))
    log = write(tmp_path / "s.jsonl", [*records, {"$rewindTo": "u2"}, user(3, "Instead")])
    with read_log(str(log)) as replay:
        assert [t for _, t in shown(replay)][1:] == ["First", "One", "Instead"]
        assert not replay.condensations  # a rewind is the user's undo, no compression
        assert [e.text for e in replay.history()][1:] == ["First", "One", "Instead"]
    unknown = write(tmp_path / "u.jsonl", [*records, {"$rewindTo": "nowhere"}, user(3, "Anew")])
    with read_log(str(unknown)) as replay:
        assert [t for _, t in shown(replay)] == ["Anew"]  # all of it, as the client does


def test_a_run_that_resumes_in_the_same_minute_is_no_compression(tmp_path: Path) -> None:
    first = [user(1, "Where is the parser?"), model(1, "In src/.")]
    again = [
        HEADER,
        {"$set": {"messages": [CONTEXT]}},
        {"$set": {"sessionId": HEADER["sessionId"]}},
    ]
    again.append({"$set": {"messages": [CONTEXT, *first]}})
    log = write(tmp_path / "s.jsonl", [*start(*first), *again, user(2, "And the tests?")])
    with read_log(str(log)) as replay:
        assert replay.condensations == [] and replay.forgotten_events == 0
        assert shown(replay)[1:] == [
            (2, "Where is the parser?"),
            (3, "In src/."),
            (4, "And the tests?"),
        ]


def test_a_compression_forgets_and_keeps_copies_under_their_numbers(tmp_path: Path) -> None:
    first = [user(1, "Keep the API stable."), model(1, "Noted."), user(2, "Read the notes.")]
    kept = dict(first[2], id="copy")  # the client keeps it under a new id
    snapshot = user(9, "<state_snapshot>the API stays</state_snapshot>")
    ack = model(9, "Got it. Thanks for the additional context!")
    log = write(
        tmp_path / "s.jsonl",
        [*start(*first), {"$set": {"messages": [CONTEXT, snapshot, ack, kept]}}, model(3, "Done.")],
    )
    with read_log(str(log)) as replay:
        view = replay.view()
        assert view.summary is not None and "the API stays" in view.summary.text
        assert [e.id for e in view if not e.is_summary] == [1, 6, 4, 7]
        [record] = replay.condensations
        assert (record.ranges, record.forgotten_events) == ([(2, 3)], 2)
        assert replay.forgotten_events == 2
        [step] = replay.condensation_steps()
        assert [e.text for e in step.forgotten] == ["Keep the API stable.", "Noted."]


def test_notes_and_slash_commands_are_not_in_the_view(tmp_path: Path) -> None:
    note = {"id": "i1", "timestamp": TS, "type": "info", "content": "Switched model"}
    log = write(
        tmp_path / "s.jsonl", start(user(1, "/stats"), note, user(2, "Fix it"), model(1, "Done"))
    )
    with read_log(str(log)) as replay:
        assert [t for _, t in shown(replay)][1:] == ["Fix it", "Done"]


def test_upto_stops_at_a_line_or_a_message(tmp_path: Path) -> None:
    log = write(tmp_path / "s.jsonl", start(user(1, "One"), model(1, "Two"), user(2, "Three")))
    with read_log(str(log), upto="4") as replay:
        assert [t for _, t in shown(replay)][1:] == ["One", "Two"]
    with read_log(str(log), upto="u1") as replay:
        assert [t for _, t in shown(replay)][1:] == ["One"]


def test_a_torn_last_line_is_not_read_and_a_broken_one_is_skipped_as_the_client_does(
    tmp_path: Path, cli
) -> None:
    torn = write(tmp_path / "t.jsonl", start(user(1, "One")), tail='{"id": "g1", "ty')
    with read_log(str(torn), collect=True) as replay:
        assert [p.message for p in replay.problems] == [
            "the last line is cut off (torn write); it is not read"
        ]
    broken = write(tmp_path / "b.jsonl", start(user(1, "One")), tail="not json\n")
    with read_log(str(broken)) as replay:
        assert [t for _, t in shown(replay)][1:] == ["One"]
    assert cli("check", broken).exit_code == 0
    strict = cli("check", "--strict", broken)
    assert strict.exit_code == 1 and "b.jsonl:4: warning: invalid JSON" in strict.output
    assert "the client skips this line" in strict.output


def test_a_request_is_pending_until_the_next_compression(tmp_path: Path) -> None:
    records = start(user(1, "One"), model(1, "Two"))
    log = write(tmp_path / "s.jsonl", [*records, {"$condenseRequest": {"requestedBy": "condense"}}])
    with read_log(str(log)) as replay:
        assert replay.view().unhandled_request
    done = write(
        tmp_path / "d.jsonl",
        [*records, {"$condenseRequest": {}}, {"$set": {"messages": [CONTEXT, user(5, "summary")]}}],
    )
    with read_log(str(done)) as replay:
        assert not replay.view().unhandled_request and replay.view().summary is not None


def test_a_session_of_one_json_document_is_its_list(tmp_path: Path, cli) -> None:
    """2025 releases wrote a session as one JSON document, rewritten whole."""
    document = {k: v for k, v in HEADER.items() if k != "kind"}
    document["messages"] = [user(1, "Fix it"), model(1, "Done")]
    log = tmp_path / "session-2025-11-20T10-00-0f8e6a52.json"
    log.write_text(json.dumps(document, indent=2))
    with read_log(str(log)) as replay:
        assert replay.dialect == "gemini-cli"
        assert shown(replay) == [(1, "Fix it"), (2, "Done")]
        changes = replay.messages(replay.view()).inserted
        assert [c.reason.split(" (")[0] for c in changes] == [
            "the client puts a context of its own first"
        ]
    found = cli("stats", tmp_path, "-f", "json", "--no-tokens")
    assert found.exit_code == 0, found.output
    assert json.loads(found.output)["dialect"] == "gemini-cli"  # found in a tree too
    refused = cli("run", log, "--type", "amortized")
    assert refused.exit_code == 2 and "one JSON document" in refused.output
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"name": "x", "items": [1]}, indent=2))
    said = cli("view", other)
    assert said.exit_code == 1 and "its first object has the keys: name" in said.output


def test_a_checkpoint_restored_takes_turns_back_and_condenses_own_set_forgets(
    tmp_path: Path, cli
) -> None:
    """A `$set` whose list is the end of the one before, nothing new, is the client
    restoring a checkpoint (`/chat resume`); the same `$set` from condense (marked)
    is a condensation."""
    first = [user(1, "First"), model(1, "One"), user(2, "Second"), model(2, "Two")]
    joined = {"id": "r1", "timestamp": TS, "type": "user"}
    joined["content"] = [CONTEXT["content"][0], {"text": "First"}]
    restored = [joined, model(3, "One")]
    records = [*start(*first), *restored, {"$set": {"messages": restored}}]
    log = write(tmp_path / "s.jsonl", records)
    with read_log(str(log)) as replay:
        assert replay.condensations == [] and replay.forgotten_events == 0
        assert replay.gaps() == []
        assert [e.text for e in replay.history()][-2:] == [
            "<session_context>\nlinux\n</session_context>\nFirst",
            "One",
        ]
    ours = write(
        tmp_path / "o.jsonl", [*start(*first), {"$set": {"messages": first[2:]}, "$condense": {}}]
    )
    with read_log(str(ours)) as replay:
        [record] = replay.condensations
        assert record.ranges == [(2, 3)]
        [gap] = replay.gaps()
        assert (gap.after, gap.count, gap.first_id, gap.last_id, gap.by) == (0, 2, 2, 3, 7)
    shown_text = cli("view", ours).output
    assert "⋯ 2 events forgotten (ids 2..3) by condensation 7 ⋯" in shown_text


def test_check_notes_a_result_sent_twice_and_a_file_holding_only_a_runs_start(
    tmp_path: Path, cli
) -> None:
    response = {"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "A"}}}
    call = {"id": "c1", "name": "read_file", "args": {}, "result": [response]}
    records = start(user(1, "Read a.txt"), model(1, "", toolCalls=[call]))
    records.append({"id": "r1", "timestamp": TS, "type": "user", "content": [response]})
    chats = tmp_path / "chats"
    chats.mkdir()
    log = write(chats / "session-2026-11-28T10-00-0f8e6a52.jsonl", records)
    said = cli("check", log)
    assert said.exit_code == 0
    assert "note: Gemini CLI 0.61.0 sends the result of call c1 twice" in said.output
    stray = write(chats / "session-2026-11-28T10-07-0f8e6a52.jsonl", start())
    said = cli("check", stray)
    assert said.exit_code == 0
    assert "holds only the start of a run" in said.output and log.name in said.output


def test_a_call_without_its_result_and_a_result_without_its_call_are_mended_as_the_client_does(
    tmp_path: Path,
) -> None:
    call = {"functionCall": {"id": "read_file__c1", "name": "read_file", "args": {}}}
    lone = {"functionResponse": {"id": "c9", "name": "ls", "response": {"output": "x"}}}
    records = start(user(1, "Go"), model(1, [call]), user(2, "Next"))
    records += [model(2, "ok"), {"id": "r9", "timestamp": TS, "type": "user", "content": [lone]}]
    log = write(tmp_path / "s.jsonl", records)
    with read_log(str(log)) as replay:
        out = replay.messages(replay.view())
    tools = [m for m in out.messages if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tools] == [
        (
            "c1",
            '{"error":"The tool execution result was lost due to context management truncation."}',
        ),
        ("c9", "x"),
    ]
    calls = [c["id"] for m in out.messages for c in m.get("tool_calls", [])]
    assert calls == ["c1", "c9"]  # the lone result gets a call before it
    reasons = [c.reason for c in out.inserted]
    assert any("has no result after it" in r for r in reasons)
    assert any("follows no call of its own" in r for r in reasons)
