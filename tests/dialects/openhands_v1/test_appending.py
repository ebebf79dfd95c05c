"""Appends to V1 conversation folders never corrupt them: kills, concurrency, failed writes."""

from __future__ import annotations

import fcntl
import os
import random
import resource
import signal
import subprocess
import time
from pathlib import Path

import orjson

from condense_cli.dialects.openhands_v1.appending import event_file_name
from condense_cli.dialects.openhands_v1.storage import event_problem, read_folder
from tests.conftest import CONDENSE, start_condense_writers
from tests.dialects.openhands_v1.test_cli import copy_of, event_files, events_dir
from tests.dialects.openhands_v1.test_replay import ONE_CONDENSATION, system, write_jsonl

ROUNDS = 40
TIME_LIMIT = 90.0
BIGGEST = "0535c419f44a4e248c72e40c77a06a32"  # 343 events, 7 condensations


def assert_sound(folder: Path, before: list[Path]) -> list[Path]:
    """The folder holds the files it held plus whole, valid events at the next indices,
    and nothing else (no temporary files); it reads without problems."""
    files = event_files(folder)
    assert files[: len(before)] == before
    for index, path in enumerate(files[len(before) :], start=len(before)):
        event = orjson.loads(path.read_bytes())
        assert event_problem(event) is None
        assert path.name == event_file_name(index, event["id"])
    others = sorted(p.name for p in events_dir(folder).iterdir() if p not in files)
    assert others in ([], [".eventlog.lock"]), others
    conversation = read_folder(folder)
    assert conversation.problems == ()
    assert len(conversation.records) == len(files)
    return files


def test_killing_writers_at_random_moments(tmp_path: Path) -> None:
    folder = copy_of(BIGGEST, tmp_path)
    rng = random.Random(20261122)
    started = time.monotonic()
    killed = completed = 0
    files = event_files(folder)
    for round_ in range(ROUNDS):
        if time.monotonic() - started > TIME_LIMIT:
            break
        if round_ % 2:
            command = [str(CONDENSE), "request", str(folder)]
        else:
            size = rng.choice(["10", "40", "80"])
            command = [
                str(CONDENSE),
                "run",
                str(folder),
                "-t",
                "amortized",
                "-s",
                f"max_size={size}",
            ]
            command.append("--force")
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.0, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        if proc.returncode == -signal.SIGKILL:
            killed += 1
        else:
            assert proc.returncode == 0
            completed += 1
        after = assert_sound(folder, files)
        assert len(after) - len(files) in (0, 1)
        files = after
    assert killed > 0 and completed > 0, (killed, completed)
    check = subprocess.run([str(CONDENSE), "check", str(folder)], capture_output=True)
    assert check.returncode == 0, check.stdout


def test_ten_processes_append_at_once(tmp_path: Path) -> None:
    folder = copy_of(ONE_CONDENSATION, tmp_path)
    before = event_files(folder)
    commands = [
        [str(CONDENSE), "request", str(folder)]
        if k % 2
        else [str(CONDENSE), "run", str(folder), "-t", "amortized", "-s", "max_size=20", "--force"]
        for k in range(10)
    ]
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for c in commands]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 10, outputs
    appended = sum(1 for _, err in outputs if b"; appended to" in err or b"appended cond" in err)
    assert appended >= 6  # every request appends; the first run at least
    after = assert_sound(folder, before)
    assert len(after) == len(before) + appended
    kinds = [orjson.loads(p.read_bytes())["kind"] for p in after[len(before) :]]
    assert kinds.count("CondensationRequest") == 5
    check = subprocess.run([str(CONDENSE), "check", str(folder)], capture_output=True)
    assert check.returncode == 0, check.stdout


# The SDK's EventLog (since January 2026): under a flock on events/.eventlog.lock, count
# the files, then write the next one in place.
SDK_WRITER = """
import fcntl, json, os, re, sys, uuid
folder, count, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
name = re.compile(r"^event-(\\d{5,})-([0-9a-fA-F-]{8,})\\.json$")
for k in range(count):
    fd = os.open(os.path.join(folder, ".eventlog.lock"), os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    taken = {int(m[1]) for m in map(name.match, os.listdir(folder)) if m}
    index = 0
    while index in taken:
        index += 1
    event_id = str(uuid.uuid4())
    event = {"kind": "MessageEvent", "id": event_id, "source": "user",
             "llm_message": {"role": "user", "content": [{"type": "text", "text": f"{tag}-{k}"}]}}
    with open(os.path.join(folder, f"event-{index:05d}-{event_id}.json"), "w") as file:
        file.write(json.dumps(event))
    os.close(fd)
"""


def test_sdk_writers_and_condense_append_together(tmp_path: Path) -> None:
    folder = copy_of(ONE_CONDENSATION, tmp_path)
    before = event_files(folder)
    writers = [
        subprocess.Popen(["python3", "-c", SDK_WRITER, str(events_dir(folder)), "20", f"w{k}"])
        for k in range(3)
    ]
    ours = start_condense_writers(folder)
    for writer in writers:
        assert writer.wait(timeout=120) == 0
    outputs = [p.communicate(timeout=120) for p in ours]
    assert [p.returncode for p in ours] == [0] * 8, outputs
    appended = sum(1 for _, err in outputs if b"; appended to" in err or b"appended cond" in err)
    after = assert_sound(folder, before)
    new = [orjson.loads(p.read_bytes()) for p in after[len(before) :]]
    assert len(new) == 60 + appended
    texts = sorted(
        e["llm_message"]["content"][0]["text"] for e in new if e["kind"] == "MessageEvent"
    )
    assert texts == sorted(f"w{w}-{k}" for w in range(3) for k in range(20))


def _no_file_growth() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


def test_a_failed_write_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    folder = copy_of(ONE_CONDENSATION, tmp_path)
    before = event_files(folder)
    snapshot = {p: p.read_bytes() for p in before}
    for args in (["request"], ["run", "-t", "amortized", "-s", "max_size=20", "--force"]):
        done = subprocess.run(
            [str(CONDENSE), args[0], str(folder), *args[1:]],
            capture_output=True,
            preexec_fn=_no_file_growth,
        )
        assert done.returncode == 1, done.stderr
        message = done.stderr.decode()
        assert message.startswith(f"Error: {events_dir(folder)}/event-00091-")
        assert message.endswith(": could not write: File too large; nothing was appended\n")
        assert assert_sound(folder, before) == before
        assert {p: p.read_bytes() for p in before} == snapshot


def test_a_failed_write_leaves_a_jsonl_log_as_it_was(tmp_path: Path) -> None:
    log = write_jsonl(tmp_path / "c.jsonl", [system(0)])
    content = log.read_bytes()
    done = subprocess.run(
        [str(CONDENSE), "request", str(log)], capture_output=True, preexec_fn=_no_file_growth
    )
    assert done.returncode == 1
    assert done.stderr.decode() == f"Error: {log}: could not append: File too large\n"
    assert log.read_bytes() == content


def test_the_sdk_lock_held_elsewhere_gives_exit_4(tmp_path: Path) -> None:
    folder = copy_of(ONE_CONDENSATION, tmp_path)
    before = event_files(folder)
    fd = os.open(events_dir(folder) / ".eventlog.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        done = subprocess.run(
            [str(CONDENSE), "request", str(folder), "--lock-timeout", "0.3"], capture_output=True
        )
    finally:
        os.close(fd)
    assert done.returncode == 4
    assert done.stderr.decode() == (
        f"Error: {events_dir(folder)}: could not lock the log within 0.3s; another process "
        "holds it; nothing was appended\nHint: try again, or raise --lock-timeout\n"
    )
    assert event_files(folder) == before
