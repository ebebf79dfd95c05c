"""`LogSource.read_at`: records read back in order cost a read every `READ_AHEAD`
bytes, and every read gives exactly the file's bytes, however reads jump, and after
the file grew."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from condense_cli.core import logfile
from condense_cli.core.logfile import LogSource


def lines_file(tmp_path: Path, count: int = 20_000) -> tuple[Path, bytes, list[int]]:
    """A file of numbered lines of different lengths, and where each line starts."""
    data = b"".join(b"%d %s\n" % (i, b"x" * (i % 97)) for i in range(count))
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    starts = [0]
    for line in data.splitlines(keepends=True)[:-1]:
        starts.append(starts[-1] + len(line))
    return path, data, starts


@pytest.fixture
def preads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the system reads made from now on."""
    made: list[int] = []
    pread = os.pread

    def counted(fd: int, size: int, offset: int) -> bytes:
        made.append(size)
        return pread(fd, size, offset)

    monkeypatch.setattr(logfile.os, "pread", counted)
    return made


def test_lines_read_back_in_order_cost_a_read_every_read_ahead(
    tmp_path: Path, preads: list[int]
) -> None:
    path, data, starts = lines_file(tmp_path)
    with LogSource.open(str(path)) as source:
        every_other = list(zip(starts, [*starts[1:], len(data)], strict=True))[::2]
        got = [source.read_at(start, end - 1) for start, end in every_other]
    assert got == [data[start : end - 1] for start, end in every_other]
    assert len(data) > 1_000_000
    assert len(preads) <= len(data) // logfile.READ_AHEAD + 4  # two before the first ahead


def test_a_record_read_twice_is_read_once_and_keeps_the_run(
    tmp_path: Path, preads: list[int]
) -> None:
    """Records read back in order, each asked for twice (a property read twice), cost
    what reading each once does."""
    path, data, starts = lines_file(tmp_path)
    with LogSource.open(str(path)) as source:
        for start, end in zip(starts, [*starts[1:], len(data)], strict=True):
            assert source.read_at(start, end - 1) == data[start : end - 1]
            assert source.read_at(start, end - 1) == data[start : end - 1]
    assert len(preads) <= len(data) // logfile.READ_AHEAD + 4


def test_reads_far_apart_read_only_what_they_ask(tmp_path: Path, preads: list[int]) -> None:
    path, data, starts = lines_file(tmp_path)
    far = starts[:: len(starts) // 8]
    with LogSource.open(str(path)) as source:
        for start in reversed(far):  # backwards: none follows the one before
            assert source.read_at(start, start + 10) == data[start : start + 10]
    assert preads == [10] * len(far)


def test_any_reads_give_the_files_bytes(tmp_path: Path) -> None:
    path, data, starts = lines_file(tmp_path)
    chance = random.Random(7)
    with LogSource.open(str(path)) as source:
        for _ in range(3000):
            start = chance.choice(starts) + chance.randrange(3)
            end = start + chance.choice([0, 1, 50, 5000, logfile.READ_AHEAD + 3])
            if chance.random() < 0.7:  # mostly on from the last read, as a view reads
                start = min(len(data), start)
            assert source.read_at(start, end) == data[start:end]


def test_a_read_after_the_file_grew_sees_the_new_bytes(tmp_path: Path) -> None:
    """The read-ahead that met the end of the file holds no more than was there, nor
    does a read that came short and is asked again: what a writer appends later is
    read from the file."""
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b"')
    with LogSource.open(str(path)) as source:
        assert source.read_at(0, 8) == b'{"a": 1}'
        assert source.read_at(9, 17) == b'{"b"'
        with path.open("ab") as out:
            out.write(b': 2}\n{"c": 3}\n')
        assert source.read_at(9, 17) == b'{"b": 2}'
        assert source.read_at(18, 26) == b'{"c": 3}'
