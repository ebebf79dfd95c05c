"""Every bad input of SPEC section 7 that applies to reading: one message, exit 1, log untouched."""

from __future__ import annotations

import pytest

GOOD = b'{"id": 0, "source": "user", "action": "message", "args": {"content": "hi"}}\n'


def cond(args: str) -> bytes:
    return GOOD + b'{"id": 1, "action": "condensation", "args": {' + args.encode() + b"}}\n"


CASES = {
    "empty file": (b"", "the log is empty: it holds no events", None),
    "only blank lines": (b"\n  \n\r\n", "the log is empty: it holds no events", None),
    "not UTF-8": (
        GOOD + b'{"id": 1, "action": "message", "args": {"content": "\xff"}}\n',
        "not UTF-8 (byte 0xff at column 53)",
        2,
    ),
    "invalid JSON": (
        GOOD + b'{"id": 1, "action": }\n',
        "invalid JSON at column 21: unexpected character, expected a JSON value "
        '(line starts \'{"id": 1, "action": }\')',
        2,
    ),
    "not an object": (GOOD + b"[1, 2]\n", "expected a JSON object, got an array", 2),
    "both kinds": (
        b'{"id": 0, "action": "run", "observation": "run"}\n',
        'has both "action" and "observation"; an event is one or the other',
        1,
    ),
    "neither kind": (b'{"id": 0, "content": "x"}\n', 'has neither "action" nor "observation"', 1),
    "missing id": (b'{"action": "message"}\n', 'has no "id"', 1),
    "string id": (
        b'{"id": "7", "action": "message"}\n',
        '"id" must be an integer, not a string',
        1,
    ),
    "float id": (b'{"id": 7.5, "action": "message"}\n', '"id" must be an integer, not a number', 1),
    "boolean id": (
        b'{"id": true, "action": "message"}\n',
        '"id" must be an integer, not a boolean',
        1,
    ),
    "negative id": (b'{"id": -3, "action": "message"}\n', '"id" must not be negative (-3)', 1),
    "duplicate id": (
        GOOD + GOOD,
        "duplicate id 0: ids must increase down the file (line 1 has id 0)",
        2,
    ),
    "decreasing id": (
        GOOD.replace(b'"id": 0', b'"id": 5') + GOOD,
        "decreasing id 0: ids must increase down the file (line 1 has id 5)",
        2,
    ),
    "both forgotten forms": (
        cond(
            '"forgotten_event_ids": [0], '
            '"forgotten_events_start_id": 0, "forgotten_events_end_id": 0'
        ),
        "condensation gives both forgotten_event_ids and a forgotten_events_start_id/end_id "
        "range; give exactly one form",
        2,
    ),
    "neither forgotten form": (
        cond('"summary": null'),
        "condensation gives neither forgotten_event_ids nor a forgotten_events_start_id/end_id "
        "range; give exactly one form",
        2,
    ),
    "summary without offset": (
        cond('"forgotten_event_ids": [0], "summary": "s"'),
        "condensation has a summary but no summary_offset; set both or neither",
        2,
    ),
    "offset without summary": (
        cond('"forgotten_event_ids": [0], "summary_offset": 1'),
        "condensation has a summary_offset but no summary; set both or neither",
        2,
    ),
    "range start after end": (
        cond('"forgotten_events_start_id": 5, "forgotten_events_end_id": 2'),
        "forgotten range starts after it ends (5 > 2)",
        2,
    ),
    "half a range": (
        cond('"forgotten_events_start_id": 5'),
        "condensation range has no forgotten_events_end_id",
        2,
    ),
    "non-integer forgotten id": (
        cond('"forgotten_event_ids": [0, "1"]'),
        "an id in forgotten_event_ids must be an integer, not a string",
        2,
    ),
    "non-integer range id": (
        cond('"forgotten_events_start_id": 0.5, "forgotten_events_end_id": 1'),
        "forgotten_events_start_id must be an integer, not a number",
        2,
    ),
    "torn last line": (
        GOOD + b'{"id": 1, "action": "mess',
        "the last line is incomplete (invalid JSON at column 26: unexpected end of data "
        '(line starts \'{"id": 1, "action": "mess\')); a writer probably stopped in the '
        "middle of it",
        2,
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_view_refuses_with_one_message(case: str, make_log, cli) -> None:
    content, message, line = CASES[case]
    log = make_log(content)
    result = cli("view", log)
    where = f"{log}:{line}" if line else f"{log}"
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines()[0] == f"Error: {where}: {message}"
    assert "Traceback" not in result.stderr
    assert log.read_bytes() == content


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_check_reports_the_same_problem(case: str, make_log, cli) -> None:
    content, message, line = CASES[case]
    log = make_log(content)
    result = cli("check", log)
    where = f"{log}:{line}" if line else f"{log}"
    assert result.exit_code == 1
    assert result.stdout == f"{where}: {message}\n"


def test_missing_file(cli, tmp_path) -> None:
    result = cli("view", tmp_path / "nope.jsonl")
    assert result.exit_code == 1
    assert (
        result.stderr == f"Error: {tmp_path / 'nope.jsonl'}: no such file\nHint: check the path\n"
    )


def test_directory(cli, tmp_path) -> None:
    result = cli("view", tmp_path)
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {tmp_path}: is a directory, not a log file or a conversation folder\n"
        "Hint: give a JSONL log, or an OpenHands V1 conversation folder (the one holding "
        "events/ or event_service/, or events/ itself)\n"
    )


def test_check_lists_every_problem_in_every_file(cli, make_log, tmp_path) -> None:
    one = make_log(b'{"id": 0, "action": "message"}\n[]\n{"id": 0, "action": "x"}\n')
    two = make_log(b'{"id": 1}\n')
    missing = tmp_path / "missing.jsonl"
    result = cli("check", one, two, missing)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{one}:2: expected a JSON object, got an array",
        f"{one}:3: duplicate id 0: ids must increase down the file (line 1 has id 0)",
        f'{two}:1: has neither "action" nor "observation"',
        f"{missing}: no such file",
    ]


def test_bom_crlf_and_blank_lines_are_accepted(cli, make_log) -> None:
    content = (
        b"\xef\xbb\xbf"
        + GOOD.replace(b"\n", b"\r\n")
        + b"\r\n\n"
        + GOOD.replace(b'"id": 0', b'"id": 4')
    )
    log = make_log(content)
    result = cli("view", log, "-f", "jsonl")
    assert result.exit_code == 0
    assert result.stdout_bytes == GOOD + GOOD.replace(b'"id": 0', b'"id": 4')


def test_last_line_without_newline_is_fine_when_complete(cli, make_log) -> None:
    log = make_log(GOOD.rstrip(b"\n"))
    assert cli("view", log, "-f", "jsonl").stdout_bytes == GOOD


def test_bad_input_through_a_subprocess(proc, make_log) -> None:
    log = make_log(GOOD + b"{oops\n")
    done = proc("view", log)
    assert done.returncode == 1
    assert done.stderr.decode().startswith(f"Error: {log}:2: invalid JSON at column 2")
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["view", "check", "stats", "audit"])
def test_a_file_that_is_no_log_is_never_quoted(command: str, proc, make_log) -> None:
    """`/etc/shadow` or a `.env` given as a log: its first line is not JSON, so nothing
    shows it is a session log, and no message quotes it (issue 55, item 8)."""
    for first in (b"root:$6$salt$hash:20228:0:99999:7:::", b"DATABASE_URL=postgres://db/x"):
        log = make_log(first + b"\n" + GOOD)
        done = proc(command, log)
        said = done.stdout + done.stderr
        assert done.returncode == 1 and b"invalid JSON at column 1" in said, said
        assert first[:10] not in said and b"line starts" not in said
