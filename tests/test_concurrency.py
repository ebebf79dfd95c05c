"""Several writers at once: every line valid, ids unique and increasing, nothing lost."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

import orjson

from tests.conftest import CONDENSE, start_condense_writers


def test_eight_processes_append_at_once(tmp_path: Path, corpus: Path) -> None:
    log = tmp_path / "session.jsonl"
    shutil.copyfile(corpus / "ponylang-ponyc-4588.jsonl", log)
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


def test_lock_held_elsewhere_gives_exit_4(tmp_path: Path, corpus: Path) -> None:
    log = tmp_path / "session.jsonl"
    shutil.copyfile(corpus / "runtime-basic.jsonl", log)
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


def test_a_waiting_writer_proceeds_when_the_lock_is_released(tmp_path: Path, corpus: Path) -> None:
    log = tmp_path / "session.jsonl"
    shutil.copyfile(corpus / "runtime-basic.jsonl", log)
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


AGENT_WRITER = """
import fcntl, json, os, sys
path, count, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for k in range(count):
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    fcntl.flock(fd, fcntl.LOCK_EX)
    size = os.fstat(fd).st_size
    tail = os.pread(fd, min(size, 1 << 20), max(0, size - (1 << 20)))
    last = [line for line in tail.splitlines() if line.strip()][-1]
    event = {"id": json.loads(last)["id"] + 1, "source": "agent", "action": "run",
             "args": {"command": f"{tag}-{k}"}}
    os.write(fd, (json.dumps(event) + "\\n").encode())
    os.fsync(fd)
    os.close(fd)
"""


def test_agent_writers_run_and_request_together(tmp_path: Path, corpus: Path) -> None:
    log = tmp_path / "session.jsonl"
    shutil.copyfile(corpus / "ponylang-ponyc-4595.jsonl", log)
    original = log.read_bytes()
    writers = [
        subprocess.Popen(["python3", "-c", AGENT_WRITER, str(log), "30", f"w{k}"]) for k in range(3)
    ]
    condense = start_condense_writers(log)
    for writer in writers:
        assert writer.wait(timeout=120) == 0
    outputs = [p.communicate(timeout=120) for p in condense]
    assert [p.returncode for p in condense] == [0] * 8, outputs
    appended = sum(1 for _, err in outputs if b"appended" in err and b"nothing appended" not in err)
    content = log.read_bytes()
    assert content.startswith(original)
    new = [orjson.loads(line) for line in content[len(original) :].splitlines()]
    assert len(new) == 90 + appended
    commands = sorted(e["args"]["command"] for e in new if e.get("action") == "run")
    assert commands == sorted(f"w{w}-{k}" for w in range(3) for k in range(30))
    ids = [orjson.loads(line)["id"] for line in content.splitlines()]
    assert ids == sorted(set(ids))
    check = subprocess.run([str(CONDENSE), "check", str(log)], capture_output=True)
    assert check.returncode == 0, check.stdout
