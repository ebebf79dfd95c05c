"""A writer killed at any moment leaves the log unchanged or one whole line longer."""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import orjson
import pytest

from condense_cli.core.logfile import LogSource
from condense_cli.dialects.openhands_v0.replay import scan_log
from tests.conftest import CONDENSE

ROUNDS = 40
TIME_LIMIT = 90.0


@pytest.mark.slow
def test_killing_writers_at_random_moments(tmp_path: Path, corpus: Path) -> None:
    log = tmp_path / "session.jsonl"
    shutil.copyfile(corpus / "ponylang-ponyc-4593.jsonl", log)
    commands = [
        [str(CONDENSE), "run", str(log), "-t", "amortized", "-s", "max_size=10", "--force"],
        [str(CONDENSE), "request", str(log)],
    ]
    # Kill within twice what the slower of the two commands takes on this machine now,
    # so that some writers are killed mid-way and some finish, however loaded.
    took = []
    for command in commands:
        timed = time.monotonic()
        subprocess.run(command, capture_output=True, check=True)
        took.append(time.monotonic() - timed)
    window = 2 * max(took)
    rng = random.Random(20261121)
    started = time.monotonic()
    killed = completed = 0
    for round_ in range(ROUNDS):
        if time.monotonic() - started > TIME_LIMIT:
            break
        before = log.read_bytes()
        proc = subprocess.Popen(
            commands[round_ % 2], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(rng.uniform(0.0, window))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        if proc.returncode == -signal.SIGKILL:
            killed += 1
        else:
            completed += 1
        after = log.read_bytes()
        assert after.startswith(before)
        added = after[len(before) :]
        assert added == b"" or (added.count(b"\n") == 1 and added.endswith(b"\n")), added[:200]
        if added:
            assert orjson.loads(added)["id"] > 0
        with LogSource.open(str(log)) as source:
            scan_log(source)  # raises on any torn or invalid line
    assert killed > 0 and completed > 0, (killed, completed)
