"""The Codex dialect on hand-made rollouts whose view is known, and on the corpus."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.core.jsonlines import encode
from tests.conftest import ROOT

CORPUS = ROOT.parent / "shared" / "corpus" / "codex"
TS = "2026-05-04T14:42:33.476Z"


def line(kind: str, payload: Any) -> dict[str, Any]:
    return {"timestamp": TS, "type": kind, "payload": payload}


def item(payload: dict[str, Any]) -> dict[str, Any]:
    return line("response_item", payload)


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def said(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


def call(cid: str, cmd: str = "ls") -> dict[str, Any]:
    return {"type": "function_call", "name": "exec_command", "arguments": cmd, "call_id": cid}


def output(cid: str, text: str = "out") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": cid, "output": text}


META = line("session_meta", {"id": "s1", "timestamp": TS, "cwd": "/w"})
CONTEXT = user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>")
PLAIN = [
    META,
    item(CONTEXT),
    line("turn_context", {"cwd": "/w"}),
    item(user("fix the bug")),
    line("event_msg", {"type": "user_message", "message": "fix the bug"}),
    item(call("c1")),
    item(output("c1", "a.py")),
    item(said("done")),
]


def rollout(make_log, lines: list[dict[str, Any]]) -> Path:
    return make_log(lines, name="rollout.jsonl")


def items_of(cli, path: Path, *args: str) -> list[dict[str, Any]]:
    result = cli("view", path, "-f", "json", *args)
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout_bytes)
    assert data["dialect"] == "codex"
    return data["events"]


def test_the_view_is_the_response_items_in_order(cli, make_log) -> None:
    path = rollout(make_log, PLAIN)
    assert items_of(cli, path) == [
        CONTEXT,
        user("fix the bug"),
        call("c1"),
        output("c1", "a.py"),
        said("done"),
    ]


def test_text_view_names_lines_and_pairs(cli, make_log) -> None:
    path = rollout(make_log, PLAIN)
    assert cli("view", path).stdout == (
        f"{path} (codex): 5 events in view, 0 forgotten, 0 condensations\n"
        "\n#2 user action:message\n    <environment_context>\n      <cwd>/w</cwd>\n"
        "    </environment_context>\n"
        "\n#4 user action:message\n    fix the bug\n"
        "\n#6 agent action:function_call\n    exec_command(ls)\n"
        "\n#7 environment observation:function_call_output (answers #6)\n    a.py\n"
        "\n#8 agent action:message\n    done\n"
    )


def test_a_replacement_history_replaces_everything_before_it(cli, make_log) -> None:
    summary = {
        **user("SUMMARY"),
        "internal_chat_message_metadata_passthrough": {
            "content_item_kinds": ["compaction.summary"]
        },
    }
    lines = [
        *PLAIN,
        line(
            "compacted",
            {"message": "SUMMARY", "replacement_history": [user("fix the bug"), summary]},
        ),
        item(user("next")),
    ]
    path = rollout(make_log, lines)
    assert items_of(cli, path) == [user("fix the bug"), summary, user("next")]
    text = cli("view", path).stdout
    assert (
        text.splitlines()[0]
        == f"{path} (codex): 3 events in view, 4 forgotten, 1 condensation, summary at 1"
    )  # (the five items before it but the one kept: not the view's size less its own)
    # the copy of the user's message is shown by its original's number
    original = next(n for n, x in enumerate(PLAIN, 1) if x.get("payload") == user("fix the bug"))
    assert f"#{original} user action:message\n    fix the bug" in text
    assert "=== summary ===\n    SUMMARY\n" in text


def test_a_legacy_compaction_keeps_the_user_messages_and_the_summary(cli, make_log) -> None:
    # Codex 0.169.0 resumed FundWise with such a line and sent exactly this (see the notes)
    lines = [*PLAIN, line("compacted", {"message": "SUMMARY"}), item(user("next"))]
    events = items_of(cli, rollout(make_log, lines))
    assert [e["content"][0]["text"] for e in events] == ["fix the bug", "SUMMARY", "next"]


def test_a_rollback_drops_the_newest_user_turns(cli, make_log) -> None:
    lines = [
        *PLAIN,
        item(user("second")),
        item(said("ok")),
        line("event_msg", {"type": "thread_rolled_back", "num_turns": 1}),
    ]
    assert items_of(cli, rollout(make_log, lines))[-1] == said("done")


def test_upto_a_line_or_an_item_id(cli, make_log) -> None:
    lines = [*PLAIN, item({**said("later"), "id": "msg_9"}), item(said("after"))]
    path = rollout(make_log, lines)
    assert items_of(cli, path, "--upto", "6")[-1] == call("c1")
    assert items_of(cli, path, "--upto", "msg_9")[-1]["id"] == "msg_9"
    result = cli("view", path, "--upto", "msg_nope")
    assert result.exit_code == 2
    assert "has no item with this id" in result.stderr


def test_jsonl_view_keeps_the_lines_and_round_trips(proc, make_log) -> None:
    path = rollout(
        make_log,
        [
            *PLAIN,
            line("compacted", {"message": "", "replacement_history": [user("fix the bug")]}),
            item(said("x")),
        ],
    )
    first = proc("view", path, "-f", "jsonl")
    assert first.returncode == 0, first.stderr
    raw = path.read_bytes().splitlines()
    assert first.stdout.splitlines() == raw[-2:]  # the compacted line and the item, as stored
    again = proc("view", "-", "-f", "jsonl", input=first.stdout)
    assert again.stdout == first.stdout


def test_items_keep_where_their_lines_are_and_read_them_back(proc, make_log) -> None:
    """An item read from the rollout keeps no bytes, but where its line is: the JSONL
    view is still the lines as stored, after a byte-order mark and CRLF endings too."""
    from condense_cli.dialects import read_log

    lines = [orjson.dumps(x) for x in [item(user("start")), *PLAIN[1:]]]
    path = make_log(b"\xef\xbb\xbf" + b"\r\n".join(lines) + b"\r\n", name="rollout.jsonl")
    with read_log(str(path)) as replay:
        events = list(replay.view())
        assert all(e._raw is None and e.at is not None for e in events)  # type: ignore[attr-defined]
        assert [e.raw for e in events] == [x for x in lines if b'"response_item"' in x]
    shown = proc("view", path, "-f", "jsonl")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [x for x in lines if b'"response_item"' in x]


def test_check_reports_broken_pairs_bad_lines_and_unknown_types(cli, make_log) -> None:
    lines = [
        *PLAIN,
        item(output("ghost")),
        item(call("c2")),
        item({"type": "mystery"}),
        line("odd", {}),
    ]
    path = make_log(
        b"".join(orjson.dumps(d) + b"\n" for d in lines) + b"[1]\n", name="rollout.jsonl"
    )
    result = cli("check", path)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{path}:11: warning: unknown response item type 'mystery'; Codex does not send it",
        f"{path}:12: warning: unknown line type 'odd'; Codex skips it",
        f"{path}:13: expected a JSON object, got an array",
        f"{path}:9: function_call_output for call 'ghost' has no call before it in the view; "
        "the model would see an answer to nothing",
        f"{path}:10: warning: function_call 'c2' has no output in the view; Codex answers it "
        '"aborted" when the session is resumed',
    ]
    view = cli("view", path)
    assert view.exit_code == 1
    assert view.stderr == f"Error: {path}:13: expected a JSON object, got an array\n"


def test_run_appends_a_compaction_the_view_then_shows(cli, make_log) -> None:
    lines = [META] + [item(user(f"u{i}")) if i % 2 == 0 else item(said(f"a{i}")) for i in range(12)]
    path = rollout(make_log, lines)
    size = path.stat().st_size
    result = cli("run", path, "-t", "amortized", "-s", "max_size=6")
    assert result.exit_code == 0, result.output
    assert (
        result.stderr
        == f"amortized_forgetting: forgot 9 events (ids 3..11), view 12 -> 3; appended to {path}\n"
    )
    appended = path.read_bytes()[size:].splitlines()
    compacted, event = (orjson.loads(x) for x in appended)
    assert compacted["type"] == "compacted" and event["payload"] == {"type": "context_compacted"}
    assert compacted["payload"]["replacement_history"] == [user("u0"), user("u10"), said("a11")]
    assert items_of(cli, path) == [user("u0"), user("u10"), said("a11")]


def test_request_is_pending_until_the_next_compaction(cli, make_log) -> None:
    lines = [META] + [item(user(f"u{i}")) for i in range(4)]
    path = rollout(make_log, lines)
    assert cli("request", path).exit_code == 0
    assert orjson.loads(path.read_bytes().splitlines()[-1])["type"] == "condensation_request"
    assert orjson.loads(cli("view", path, "-f", "json").stdout_bytes)[
        "unhandled_condensation_request"
    ]
    assert cli("run", path, "-t", "amortized", "-s", "max_size=4").exit_code == 0
    data = orjson.loads(cli("view", path, "-f", "json").stdout_bytes)
    assert data["unhandled_condensation_request"] is False
    assert data["events"] == [user("u0"), user("u3")]


def test_masking_keeps_keys_and_masks_outputs(cli, make_log) -> None:
    path = rollout(make_log, PLAIN)
    result = cli("run", path, "-t", "observation_masking", "-s", "attention_window=1", "-f", "json")
    assert result.exit_code == 0, result.output
    events = orjson.loads(result.stdout_bytes)["events"]
    assert events[3] == output("c1", "<MASKED>")


def test_stats_count_items_and_say_what_the_log_says(cli, make_log) -> None:
    lines = [
        *PLAIN,
        line(
            "event_msg",
            {"type": "token_count", "info": {"last_token_usage": {"total_tokens": 900}}},
        ),
        line(
            "compacted",
            {"message": "S", "replacement_history": [user("fix the bug")], "window_number": 1},
        ),
    ]
    result = cli("stats", rollout(make_log, lines), "-f", "json", "--no-tokens")
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout_bytes)
    assert (data["dialect"], data["events"], data["visible_events"]) == ("codex", 10, 5)
    assert data["view"] == {"events": 1, "forgotten_events": 4}
    assert data["condensations"][0]["log_says"] == {
        "items": 1,
        "window_number": 1,
        "tokens_before": 900,
    }
    assert data["by_type"]["response_item:message"]["events"] == 3


def test_stats_memory_stays_with_the_view(make_log) -> None:
    """`stats` counts the log's texts as it walks and keeps none of them: it used to
    hold every text of the log (178 MB for the 100k-line benchmark rollout)."""
    import tracemalloc

    from condense_cli.dialects import read_log

    lines = [META]
    for k in range(500):  # 500 outputs of 20 kB, then a compaction that keeps one line
        lines += [item(call(f"c{k}")), item(output(f"c{k}", f"{k} " + "x" * 20_000))]
    lines.append(line("compacted", {"message": "S", "replacement_history": [user("go")]}))
    with read_log(str(rollout(make_log, lines))) as replay:
        tracemalloc.start()
        numbers = replay.stats(None)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert numbers.chars.to_json() == {"log": 10_009_890, "view": 2, "ratio": 0.0}
    assert peak < 3_000_000, peak  # the texts: 10 MB; the walk reads blocks of 1 MiB


@pytest.mark.parametrize("name", ["FundWise.codex-session.jsonl", "edgerunner.codex-session.jsonl"])
def test_corpus_rollouts_view_check_and_stat(name: str, cli) -> None:
    path = CORPUS / name
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    expected = [d["payload"] for d in lines if d["type"] == "response_item"]
    assert items_of(cli, path) == expected
    assert cli("check", path).exit_code == 0
    assert cli("stats", path, "--no-tokens").exit_code == 0


# --- --format messages ---------------------------------------------------------------


def test_messages_map_items_to_chat_and_answer_an_unanswered_call(cli, proc, make_log) -> None:
    path = rollout(
        make_log,
        [
            *PLAIN,
            item({"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}),
            item(call("c2", '{"cmd":"pwd"}')),
            item(
                {
                    "type": "custom_tool_call",
                    "name": "apply_patch",
                    "input": "*** x",
                    "call_id": "c3",
                }
            ),
            item({"type": "custom_tool_call_output", "call_id": "c3", "output": "ok"}),
        ],
    )
    expected = [
        {
            "role": "user",
            "content": "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>",
        },
        {"role": "user", "content": "fix the bug"},
        {"role": "assistant", "content": "", "tool_calls": [tool("c1", "exec_command", "ls")]},
        {"role": "tool", "content": "a.py", "tool_call_id": "c1", "name": "exec_command"},
        {
            "role": "assistant",
            "content": "done",
            "tool_calls": [tool("c2", "exec_command", '{"cmd":"pwd"}')],
        },
        {"role": "tool", "content": "aborted", "tool_call_id": "c2", "name": "exec_command"},
        {"role": "assistant", "content": "", "tool_calls": [tool("c3", "apply_patch", "*** x")]},
        {"role": "tool", "content": "ok", "tool_call_id": "c3", "name": "apply_patch"},
    ]
    done = cli("view", path, "-f", "messages")
    assert done.exit_code == 0, done.output
    assert orjson.loads(done.stdout_bytes) == expected
    assert orjson.loads(proc("view", path, "-f", "messages").stdout) == expected
    stats = orjson.loads(cli("stats", path, "-f", "json", "--no-tokens").stdout_bytes)
    assert stats["messages"]["dropped"] == [
        {
            "kind": "no chat form",
            "event": 9,
            "line": 9,
            "reason": "a reasoning item has no text a chat message can carry",
        },
    ]
    assert [c["reason"] for c in stats["messages"]["inserted"]] == [
        'call c2 has no output: Codex sends "aborted" for it'
    ]


def tool(cid: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_an_output_without_its_call_is_dropped_and_reported() -> None:
    from condense_cli.dialects.codex.messages import convert

    conversion = convert([user("hi"), output("c9", "lost")], lambda item: ("L", 7))
    assert conversion.messages == [{"role": "user", "content": "hi"}]
    assert [(c.kind, c.event, c.line, c.reason) for c in conversion.lost] == [
        ("orphan result", "L", 7, "output for call c9: the call is not in the view")
    ]


def cuts_that_convert_alike(
    path: Path, kinds: set[str], cuts: Callable[[list[Any]], Iterable[int]]
) -> tuple[list[int], list[int]]:
    """The events past the middle of a log's view, of one of `kinds`, whose two parts,
    cut there, convert to the view's messages and changes (every one tried); and the
    places `cuts` gives for the view's events. `Replay.conversion_cut` is the first."""
    from condense_cli.dialects import read_log

    def converted(events: list[Any]) -> tuple[list[Any], ...]:
        conversion = replay.messages(view.with_events(events))
        return (conversion.messages, conversion.dropped, conversion.inserted)

    with read_log(str(path)) as replay:
        view = replay.view()
        events = view.events
        whole = converted(events)
        places = [i for i in range(len(view) // 2, len(view)) if view[i].data["type"] in kinds]
        alike = []
        for at in places:
            first, rest = converted(events[:at]), converted(events[at:])
            if tuple(a + b for a, b in zip(first, rest, strict=True)) == whole:
                alike.append(at)
        given = list(cuts(events))
        assert replay.conversion_cut(view) == (given[0] if given else None)
    return alike, given


def test_a_view_is_cut_for_its_conversion_at_a_message_no_call_spans(make_log) -> None:
    """Not at a message between a call and its output; a call with no output spans
    nothing (it is answered "aborted" in its part as in the view)."""
    from condense_cli.dialects.codex.messages import conversion_cuts

    lines = [META, item(user("one")), item(call("c1")), item(said("two"))]
    lines += [item(user("three")), item(output("c1")), item(said("four")), item(user("five"))]
    lines += [item(call("c2")), item(user("six")), item(user("seven")), item(output("c2"))]
    lines += [item(user("eight")), item(call("c3")), item(said("nine")), item(user("ten"))]
    log = rollout(make_log, lines)
    assert cuts_that_convert_alike(log, {"message"}, conversion_cuts) == ([11, 13, 14],) * 2


@pytest.mark.parametrize("name", ["FundWise.codex-session.jsonl", "edgerunner.codex-session.jsonl"])
def test_a_corpus_rollouts_view_is_cut_where_it_converts_alike(name: str) -> None:
    from condense_cli.dialects.codex.messages import conversion_cuts

    alike, given = cuts_that_convert_alike(CORPUS / name, {"message"}, conversion_cuts)
    assert given == alike and alike


def test_a_replacement_item_whose_type_is_a_list_makes_the_line_skipped(cli, make_log) -> None:
    """It crashed the replay once (an unhashable set member). Codex cannot decode such an
    item, and skips the whole compacted line (tried with the real client)."""
    odd = {"type": ["message"], "role": "user", "content": []}
    compacted = line("compacted", {"message": "", "replacement_history": [odd, user("kept")]})
    path = rollout(make_log, [*PLAIN, compacted])
    assert items_of(cli, path) == items_of(cli, rollout(make_log, PLAIN))


def nested(depth: int) -> Any:
    value: Any = {"leaf": "x"}
    for _ in range(depth):
        value = [value]
    return value


def test_an_item_nested_past_orjsons_writing_limit_is_written(cli, proc, make_log) -> None:
    # orjson reads 1,024 levels but writes only 254: the view, the messages and an
    # appended compaction still carry the item whole.
    deep = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "t"}]}
    deep["content"][0]["extra"] = nested(600)
    lines = [*PLAIN, item(deep), item(user("more"))]
    path = make_log(b"".join(encode(x) + b"\n" for x in lines), name="rollout.jsonl")
    assert items_of(cli, path)[-2] == deep
    done = proc("view", path, "-f", "json")
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["events"][-2] == deep
    assert cli("view", path, "-f", "messages").exit_code == 0
    result = cli("run", path, "-t", "amortized", "-s", "max_size=6")
    assert result.exit_code == 0, result.output
    assert "view 7 -> 4" in result.stderr  # the head runs through the user's task
    assert items_of(cli, path)[-2] == deep


def test_an_items_time_is_its_lines() -> None:
    """Codex stamps the line, not the item: read at the line's head where Codex writes
    it, else from the line parsed; an item made here has none."""
    from condense_cli.dialects.codex.items import CodexEvent

    item = {"type": "message", "role": "user", "content": []}
    head = orjson.dumps(
        {"timestamp": "2026-07-10T16:45:14.371Z", "type": "response_item", "payload": item}
    )
    late = orjson.dumps(
        {"type": "response_item", "payload": item, "timestamp": "2026-07-11T01:02:03Z"}
    )
    assert CodexEvent(None, head, 1).timestamp == "2026-07-10T16:45:14.371Z"
    assert CodexEvent(None, late, 2).timestamp == "2026-07-11T01:02:03Z"
    assert CodexEvent(item, None, None).timestamp == ""
