"""Compaction thrash: back-to-back compactions and ones that only grow the summary."""

from __future__ import annotations

import orjson

from condense_cli.analysis.thrash import BACK_TO_BACK_EVENTS, Step, findings
from tests.conftest import condensation, msg


def test_a_run_of_compactions_back_to_back_is_one_finding() -> None:
    steps = [
        Step(10, before=20, after=5, summary_chars=100),
        Step(12, before=6, after=5, summary_chars=100),  # one event after the last
        Step(13, before=5, after=4, summary_chars=90),  # none
        Step(40, before=30, after=6, summary_chars=120),  # well after
    ]
    [finding] = findings(steps)
    assert finding.kind == "back_to_back" and finding.lines == (10, 12, 13)
    assert finding.message.startswith("3 compactions back to back (lines 10 to 13)")
    spaced = [Step(10, 20, 5, 100), Step(20, 5 + BACK_TO_BACK_EVENTS, 5, 100)] * 3
    assert findings(spaced) == []
    assert findings(steps[:2]) == []  # two are not several


def test_a_compaction_that_only_grew_the_summary_is_a_finding() -> None:
    steps = [Step(10, 20, 5, 100), Step(30, 12, 12, 400), Step(50, 30, 30, 300)]
    [finding] = findings(steps)
    assert finding.kind == "no_shrink" and finding.lines == (30,)
    assert "(12 -> 12 events) and its summary grew (100 -> 400 characters)" in finding.message


def test_check_warns_of_thrash_and_strict_fails(make_log, cli) -> None:
    events = [msg(i, f"step {i}") for i in range(1, 11)]
    events.append(condensation(11, start=2, end=8, summary="first summary", offset=1))
    events.append(msg(12, "one more"))
    events.append(condensation(13, ids=[9], summary="second summary", offset=1))
    events.append(condensation(14, ids=[10], summary="third summary", offset=1))
    log = make_log(events)
    checked = cli("check", log)
    assert checked.exit_code == 0
    assert f"{log}:11: warning: 3 compactions back to back (lines 11 to 14)" in checked.stdout
    assert cli("check", "--strict", log).exit_code == 1
    stats = orjson.loads(cli("stats", log, "-f", "json", "--no-tokens").stdout_bytes)
    assert [f["kind"] for f in stats["thrash"]] == ["back_to_back"]
    assert "compactions back to back" in cli("stats", log, "--no-tokens").stdout


def reading(i: int, path: str) -> list[dict[str, object]]:
    """A file read and what it gave (an OpenHands V0 pair)."""
    action = {"id": i, "source": "agent", "action": "read", "args": {"path": path}}
    seen = {
        "id": i + 1,
        "source": "environment",
        "observation": "read",
        "content": "x = 1",
        "cause": i,
        "extras": {"path": path},
    }
    return [action, seen]


def running(i: int, command: str) -> list[dict[str, object]]:
    action = {"id": i, "source": "agent", "action": "run", "args": {"command": command}}
    seen = {
        "id": i + 1,
        "source": "environment",
        "observation": "run",
        "content": "1 failed",
        "cause": i,
        "extras": {"command": command, "exit_code": 0},
    }
    return [action, seen]


def circles(summary: str) -> list[dict[str, object]]:
    """The agent reads a file and runs the tests, a compaction forgets both, the agent
    reads and runs them again, and the next compaction forgets them again."""
    events: list[dict[str, object]] = [msg(1, "fix the parser")]
    events += reading(2, "/repo/src/parser.py") + running(4, "pytest tests/test_parser.py")
    events.append(condensation(6, start=2, end=5, summary="Looked around.", offset=1))
    events += reading(7, "/repo/src/parser.py") + running(9, "pytest tests/test_parser.py")
    events.append(condensation(11, start=7, end=10, summary=summary, offset=1))
    return events


def test_facts_lost_read_anew_and_lost_again_are_a_finding(make_log, cli, proc) -> None:
    log = make_log(circles("Looked around again."))
    assert cli("check", "--strict", log).exit_code == 0  # judged only when asked: --deep
    checked = cli("check", "--deep", log)
    assert checked.exit_code == 0
    said = (
        f"{log}:11: warning: this compaction lost again 3 files and commands that the "
        "compaction at line 6 lost and the agent read or ran anew since: "
    )
    assert said in checked.stdout
    assert (
        "/repo/src/parser.py" in checked.stdout and "pytest tests/test_parser.py" in checked.stdout
    )
    strict = proc("check", "--strict", "--deep", log)
    assert strict.returncode == 1 and said.encode() in strict.stdout
    stats = orjson.loads(cli("stats", log, "-f", "json", "--no-tokens", "--deep").stdout_bytes)
    assert [(f["kind"], f["lines"]) for f in stats["thrash"]] == [("reread", [11])]
    # a summary that carries them this time ends the circle
    kept = make_log(circles("Read src/parser.py; ran pytest tests/test_parser.py (1 failed)."))
    assert cli("check", "--strict", "--deep", kept).exit_code == 0
