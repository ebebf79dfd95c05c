"""A Gemini CLI session read as the client's loader reads it: records that replace a
message, `$set` lists, rewinds, a run's first `$set`, compressions and their copies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from condense_cli.core.errors import LogError
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


def test_a_torn_last_line_is_not_read_and_a_broken_one_is_an_error(tmp_path: Path) -> None:
    torn = write(tmp_path / "t.jsonl", start(user(1, "One")), tail='{"id": "g1", "ty')
    with read_log(str(torn), collect=True) as replay:
        assert [p.message for p in replay.problems] == [
            "the last line is cut off (torn write); it is not read"
        ]
    broken = write(tmp_path / "b.jsonl", start(user(1, "One")), tail="not json\n")
    with pytest.raises(LogError, match=r"b.jsonl:4: invalid JSON"), read_log(str(broken)):
        pass


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
