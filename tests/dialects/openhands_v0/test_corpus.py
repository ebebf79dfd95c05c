"""Real OpenHands logs: they load, replay to themselves and pass `check`."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from condense_cli.dialects.openhands_v0.replay import load_view
from tests.conftest import corpus_logs
from tests.reference import seen_by_agent


def test_corpus_is_present(corpus: Path) -> None:
    assert len(corpus_logs()) == 7


@pytest.mark.parametrize("log", corpus_logs(), ids=lambda p: p.name)
def test_view_is_the_log_minus_events_the_agent_never_sees(log: Path, corpus: Path) -> None:
    lines = [line for line in log.read_bytes().splitlines() if line.strip()]
    expected = [line for line in lines if seen_by_agent(orjson.loads(line))]
    view, index = load_view(str(log))
    assert [e.raw for e in view] == expected
    assert index.events == len(lines)
    assert index.condensations == []


@pytest.mark.parametrize("log", corpus_logs(), ids=lambda p: p.name)
def test_check_passes(log: Path, corpus: Path, cli) -> None:
    result = cli("check", log)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""


@pytest.mark.parametrize("log", corpus_logs(), ids=lambda p: p.name)
def test_jsonl_view_round_trips(log: Path, corpus: Path, proc) -> None:
    first = proc("view", log, "--format", "jsonl")
    assert first.returncode == 0, first.stderr
    again = proc("view", "-", "--format", "jsonl", input=first.stdout)
    assert again.stdout == first.stdout


def test_openhands_writes_hidden_inside_args_and_extras() -> None:
    """The corpus's run events all carry `hidden: false` in args / extras, never on top."""
    places = set()
    for log in corpus_logs():
        for line in log.read_bytes().splitlines():
            event = orjson.loads(line)
            assert "hidden" not in event
            for key in ("args", "extras"):
                if "hidden" in (event.get(key) or {}):
                    places.add((key, event[key]["hidden"]))
    assert places == {("args", False), ("extras", False)}


def test_a_hidden_run_in_a_real_log_leaves_the_view(make_log) -> None:
    """The ponyc run with its first command hidden, as OpenHands hides its setup script."""
    original = corpus_logs()[0]
    lines = original.read_bytes().splitlines(keepends=True)
    action, observation = [i for i, line in enumerate(lines) if b'"hidden": false' in line][:2]
    action_id = orjson.loads(lines[action])["id"]
    assert orjson.loads(lines[action])["action"] == "run"
    assert orjson.loads(lines[observation])["cause"] == action_id
    for i in (action, observation):
        lines[i] = lines[i].replace(b'"hidden": false', b'"hidden": true')
    before, _ = load_view(str(original))
    view, index = load_view(str(make_log(b"".join(lines))))
    hidden = {action_id, orjson.loads(lines[observation])["id"]}
    assert [e.id for e in view] == [e.id for e in before if e.id not in hidden]
    assert index.events == len(lines)
    assert index.visible_events == len(before) - 2
