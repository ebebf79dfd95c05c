"""Hostile input beyond SPEC section 7: odd ids, huge lines, deep nesting, links, growing logs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import orjson
import pytest

from condense_cli.core.logfile import LogSource
from condense_cli.dialects.openhands_v0.replay import scan_log, view_lines
from tests.conftest import CONDENSE, lines_of, msg

GOOD = lines_of([msg(0)])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"id": 18446744073709551616, "action": "message"}', '"id" does not fit in 64 bits'),
        (b'{"id": 9223372036854775808, "action": "message"}', '"id" does not fit in 64 bits'),
        (b'{"id": false, "action": "message"}', '"id" must be an integer, not a boolean'),
        (b'{"id": 2.0, "action": "message"}', '"id" must be an integer, not a number'),
        (b'{"id": null, "action": "message"}', '"id" must be an integer, not null'),
        (b'{"id": 3, "action": 7}', '"action" must be a string, not an integer'),
        (
            b'{"id": 3, "action": "message", "x": ' + b"[" * 2000 + b"]" * 2000 + b"}",
            "invalid JSON at column 1061: depth limit exceeded "
            '(line starts \'{"id": 3, "action": "message", "x": [[[[[[[[[[[[[[[[[[[[[[[…\')',
        ),
        (
            b'{"id": 3, "action": "condensation", "args": []}',
            'condensation "args" must be an object, not an array',
        ),
        (
            b'{"id": 3, "action": "condensation", "args": {"forgotten_event_ids": [true]}}',
            "an id in forgotten_event_ids must be an integer, not a boolean",
        ),
        (
            b'{"id": 3, "action": "condensation", "args": '
            b'{"forgotten_event_ids": [-18446744073709551616]}}',
            "an id in forgotten_event_ids does not fit in 64 bits",
        ),
        (
            b'{"id": 3, "action": "condensation", "args": {"forgotten_event_ids": [], '
            b'"summary": "s", "summary_offset": -2}}',
            "summary_offset must not be negative (-2)",
        ),
    ],
)
def test_odd_values_get_one_clear_message(line: bytes, message: str, cli, make_log) -> None:
    log = make_log(GOOD + line + b"\n")
    result = cli("view", log)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == f"Error: {log}:2: {message}"
    assert log.read_bytes() == GOOD + line + b"\n"


@pytest.mark.slow
def test_a_200_mb_line(tmp_path: Path) -> None:
    log = tmp_path / "huge.jsonl"
    big = {
        "id": 1,
        "source": "agent",
        "observation": "run",
        "content": "y" * 200_000_000,
        "extras": {},
    }
    log.write_bytes(GOOD + orjson.dumps(big) + b"\n")
    done = subprocess.run([str(CONDENSE), "check", str(log)], capture_output=True)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "view.jsonl"
    with out.open("wb") as sink:
        viewed = subprocess.run([str(CONDENSE), "view", str(log), "-f", "jsonl"], stdout=sink)
    assert viewed.returncode == 0
    assert out.stat().st_size == log.stat().st_size
    # The same line torn: the message quotes a bounded excerpt, not 200 MB.
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(GOOD + orjson.dumps(big)[:-10])
    done = subprocess.run([str(CONDENSE), "view", str(torn)], capture_output=True)
    assert done.returncode == 1
    assert len(done.stderr) < 500
    assert b"the last line is incomplete" in done.stderr


def test_symlink_to_a_directory(cli, tmp_path: Path) -> None:
    link = tmp_path / "log.jsonl"
    os.symlink(tmp_path, link)
    result = cli("view", link)
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {link}: is a directory, not a log file or a conversation folder\n"
        "Hint: give a JSONL log, or an OpenHands V1 conversation folder (the one holding "
        "events/ or event_service/, or events/ itself)\n"
    )
    assert cli("request", link).exit_code == 1


def test_a_log_that_grows_while_read_is_read_as_it_was(make_log) -> None:
    log = make_log([msg(0), msg(1)])
    original = log.read_bytes()
    with LogSource.open(str(log)) as source:
        with log.open("ab") as writer:
            writer.write(lines_of([msg(2)]) + b'{"id": 3, "act')
        index = scan_log(source)
        assert index.clean
        assert b"".join(view_lines(source, index)) == original
    assert index.events == 2
    assert list(index.line_ids) == [0, 1]


def test_a_line_finished_after_the_snapshot_is_read_whole(make_log) -> None:
    log = make_log(GOOD + b'{"id": 1, "source": "user", "action": "mess')
    with LogSource.open(str(log)) as source:
        with log.open("ab") as writer:
            writer.write(b'age", "args": {}}\n')
        index = scan_log(source)
    assert list(index.line_ids) == [0, 1]


@pytest.mark.slow
def test_a_log_growing_under_a_writer_never_breaks_view(tmp_path: Path) -> None:
    log = tmp_path / "live.jsonl"
    log.write_bytes(GOOD)
    writer = subprocess.Popen(
        [
            "python3",
            "-c",
            "import json, sys, time\n"
            "f = open(sys.argv[1], 'ab', buffering=0)\n"
            "for i in range(1, 3001):\n"
            "    event = {'id': i, 'action': 'message', 'args': {'content': 'z' * 300}}\n"
            "    f.write((json.dumps(event) + '\\n').encode())\n",
            str(log),
        ]
    )
    try:
        for _ in range(15):
            done = subprocess.run(
                [str(CONDENSE), "view", str(log), "-f", "jsonl"], capture_output=True
            )
            assert done.returncode == 0, done.stderr
            assert all(line.endswith(b"}") for line in done.stdout.splitlines())
    finally:
        writer.wait(timeout=60)


def test_unexpected_errors_are_one_line_with_a_debug_hint(cli, make_log, monkeypatch) -> None:
    import condense_cli.cli.view as command

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(command, "read_log", broken)  # what `view` reads a log with
    log = make_log([msg(0)])
    result = cli("view", log)
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: unexpected RuntimeError: disk on fire\n"
        "Hint: this is a bug in condense; rerun with --debug for the traceback and report it\n"
    )
    debug = cli("--debug", "view", log)
    assert "Traceback" in debug.stderr
    assert "RuntimeError: disk on fire" in debug.stderr


@pytest.mark.slow
def test_interrupt_exits_quietly(tmp_path: Path) -> None:
    import signal
    import time

    log = tmp_path / "big.jsonl"
    log.write_bytes(lines_of(msg(i, "w" * 500) for i in range(400_000)))
    proc = subprocess.Popen([str(CONDENSE), "check", str(log)], stderr=subprocess.PIPE)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err
    assert proc.returncode in (0, 130)
