"""The text view people read: markers where events were forgotten, a header that
wraps instead of being cut, colours by source, indented wrapping, and a pager."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import subprocess
import termios
import threading
from pathlib import Path

from rich.console import Console

from condense_cli.dialects.openhands_v0.replay import load_view
from condense_cli.terminal.render import print_rich
from tests.conftest import CONDENSE, SAMPLES, condensation, msg, request, run_action, run_obs

CODING = SAMPLES / "coding_session.jsonl"


def hidden(i: int) -> dict:
    return {
        "id": i,
        "source": "environment",
        "observation": "agent_state_changed",
        "content": "",
        "extras": {},
    }


# --- markers ---------------------------------------------------------------------------------


def test_markers_show_where_and_by_which_condensation_events_were_forgotten(cli) -> None:
    out = cli("view", CODING).stdout
    assert (
        out
        == f"""{CODING} (openhands-v0): 7 events in view, 14 forgotten, 2 condensations, \
summary at 2

#0 agent action:system
    You are a careful coding agent. Use the tools to inspect and change files in /workspace.

#1 user action:message
    The test test_divide in tests/test_calc.py fails. Fix calc.py so that it passes.

⋯ 8 events forgotten (ids 2..9) by condensation 10 ⋯

⋯ 6 events forgotten (ids 11..16) by condensation 19 ⋯

=== summary ===
    USER_CONTEXT: make tests/test_calc.py::test_divide pass
    COMPLETED: divide returns None when b == 0; README documents it; tests pass (2 passed)
    PENDING: report to the user
=== end of summary ===

#17 agent action:run
    cd /workspace/calc && python -m pytest -q

#18 agent observation:run (answers #17)
    ..
    2 passed

#20 agent action:message
    test_divide passes now: divide returns None for a zero divisor.

#21 agent action:finish
    Fixed divide and documented it.
"""
    )


def marker_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("⋯")]


def test_markers_at_the_start_the_middle_and_the_end(cli, make_log) -> None:
    log = make_log(
        [
            msg(0),
            msg(1),
            hidden(2),
            msg(3),
            msg(4),
            msg(5),
            msg(6),
            condensation(7, ids=[0]),
            condensation(8, start=3, end=4),
            request(9),
            msg(10),
            condensation(11, ids=[6, 10]),
        ]
    )
    out = cli("view", log).stdout
    assert [line for line in out.splitlines() if line.startswith(("#", "⋯"))] == [
        "⋯ 1 event forgotten (id 0) by condensation 7 ⋯",
        "#1 user action:message",
        "⋯ 2 events forgotten (ids 3..4) by condensation 8 ⋯",
        "#5 user action:message",
        "⋯ 1 event forgotten (id 6) by condensation 11 ⋯",
        "⋯ 1 event forgotten (id 10) by condensation 11 ⋯",
    ]
    assert marker_lines(cli("view", log, "--upto", "8").stdout) == [
        "⋯ 1 event forgotten (id 0) by condensation 7 ⋯",
        "⋯ 2 events forgotten (ids 3..4) by condensation 8 ⋯",
    ]


def test_a_later_condensation_is_named_only_for_what_it_forgot_first(cli, make_log) -> None:
    events = [msg(i) for i in range(8)]
    events += [condensation(8, start=1, end=3), condensation(9, start=1, end=6)]
    out = cli("view", make_log(events)).stdout
    assert marker_lines(out) == [
        "⋯ 3 events forgotten (ids 1..3) by condensation 8 ⋯",
        "⋯ 3 events forgotten (ids 4..6) by condensation 9 ⋯",
    ]


def test_markers_come_from_the_ranges_not_from_the_lines(make_log) -> None:
    """A million forgotten ids cost one gap: no list of ids is built."""
    log = make_log([msg(0), condensation(1, start=2, end=10**6), msg(2), msg(10**6 + 1)])
    from condense_cli.dialects.openhands_v0.scan import forgotten_gaps

    _, index = load_view(str(log))
    gaps = forgotten_gaps(index)
    assert [(g.after, g.count, g.first_id, g.last_id, g.by) for g in gaps] == [(1, 1, 2, 2, 1)]


# --- the rich rendering ----------------------------------------------------------------------


def rich_text(log: Path, width: int, color: bool = False) -> str:
    from condense_cli.dialects import read_log
    from condense_cli.terminal.render import header_line

    with read_log(str(log)) as replay:
        view, gaps = replay.view(), replay.gaps()
    buffer = io.StringIO()
    console = Console(
        file=buffer, force_terminal=True, width=width, color_system="standard" if color else None
    )
    print_rich(view, console, header_line(view, replay, str(log.name)), False, gaps)
    return buffer.getvalue()


def test_the_header_wraps_so_a_pending_request_shows_at_80_columns(tmp_path: Path) -> None:
    log = tmp_path / "a-session-log-with-a-long-name.jsonl"
    log.write_bytes(CODING.read_bytes() + b'{"id": 23, "action": "condensation_request"}\n')
    out = rich_text(log, 80)
    assert [line.rstrip() for line in out.splitlines()[:3]] == [
        "a-session-log-with-a-long-name.jsonl (openhands-v0): 7 events in view, 14",
        "forgotten, 2 condensations, summary at 2, condensation request pending",
        "─" * 80,
    ]


def test_user_agent_and_environment_have_their_own_colours(make_log) -> None:
    log = make_log(
        [
            msg(0),
            run_action(1, "c1"),
            {**run_obs(2, 1, "c1"), "source": "environment"},
        ]
    )
    out = rich_text(log, 80, color=True)
    assert "\x1b[1;35m#0 user action:message" in out
    assert "\x1b[1;36m#1 agent action:run" in out
    assert "\x1b[32m#2 environment observation:run (answers #1)" in out


def test_wrapped_lines_stay_indented(make_log) -> None:
    log = make_log([msg(0, "word " * 30)])
    lines = rich_text(log, 40).splitlines()
    body = lines[lines.index("#0 user action:message") + 1 :]
    assert len(body) >= 4
    assert all(line.startswith("    word") for line in body), body


# --- the pager -------------------------------------------------------------------------------


def run_on_a_terminal(args: list[str], pager_log: Path, rows: int, cols: int = 80) -> str:
    """Run condense with stdout on a pseudo-terminal of rows x cols, and a pager that
    writes what it is given to `pager_log`; return what reached the terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "LESS")}
    env.update(TERM="xterm-256color", PAGER=f"cat > {pager_log}")
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    done = subprocess.run(
        [str(CONDENSE), *args], stdout=slave, stderr=subprocess.PIPE, env=env, timeout=60
    )
    os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    assert done.returncode == 0, done.stderr
    return b"".join(chunks).decode()


def long_log(tmp_path: Path) -> Path:
    log = tmp_path / "long.jsonl"
    log.write_bytes(CODING.read_bytes())
    with log.open("ab") as out:
        for i in range(23, 60):
            out.write(b'{"id": %d, "source": "user", "action": "message", "args": {}}\n' % i)
    return log


def test_long_output_on_a_terminal_goes_through_the_pager(tmp_path: Path) -> None:
    paged = tmp_path / "paged.txt"
    shown = run_on_a_terminal(["view", str(long_log(tmp_path))], paged, rows=24)
    text = paged.read_text()
    assert "(openhands-v0): 44 events" in text and "#0 agent action:system" in text
    assert "\x1b[" in text  # colours go to the pager (less -R shows them)
    assert "#59 user action:message" in text
    assert "#59" not in shown


def test_output_that_fits_the_screen_is_not_paged(tmp_path: Path) -> None:
    paged = tmp_path / "paged.txt"
    shown = run_on_a_terminal(["view", str(CODING)], paged, rows=60)
    assert not paged.exists()
    assert "#21 agent action:finish" in shown


def test_no_pager_prints_directly(tmp_path: Path) -> None:
    paged = tmp_path / "paged.txt"
    shown = run_on_a_terminal(["view", str(long_log(tmp_path)), "--no-pager"], paged, rows=24)
    assert not paged.exists()
    assert "#59 user action:message" in shown


def test_never_paged_when_stdout_is_not_a_terminal(tmp_path: Path) -> None:
    paged = tmp_path / "paged.txt"
    done = subprocess.run(
        [str(CONDENSE), "view", str(long_log(tmp_path))],
        capture_output=True,
        env={**os.environ, "PAGER": f"cat > {paged}"},
        timeout=60,
    )
    assert not paged.exists()
    assert b"#59 user action:message" in done.stdout
