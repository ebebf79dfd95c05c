"""Several writers at once: every line valid, ids unique and increasing, nothing lost."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

import orjson

from tests.conftest import CONDENSE, CORPUS


def test_eight_processes_append_at_once(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    shutil.copyfile(CORPUS / "ponylang-ponyc-4588.jsonl", log)
    original = log.read_bytes()
    commands = []
    for k in range(10):
        if k % 2:
            commands.append([str(CONDENSE), "request", str(log)])
        else:
            commands.append(
                [str(CONDENSE), "run", str(log), "-t", "amortized", "-s", "max_size=20", "--force"]
            )
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
        for cmd in commands
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * len(procs), outputs
    appended = sum(1 for _, err in outputs if b"appended" in err and b"nothing appended" not in err)
    assert appended >= 5  # every request appends; runs append when there is something to forget
    content = log.read_bytes()
    assert content.startswith(original)
    new_lines = content[len(original) :].splitlines()
    assert len(new_lines) == appended
    ids = [orjson.loads(line)["id"] for line in content.splitlines() if line.strip()]
    assert ids == sorted(set(ids))
    assert ids[-appended:] == list(range(ids[-appended], ids[-appended] + appended))
    check = subprocess.run([str(CONDENSE), "check", str(log)], capture_output=True)
    assert check.returncode == 0, check.stdout


def test_lock_held_elsewhere_gives_exit_4(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    shutil.copyfile(CORPUS / "runtime-basic.jsonl", log)
    before = log.read_bytes()
    with log.open("rb") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        done = subprocess.run(
            [str(CONDENSE), "request", str(log), "--lock-timeout", "0.3"], capture_output=True
        )
    assert done.returncode == 4
    assert done.stderr.decode() == (
        f"Error: {log}: could not lock the log within 0.3s; another process holds it; "
        "nothing was appended\nHint: try again, or raise --lock-timeout\n"
    )
    assert log.read_bytes() == before


def test_a_waiting_writer_proceeds_when_the_lock_is_released(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    shutil.copyfile(CORPUS / "runtime-basic.jsonl", log)
    holder = log.open("rb")
    fcntl.flock(holder, fcntl.LOCK_EX)
    waiting = subprocess.Popen(
        [str(CONDENSE), "request", str(log), "--lock-timeout", "30"], stderr=subprocess.PIPE
    )
    try:
        assert waiting.poll() is None
    finally:
        holder.close()
    _, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, err
    assert orjson.loads(log.read_bytes().splitlines()[-1])["action"] == "condensation_request"
