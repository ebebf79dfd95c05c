"""`check`'s warnings for what the conversion to messages drops, and the dialects
that say their conversion drops nothing (so `check` does not convert their views)."""

from __future__ import annotations

from pathlib import Path

import pytest

from condense_cli.analysis.checks import lost_context
from condense_cli.dialects import read_log
from tests.conftest import ROOT, require_corpus
from tests.dialects.claude_code.test_replay import Builder

SHARED = ROOT.parent / "shared" / "corpus"


def _claude_and_v1_corpus() -> list[Path]:
    claude = sorted((SHARED / "claude-code").glob("*.jsonl"))
    v1 = sorted(p for p in (SHARED / "openhands-v1").glob("*") if p.is_dir())
    return claude + v1


def _dropped(path: Path) -> tuple[bool, list[str]]:
    """Whether the log's dialect says its conversion drops, and what converting its
    whole view dropped."""
    with read_log(str(path)) as replay:
        conversion = replay.messages(replay.view())
        return replay.conversion_drops, [c.reason for c in conversion.dropped]


def test_the_corpus_of_dialects_that_drop_nothing_is_there() -> None:
    require_corpus(SHARED / "claude-code")
    require_corpus(SHARED / "openhands-v1")
    assert len(_claude_and_v1_corpus()) >= 30


@pytest.mark.parametrize("log", _claude_and_v1_corpus(), ids=lambda p: p.name[:24])
def test_a_conversion_said_to_drop_nothing_drops_nothing_on_real_logs(log: Path) -> None:
    assert _dropped(log) == (False, [])


def test_unpaired_claude_code_calls_are_problems_of_the_replay_not_drops(tmp_path: Path) -> None:
    b = Builder()
    b.user("go")  # 2
    b.use("c1", "m1")  # 3: never answered
    b.result("c9", "stray")  # 4: answers nothing
    b.say("hm", "m2")  # 5
    log = b.write(tmp_path / "s.jsonl")
    assert _dropped(log) == (False, [])
    with read_log(str(log)) as replay:
        assert lost_context(replay) == []
        assert [(p.line, p.message) for p in replay.problems] == [
            (3, "tool_use c1 has no tool_result"),
            (4, "tool_result for c9: no tool_use before it"),
        ]
