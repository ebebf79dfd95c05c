"""`--format messages`: an OpenHands V0 view as the chat messages ConversationMemory builds."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from condense_cli.dialects import read_log
from condense_cli.llm.client import litellm_module
from condense_cli.llm.messages import count_tokens
from condense_cli.llm.tokens import tokenizer_for
from tests.conftest import condensation, corpus_logs, msg

SYSTEM = {"id": 0, "source": "agent", "action": "system", "args": {"content": "You are an agent."}}


def response(rid: str, text: str, *calls: tuple[str, str, str]) -> dict[str, Any]:
    """A model response as OpenHands keeps it in `tool_call_metadata.model_response`."""
    return {
        "id": rid,
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": text,
                    "tool_calls": [
                        {"id": c, "type": "function", "function": {"name": n, "arguments": a}}
                        for c, n, a in calls
                    ],
                }
            }
        ],
    }


def action(i: int, call: str, resp: dict[str, Any], command: str = "ls") -> dict[str, Any]:
    return {
        "id": i,
        "source": "agent",
        "action": "run",
        "args": {"command": command, "thought": ""},
        "tool_call_metadata": {
            "function_name": "execute_bash",
            "tool_call_id": call,
            "model_response": resp,
        },
    }


def observation(i: int, cause: int, call: str, content: str, **meta: Any) -> dict[str, Any]:
    return {
        "id": i,
        "source": "agent",
        "observation": "run",
        "content": content,
        "cause": cause,
        "extras": {"command": "ls", "metadata": meta},
        "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": call},
    }


def call(call_id: str, arguments: str) -> dict[str, Any]:
    function = {"name": "execute_bash", "arguments": arguments}
    return {"id": call_id, "type": "function", "function": function}


def result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "content": text, "tool_call_id": call_id, "name": "execute_bash"}


TWO_CALLS = response(
    "r1",
    "Two at once.",
    ("a", "execute_bash", '{"command":"ls"}'),
    ("b", "execute_bash", '{"command":"pwd"}'),
)


def messages(cli: Any, log: Any, *extra: str) -> tuple[list[dict[str, Any]], str]:
    done = cli("view", log, "--format", "messages", *extra)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout), done.stderr


def test_parallel_calls_are_held_until_every_call_has_its_result(cli, make_log) -> None:
    log = make_log(
        [
            SYSTEM,
            msg(1, "list files"),
            action(2, "a", TWO_CALLS),
            observation(3, 2, "a", "x.py", working_dir="/w", exit_code=0),
            msg(4, "also where am I?"),
            action(5, "b", TWO_CALLS, "pwd"),
            observation(6, 5, "b", "/w", exit_code=1, suffix="\n[exit 1]"),
            {"id": 7, "source": "agent", "observation": "error", "content": "boom", "extras": {}},
        ]
    )
    got, stderr = messages(cli, log)
    assert got == [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "list files"},
        {"role": "user", "content": "\n\nalso where am I?"},
        {
            "role": "assistant",
            "content": "Two at once.",
            "tool_calls": [call("a", '{"command":"ls"}'), call("b", '{"command":"pwd"}')],
        },
        result("a", "x.py\n[Current working directory: /w]\n[Command finished with exit code 0]"),
        result("b", "/w\n[exit 1]\n[Command finished with exit code 1]"),
        {"role": "user", "content": "boom\n[Error occurred in processing last action]"},
    ]
    assert stderr == ""


def test_orphan_results_and_unmatched_calls_are_dropped_and_reported(cli, make_log) -> None:
    lone = response("r2", "", ("c", "execute_bash", '{"command":"cat"}'))
    log = make_log(
        [
            SYSTEM,
            msg(1, "go"),
            action(2, "a", TWO_CALLS),
            observation(3, 2, "a", "x.py"),
            action(4, "c", lone, "cat"),
            observation(5, 4, "c", "meow"),
            condensation(6, ids=[4]),  # forgets the call, its result stays
            action(7, "b", TWO_CALLS, "pwd"),  # b is answered nowhere
        ]
    )
    got, stderr = messages(cli, log)
    assert got == [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "go"},
    ]
    assert stderr == (
        f"{log}: 2 messages from 6 events; the conversion dropped 4 events "
        "(see condense stats -f json)\n"
    )
    with read_log(str(log)) as replay:
        conversion = replay.messages(replay.view())
    assert [(c.kind, c.event, c.line) for c in conversion.dropped] == [
        ("unmatched call", 2, 3),
        ("unmatched call", 3, 4),
        ("orphan result", 5, 6),
        ("unmatched call", 7, 8),
    ]
    assert conversion.dropped[1].reason == (
        "observation for tool call a is never sent: its call waits for call(s) b, "
        "which have no observation in the view"
    )
    assert conversion.dropped[2].reason == (
        "observation for tool call c: its action is not in the view"
    )


def condensed_log(make_log: Any) -> Any:
    """System and first user message, a call, a message; then a condensation that
    forgets the user message and the call (keeping its system message) with a summary."""
    lone = response("r2", "Looking.", ("c", "execute_bash", '{"command":"cat"}'))
    return make_log(
        [
            SYSTEM,
            msg(1, "fix the bug"),
            action(2, "c", lone, "cat"),
            observation(3, 2, "c", "meow"),
            msg(4, "done", source="agent"),
            condensation(5, start=1, end=3, summary="SUMMARY: cat said meow", offset=1),
            msg(6, "thanks"),
        ]
    )


def test_the_first_user_message_is_put_back_before_the_summary(cli, proc, make_log) -> None:
    log = condensed_log(make_log)
    expected = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "fix the bug"},
        {"role": "user", "content": "\n\nSUMMARY: cat said meow"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "thanks"},
    ]
    got, stderr = messages(cli, log)
    assert got == expected
    assert stderr == (
        f"{log}: 5 messages from 4 events; the conversion put in 1 message "
        "(see condense stats -f json)\n"
    )
    done = proc("view", log, "-f", "messages")
    assert done.returncode == 0
    assert json.loads(done.stdout) == expected
    assert done.stdout == orjson.dumps(expected, option=orjson.OPT_INDENT_2) + b"\n"
    piped = proc("view", "-", "-f", "messages", input=log.read_bytes())
    assert json.loads(piped.stdout) == expected


def test_upto_shows_the_messages_of_an_earlier_view(cli, make_log) -> None:
    log = condensed_log(make_log)
    got, stderr = messages(cli, log, "--upto", "2")
    assert got == [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "fix the bug"},
    ]
    assert "dropped 1 event" in stderr  # the call, whose observation comes later


def test_run_prints_a_rewritten_view_as_messages(cli, proc, make_log) -> None:
    log = make_log(
        [
            SYSTEM,
            msg(1, "go"),
            action(2, "a", response("r", "", ("a", "execute_bash", "{}"))),
            observation(3, 2, "a", "first output"),
            action(4, "b", response("s", "", ("b", "execute_bash", "{}"))),
            observation(5, 4, "b", "second output"),
        ]
    )
    before = log.read_bytes()
    args = ("run", log, "-t", "observation_masking", "-s", "attention_window=1", "-f", "messages")
    for done in (cli(*map(str, args)), proc(*args)):
        got = json.loads(done.stdout)
        assert [m.get("content") for m in got if m["role"] == "tool"] == [
            "<MASKED>",
            "second output",
        ]
        assert got[2] == {"role": "assistant", "content": "", "tool_calls": [call("a", "{}")]}
    assert log.read_bytes() == before


def test_stats_counts_the_messages_as_litellm_does(cli, make_log) -> None:
    log = condensed_log(make_log)
    done = cli("stats", log, "-f", "json")
    assert done.exit_code == 0, done.output
    numbers = json.loads(done.stdout)["messages"]
    with read_log(str(log)) as replay:
        sent = replay.messages(replay.view()).messages
    litellm = litellm_module()
    assert numbers["tokens"] == litellm.token_counter(model="gpt-4o-mini", messages=sent)
    assert count_tokens(sent, tokenizer_for("gpt-4o-mini")) == numbers["tokens"]
    assert numbers == {
        "count": 5,
        "chars": len("You are an agent.fix the bug\n\nSUMMARY: cat said meowdonethanks"),
        "tokens": numbers["tokens"],
        "tool_schemas": "not counted",
        "dropped": [],
        "inserted": [
            {
                "kind": "re-inserted",
                "event": 1,
                "line": 2,
                "reason": "the view's second event is not a user message: OpenHands puts "
                "the first user message of the history there",
            }
        ],
        "approximated": [],
    }
    text = cli("stats", log, "--no-tokens").stdout
    assert (
        "the model reads 5 messages (62 characters; tool schemas not counted); "
        "the conversion put in 1 message (re-inserted)\n"
    ) in text


def test_stats_token_count_matches_litellm_with_tool_calls() -> None:
    sent = [
        {"role": "system", "content": "You are an agent."},
        {"role": "assistant", "content": "", "tool_calls": [call("a", '{"command":"ls -la"}')]},
        result("a", "x.py\ny.py"),
        {
            "role": "user",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        },
    ]
    expected = litellm_module().token_counter(model="gpt-4o-mini", messages=sent)
    assert count_tokens(sent, tokenizer_for("gpt-4o-mini")) == expected


def test_check_warns_about_context_the_model_never_sees(cli, proc, make_log) -> None:
    log = make_log(
        [
            SYSTEM,
            msg(1, "go"),
            action(2, "c", response("r", "", ("c", "execute_bash", "{}"))),
            observation(3, 2, "c", "meow"),
            condensation(4, ids=[2]),
        ]
    )
    expected = (
        f"{log}:4: warning: the model never sees this: observation for tool call c: "
        "its action is not in the view\n"
    )
    done = cli("check", log)
    assert done.exit_code == 0
    assert done.stdout == expected
    assert done.stderr == "1 log ok (openhands-v0; 1 warning)\n"
    strict = proc("check", "--strict", log)
    assert strict.returncode == 1
    assert strict.stdout.decode() == expected
    # a blank line and CRLF endings: the line is counted, not taken from the position
    messy = make_log(log.read_bytes().replace(b"\n", b"\r\n").replace(b"\r\n", b"\r\n\n", 1))
    assert cli("check", messy).stdout == expected.replace(f"{log}:4:", f"{messy}:5:")


@pytest.mark.parametrize("log", corpus_logs(), ids=lambda p: p.name)
def test_corpus_logs_convert_with_every_call_answered(log, corpus, cli) -> None:
    got, _ = messages(cli, log)
    issued = [c["id"] for m in got if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
    answered = [m["tool_call_id"] for m in got if m["role"] == "tool"]
    assert sorted(issued) == sorted(answered)
    assert got[0]["role"] in ("system", "user")
    with read_log(str(log)) as replay:
        view = replay.view()
        conversion = replay.messages(view)
    assert conversion.lost == []
    sent = len(view) - len(conversion.dropped) + len(conversion.inserted)
    assert len(got) == sent - sum(
        len(m.get("tool_calls") or ()) - 1
        for m in got
        if m["role"] == "assistant" and m.get("tool_calls")
    )
