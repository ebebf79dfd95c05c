"""Real OpenHands logs: they load, replay to themselves and pass `check`."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from condense_cli.events import is_seen_by_agent
from condense_cli.view import load_view
from tests.conftest import corpus_logs


def test_corpus_is_present(corpus: Path) -> None:
    assert len(corpus_logs()) == 7


@pytest.mark.parametrize("log", corpus_logs(), ids=lambda p: p.name)
def test_view_is_the_log_minus_events_the_agent_never_sees(log: Path, corpus: Path) -> None:
    lines = [line for line in log.read_bytes().splitlines() if line.strip()]
    expected = [line for line in lines if is_seen_by_agent(orjson.loads(line))]
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
