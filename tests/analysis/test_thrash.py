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
