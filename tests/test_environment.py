"""The process's surroundings: closed pipes, closed or full stdout, FIFOs and
process substitution, endless devices, and an early Ctrl-C. Each is reported as
what it is, with its exit code, never as "a bug in condense"."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson

from tests.conftest import CONDENSE, lines_of, msg, run_action, run_obs

CLOSED = (
    "Error: cannot write to standard output: it is closed\n"
    "Hint: send the output somewhere, e.g. > file or | less\n"
)
FULL = (
    "Error: cannot write to standard output: No space left on device\n"
    "Hint: free some space, or send the output elsewhere\n"
)


def session(count: int = 40) -> bytes:
    return lines_of(
        [msg(0)] + [e for k in range(1, count, 2) for e in (run_action(k), run_obs(k + 1, k))]
    )


def failing_log(tmp_path: Path) -> Path:
    """A log with 3,000 problems: its check output overflows any pipe buffer."""
    log = tmp_path / "bad.jsonl"
    log.write_bytes(b"".join(b'{"id": %d, "action": "message"}x\n' % i for i in range(3000)))
    return log


def run_into_closed_pipe(*args: str) -> subprocess.CompletedProcess[bytes]:
    """Run condense with a stdout pipe whose reader has already gone."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [str(CONDENSE), *args], stdout=write, stderr=subprocess.PIPE, timeout=120
        )
    finally:
        os.close(write)


def shell(script: str, **kw) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail; {script}"], capture_output=True, timeout=120, **kw
    )


# --- a closed pipe never changes a verdict ------------------------------------------------


def test_a_failed_check_stays_failed_when_its_reader_goes(tmp_path: Path) -> None:
    bad = failing_log(tmp_path)
    done = run_into_closed_pipe("check", str(bad))
    assert done.returncode == 1
    assert done.stderr == b"1 of 1 log failed the check (3,000 problems)\n"
    piped = shell(f"{CONDENSE} check {bad} | head -1")
    assert piped.returncode == 1
    assert piped.stdout.startswith(f"{bad}:1: invalid JSON".encode())


def test_a_closed_pipe_alone_is_success(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(session())
    warned = tmp_path / "w.jsonl"
    warned.write_bytes(
        lines_of(
            [msg(0), {"id": 1, "action": "condensation", "args": {"forgotten_event_ids": [5]}}]
        )
    )
    for args in (
        ("view", log),
        ("view", log, "-f", "jsonl"),
        ("stats", log, "--no-tokens"),
        ("config",),
        ("check", warned),
        ("run", log, "-t", "amortized", "-s", "max_size=4", "--dry-run"),
    ):
        done = run_into_closed_pipe(*map(str, args))
        assert done.returncode == 0, (args, done.stderr)
        assert b"Error" not in done.stderr and b"Traceback" not in done.stderr, args


# --- stdout closed or full -----------------------------------------------------------------


def test_a_closed_stdout_is_reported_and_the_log_untouched(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(session())
    before = log.read_bytes()
    done = shell(f"{CONDENSE} view {log} >&-")
    assert (done.returncode, done.stderr.decode()) == (1, CLOSED)
    assert log.read_bytes() == before
    request = shell(f"{CONDENSE} request {log} >&-")
    assert request.returncode == 0, request.stderr
    added = log.read_bytes()[len(before) :]
    assert orjson.loads(added)["action"] == "condensation_request"
    assert added.count(b"\n") == 1


def test_closed_stdin_and_stderr_are_no_bug(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(session())
    empty = shell(f"{CONDENSE} view - <&-")
    assert empty.returncode == 1
    assert empty.stderr.decode().splitlines()[0] == (
        "Error: <stdin>: the log is empty: it holds no events"
    )
    quiet = shell(f"{CONDENSE} view {log} 2>&-")
    assert quiet.returncode == 0
    assert quiet.stdout.startswith(f"{log} (openhands-v0): 41 events in view".encode())
    assert shell(f"{CONDENSE} view {tmp_path / 'missing'} 2>&-").returncode == 1


def test_stdout_on_a_full_device_is_reported(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(session())
    for command in (f"view {log}", f"view {log} -f jsonl", f"check {failing_log(tmp_path)}"):
        done = shell(f"{CONDENSE} {command} > /dev/full")
        assert (done.returncode, done.stderr.decode()) == (1, FULL), command


def test_help_into_a_full_device_is_reported() -> None:
    for command in ("--help", "view --help"):
        done = shell(f"{CONDENSE} {command} > /dev/full")
        assert (done.returncode, done.stderr.decode()) == (1, FULL), command


# --- logs that are not regular files ----------------------------------------------------------


def test_process_substitution_is_read_like_standard_input(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(session())
    done = shell(f"{CONDENSE} view <(cat {log}) -f jsonl")
    assert done.returncode == 0, done.stderr
    assert done.stdout == log.read_bytes()
    checked = shell(f"{CONDENSE} check <(cat {log}) <(cat {log})")
    assert (checked.returncode, checked.stderr) == (0, b"2 logs ok (openhands-v0)\n")


def test_a_fifo_is_read_and_never_appended_to(tmp_path: Path) -> None:
    data = session()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with fifo.open("wb") as writer:
            writer.write(data)

    for args, expected_out in (
        (["view", str(fifo), "-f", "jsonl"], data),
        (["run", str(fifo), "-t", "amortized", "-s", "max_size=4"], None),
    ):
        writer = threading.Thread(target=feed)
        writer.start()
        done = subprocess.run([str(CONDENSE), *args], capture_output=True, timeout=60)
        writer.join()
        assert done.returncode == 0, done.stderr
        if expected_out is not None:
            assert done.stdout == expected_out
        else:
            assert orjson.loads(done.stdout)["action"] == "condensation"
            assert done.stderr.startswith(
                f"{fifo} is not a regular file: it cannot be appended to: "
                "printing the condensation instead\n".encode()
            )


# Runs a command and prints its exit code, peak memory (KiB) and stderr. The command is
# started from this small interpreter, not from pytest: a child forked from a big
# process inherits its resident pages until exec, and `ru_maxrss` keeps that peak.
MEASURE = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = proc.stderr.read()
_, status, usage = os.wait4(proc.pid, 0)
sys.stdout.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}\\n")
sys.stdout.buffer.write(err)
"""


def test_an_endless_device_ends_at_the_line_limit() -> None:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(CONDENSE), "view", "/dev/zero"],
        capture_output=True,
        timeout=120,
    )
    first, _, stderr = done.stdout.partition(b"\n")
    code, peak_kib = (int(x) for x in first.split())
    assert code == 1
    assert stderr == (
        b"Error: /dev/zero:1: line longer than 256 MiB, the limit for a line read from a "
        b"stream; is this an event log?\n"
    )
    assert peak_kib < 200 * 1024  # the stream is spooled to disk, not memory
    assert time.monotonic() - started < 60


# --- Ctrl-C ----------------------------------------------------------------------------------


def test_a_ctrl_c_during_the_imports_exits_130_quietly(tmp_path: Path) -> None:
    """SIGINT while orjson/typer are being imported: Python reports each finished import
    on stderr (PYTHONPROFILEIMPORTTIME), so the signal is sent right after the first
    module of the CLI's libraries is in, deterministically in the middle of start-up.
    (A piped view does not import rich.)"""
    log = tmp_path / "s.jsonl"
    log.write_bytes(session())
    for library in ("orjson", "typer"):
        proc = subprocess.Popen(
            [str(CONDENSE), "view", str(log)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
        )
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if line.rstrip().split(b"|")[-1].strip().startswith(library.encode()):
                proc.send_signal(signal.SIGINT)
                break
        rest = proc.stderr.read()
        proc.wait(timeout=60)
        assert proc.returncode == 130, (library, rest.decode()[-600:])
        assert b"Traceback" not in rest and b"KeyboardInterrupt" not in rest, rest.decode()
        assert proc.stdout is not None and proc.stdout.read() == b""


def test_an_early_ctrl_c_exits_130_quietly(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(session())
    codes = []
    for delay in (0.15, 0.2, 0.25, 0.3):
        proc = subprocess.Popen(
            [str(CONDENSE), "view", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert b"Traceback" not in err, (delay, err.decode()[-400:])
        codes.append(proc.returncode)
    # By then condense is importing, reading or printing: it exits 130 (or 0 when the
    # view was already printed), never with a traceback.
    assert set(codes) <= {130, 0}, codes
