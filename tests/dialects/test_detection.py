"""Detection of a log's dialect, `--dialect`, and inputs that are no log at all."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from condense_cli.dialects import DIALECTS
from tests import stories
from tests.conftest import SAMPLES, lines_of, msg, run_action, run_obs

V0_EVENTS = [msg(0), run_action(1), run_obs(2, 1)]


def test_a_v0_log_is_detected_and_named(cli, make_log) -> None:
    log = make_log(V0_EVENTS)
    data = orjson.loads(cli("view", log, "-f", "json").stdout_bytes)
    assert data["dialect"] == "openhands-v0"
    header = cli("view", log).stdout.splitlines()[0]
    assert header == f"{log} (openhands-v0): 3 events in view, 0 forgotten, 0 condensations"


def test_the_registry_loads_each_dialect_by_its_name_and_v0_is_asked_last() -> None:
    """Each entry loads the dialect it names; V0, whose claim is the loosest (any
    object with an id and an action or observation), takes only what no other claims."""
    assert all(registered.load().name == name for name, registered in DIALECTS.items())
    assert list(DIALECTS)[-1] == "openhands-v0"
    assert {"openhands-v1", "claude-code", "codex"} <= set(DIALECTS)


def test_detection_works_on_standard_input(proc) -> None:
    done = proc("view", "-", "-f", "json", input=lines_of(V0_EVENTS))
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["dialect"] == "openhands-v0"


def test_dialect_option_names_the_dialect(cli, make_log) -> None:
    result = cli("view", make_log(V0_EVENTS), "--dialect", "openhands-v0", "-f", "json")
    assert result.exit_code == 0
    assert orjson.loads(result.stdout_bytes)["dialect"] == "openhands-v0"


def test_an_unknown_dialect_is_a_usage_error(cli, make_log) -> None:
    result = cli("view", make_log(V0_EVENTS), "--dialect", "nope")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --dialect 'nope' is not a dialect; choose one of: ")
    assert "openhands-v0" in result.stderr


def test_check_names_the_dialects_it_read(proc) -> None:
    done = proc("check", SAMPLES / "coding_session.jsonl")
    assert done.returncode == 0
    assert done.stderr.decode().startswith("1 log ok (openhands-v0")


NOT_LOGS = {
    "pretty-printed JSON array": (
        b"[\n" + b",\n".join(orjson.dumps(e) for e in V0_EVENTS) + b"\n]\n",
        "a JSON array of events (an OpenHands trajectory export), not one event per line",
        "convert it to one event per line first: jq -c '.[]' FILE > FILE.jsonl",
    ),
    "one-line JSON array": (
        orjson.dumps(V0_EVENTS) + b"\n",
        "a JSON array of events (an OpenHands trajectory export), not one event per line",
        "convert it to one event per line first: jq -c '.[]' FILE > FILE.jsonl",
    ),
    "legacy history pairs": (
        b"".join(
            orjson.dumps(
                [
                    {"action": "run", "args": {"command": f"ls {i}"}},
                    {"observation": "run", "content": "x"},
                ]
            )
            + b"\n"
            for i in range(5)
        ),
        "a legacy OpenHands history: [action, observation] pairs without event ids",
        "condense needs one event per line with ids, as OpenHands' event stream writes them; "
        "there is no faithful way to number these events",
    ),
    "evaluation output": (
        orjson.dumps({"instance_id": "x-1", "history": V0_EVENTS, "test_result": {}}) + b"\n",
        'an OpenHands evaluation or resolver output (one run per line, its events under "history")',
        "extract one run's events first: head -1 FILE | jq -c '.history[]' > run.jsonl",
    ),
    "another agent's log": (
        b'{"role": "user", "text": "hi"}\n{"role": "assistant", "text": "yo"}\n' * 20,
        "another kind of log (its first object has the keys: role, text)",
        None,
    ),
}


@pytest.mark.parametrize("name", list(NOT_LOGS))
def test_an_input_that_is_no_log_gets_one_message(name: str, cli, make_log) -> None:
    content, what, hint = NOT_LOGS[name]
    log = make_log(content)
    for command in ("view", "check", "stats"):
        result = cli(command, log)
        assert result.exit_code == 1, command
        lines = (result.stdout + result.stderr).splitlines()
        message = f"{log}:1: this is not a log condense reads: it looks like {what}"
        assert message in lines[0], (command, lines)
        assert len([line for line in lines if str(log) in line]) == 1, (command, lines)
    if hint is not None:
        assert f"Hint: {hint}" in cli("view", log).stderr
    assert log.read_bytes() == content


def test_a_broken_first_line_is_still_reported_as_v0(cli, make_log) -> None:
    result = cli("view", make_log(b'{"id": 0, "action": }\n'))
    assert result.exit_code == 1
    assert "invalid JSON at column 21" in result.stderr


def test_a_log_is_found_in_a_tree_as_it_is_read_alone_whatever_its_first_lines_length(
    tmp_path: Path, proc
) -> None:
    """One detection rule for a file named and a file found: a Codex rollout whose
    first line (its instructions) runs past 64 KiB is a log in a tree too."""
    from condense_cli.dialects import SNIFF_BYTES

    lines = stories.write("codex", tmp_path / "story.jsonl").read_bytes().splitlines()
    first = orjson.loads(lines[0])
    first["payload"]["base_instructions"] = {"text": "Be careful. " * 20_000}
    assert 1 << 16 < len(orjson.dumps(first)) < SNIFF_BYTES
    tree = tmp_path / "sessions" / "2026" / "11" / "28"
    tree.mkdir(parents=True)
    rollout = tree / "rollout-2026-11-28T10-00-00-long.jsonl"
    rollout.write_bytes(b"\n".join([orjson.dumps(first), *lines[1:]]) + b"\n")
    alone = proc("check", rollout)
    found = proc("check", tmp_path / "sessions")
    assert alone.returncode == found.returncode == 0, found.stderr
    assert b"1 log ok (codex" in alone.stderr and b"1 log ok (codex" in found.stderr
    assert b"skipped" not in found.stderr
