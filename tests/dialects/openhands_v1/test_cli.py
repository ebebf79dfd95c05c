"""OpenHands V1 conversations through every command: view, check, stats, run, request."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.condensers.base import kept_head
from condense_cli.config.loading import LLMTables, build_condenser
from condense_cli.core.errors import LogError
from condense_cli.core.events import Event, View, apply_condensation
from condense_cli.core.text import plural
from condense_cli.dialects import read_log
from condense_cli.dialects.openhands_v1.appending import event_file_name
from condense_cli.dialects.openhands_v1.facts import Summary
from condense_cli.dialects.openhands_v1.generations import detect_generation
from condense_cli.dialects.openhands_v1.replay import Replayed, replay
from condense_cli.dialects.openhands_v1.storage import event_problem, read_folder
from tests.dialects.openhands_v1.test_replay import (
    FOUR_CONDENSATIONS,
    NO_CONDENSATION,
    ONE_CONDENSATION,
    _id,
    call,
    condensation,
    conversations,
    corpus,
    message,
    result,
    system,
    write_folder,
    write_jsonl,
)
from tests.fake_llm import FakeLLM

# One parameter per corpus conversation; a placeholder skips (or fails under CI)
# with the reason when the corpus is not beside the repository.
NAMES = [p.name for p in conversations()] or ["corpus-missing"]
LAST_2025 = "last-summary SDK (Sep 2025)"


def copy_of(name: str, tmp_path: Path) -> Path:
    """A writable copy of a corpus conversation (the corpus is read-only)."""
    target = tmp_path / name
    shutil.copytree(corpus(name), target)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def events_dir(folder: Path) -> Path:
    return folder / "event_service" / "events"


def event_files(folder: Path) -> list[Path]:
    return sorted(events_dir(folder).glob("event-*.json"))


def current_view(path: Path | str) -> View:
    with read_log(str(path)) as replay:
        return replay.view()


def shape(view: View) -> list[Any]:
    """Positions, and `S<position of its condensation>` or `S:<text>` for summaries."""
    return [_label(e) for e in view]


def _label(event: Event) -> Any:
    if not event.is_summary:
        return event.key
    if event.id.endswith("-summary") and event.key is not None:
        return f"S{event.key}"
    return f"S:{event.text}"


def same_view(view: View) -> list[Any]:
    """Events by id, summaries by text (a new summary's id is only known once written)."""
    return [f"S:{e.text}" if e.is_summary else e.id for e in view]


def header(path: Path | str, result: Replayed, generation: str = LAST_2025) -> str:
    parts = [
        f"{plural(len(result.events), 'event')} in view",
        f"{result.forgotten} forgotten",
        plural(len(result.condensations), "condensation"),
    ]
    if result.summaries:
        parts.append("summary at 4")
    return f"{path} (openhands-v1, {generation}): " + ", ".join(parts)


# --------------------------------------------------------------------------------------
# Every corpus conversation, in every command


@pytest.mark.parametrize("name", NAMES)
def test_every_corpus_conversation_views_checks_and_counts(name: str, cli) -> None:
    folder = corpus(name)
    conversation = read_folder(folder)
    replayed = replay(conversation)
    reason = detect_generation(conversation).reason

    text = cli("view", folder)
    assert text.exit_code == 0, text.stderr
    assert text.stdout.splitlines()[0] == header(folder, replayed)

    data = orjson.loads(cli("view", folder, "-f", "json").stdout_bytes)
    assert list(data) == [
        "dialect",
        "generation",
        "events",
        "summary",
        "unhandled_condensation_request",
        "forgotten",
    ]
    assert data["dialect"] == "openhands-v1"
    assert data["generation"] == {"name": LAST_2025, "reason": reason}
    assert data["events"] == [
        e.to_dict() if isinstance(e, Summary) else e.data for e in replayed.events
    ]
    assert data["summary"] == (replayed.summaries[0].text if replayed.summaries else None)
    assert (data["unhandled_condensation_request"], data["forgotten"]) == (
        False,
        replayed.forgotten,
    )

    checked = cli("check", folder)
    assert (checked.exit_code, checked.stdout) == (0, "")
    assert checked.stderr == (
        f"{folder}: replayed as the {LAST_2025} showed it ({reason})\n1 log ok (openhands-v1)\n"
    )

    stats = orjson.loads(cli("stats", folder, "-f", "json", "--no-tokens").stdout_bytes)
    files = event_files(folder)
    assert (stats["events"], stats["bytes"]) == (
        len(files),
        sum(f.stat().st_size for f in files),
    )
    assert stats["view"] == {"events": len(replayed.events), "forgotten_events": replayed.forgotten}
    assert [c["id"] for c in stats["condensations"]] == [c.id for c in replayed.condensations]


@pytest.mark.parametrize("name", NAMES)
def test_every_corpus_conversation_condenses_by_forgetting(name: str, cli, tmp_path) -> None:
    folder = copy_of(name, tmp_path)
    before = current_view(folder)
    condenser = build_condenser({"type": "amortized", "max_size": 40}, LLMTables({}))
    intended = apply_condensation(before, condenser.condense(before.with_request()))
    files = event_files(folder)

    done = cli("run", folder, "--type", "amortized", "--set", "max_size=40", "--force")
    assert done.exit_code == 0, done.stderr
    assert done.stderr.endswith(f"; appended to {folder}\n")
    new = event_files(folder)
    assert new[:-1] == files and len(new) == len(files) + 1
    event = orjson.loads(new[-1].read_bytes())
    assert new[-1].name == f"event-{len(files):05d}-{event['id']}.json"
    assert list(event) == [
        "kind",
        "id",
        "timestamp",
        "source",
        "forgotten_event_ids",
        "llm_response_id",
    ]
    assert event_problem(event) is None
    assert same_view(current_view(folder)) == same_view(intended)
    assert cli("check", folder).exit_code == 0


@pytest.mark.parametrize("name", NAMES)
def test_every_corpus_conversation_condenses_with_a_summary(
    name: str, cli, config, fake: FakeLLM, tmp_path
) -> None:
    folder = copy_of(name, tmp_path)
    settings = ["--set", "max_size=40", "--set", "keep_first=4"]
    before = current_view(folder)
    condenser = build_condenser(
        {"type": "llm", "max_size": 40, "keep_first": 4},
        LLMTables({"model": "openai/test-model", "base_url": fake.base_url, "api_key": "k"}),
    )
    fake.text(f"USER_CONTEXT: summary of {name}")
    decision = condenser.condense(before.with_request())
    intended = apply_condensation(before, decision)

    fake.text(f"USER_CONTEXT: summary of {name}")
    done = cli("run", folder, "-c", config, "--type", "llm", *settings, "--force")
    assert done.exit_code == 0, done.stderr
    event = orjson.loads(event_files(folder)[-1].read_bytes())
    assert event["kind"] == "Condensation"
    assert (event["summary"], event["summary_offset"]) == (f"USER_CONTEXT: summary of {name}", 4)
    after = current_view(folder)
    assert same_view(after) == same_view(intended)
    # 2025 logs show only the newest summary, at its offset.
    assert [i for i, e in enumerate(after) if e.is_summary] == [4]
    # The old summary was the previous summary the model merged.
    old = before.summary.text if before.summary is not None else "(none yet)"
    assert f"<previous_summary>\n{old}\n</previous_summary>" in fake.prompt()


# Every condenser type on a V1 view: (its table, the model's scripted answer).
CONDENSERS: dict[str, tuple[dict[str, Any], Any]] = {
    "amortized": ({"type": "amortized", "max_size": 40}, None),
    "conversation_window": ({"type": "conversation_window"}, None),
    "llm": ({"type": "llm", "max_size": 40}, ("text", "USER_CONTEXT: fix HPacker")),
    "structured": (
        {"type": "structured", "max_size": 40},
        ("tool_call", "create_state_summary", {"user_context": "fix HPacker"}),
    ),
    "llm_attention": ({"type": "llm_attention", "max_size": 40}, ("json", {"ids": [90, 60]})),
    "pipeline": (
        {
            "type": "pipeline",
            "condensers": [
                {"type": "browser_output"},
                {"type": "observation_masking"},
                {"type": "amortized", "max_size": 40},
            ],
        },
        None,
    ),
}


@pytest.mark.parametrize("kind", list(CONDENSERS))
def test_every_condensing_type_runs_on_a_v1_view(
    kind: str, cli, config, fake: FakeLLM, tmp_path
) -> None:
    table, answer = CONDENSERS[kind]
    folder = copy_of(ONE_CONDENSATION, tmp_path)
    before = current_view(folder)
    llm = {"model": "openai/test-model", "base_url": fake.base_url, "api_key": "k"}
    for _ in range(2):  # once for the intended view, once for the run
        if answer is not None:
            getattr(fake, answer[0])(*answer[1:])
    decision = build_condenser(table, LLMTables(llm)).condense(before.with_request())
    intended = apply_condensation(before, decision)
    args = [
        "-t",
        kind,
        *(a for k, v in table.items() if k != "type" for a in ("-s", f"{k}={_toml(v)}")),
    ]
    done = cli("run", folder, "-c", config, *args, "--force")
    assert done.exit_code == 0, done.stderr
    assert done.stderr.endswith(f"; appended to {folder}\n")
    assert same_view(current_view(folder)) == same_view(intended)
    assert len(current_view(folder)) < len(before)


def _toml(value: Any) -> str:
    """A --set value: TOML for numbers and lists of tables."""
    if isinstance(value, list):
        return (
            "["
            + ", ".join(
                "{" + ", ".join(f"{k}={_toml(v)}" for k, v in t.items()) + "}" for t in value
            )
            + "]"
        )
    return orjson.dumps(value).decode()


def test_condensers_that_rewrite_the_view_print_it(cli, tmp_path) -> None:
    folder = copy_of(ONE_CONDENSATION, tmp_path)
    before = current_view(folder)
    files = event_files(folder)
    recent = cli("run", folder, "-t", "recent_events", "-s", "max_events=10", "-f", "json")
    assert recent.exit_code == 0, recent.stderr
    ids = [e["id"] for e in orjson.loads(recent.stdout_bytes)["events"]]
    # the head (the system prompt, the user's task, through the summary), then the newest
    head = kept_head(before, 1, keep_task=True)
    assert head >= 2
    assert ids == [e.id for e in [*before.events[:head], *before.events[head - 10 :]]]
    browse = cli("run", folder, "-t", "browser_output")
    assert browse.stderr == "browser_output: left the view unchanged; nothing appended\n"
    noop = cli("run", folder, "-t", "noop")
    assert noop.stderr == "noop: the noop condenser never condenses; nothing appended\n"
    assert event_files(folder) == files


# --------------------------------------------------------------------------------------
# Views: exact shapes, JSONL, --upto, the generation


def test_forgetting_keeps_the_2025_summary_where_the_sdk_shows_it(cli, tmp_path) -> None:
    # The view is [0..3, S211, 177..210, 212..221]. A condensation without a summary keeps
    # the head through the summary (SPEC section 3), and the last 19: it forgets 177..201,
    # and 202, the result of call 201. The 2025 SDK puts the summary at offset 4 of its
    # list *before* dropping results whose call is gone (47, 90, 133, 176): those are
    # listed as forgotten too, so the summary stays at 4.
    folder = copy_of(FOUR_CONDENSATIONS, tmp_path)
    done = cli("run", folder, "-t", "amortized", "-s", "max_size=40")
    assert done.exit_code == 0, done.stderr
    assert done.stderr == (
        "amortized_forgetting: forgot 26 events (positions 177..202), view 49 -> 23; "
        f"appended to {folder}\n"
    )
    assert shape(current_view(folder)) == [
        0,
        1,
        2,
        3,
        "S:" + _summary(211),
        *range(203, 211),
        *range(212, 222),
    ]
    records = read_folder(folder).records
    forgotten = records[-1].data["forgotten_event_ids"]
    position = {r.id: r.position for r in records}
    assert [position[i] for i in forgotten] == [*range(177, 203), 47, 90, 133, 176]


def _summary(position: int) -> str:
    return read_folder(corpus(FOUR_CONDENSATIONS)).records[position].data["summary"]


def test_jsonl_round_trip_keeps_the_summary(proc, tmp_path) -> None:
    folder = corpus(ONE_CONDENSATION)
    lines = proc("view", folder, "-f", "jsonl")
    assert lines.returncode == 0, lines.stderr
    again = proc("view", "-", "-f", "jsonl", input=lines.stdout)
    assert again.stdout == lines.stdout
    rows = [orjson.loads(line) for line in lines.stdout.splitlines()]
    assert rows[4] == {
        "kind": "CondensationSummaryEvent",
        "id": "8c818fa8-035d-40f1-9628-8b475c77b884-summary",
        "summary": read_folder(folder).records[82].data["summary"],
    }
    piped = proc("view", "-", input=lines.stdout)
    assert piped.stdout.decode().splitlines()[0] == (
        f"<stdin> (openhands-v1, {LAST_2025}): 47 events in view, 0 forgotten, "
        "0 condensations, summary at 4"
    )
    as_json = orjson.loads(proc("view", "-", "-f", "json", input=lines.stdout).stdout)
    assert as_json["events"] == rows
    assert as_json["summary"] == rows[4]["summary"]
    saved = tmp_path / "view.jsonl"
    saved.write_bytes(lines.stdout)
    assert proc("check", saved).returncode == 0


def test_upto_takes_an_id_or_a_position(cli) -> None:
    folder = corpus(FOUR_CONDENSATIONS)
    records = read_folder(folder).records
    by_position = cli("view", folder, "--upto", "124", "-f", "json")
    by_id = cli("view", folder, "--upto", records[124].id, "-f", "json")
    assert by_position.exit_code == by_id.exit_code == 0
    assert by_position.stdout == by_id.stdout
    ids = [e["id"] for e in orjson.loads(by_position.stdout_bytes)["events"]]
    expected = [*range(4), "S", *range(48, 82), *range(83, 125)]
    assert ids == [f"{records[82].id}-summary" if p == "S" else records[p].id for p in expected]
    text = cli("view", folder, "--upto", "124")
    assert text.stdout.splitlines()[0] == (
        f"{folder} (up to 124) (openhands-v1, {LAST_2025}): 81 events in view, "
        "44 forgotten, 1 condensation, summary at 4"
    )
    missing = cli("view", folder, "--upto", "no-such-id")
    assert missing.exit_code == 2
    assert missing.stderr == (
        f"Error: --upto no-such-id: {folder} has no event with this id\n"
        "Hint: give an event id from the log, or a position (the file index)\n"
    )


def test_the_current_sdk_generation_is_named(cli, tmp_path) -> None:
    dated = {"timestamp": "2026-02-03T10:00:00"}
    folder = write_folder(tmp_path / "c", [system(0) | dated, message(1) | dated])
    data = orjson.loads(cli("view", folder, "-f", "json").stdout_bytes)
    assert data["generation"] == {
        "name": "multi-summary SDK (Feb 2026)",
        "reason": "the newest event is dated 2026-02-03, when the SDK showed several summaries",
    }
    undated = write_folder(tmp_path / "u", [system(0), message(1)])
    assert cli("view", undated).stdout.splitlines()[0] == (
        f"{undated} (openhands-v1, multi-summary SDK): 2 events in view, 0 forgotten, "
        "0 condensations"
    )


def test_appending_does_not_change_the_generation(cli, tmp_path) -> None:
    # A 2025 conversation without condensations is dated 2025; our request is dated
    # today and creates the SDK's lock file: neither is evidence of a newer SDK.
    folder = copy_of(NO_CONDENSATION, tmp_path)
    assert cli("request", folder).exit_code == 0
    assert (events_dir(folder) / ".eventlog.lock").exists()
    data = orjson.loads(cli("view", folder, "-f", "json").stdout_bytes)
    assert data["generation"] == {
        "name": LAST_2025,
        "reason": "the newest event is dated 2025-09-25, before the SDK showed several "
        "summaries (2026-01-22)",
    }
    assert data["unhandled_condensation_request"] is True


# --------------------------------------------------------------------------------------
# The current SDK's view: summaries that can be forgotten, parallel calls, masking

# [0, S6, 1, 4, 5, 7, 8, 9, 10, 11, 12]: condensation 6 forgot the pair 2-3 and put its
# summary at 1; 8 and 9 are parallel calls of one model response, answered by 10 and 11.
MULTI = [
    system(0),
    message(1),
    call(2, "r2"),
    result(3, 2),
    call(4, "r4"),
    result(5, 4),
    condensation(6, [2, 3], 1),
    message(7),
    call(8, "r8"),
    call(9, "r8"),
    result(10, 8),
    result(11, 9),
    message(12),
]


def test_the_llm_summary_forgets_the_previous_summary_by_its_id(
    cli, config, fake: FakeLLM, tmp_path
) -> None:
    folder = write_folder(tmp_path / "c", MULTI)
    assert shape(current_view(folder)) == [0, "S6", 1, 4, 5, 7, 8, 9, 10, 11, 12]
    fake.text("USER_CONTEXT: all of it")
    done = cli("run", folder, "-c", config, "-t", "llm", "-s", "max_size=6", "--force")
    assert done.exit_code == 0, done.stderr
    appended = read_folder(folder).records[-1].data
    assert appended["forgotten_event_ids"] == [
        _id(1),
        _id(4),
        _id(5),
        f"{_id(6)}-summary",
        *(_id(n) for n in range(7, 12)),
    ]
    assert (appended["summary"], appended["summary_offset"]) == ("USER_CONTEXT: all of it", 1)
    assert shape(current_view(folder)) == [0, "S13", 12]
    prompt = fake.prompt()
    assert "<previous_summary>\n(none yet)\n</previous_summary>" in prompt
    assert "<event id=6 source=- type=action:summary>\nsummary 6\n</event>" in prompt


def test_a_kept_summary_stays_where_it_is(cli, tmp_path) -> None:
    folder = write_folder(tmp_path / "c", MULTI)
    done = cli("run", folder, "-t", "amortized", "-s", "max_size=10", "-s", "keep_first=2")
    assert done.exit_code == 0, done.stderr
    assert shape(current_view(folder)) == [0, "S6", 12]


def test_a_ranked_summary_keeps_its_place_not_its_offset(cli, config, fake, tmp_path) -> None:
    # Condensation 4 put its summary at offset 2: [0, 1, S4, 3, 5..8]. The model ranks
    # the summary and event 8; 1 goes, so the summary moves up to 1 (the SDK does not
    # put a kept summary back at its offset).
    events = [system(0), message(1), message(2), message(3), condensation(4, [2], 2)]
    folder = write_folder(tmp_path / "c", [*events, *(message(n) for n in range(5, 9))])
    assert shape(current_view(folder)) == [0, 1, "S4", 3, 5, 6, 7, 8]
    fake.json({"ids": [4, 8]})
    done = cli("run", folder, "-c", config, "-t", "llm_attention", "-s", "max_size=6")
    assert done.exit_code == 0, done.stderr
    assert shape(current_view(folder)) == [0, "S4", 8]


def test_parallel_calls_are_forgotten_together(cli, tmp_path) -> None:
    # The newest 4 events start at call 9; call 8 of the same response goes, so 9 and
    # both results go too (the SDK would drop a batch kept in part).
    folder = write_folder(tmp_path / "c", MULTI)
    before = current_view(folder)
    done = cli("run", folder, "-t", "amortized", "-s", "max_size=10", "--force")
    assert done.exit_code == 0, done.stderr
    assert shape(current_view(folder)) == [0, 12]
    assert before.events[7].unit == before.events[6].key == 8


def test_masking_rewrites_tool_results_as_v1_stores_them(cli, tmp_path) -> None:
    log = write_jsonl(tmp_path / "c.jsonl", MULTI[:6])
    data = orjson.loads(
        cli(
            "run", log, "-t", "observation_masking", "-s", "attention_window=1", "-f", "json"
        ).stdout_bytes
    )
    assert data["events"][3] == result(3, 2) | {
        "observation": {"content": [{"type": "text", "text": "<MASKED>"}]}
    }
    assert data["events"][5] == result(5, 4)  # inside the window
    # 2025 results keep their per-tool fields: a string `content`, or `output`.
    events = orjson.loads(
        cli(
            "run",
            copy_of(NO_CONDENSATION, tmp_path),  # run takes the lock: never on the corpus
            "-t",
            "observation_masking",
            "-s",
            "attention_window=1",
            "-f",
            "json",
        ).stdout_bytes
    )["events"]
    assert events[3]["observation"] == {"kind": "ThinkObservation", "content": "<MASKED>"}
    assert events[5]["observation"]["kind"] == "StrReplaceEditorObservation"
    assert events[5]["observation"]["output"] == "<MASKED>"
    assert "content" not in events[5]["observation"]
    assert events[4]["kind"] == "ActionEvent"  # actions are not masked
    original = read_folder(corpus(NO_CONDENSATION)).records[4].data
    assert events[4] == original


# --------------------------------------------------------------------------------------
# JSONL logs, bad input, the CLI as a subprocess


def test_jsonl_logs_take_requests_and_condensations_as_lines(cli, tmp_path) -> None:
    log = tmp_path / "c.jsonl"
    files = event_files(corpus(ONE_CONDENSATION))
    log.write_bytes(b"".join(f.read_bytes() + b"\n" for f in files))
    before = log.read_bytes()
    assert cli("request", log).exit_code == 0
    added = log.read_bytes()[len(before) :]
    assert added.count(b"\n") == 1 and orjson.loads(added)["kind"] == "CondensationRequest"
    view = current_view(log)
    assert view.unhandled_request is True
    condenser = build_condenser({"type": "amortized", "max_size": 40}, LLMTables({}))
    intended = apply_condensation(view, condenser.condense(view))
    assert cli("run", log, "-t", "amortized", "-s", "max_size=40").exit_code == 0
    assert len(log.read_bytes().splitlines()) == len(files) + 2
    assert same_view(current_view(log)) == same_view(intended)
    assert current_view(log).unhandled_request is False


def test_a_torn_last_line_is_refused(cli, tmp_path) -> None:
    log = tmp_path / "c.jsonl"
    content = orjson.dumps(system(0)) + b'\n{"kind": "Mess'
    log.write_bytes(content)
    done = cli("request", log)
    assert done.exit_code == 1
    assert done.stderr == (
        f"Error: {log}:2: the last line is incomplete (invalid JSON at column 15: unexpected "
        'end of data (line starts \'{"kind": "Mess\')); a writer probably stopped in the '
        f"middle of it\nHint: run `condense check` on {log} to list every problem\n"
    )
    assert log.read_bytes() == content


def test_check_lists_every_problem_by_file(cli, tmp_path) -> None:
    folder = write_folder(tmp_path / "c", [system(0), message(1), message(2), message(3)])
    events = folder / "events"
    (events / event_file_name(1, _id(1))).write_bytes(b"{nope")
    (events / event_file_name(2, _id(2))).unlink()
    (events / "notes.txt").write_bytes(b"hi")
    done = cli("check", folder)
    assert done.exit_code == 1
    assert done.stdout.splitlines() == [
        f"{events / 'notes.txt'}: warning: not an event file name (event-NNNNN-<id>.json); "
        "the SDK ignores it",
        f"{events / event_file_name(3, _id(3))}: index 2 is missing (after "
        f"{event_file_name(1, _id(1))}); the SDK stops reading at the gap, so this file "
        "and 0 later ones are not part of the conversation",
        f"{events / event_file_name(1, _id(1))}: invalid JSON at column 2: unexpected "
        "character, expected a string key (line starts '{nope')",
    ]
    assert done.stderr.endswith("1 of 1 log failed the check (3 problems)\n")
    view = cli("view", folder)
    assert view.exit_code == 1
    assert view.stderr.startswith(f"Error: {events / event_file_name(3, _id(3))}: index 2")


@pytest.mark.parametrize("command", ["view", "request"])
def test_a_dialect_that_reads_no_folders_says_so(command: str, cli, tmp_path) -> None:
    folder = write_folder(tmp_path / "c", [system(0)])
    done = cli(command, folder, "--dialect", "openhands-v0")
    assert done.exit_code == 1
    assert done.stderr == (
        f"Error: {folder}: is a directory, which the openhands-v0 dialect does not read\n"
        "Hint: leave out --dialect to detect the format, or give a log file\n"
    )
    named = cli(command, folder, "--dialect", "openhands-v1")
    assert named.exit_code == 0, named.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["view", "-f", "json"], b'{"dialect":"openhands-v1","generation":'),
        (["stats", "--no-tokens", "-f", "json"], b'{\n  "dialect": "openhands-v1",'),
        (["check"], b""),
    ],
)
def test_the_cli_as_a_subprocess(args: list[str], expected: bytes, proc) -> None:
    done = proc(args[0], corpus(ONE_CONDENSATION), *args[1:])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(expected)


def test_run_and_request_as_a_subprocess(proc, tmp_path) -> None:
    folder = copy_of(ONE_CONDENSATION, tmp_path)
    requested = proc("request", folder)
    assert requested.returncode == 0, requested.stderr
    event_id = orjson.loads(event_files(folder)[-1].read_bytes())["id"]
    assert requested.stderr.decode() == f"appended condensation request {event_id} to {folder}\n"
    done = proc("run", folder, "-t", "amortized", "-s", "max_size=20")
    assert done.returncode == 0, done.stderr
    assert len(event_files(folder)) == 93
    view = proc("view", folder)
    assert view.stdout.decode().splitlines()[0] == (
        f"{folder} (openhands-v1, {LAST_2025}): 13 events in view, 78 forgotten, "
        "2 condensations, summary at 4"
    )


def test_links_and_special_files_in_a_conversation_are_refused_unread(tmp_path: Path, proc) -> None:
    """A symbolic link among the event files (or as base_state.json) is never followed,
    and a FIFO is never opened for a blocking read: each is named, nothing of what it
    points to is read or printed, and the check fails."""
    folder = copy_of(NO_CONDENSATION, tmp_path)
    events = events_dir(folder)
    count = len(event_files(folder))
    secret = tmp_path / "outside.txt"
    secret.write_text("TOP-SECRET-CONTENT\n")
    link = events / f"event-{count:05d}-deadbeef-0000-0000-0000-000000000000.json"
    link.symlink_to(secret)
    fifo = events / f"event-{count + 1:05d}-deadbeef-0000-0000-0000-000000000001.json"
    os.mkfifo(fifo)
    state = folder / "event_service" / "base_state.json"
    state.unlink(missing_ok=True)
    state.symlink_to(secret)
    done = proc("check", folder)
    out = (done.stdout + done.stderr).decode()
    assert done.returncode == 1
    assert f"{link}: a symbolic link: event files must be regular files" in out
    assert f"{fifo}: not a regular file: refused without reading it" in out
    assert f"{state}: warning: a symbolic link" in out
    assert "TOP-SECRET" not in out
    view = proc("view", folder, "--format", "json")
    assert view.returncode == 1 and b"TOP-SECRET" not in view.stdout + view.stderr


def test_a_folder_event_is_read_again_when_shown_and_a_changed_one_is_refused(tmp_path) -> None:
    """A conversation folder's events keep their files, not their bytes: the view
    reads each file again, byte for byte, and a file rewritten in between is a clear
    error naming it, never a view of bytes the replay did not read."""
    folder = write_folder(tmp_path / "conv", [system(0), message(1), call(2, "r"), result(3, 2)])
    files = sorted((folder / "events").iterdir())
    with read_log(str(folder)) as replay:
        assert [e.raw for e in replay.view()] == [f.read_bytes() for f in files]
        files[2].write_bytes(files[2].read_bytes() + b" ")
        with pytest.raises(LogError) as caught:
            [e.text for e in replay.view()]
    assert caught.value.path == str(files[2])
    assert "changed while condense was reading" in caught.value.message


def test_a_walk_over_a_folders_view_holds_one_event_at_a_time(tmp_path) -> None:
    """`check`, `stats`, `audit` and the messages read an event's file when its turn
    comes and keep no copy of its data or facts: a conversation never condensed is
    its own view (30k events held 287-315 MB of it), and the messages are those of
    the events kept whole."""
    from condense_cli.dialects.openhands_v1.events import V1Event
    from tests.dialects.fast_paths import walked

    events = [system(0), message(1)]
    for n in range(2, 80, 4):  # pairs of parallel calls of one response, answered
        events += [call(n, f"r{n}"), call(n + 1, f"r{n}"), result(n + 2, n), result(n + 3, n + 1)]
    folder = write_folder(tmp_path / "conv", events)
    with read_log(str(folder)) as replay:
        view = replay.view()
        assert len(view) == len(events)
        stats, _, messages = walked(replay, view)
        assert all(e._data is None and e._facts_kept is None for e in view)  # type: ignore[attr-defined]
        records = replay.conversation.records  # type: ignore[attr-defined]
        kept = View([V1Event.read(record) for record in records])
        assert messages == replay.messages(kept).messages
    assert stats.view_events == len(events)
    assert len(messages) == 2 + 20 * 3  # a response's two calls are one message


def test_stats_without_tokens_reads_a_folders_files_in_two_processes(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each event file is read again for its text: from the split threshold a child
    reads half of them (as it does in the first read), and the figures are those of
    one process."""
    from condense_cli.fast import halves

    events = [system(0)] + [
        e for n in range(1, 40, 2) for e in (call(n, f"r{n}"), result(n + 1, n))
    ]
    folder = write_folder(tmp_path / "conv", events)
    started = []
    start = halves.Worker.start
    monkeypatch.setattr(halves.Worker, "start", lambda task: started.append(1) or start(task))
    figures = []
    for split in ("9" * 20, "0"):
        monkeypatch.setenv(halves.SPLIT_ENV, split)
        with read_log(str(folder)) as replay:
            figures.append(replay.stats(None).to_json())
    assert started == [1, 1]  # a child reads half of the files, then half again
    assert figures[0] == figures[1]
    assert figures[0]["events"] == len(events)
