"""Untrusted event text cannot reach the terminal as escape sequences or rich markup."""

from __future__ import annotations

import io

import orjson
from rich.console import Console

from condense_cli.dialects.openhands_v0 import load_view
from condense_cli.render import print_rich, sanitize
from tests.conftest import lines_of

HOSTILE = "\x1b]52;c;ZXZpbA==\x07 clear:\x1b[2J [bold red]x[/] \x9b31m \x08\x7f end"


def hostile_log(make_log):
    return make_log(
        lines_of(
            [
                {"id": 0, "source": "user", "action": "message", "args": {"content": HOSTILE}},
                {
                    "id": 1,
                    "source": "agent",
                    "observation": "run",
                    "content": HOSTILE,
                    "extras": {},
                    "cause": 0,
                },
                {
                    "id": 2,
                    "source": "agent",
                    "action": "condensation",
                    "args": {"forgotten_event_ids": [], "summary": HOSTILE, "summary_offset": 0},
                },
            ]
        )
    )


def test_sanitize_makes_controls_visible() -> None:
    assert sanitize("a\x1b[2Jb\tc\nd\x07") == "a\\x1b[2Jb\tc\nd\\x07"


def test_plain_text_shows_escapes_literally(cli, make_log) -> None:
    out = cli("view", hostile_log(make_log)).stdout
    for raw in ("\x1b", "\x07", "\x9b", "\x08", "\x7f"):
        assert raw not in out
    assert "\\x1b]52;c;ZXZpbA==\\x07 clear:\\x1b[2J [bold red]x[/] \\x9b31m \\x08\\x7f end" in out


def test_rich_rendering_interprets_neither_escapes_nor_markup(make_log) -> None:
    view, _ = load_view(str(hostile_log(make_log)))
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="truecolor", width=200)
    print_rich(view, console, "header", full=True)
    out = buffer.getvalue()
    assert "\x1b]52" not in out  # no clipboard write
    assert "\x1b[2J" not in out  # no screen clear
    assert "\x07" not in out and "\x9b" not in out
    assert "[bold red]x[/]" in out  # markup shown as text
    assert out.count("\\x1b]52;c;ZXZpbA==") == 3  # message, observation, summary


def test_machine_formats_stay_exact(cli, make_log) -> None:
    log = hostile_log(make_log)
    lines = cli("view", log, "-f", "jsonl").stdout_bytes.splitlines()
    assert lines[1:] == log.read_bytes().splitlines()[:2]
    assert orjson.loads(lines[0])["content"] == HOSTILE
    data = orjson.loads(cli("view", log, "-f", "json").stdout_bytes)
    assert data["summary"] == HOSTILE
    assert data["events"][1]["args"]["content"] == HOSTILE


def test_error_messages_escape_the_bad_line(cli, make_log) -> None:
    log = make_log(b'\x1b[2J{"id": 0}\n')
    result = cli("view", log)
    assert "\x1b" not in result.stderr
    assert "\\x1b[2J" in result.stderr
