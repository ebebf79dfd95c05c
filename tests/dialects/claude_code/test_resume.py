"""What Claude Code does on resume beyond the chain, on hand-made sessions (the real
client proves the same figures in `tests/clients/test_claude_code_today.py`)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from condense_cli.dialects import read_log
from condense_cli.dialects.claude_code.resume import (
    model_window,
    resume_compaction,
    usage_tokens,
)
from tests.dialects.claude_code.test_replay import SID, Builder, basic, no_config

__all__ = ["no_config"]  # a fixture used here


def with_usage(b: Builder, tokens: int, model: str = "claude-opus-5-5") -> Builder:
    """The last response says it took `tokens` of context."""
    last = next(x for x in reversed(b.lines) if x.get("type") == "assistant")
    last["message"]["model"] = model
    last["message"]["usage"] = {
        "input_tokens": tokens - 1_000,
        "cache_read_input_tokens": 900,
        "output_tokens": 100,
    }
    return b


def test_the_context_is_the_usage_added_up() -> None:
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 7}
    assert usage_tokens(usage | {"output_tokens": 11}) == 26
    assert usage_tokens({"input_tokens": "x"}) == 0


@pytest.mark.parametrize(
    ("model", "evidence", "window"),
    [
        # the client's catalog (2.1.330): natively 1M, 200k with a 1M choice, 200k only
        ("claude-opus-5-5", 0, 1_000_000),
        ("claude-opus-4-7", 0, 1_000_000),
        ("claude-sonnet-4-6", 0, 200_000),
        ("claude-sonnet-4-5-20250929", 0, 200_000),  # a dated id is its family's
        ("us.anthropic.claude-sonnet-4-6", 0, 200_000),  # so is a provider's
        ("claude-sonnet-4-6[1m]", 0, 1_000_000),
        ("claude-haiku-4-5", 0, 200_000),
        # 2.1.332's family names: the newest, and the older models named the new way
        ("claude-sonnet-5-5", 0, 1_000_000),
        ("claude-fable-5-2", 0, 1_000_000),
        ("claude-mythos-5-1", 0, 1_000_000),
        ("claude-haiku-3-5", 0, 200_000),
        ("claude-sonnet-3-7[1m]", 0, 1_000_000),
        # the log's evidence: a context past the default proves the larger window
        ("claude-sonnet-4-6", 311_789, 1_000_000),
        ("claude-haiku-4-5", 311_789, 1_000_000),  # 2.1.332 gives it a `[1m]`
        ("claude-haiku-4-5", 1_311_789, None),  # more than any window it has
        # a model the catalog does not name: the client gives it 1M (tried with it)
        ("claude-x[1m]", 0, 1_000_000),
        ("gpt-4o", 0, 1_000_000),
        ("", 0, None),  # no model named: no claim
    ],
)
def test_the_window_is_the_clients_catalog_or_the_logs_evidence(
    model: str, evidence: int, window: int | None
) -> None:
    assert model_window(model, evidence).size == window


def test_a_1m_choice_is_held_to_200k_when_the_user_turns_1m_off() -> None:
    held = {"CLAUDE_CODE_DISABLE_1M_CONTEXT": "1"}
    assert model_window("claude-sonnet-4-6[1m]", 0, held).size == 200_000
    assert model_window("claude-sonnet-4-6", 311_789, held).size == 200_000


@pytest.mark.parametrize(
    ("tokens", "model", "over", "near"),
    [
        (976_999, "claude-opus-5-5", False, True),
        (977_000, "claude-opus-5-5", True, True),
        (966_999, "claude-opus-5-5", False, False),
        (177_000, "claude-sonnet-4-5", True, True),
        (150_000, "claude-sonnet-4-5", False, False),
    ],
)
def test_where_the_client_compacts_on_resume(
    tmp_path: Path, tokens: int, model: str, over: bool, near: bool
) -> None:
    log = with_usage(basic(), tokens, model).write(tmp_path / "s.jsonl")
    with read_log(str(log), collect=True) as replay:
        found = resume_compaction(replay.events, {})
        assert found is not None
        assert (found.context_tokens, found.over, found.near) == (tokens, over, near)
        warned = [p for p in replay.problems if "compact the session" in p.message]
        assert [p.severity for p in warned] == (["warning"] if near else [])
        assert bool(replay.on_resume()) is near


def test_an_environment_that_turns_it_off_is_named(tmp_path: Path) -> None:
    log = with_usage(basic(), 990_000).write(tmp_path / "s.jsonl")
    with read_log(str(log)) as replay:
        found = resume_compaction(replay.events, {"DISABLE_AUTO_COMPACT": "1"})
    assert found is not None and found.threshold is None and not found.near
    assert "DISABLE_AUTO_COMPACT is set" in found.describe()


def test_no_response_in_the_view_says_nothing(tmp_path: Path) -> None:
    b = Builder()
    b.user("hello")
    with read_log(str(b.write(tmp_path / "s.jsonl"))) as replay:
        assert resume_compaction(replay.events, {}) is None


def test_microcompactions_and_replacements_are_notes_that_fail_nothing(tmp_path: Path, cli) -> None:
    b = basic()
    b.lines.append(
        {
            "type": "system",
            "subtype": "microcompact_boundary",
            "parentUuid": b.last,
            "uuid": "mc",
            "sessionId": SID,
            "microcompactMetadata": {
                "trigger": "auto",
                "preTokens": 40_000,
                "tokensSaved": 20_000,
                "compactedToolIds": ["c1"],
            },
        }
    )
    replaced = {"kind": "tool-result", "toolUseId": "c1", "replacement": "short"}
    b.lines.append({"type": "content-replacement", "sessionId": SID, "replacements": [replaced]})
    log = b.write(tmp_path / "s.jsonl")
    before = log.read_bytes()
    checked = cli("check", "--strict", log)
    assert checked.exit_code == 0
    assert f"{log}:10: note: microcompaction (1 tool result cleared" in checked.stdout
    assert f"{log}:11: note: content replacement of 1 tool result" in checked.stdout
    stats = orjson.loads(cli("stats", log, "-f", "json", "--no-tokens").stdout_bytes)
    assert stats["client"]["microcompactions"] == [
        {
            "line": 10,
            "trigger": "auto",
            "pre_tokens": 40_000,
            "tokens_saved": 20_000,
            "tool_results": 1,
        }
    ]
    assert "microcompactions by an older client" in cli("stats", log, "--no-tokens").stdout
    # the view keeps the result the microcompaction cleared
    data = orjson.loads(cli("view", log, "-f", "json").stdout_bytes)
    assert any("out1" in str(e) for e in data["events"])
    assert log.read_bytes() == before


def test_a_session_that_ran_past_200k_is_not_said_to_compact(tmp_path: Path, proc) -> None:
    """A response that used 311,789 tokens without a compaction proves the session ran
    with claude-sonnet-4-6's 1M window: no warning, and `check --strict` passes; a note
    says what a plain resume (on the 200k default) does: compact at once, as the real
    client did (`tests/clients/test_claude_code_today.py`)."""
    log = with_usage(basic(), 311_789, "claude-sonnet-4-6").write(tmp_path / "s.jsonl")
    with read_log(str(log)) as replay:
        found = resume_compaction(replay.events, {})
    assert found is not None
    assert (found.window, found.threshold, found.near) == (1_000_000, 977_000, False)
    assert "a response used 311,789 tokens of context without a compaction" in found.describe()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    checked = proc("check", "--strict", log, env=env)
    assert checked.returncode == 0 and b"warning" not in checked.stdout, checked.stdout
    assert b"note: the session ran as `claude-sonnet-4-6[1m]` here" in checked.stdout
    assert b"compacts the session at once (311,789 tokens, past 177,000)" in checked.stdout
    assert b"compact" not in proc("view", log, env=env).stderr
    assert found.to_json()["compacts_on_a_plain_resume"] is True


def test_a_model_the_client_does_not_know_gets_the_window_it_gives_one(
    tmp_path: Path, proc
) -> None:
    """Claude Code 2.1.332 gives a model not in its catalog a 1M window: it compacts
    such a session on resume at 990,000 tokens, not at 190,000 (tried with the real
    client in `tests/clients/test_claude_code_today.py`)."""
    log = with_usage(basic(), 990_000, "my-gateway/sonnet").write(tmp_path / "s.jsonl")
    with read_log(str(log)) as replay:
        found = resume_compaction(replay.events, {})
    assert found is not None and (found.window, found.threshold) == (1_000_000, 977_000)
    assert found.over
    assert "my-gateway/sonnet, a model not in its catalog" in found.describe()
    assert proc("check", "--strict", log).returncode == 1
    quiet = with_usage(basic(), 190_000, "my-gateway/sonnet").write(tmp_path / "q.jsonl")
    assert proc("check", "--strict", quiet).returncode == 0


@pytest.mark.parametrize(
    ("environ", "threshold"),
    [
        ({}, 977_000),
        ({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "40"}, (1_000_000 - 20_000) * 40 // 100),
        ({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "300000"}, 300_000 - 23_000),
        ({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "250"}, 977_000),  # the client ignores it
        ({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "-1"}, 977_000),
        # the window variable as the client reads it: k and m, a floor, no guessing
        ({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "300k"}, 300_000 - 23_000),
        ({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "1.5m"}, 977_000),  # no more than the window
        ({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "250"}, 100_000 - 23_000),  # the 100k floor
        ({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "²"}, 977_000),  # no size: ignored
        ({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "-1"}, 977_000),
    ],
)
def test_the_users_environment_moves_the_threshold(
    tmp_path: Path, environ: dict[str, str], threshold: int
) -> None:
    log = with_usage(basic(), 390_000).write(tmp_path / "s.jsonl")
    with read_log(str(log)) as replay:
        found = resume_compaction(replay.events, environ)
    assert found is not None and found.threshold == threshold
    said = found.describe()
    if environ and threshold != 977_000:
        assert f"{next(iter(environ))} in the environment" in said
    ignored = environ and threshold == 977_000 and "1.5m" not in environ.values()
    assert ("ignored, as the client ignores" in said) == bool(ignored)  # never silently


def test_the_window_variable_goes_before_the_settings_file(tmp_path: Path) -> None:
    """The client takes CLAUDE_CODE_AUTO_COMPACT_WINDOW over `autoCompactWindow`."""
    from condense_cli.core.clientconfig import ClientConfig

    log = with_usage(basic(), 390_000).write(tmp_path / "s.jsonl")
    client = ClientConfig("settings.json", {"autoCompactWindow": 400_000})
    environ = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "300000"}
    with read_log(str(log)) as replay:
        found = resume_compaction(replay.events, environ, client)
    assert found is not None and found.threshold == 300_000 - 23_000


def test_the_guard_lets_a_compaction_the_users_settings_asked_for(tmp_path: Path, proc) -> None:
    """`--guard` blocks as "too early" only below the threshold the user's own settings
    give, not the default one."""
    import json

    log = with_usage(basic(), 400_000).write(tmp_path / "s.jsonl")
    said = json.dumps({"transcript_path": str(log), "trigger": "auto"}).encode()
    blocked = proc("hook", "pre-compact", "--guard", input=said)
    assert blocked.returncode == 2 and b"too early" in blocked.stderr
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "40"}
    let = proc("hook", "pre-compact", "--guard", input=said, env=env)
    assert let.returncode == 0, let.stderr
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "400000",
    }
    assert proc("hook", "pre-compact", "--guard", input=said, env=env).returncode == 0


def test_stats_follows_the_settings_file_on_resume(tmp_path: Path, cli) -> None:
    log = with_usage(basic(), 89_840, "claude-opus-4-7").write(tmp_path / "s.jsonl")
    settings = tmp_path / "settings.json"
    settings.write_text('{"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "5"}}')
    args = ("stats", log, "--no-tokens", "-f", "json")
    plain = orjson.loads(cli(*args).stdout_bytes)["client"]["resume_compaction"]
    assert (plain["threshold"], plain["compacts_on_resume"]) == (977_000, False)
    said = orjson.loads(cli(*args, "--client-config", settings).stdout_bytes)
    figure = said["client"]["resume_compaction"]
    assert (figure["threshold"], figure["compacts_on_resume"]) == (49_000, True)
    assert f"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE in {settings}" in figure["says"]
    # `autoCompactEnabled: false` (what `/config` writes) turns it off
    settings.write_text('{"autoCompactEnabled": false}')
    off = orjson.loads(cli(*args, "--client-config", settings).stdout_bytes)
    figure = off["client"]["resume_compaction"]
    assert (figure["threshold"], figure["compacts_on_resume"]) == (None, False)
    assert (
        f"auto-compaction is off here (autoCompactEnabled is false in {settings})"
        in (figure["says"])
    )
