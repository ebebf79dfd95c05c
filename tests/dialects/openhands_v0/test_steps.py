"""A V0 log's condensation steps from any condensation on: the walk's state rebuilt
from the index gives exactly the steps the walk from the log's start gives."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense_cli.core.logfile import LogSource
from condense_cli.dialects import read_log
from condense_cli.dialects.base import CondensationStep
from tests.conftest import condensation, hidden_setup_run, msg, request, run_action, run_obs


def seen(step: CondensationStep) -> Any:
    """All a step holds, comparable."""

    def view(events: Any) -> Any:
        return (
            [(e.key, e.raw, e.text, e.is_summary) for e in events],
            events.unhandled_request,
            events.summary_offset,
        )

    forgotten = [(e.key, e.raw) for e in step.forgotten]
    return step.id, step.line, view(step.before), forgotten, step.summary, view(step.after)


def every_start(path: Path) -> Iterator[tuple[int, list[Any], list[Any]]]:
    """For each condensation: its number, the steps from it walked from the start,
    and the steps from it walked from there."""
    with read_log(str(path)) as replay:
        assert replay.steps_start_anywhere
        whole = [seen(s) for s in replay.condensation_steps()]
        assert len(whole) == len(replay.condensations)
        for first in range(1, len(whole) + 1):
            yield (
                first,
                whole[first - 1 :],
                [seen(s) for s in replay.condensation_steps_from(first)],
            )


TRICKY = [
    msg(0, "fix the parser; never touch the lexer"),
    *hidden_setup_run(1),
    run_action(3),
    run_obs(4, 3),
    request(5),
    condensation(6, start=3, end=4, summary="ran cmd3", offset=1),
    {"source": "agent", "observation": "condense", "content": "a summary line", "extras": {}},
    run_action(7),
    run_obs(8, 7),
    condensation(9, ids=[7, 20]),  # forgets a later id too; no summary: the last stays
    run_action(10),
    run_obs(11, 10),
    *hidden_setup_run(12),
    run_action(20),  # forgotten before it was written
    run_action(21),
    run_obs(22, 21),
    request(23),
    msg(24, "and the tests"),
    condensation(25, start=10, end=11, summary="ran cmd10", offset=2),
    run_action(26),
    request(27),
    condensation(28, start=21, end=22),
    run_obs(29, 26),
    request(30),
]


def test_every_start_of_a_tricky_log_gives_the_walks_steps(make_log: Any) -> None:
    """Hidden events, summary lines without an id, requests pending or not, a
    condensation without a summary after one with, ids forgotten before they are written."""
    starts = list(every_start(make_log(TRICKY)))
    assert len(starts) == 4
    for first, whole, from_there in starts:
        assert from_there == whole, f"from condensation {first}"


def test_a_log_with_a_blank_line_is_walked_from_its_start(make_log: Any) -> None:
    """A blank line breaks the index's line numbers: the walk starts at the top."""
    path = make_log(
        orjson.dumps(msg(0)) + b"\n\n" + b"".join(orjson.dumps(e) + b"\n" for e in TRICKY[1:])
    )
    for first, whole, from_there in every_start(path):
        assert from_there == whole, f"from condensation {first}"


def test_a_start_reads_only_the_lines_still_kept_before_it(make_log: Any, monkeypatch: Any) -> None:
    """The lines a walk from condensation 4 reads line by line start at its line; the
    lines before it are read back only when still kept (and the summary in force)."""
    path = make_log(TRICKY)
    starts: list[int] = []
    lines = LogSource.raw_lines

    def raw_lines(self: LogSource, start: int = 0) -> Iterator[bytes]:
        starts.append(start)
        return lines(self, start)

    monkeypatch.setattr(LogSource, "raw_lines", raw_lines)
    reads: list[tuple[int, int]] = []
    read_at = LogSource.read_at

    def read(self: LogSource, start: int, end: int) -> bytes:
        reads.append((start, end))
        return read_at(self, start, end)

    with read_log(str(path)) as replay:
        offsets = replay.index.line_offsets  # type: ignore[attr-defined]
        starts.clear()
        monkeypatch.setattr(LogSource, "read_at", read)
        [step] = list(replay.condensation_steps_from(4))
    line = TRICKY.index(condensation(28, start=21, end=22))
    assert starts == [offsets[line]]
    still_kept = [TRICKY[0], TRICKY[7], run_obs(8, 7), run_action(21), run_obs(22, 21)]
    still_kept += [msg(24, "and the tests"), run_action(26)]
    in_force = condensation(25, start=10, end=11, summary="ran cmd10", offset=2)
    wanted = [offsets[TRICKY.index(e)] for e in [*still_kept, in_force]]
    assert sorted(start for start, _ in reads) == sorted(wanted)
    assert step.before.unhandled_request  # request 27
    assert step.summary is None and [e.key for e in step.forgotten] == [21, 22]


# --- any log ---------------------------------------------------------------------------

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Events, requests, summary lines and condensations forgetting runs or lists of
    earlier (and sometimes later) ids, with and without summaries."""
    events: list[dict[str, Any]] = [msg(0, "the task")]
    next_id = 1
    for _ in range(draw(st.integers(4, 40))):
        kind = draw(st.sampled_from(["run", "run", "msg", "hidden", "request", "line", "cond"]))
        if kind == "run":
            events += [run_action(next_id), run_obs(next_id + 1, next_id)]
            next_id += 2
            continue
        if kind == "hidden":
            events += hidden_setup_run(next_id)
            next_id += 2
            continue
        if kind == "line":
            line = {"source": "agent", "observation": "condense", "content": "s", "extras": {}}
            events.append(line)
            continue
        if kind == "msg":
            events.append(msg(next_id))
        elif kind == "request":
            events.append(request(next_id))
        else:
            ids = draw(st.lists(st.integers(0, next_id + 3), max_size=6))
            summary = draw(st.one_of(st.none(), st.text("ab ", min_size=1, max_size=5)))
            offset = draw(st.integers(0, 3)) if summary is not None else None
            if draw(st.booleans()) or not ids:
                low = draw(st.integers(0, next_id))
                run = {"start": low, "end": draw(st.integers(low, next_id + 2))}
                events.append(condensation(next_id, **run, summary=summary, offset=offset))
            else:
                events.append(condensation(next_id, ids=ids, summary=summary, offset=offset))
        next_id += 1
    return events


@SETTINGS
@given(logs())
def test_every_start_of_any_log_gives_the_walks_steps(tmp_path_factory: Any, log: Any) -> None:
    path = tmp_path_factory.mktemp("steps") / "log.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in log))
    for first, whole, from_there in every_start(path):
        assert from_there == whole, f"from condensation {first}"


def test_a_history_reads_each_event_back_from_its_line(tmp_path: Path) -> None:
    """`simulate` and `report` hold the whole history: each event keeps where its line
    is, not the line nor its parse (a history held both: 1.36 GB for a 324 MB log),
    and reads the line back when asked, past a byte-order mark, CRLF endings and a
    blank line, up to `--upto`."""
    bodies = [orjson.dumps(e) for e in TRICKY]
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"\r\n\r\n".join(bodies) + b"\r\n")
    wanted = {
        e["id"]: body
        for e, body in zip(TRICKY, bodies, strict=True)
        if "id" in e and e.get("action") not in ("condensation", "condensation_request")
    }
    for upto, requests in ((None, 4), (22, 1)):
        with read_log(str(path), upto=None if upto is None else str(upto)) as replay:
            history = list(replay.history())
            read = [(e.key, e.raw, e.data, e.text) for e in history if e is not None]
        shown = [i for i in wanted if i not in (1, 2, 12, 13) and (upto is None or i <= upto)]
        assert [key for key, *_ in read] == shown  # hidden events left out
        assert [(raw, data) for _, raw, data, _ in read] == [
            (wanted[i], orjson.loads(wanted[i])) for i in shown
        ]
        assert read[0][3] == "fix the parser; never touch the lexer"
        assert history.count(None) == requests


def test_a_history_holds_a_small_part_of_its_log(make_log: Any) -> None:
    """What a long history holds grows with its events, not with their size."""
    pairs = [(run_action(n), run_obs(n + 1, n, content="x" * 10_000)) for n in range(0, 400, 2)]
    path = make_log([event for pair in pairs for event in pair])
    size = path.stat().st_size
    with read_log(str(path)) as replay:
        tracemalloc.start()
        try:
            history = list(replay.history())
            held, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(history) == 400 and history[-1] is not None
        assert history[-1].text == "x" * 10_000
    assert held < size / 20, f"{held:,} bytes held for a log of {size:,}"
