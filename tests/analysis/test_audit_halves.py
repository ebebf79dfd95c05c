"""`audit` of a big log in two processes: a forked child audits half the
condensations (every other one, or the second half of a log whose steps start
anywhere), another looks up half the facts in the current view, and the result is
exactly the one a single process gives."""

from __future__ import annotations

import os
import pickle
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from bench import logs
from condense_cli.analysis.audit import audit_log
from condense_cli.analysis.facts import Fact
from condense_cli.dialects import read_log
from condense_cli.fast import halves
from condense_cli.fast import lines as fastlines

# Generated logs with several condensations each (events of each kind).
SIZES = {"realistic": 600, "openhands-v1": 600, "claude-code": 1500, "codex": 3000}
NEVER = "9" * 20  # bytes: more than any log, a folder included


def audited(path: Path, split: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv(halves.SPLIT_ENV, split)
    with read_log(str(path)) as replay:
        return audit_log(replay).to_dict()


@pytest.mark.parametrize("kind", sorted(SIZES))
def test_a_child_audits_half_the_condensations_and_the_audit_is_the_same(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = logs.ensure_log(tmp_path, kind, SIZES[kind])
    workers: list[halves.Worker] = []
    start = halves.Worker.start

    def started(task: Any) -> halves.Worker | None:
        worker = start(task)
        assert worker is not None
        workers.append(worker)
        return worker

    monkeypatch.setattr(halves.Worker, "start", started)
    one = audited(path, NEVER, monkeypatch)
    assert workers == []
    two = audited(path, "0", monkeypatch)
    # a folder is read in two processes too, and so is a session or rollout that takes
    # the fast path
    big = kind in ("claude-code", "codex") and path.stat().st_size >= fastlines.FAST_MIN_BYTES
    reads = 1 if kind == "openhands-v1" or big else 0
    assert [w.complete for w in workers] == [True] * (reads + 2)  # steps, the current view
    assert len(one["condensations"]) >= 3
    assert two == one


def test_what_a_failed_child_did_not_send_is_audited_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child that dies before sending anything only costs time."""
    path = logs.ensure_log(tmp_path, "codex", SIZES["codex"])
    one = audited(path, NEVER, monkeypatch)
    from condense_cli.dialects.codex.dialect import CodexReplay

    def dies(self: CodexReplay) -> None:
        os._exit(3)

    monkeypatch.setattr(CodexReplay, "forked", dies)
    assert audited(path, "0", monkeypatch) == one


def test_what_no_child_sent_is_done_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every child dies at once: this process audits every step and looks up every
    fact of the current view itself."""
    path = logs.ensure_log(tmp_path, "realistic", SIZES["realistic"])
    one = audited(path, NEVER, monkeypatch)
    start = halves.Worker.start
    workers: list[halves.Worker] = []

    def dying(task: Any) -> halves.Worker | None:
        worker = start(lambda: os._exit(3))
        assert worker is not None
        workers.append(worker)
        return worker

    monkeypatch.setattr(halves.Worker, "start", dying)
    assert audited(path, "0", monkeypatch) == one
    assert len(workers) == 2 and not any(w.complete for w in workers)


def test_the_command_prints_the_same_audit_with_and_without_a_child(
    tmp_path: Path, proc: Any
) -> None:
    path = logs.ensure_log(tmp_path, "realistic", SIZES["realistic"])
    outputs = []
    for split in ("0", NEVER):
        env = dict(os.environ, **{halves.SPLIT_ENV: split})
        run = proc("audit", path, "--format", "json", env=env)
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0].count(b'"label": "condensation') >= 3


@pytest.mark.parametrize("kind", sorted(SIZES))
def test_the_condensations_are_walked_once_here_when_the_child_sends_its_half(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This process walks the steps once (up to the middle one, for a log whose steps
    start anywhere); it walks them again only for what a child did not send."""
    path = logs.ensure_log(tmp_path, kind, SIZES[kind])
    monkeypatch.setenv(halves.SPLIT_ENV, "0")
    walks: list[int] = []  # the processes that walked, as this one sees them
    with read_log(str(path)) as replay:
        name = "condensation_steps_from" if replay.steps_start_anywhere else "condensation_steps"
        steps = getattr(type(replay), name)

        def walked(self: Any, *first: int) -> Any:
            walks.append(os.getpid())
            return steps(self, *first)

        monkeypatch.setattr(type(replay), name, walked)
        assert len(audit_log(replay).condensations) >= 3
    assert walks == [os.getpid()]


@pytest.mark.parametrize("kind", ["realistic", "openhands-v1", "codex"])
def test_a_log_whose_steps_start_anywhere_is_walked_in_halves(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """V0 steps start anywhere (from the index), V1 steps too (the walk up to the
    first makes no view), and a Codex rollout's after a compaction that replaced the
    history: the child walks from the middle condensation on, this process up to it."""
    path = logs.ensure_log(tmp_path, kind, SIZES[kind])
    one = audited(path, NEVER, monkeypatch)
    record = tmp_path / "walks"
    with read_log(str(path)) as replay:
        kind_of_replay = type(replay)
        assert replay.steps_start_anywhere
    steps_from = kind_of_replay.condensation_steps_from

    def walked(self: Any, first: int) -> Any:
        taken = 0
        try:
            for step in steps_from(self, first):
                taken += 1
                yield step
        finally:
            with record.open("a") as out:
                out.write(f"{os.getpid()} {first} {taken}\n")

    monkeypatch.setattr(kind_of_replay, "condensation_steps_from", walked)
    assert audited(path, "0", monkeypatch) == one
    steps = len(one["condensations"])
    middle = steps // 2 + 1
    walks = [[int(x) for x in line.split()] for line in record.read_text().splitlines()]
    here = [(first, taken) for pid, first, taken in walks if pid == os.getpid()]
    there = [(first, taken) for pid, first, taken in walks if pid != os.getpid()]
    assert here == [(1, middle - 1)]
    assert there == [(middle, steps - middle + 1)]


@pytest.mark.parametrize("kind", ["realistic", "claude-code"])
def test_the_child_sends_each_fact_of_its_events_once(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The facts of each audit serve the current view's check, which keeps the first
    of each kind and key: the child sends only those no audit of its own sent before."""
    path = logs.ensure_log(tmp_path, kind, SIZES[kind])
    one = audited(path, NEVER, monkeypatch)
    received: list[Any] = []
    items = halves.Worker.items

    def receiving(worker: halves.Worker) -> Any:
        for item in items(worker):
            received.append(item)
            yield item

    monkeypatch.setattr(halves.Worker, "items", receiving)
    assert audited(path, "0", monkeypatch) == one
    steps = [item[1] for item in received if isinstance(item, tuple)]  # (number, audited)
    sent = [(fact.kind, fact.key) for _audit, facts in steps for fact in facts]
    assert sent and len(sent) == len(set(sent))


def test_a_fact_crosses_processes_whole() -> None:
    fact = Fact("errors", ("a b", "c"), "A  b", 3, ("x",), ("tests",), "pkg")
    object.__setattr__(fact, "rank", 1)
    object.__setattr__(fact, "about", "pytest")
    object.__setattr__(fact, "seen", 7)
    again = pickle.loads(pickle.dumps(fact, protocol=pickle.HIGHEST_PROTOCOL))
    assert again is not fact
    assert [getattr(again, f.name) for f in fields(Fact)] == [
        "errors",
        ("a b", "c"),
        "A  b",
        3,
        ("x",),
        ("tests",),
        "pkg",
        1,
        "pytest",
        7,
    ]
