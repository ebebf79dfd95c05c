"""Every condenser keeps the user's first task message by default, in every dialect
(SPEC section 15): on a real session of each, `condense run` forgets the middle and
the task is still in the view, beside the client's preamble; `keep_task = false`
turns it off."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from condense_cli.condensers.base import task_position
from condense_cli.dialects import read_log
from tests.conftest import ONE_OF_EACH, corpus_copy
from tests.fake_llm import FakeLLM


def task_of(log: Path) -> tuple[object, str, int]:
    """The id, text and position of the user's first task message in the view."""
    with read_log(str(log)) as replay:
        view = replay.view()
        position = task_position(view)
        assert position is not None, f"{log}: no task message in the view"
        event = view.events[position]
        return event.id, event.text, position


def in_view(log: Path) -> list[str]:
    """The texts of the view, in order."""
    with read_log(str(log)) as replay:
        return [e.text for e in replay.view()]


@pytest.mark.parametrize("dialect", list(ONE_OF_EACH))
@pytest.mark.parametrize("condenser", ["amortized", "llm"])
def test_every_condenser_keeps_the_task_in_every_dialect(
    dialect: str,
    condenser: str,
    config: Path,
    fake: FakeLLM,
    tmp_path: Path,
    proc: Callable[..., Any],
) -> None:
    log = corpus_copy(dialect, tmp_path)
    fake.text("The user asked for a fix; the work is under way.")
    _task, text, position = task_of(log)
    before = in_view(log)
    done = proc("run", log, "-c", config, "-t", condenser, "-s", "max_size=12", "--force")
    assert done.returncode == 0, done.stderr
    after = in_view(log)
    assert len(after) < len(before), done.stderr  # it forgot something
    assert text in after, f"{dialect}: the task {text[:60]!r} was forgotten"
    assert after[: position + 1] == before[: position + 1]  # the preamble and the task, in front


@pytest.mark.parametrize("dialect", ["openhands-v0", "codex"])
def test_keep_task_false_forgets_it(dialect: str, tmp_path: Path, cli: Any) -> None:
    """Where the task comes after the client's preamble, `keep_task = false` leaves
    only `keep_first` events in front, as before."""
    log = corpus_copy(dialect, tmp_path)
    _task, text, position = task_of(log)
    assert position >= 1
    done = cli("run", log, "-t", "amortized", "-s", "max_size=12", "-s", "keep_task=false")
    assert done.exit_code == 0, done.stderr
    assert text not in in_view(log)


def test_recent_events_shows_the_task_too(tmp_path: Path, cli: Any) -> None:
    log = corpus_copy("codex", tmp_path)
    _task, text, _position = task_of(log)
    shown = cli("run", log, "-t", "recent", "-s", "max_events=10", "-f", "json")
    assert shown.exit_code == 0, shown.stderr
    words = text.strip().splitlines()[-1][:40]  # (a line of it: JSON escapes the breaks)
    assert words in shown.stdout
    hidden = cli("run", log, "-t", "recent", "-s", "max_events=10", "-s", "keep_task=false")
    assert words not in hidden.stdout
