"""The collector is off while a big log is read, and as it was afterwards."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from condense_cli.dialects import read_log
from condense_cli.dialects.openhands_v1 import storage
from condense_cli.fast.lines import collector_paused


def test_the_collector_is_paused_then_left_as_it_was() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("a read that fails")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # off before: left off
    finally:
        gc.enable()


def test_a_folder_is_read_with_the_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.dialects.openhands_v1.test_replay import message, system, write_folder

    folder = write_folder(tmp_path / "c", [system(0), message(1), message(2)])
    states: list[bool] = []
    read = storage.read_event_file
    monkeypatch.setattr(
        storage, "read_event_file", lambda p: states.append(gc.isenabled()) or read(p)
    )
    with read_log(str(folder)) as replay:
        assert len(replay.view()) == 3
    assert states[:3] == [False] * 3 and gc.isenabled()
