"""`tool_result_clearing`'s `clear_inputs`: the calls whose results are cleared have
their arguments cleared too, in every dialect's own shape, so that the chat messages
the view converts to carry a note in their place; the newest calls keep theirs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.condensers.masking import CLEARED, CLEARED_INPUT
from condense_cli.core.events import View
from condense_cli.dialects.openhands_v0.messages import convert
from tests.conftest import CORPUS, msg, require_corpus
from tests.dialects.gemini_cli import story

SETTINGS = ["-t", "tool_result_clearing", "-s", "trigger=1", "-s", "keep=2"]


def corpus_log(dialect: str) -> Path:
    folder = CORPUS.parent / {"v1": "openhands-v1", "v0": "openhands"}.get(dialect, dialect)
    require_corpus(folder)
    if dialect == "v1":
        return sorted(p for p in folder.iterdir() if p.is_dir())[0]
    names = {"v0": "ponylang-ponyc-4588.jsonl", "claude-code": "FundWise.claude-session.jsonl"}
    name = names.get(dialect, f"FundWise.{dialect}-session.jsonl")
    return folder / name


def gemini_log(tmp_path: Path) -> Path:
    log = tmp_path / "session.jsonl"
    lines = [story.HEADER, *story.lines(condensed=False)]
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return log


@pytest.mark.parametrize("dialect", ["v0", "v1", "claude-code", "codex", "gemini"])
def test_each_cleared_result_has_its_call_cleared_and_the_newest_keep_theirs(
    tmp_path: Path, cli: Any, dialect: str
) -> None:
    log = gemini_log(tmp_path) if dialect == "gemini" else corpus_log(dialect)
    before = _bytes(log)
    done = cli("run", log, *SETTINGS, "-s", "clear_inputs=true", "-f", "messages")
    calls, results = _pairs(orjson.loads(done.stdout_bytes))
    cleared = {call for call, text in results.items() if CLEARED in text}
    assert cleared and len(cleared) <= len(results) - 2  # (two uses kept)
    plain = cli("run", log, *SETTINGS, "-f", "messages")
    plain_calls, plain_results = _pairs(orjson.loads(plain.stdout_bytes))
    assert {c for c, text in plain_results.items() if CLEARED in text} == cleared
    assert not any(CLEARED_INPUT in arguments for arguments in plain_calls.values())
    # a call's arguments are cleared where its result is, unless they are shorter
    # than the note (clearing them would send more)
    inputs = {call for call in results if CLEARED_INPUT in calls[call]}
    note = len(orjson.dumps({"note": CLEARED_INPUT}))
    assert inputs and inputs <= cleared
    assert {c for c in cleared if len(plain_calls[c]) > note + 2} <= inputs
    assert _bytes(log) == before  # a rewritten view: nothing appended


def command(n: int) -> str:
    """A command longer than the note that replaces it."""
    return f"ls -la --color=never --group-directories-first /workspace/project/part{n}"


def test_a_v0_response_of_two_calls_shows_each_call_as_its_own_action_holds_it(
    make_log: Any,
) -> None:
    """Every V0 action of one model response holds a copy of it; the message is the
    response with each call as its own action's copy says (one may be cleared)."""
    from condense_cli.condensers.masking import (
        ToolResultClearingCondenser,
        ToolResultClearingConfig,
    )
    from condense_cli.dialects.openhands_v0.replay import load_view

    def call(n: int) -> dict[str, Any]:
        return {
            "id": f"c{n}",
            "type": "function",
            "function": {
                "name": "execute_bash",
                "arguments": orjson.dumps({"command": command(n)}).decode(),
            },
        }

    response = {
        "id": "r1",
        "choices": [{"message": {"content": "", "tool_calls": [call(1), call(2)]}}],
    }
    events: list[dict[str, Any]] = [msg(0, "fix it")]
    for n in (1, 2):
        events.append(
            {
                "id": n,
                "source": "agent",
                "action": "run",
                "args": {"command": command(n)},
                "tool_call_metadata": {
                    "tool_call_id": f"c{n}",
                    "function_name": "execute_bash",
                    "model_response": response,
                },
            }
        )
    for n in (1, 2):
        events.append(
            {
                "id": 2 + n,
                "source": "agent",
                "observation": "run",
                "content": "x " * 200,
                "cause": n,
                "extras": {},
                "tool_call_metadata": {"tool_call_id": f"c{n}", "function_name": "execute_bash"},
            }
        )
    view = load_view(str(make_log(events)))[0]
    config = ToolResultClearingConfig(trigger=1, keep=1, clear_inputs=True)
    result = ToolResultClearingCondenser(config).condense(view)
    assert isinstance(result, View)
    messages = convert(list(result.events), None, None).messages
    [assistant] = [m for m in messages if m.get("tool_calls")]
    arguments = [c["function"]["arguments"] for c in assistant["tool_calls"]]
    kept = orjson.dumps({"command": command(2)}).decode()
    assert arguments == [orjson.dumps({"note": CLEARED_INPUT}).decode(), kept]


def _pairs(messages: list[dict[str, Any]]) -> tuple[dict[str, str], dict[str, str]]:
    """Each tool call's arguments, and each tool result's text, by the call's id."""
    calls = {
        c["id"]: c["function"]["arguments"] for m in messages for c in m.get("tool_calls") or ()
    }
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    return calls, results


def _bytes(log: Path) -> bytes:
    if log.is_dir():
        return b"".join(p.read_bytes() for p in sorted(log.rglob("*")) if p.is_file())
    return log.read_bytes()


def test_over_a_history_clearing_the_inputs_too_sends_fewer_tokens(cli: Any) -> None:
    log = corpus_log("claude-code")
    means = []
    for clear in ("false", "true"):
        sets = ["-s", "trigger=20000", "-s", "keep=3", "-s", f"clear_inputs={clear}"]
        done = cli("simulate", log, "-t", "tool_result_clearing", *sets, "-f", "json")
        [run] = orjson.loads(done.stdout_bytes)["runs"]
        means.append(run["view_tokens"]["mean"])
    without, with_inputs = means
    assert with_inputs < 0.9 * without  # FundWise: 15,501 against 11,420
