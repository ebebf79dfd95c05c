"""Two processes sharing a log chunk by chunk: every chunk once, results used in order,
the faster process taking more, and a worker that fails changing nothing."""

from __future__ import annotations

import os
import pickle
import signal
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from condense_cli.dialects.openhands_v0 import chunks
from condense_cli.dialects.openhands_v0.chunks import chunk_starts, walk_chunks

PARENT = os.getpid()


def in_worker() -> bool:
    return os.getpid() != PARENT


def lines_log(tmp_path: Path, lengths: list[int]) -> Path:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"".join(b"x" * n + b"\n" for n in lengths))
    return log


def walk(starts: list[int], work: Any) -> tuple[list[int], list[Any]]:
    """The chunks in the order they were used, and their results."""
    order: list[int] = []
    results: list[Any] = []

    def use(chunk: int, result: Any) -> None:
        order.append(chunk)
        results.append(result)

    walk_chunks(starts, work, use)
    return order, results


@pytest.fixture(autouse=True)
def every_worker_is_reaped():
    yield
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_chunks_start_at_lines_and_cover_the_log(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(chunks, "CHUNK_MIN", 100)
    monkeypatch.setattr(chunks, "_PROBE", 7)  # lines longer than a probe
    lengths = [3, 40, 250, 1, 0, 99, 100, 101, 30, 500, 12] * 3
    log = lines_log(tmp_path, lengths)
    data = log.read_bytes()
    line_starts = {0} | {i + 1 for i, byte in enumerate(data) if byte == ord("\n")}
    with log.open("rb") as file:
        starts = chunk_starts(file, len(data))
    assert starts[0] == 0 and starts[-1] == len(data)
    assert all(a < b for a, b in pairwise(starts))
    assert set(starts) <= line_starts
    # each chunk ends at the first line starting at least CHUNK_MIN bytes on
    for a, b in pairwise(starts[:-1]):
        assert b - a >= 100
        assert not any(a + 100 <= s < b for s in line_starts)


def test_a_small_log_is_one_chunk(tmp_path: Path) -> None:
    log = lines_log(tmp_path, [10, 20, 30])
    size = log.stat().st_size
    with log.open("rb") as file:
        assert chunk_starts(file, size) == [0, size]
        assert chunk_starts(file, 0) == [0, 0]


def both_take_part(folder: Path) -> Any:
    """Work that returns (start, stop, pid); each process holds its first chunk until
    the other has started one, so both take part however the two are scheduled."""

    def work(a: int, b: int) -> tuple[int, int, int]:
        mine, theirs = ("worker", "parent") if in_worker() else ("parent", "worker")
        (folder / mine).touch()
        waited = time.monotonic()
        while not (folder / theirs).exists() and time.monotonic() - waited < 30:
            time.sleep(0.001)
        return a, b, os.getpid()

    return work


def test_every_chunk_once_in_order_from_both_processes(tmp_path: Path) -> None:
    starts = list(range(0, 410, 10))
    order, results = walk(starts, both_take_part(tmp_path))
    assert order == list(range(40))
    assert [r[:2] for r in results] == list(pairwise(starts))
    pids = {r[2] for r in results}
    assert PARENT in pids and len(pids) == 2


@pytest.mark.parametrize("slow", ["parent", "worker"])
def test_the_faster_process_takes_more_chunks(slow: str) -> None:
    """The slow one takes a chunk now and then (0.2 s each) while the fast one does
    the rest: it would need the other to stand still for a second to take five."""

    def work(a: int, b: int) -> int:
        if in_worker() == (slow == "worker"):
            time.sleep(0.2)
        return os.getpid()

    _, pids = walk(list(range(41)), work)
    slow_chunks = sum((pid != PARENT) == (slow == "worker") for pid in pids)
    assert slow_chunks <= 5, pids


def killed(a: int, b: int) -> int:
    if in_worker():
        os.kill(os.getpid(), signal.SIGKILL)
    return a


def failing(a: int, b: int) -> int:
    if in_worker():
        raise MemoryError
    return a


def dies_after_some(a: int, b: int) -> int:
    if in_worker() and a >= 20:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.001)
    return a


def unpicklable(a: int, b: int) -> Any:
    return (lambda: a) if in_worker() else a


@pytest.mark.parametrize("work", [killed, failing, dies_after_some, unpicklable])
def test_a_failed_worker_changes_nothing(work: Any) -> None:
    starts = list(range(41))
    order, results = walk(starts, work)
    assert order == list(range(40))
    assert results == starts[:-1]


def test_a_result_that_does_not_load_is_done_again(monkeypatch) -> None:
    def corrupt(data: bytes) -> Any:
        raise pickle.UnpicklingError("truncated")

    def work(a: int, b: int) -> tuple[int, int]:
        time.sleep(0.002)  # both take some
        return a, os.getpid()

    monkeypatch.setattr(pickle, "loads", corrupt)
    order, results = walk(list(range(41)), work)
    assert order == list(range(40))
    assert results == [(a, PARENT) for a in range(40)]  # the worker's were done again


def no_directory(*args: Any) -> Any:
    raise FileNotFoundError(2, "No usable temporary directory found")


@pytest.mark.parametrize("lacking", ["fork", "room"])
def test_without_a_worker_this_process_does_all(lacking: str, monkeypatch) -> None:
    """No fork, or no file for a worker's results (no temporary directory, no
    memfd): one process walks every chunk."""
    import tempfile

    def refused(*args: Any) -> Any:
        raise OSError(11, "Resource temporarily unavailable")

    if lacking == "fork":
        monkeypatch.setattr(os, "fork", refused)
    else:
        monkeypatch.setattr(tempfile, "TemporaryFile", no_directory)
        monkeypatch.setattr(os, "memfd_create", refused, raising=False)
    order, results = walk(list(range(11)), lambda a, b: (a, os.getpid()))
    assert order == list(range(10))
    assert results == [(a, PARENT) for a in range(10)]


def test_results_go_to_a_temporary_file_closed_at_the_end(tmp_path: Path, monkeypatch) -> None:
    import tempfile

    made: list[Any] = []
    real = tempfile.TemporaryFile

    def temporary_file() -> Any:
        made.append(real())
        return made[-1]

    monkeypatch.setattr(tempfile, "TemporaryFile", temporary_file)
    order, results = walk(list(range(0, 410, 10)), both_take_part(tmp_path))
    assert order == list(range(40))
    assert {pid for _, _, pid in results} - {PARENT}  # the worker's results came back
    assert len(made) == 1 and made[0].closed


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="memfd_create is Linux's")
def test_without_a_temporary_directory_results_go_to_memory(tmp_path: Path, monkeypatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "TemporaryFile", no_directory)
    order, results = walk(list(range(0, 410, 10)), both_take_part(tmp_path))
    assert order == list(range(40))
    assert {pid for _, _, pid in results} - {PARENT}


def test_an_error_while_using_a_result_stops_the_worker() -> None:
    """The worker is killed, not waited for (it would take minutes here)."""

    def work(a: int, b: int) -> None:
        time.sleep(60 if in_worker() and a > 0 else 0.01)

    def use(chunk: int, result: Any) -> None:
        raise ValueError("bad line")

    started = time.monotonic()
    with pytest.raises(ValueError, match="bad line"):
        walk_chunks(list(range(0, 100, 10)), work, use)
    assert time.monotonic() - started < 30
