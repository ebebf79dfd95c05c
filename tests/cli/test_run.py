"""`condense run` and `condense request`: appends, round trips, and the corpus."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.config.loading import LLMTables, build_condenser
from condense_cli.core.events import Condensation, apply_condensation
from condense_cli.dialects.openhands_v0.replay import load_view
from tests.conftest import (
    SAMPLES,
    condensation,
    corpus_logs,
    msg,
    request,
    run_action,
    run_obs,
)
from tests.reference import seen_by_agent


@pytest.fixture(autouse=True)
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONDENSE_CONFIG", raising=False)


def copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copyfile(src, dst)
    return dst


def view_ids(path: Path) -> list[Any]:
    view, _ = load_view(str(path))
    return ["S" if e.is_summary else e.id for e in view]


def last_event(path: Path) -> dict[str, Any]:
    return orjson.loads(path.read_bytes().splitlines()[-1])


ROUND_TRIPS = [
    ("coding_session.jsonl", ["-t", "amortized", "-s", "max_size=4"]),
    ("browsing_session.jsonl", ["-t", "amortized", "-s", "max_size=10", "-s", "keep_first=2"]),
    ("pending_request.jsonl", ["-t", "conversation_window"]),
    ("pending_request.jsonl", ["-t", "amortized", "-s", "max_size=6"]),
    (
        "browsing_session.jsonl",
        [
            "-t",
            "pipeline",
            "-s",
            'condensers=[{type="browser_output"},{type="amortized",max_size=6}]',
        ],
    ),
]


@pytest.mark.parametrize(("sample", "args"), ROUND_TRIPS)
def test_run_appends_a_condensation_that_replays_to_the_intended_view(
    sample: str, args: list[str], cli, tmp_path: Path
) -> None:
    log = copy(SAMPLES / sample, tmp_path)
    before_bytes = log.read_bytes()
    before, index = load_view(str(log))
    dry = cli("run", log, *args, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert log.read_bytes() == before_bytes
    planned = orjson.loads(dry.stdout_bytes)
    result = cli("run", log, *args)
    assert result.exit_code == 0, result.output
    assert log.read_bytes().startswith(before_bytes)
    appended = last_event(log)
    assert appended["id"] == index.max_key + 1
    assert {**appended, "timestamp": None} == {**planned, "timestamp": None}
    args_ = appended["args"]
    forgotten = args_["forgotten_event_ids"] or list(
        range(args_["forgotten_events_start_id"], args_["forgotten_events_end_id"] + 1)
    )
    intended = apply_condensation(
        before, Condensation(tuple(i for i in forgotten if i in before.keys))
    )
    after, _ = load_view(str(log))
    assert [e.id for e in after] == [e.id for e in intended]
    assert cli("check", log).exit_code == 0


def test_report_line(cli, tmp_path: Path) -> None:
    log = copy(SAMPLES / "coding_session.jsonl", tmp_path)
    result = cli("run", log, "-t", "amortized", "-s", "max_size=4")
    assert result.stderr == (
        # the summary sits at offset 2: events 0 and 1 before it are kept
        f"amortized_forgetting: forgot 3 events (ids 17..18, 20), view 7 -> 4; appended to {log}\n"
    )
    assert result.stdout == ""


def test_dry_run_is_deterministic_but_for_the_timestamp(proc, tmp_path: Path) -> None:
    log = copy(SAMPLES / "browsing_session.jsonl", tmp_path)
    args = ("run", log, "-t", "amortized", "-s", "max_size=6", "--dry-run")
    first, second = proc(*args), proc(*args)
    strip = lambda out: {**orjson.loads(out), "timestamp": None}  # noqa: E731
    assert strip(first.stdout) == strip(second.stdout)
    assert first.stdout.split(b'"source"')[1] == second.stdout.split(b'"source"')[1]


def test_nothing_to_condense_exits_0_and_appends_nothing(cli, tmp_path: Path) -> None:
    log = copy(SAMPLES / "browsing_session.jsonl", tmp_path)
    before = log.read_bytes()
    result = cli("run", log, "-t", "amortized")
    assert result.exit_code == 0
    assert log.read_bytes() == before
    assert result.stdout == ""
    assert result.stderr == (
        "amortized_forgetting: the view has 13 events, within max_size 100, and no request "
        "is pending; nothing appended\n"
    )


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (
            ["-t", "amortized", "-s", "max_size=10"],
            "amortized_forgetting: nothing to forget: the view has 3 events, and the condenser "
            "keeps the first 1 and the last 4",
        ),
        (
            ["-t", "conversation_window"],
            "conversation_window: nothing to forget: the view has no user message to keep",
        ),
        (
            ["-t", "amortized", "-s", "max_size=2", "-s", "keep_first=0"],
            "amortized_forgetting: nothing to forget: the view has 2 events, and the condenser "
            "keeps the first 0 and the last 1",
        ),
    ],
)
def test_nothing_to_forget_leaves_the_request_pending(
    args: list[str], reason: str, proc, make_log
) -> None:
    # SPEC 9: OpenHands may append an empty condensation, marking the request handled
    events = [run_action(1, "c1"), run_obs(2, 1, "c1"), request(3)]
    if "keep_first=0" not in args:
        events.insert(0, {"id": 0, "source": "agent", "action": "system", "args": {}})
    log = make_log(events)
    before = log.read_bytes()
    done = proc("run", log, *args)
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode() == f"{reason}; nothing appended\n"
    assert log.read_bytes() == before
    assert load_view(str(log))[0].unhandled_request


def test_recent_events_keeping_the_whole_window_is_a_configuration_error(proc, make_log) -> None:
    log = make_log([msg(0), msg(1)])
    done = proc("run", log, "-t", "recent", "-s", "keep_first=3", "-s", "max_events=3")
    assert done.returncode == 2
    assert done.stderr == b"Error: [condenser] keep_first (3) must be less than max_events (3)\n"


def test_conversation_window_without_user_message_says_why(cli, make_log) -> None:
    log = make_log(
        [{"id": 0, "source": "agent", "action": "system", "args": {}}, msg(1, source="agent")]
    )
    before = log.read_bytes()
    result = cli("run", log, "-t", "conversation_window", "--force")
    assert result.exit_code == 0
    assert "no user message to keep" in result.stderr
    assert log.read_bytes() == before


def test_view_result_is_printed_in_the_chosen_format(cli) -> None:
    result = cli("run", SAMPLES / "browsing_session.jsonl", "-t", "browser_output", "-f", "jsonl")
    lines = [orjson.loads(line) for line in result.stdout_bytes.splitlines()]
    assert [e["id"] for e in lines] == list(range(13))
    assert lines[5]["content"] == "Visited URL https://alpha.example.org/LICENSE\nContent omitted"
    assert (
        result.stderr == "browser_output: rewrote 3 of 13 events for this step; nothing appended\n"
    )


def test_force_acts_as_a_pending_request(cli, tmp_path: Path) -> None:
    log = copy(SAMPLES / "browsing_session.jsonl", tmp_path)
    assert cli("run", log, "-t", "amortized", "-s", "max_size=20", "--force").exit_code == 0
    # 13 events, keep the system prompt, the user's task (1) and 9 newest (4..12):
    # forget 2..3
    assert view_ids(log) == [0, 1, *range(4, 13)]
    assert last_event(log)["args"]["forgotten_events_start_id"] == 2
    assert last_event(log)["args"]["forgotten_events_end_id"] == 3


def test_request_appends_a_request_and_then_run_handles_it(cli, tmp_path: Path) -> None:
    log = copy(SAMPLES / "browsing_session.jsonl", tmp_path)
    result = cli("request", log)
    assert result.exit_code == 0
    assert result.stderr == f"appended condensation request 13 to {log}\n"
    assert last_event(log)["action"] == "condensation_request"
    view, _ = load_view(str(log))
    assert view.unhandled_request
    assert cli("run", log, "-t", "conversation_window").exit_code == 0
    view, _ = load_view(str(log))
    assert not view.unhandled_request


def test_append_adds_the_missing_final_newline(cli, make_log) -> None:
    content = b"".join(orjson.dumps(msg(i)) + b"\n" for i in range(3)).rstrip(b"\n")
    log = make_log(content)
    assert cli("request", log).exit_code == 0
    lines = log.read_bytes().split(b"\n")
    assert lines[:3] == content.split(b"\n")
    assert orjson.loads(lines[3])["id"] == 3
    assert lines[4] == b""


def test_torn_last_line_is_refused(cli, make_log) -> None:
    content = orjson.dumps(msg(0)) + b"\n" + b'{"id": 1, "action": "mess'
    log = make_log(content)
    for args in (["request", log], ["run", log, "-t", "amortized", "--force"]):
        result = cli(*args)
        assert result.exit_code == 1
        assert result.stderr.startswith(f"Error: {log}:2: the last line is incomplete")
        assert log.read_bytes() == content


def test_invalid_log_is_refused_by_run(cli, make_log) -> None:
    content = orjson.dumps(msg(3)) + b"\n" + orjson.dumps(msg(1)) + b"\n"
    log = make_log(content)
    result = cli("run", log, "-t", "amortized", "--force")
    assert result.exit_code == 1
    assert log.read_bytes() == content


def test_a_summary_less_condensation_leaves_the_old_summary_where_it_was(proc, make_log) -> None:
    events = [msg(i) for i in range(5)]
    events.append(condensation(5, ids=[4], summary="s", offset=4))
    for a in range(6, 12, 2):
        events += [run_action(a, f"c{a}"), run_obs(a + 1, a, f"c{a}")]
    log = make_log(events)
    done = proc("run", log, "-t", "amortized", "-s", "max_size=10")
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode() == (
        f"amortized_forgetting: forgot 2 events (ids 6..7), view 11 -> 9; appended to {log}\n"
    )
    # not [0, 8, 9, 10, "S", 11]: the summary between action 10 and its observation 11
    assert view_ids(log) == [0, 1, 2, 3, "S", 8, 9, 10, 11]


def test_run_and_request_accept_minus_one_ids(cli, make_log) -> None:
    events = [msg(0), msg(1), msg(2), condensation(3, ids=[-1, 1], summary="s", offset=1)]
    events += [msg(i) for i in range(4, 8)] + [condensation(8, start=-1, end=2)]
    log = make_log(events)
    assert view_ids(log) == [4, "S", 5, 6, 7]
    assert cli("request", log).exit_code == 0
    result = cli("run", log, "-t", "amortized", "-s", "max_size=4")
    assert result.exit_code == 0, result.output
    assert view_ids(log) == [4, "S", 7]
    assert last_event(log)["args"]["forgotten_events_start_id"] == 5


TOP_ID = 2**63 - 1


@pytest.mark.parametrize(
    ("last", "args"),
    [
        (msg(TOP_ID), ["request"]),
        (msg(TOP_ID), ["run", "-t", "amortized", "-s", "max_size=2", "-s", "keep_first=0"]),
        (request(TOP_ID), ["run", "-t", "amortized", "-s", "max_size=4"]),
        (msg(TOP_ID), ["run", "-t", "amortized", "-s", "max_size=4", "--dry-run", "--force"]),
    ],
)
def test_no_id_is_left_after_2_63_minus_1(last, args: list[str], proc, make_log) -> None:
    log = make_log([msg(0), msg(1), msg(2), last])
    before = log.read_bytes()
    done = proc(args[0], log, *args[1:])
    assert done.returncode == 1, done.stderr
    assert done.stdout == b""
    assert done.stderr.decode().splitlines() == [
        f"Error: {log}: its largest id is {TOP_ID} (2**63-1), so a new event would need an id "
        "that does not fit in 64 bits; nothing was appended",
        "Hint: start a new log: no event can be appended to this one",
    ]
    assert log.read_bytes() == before


def test_stdin_is_read_only(proc) -> None:
    data = (SAMPLES / "coding_session.jsonl").read_bytes()
    done = proc("run", "-", "-t", "amortized", "-s", "max_size=4", input=data)
    assert done.returncode == 0
    assert orjson.loads(done.stdout)["action"] == "condensation"
    assert b"standard input cannot be appended to" in done.stderr
    refused = proc("request", "-", input=data)
    assert refused.returncode == 1
    assert b"standard input cannot be appended to" in refused.stderr


# --- the OpenHands corpus, against results derived independently ------------------


def agent_view(path: Path) -> list[dict[str, Any]]:
    events = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    return [e for e in events if seen_by_agent(e)]


def answers(obs: dict[str, Any], action: dict[str, Any]) -> bool:
    call = (obs.get("tool_call_metadata") or {}).get("tool_call_id")
    other = (action.get("tool_call_metadata") or {}).get("tool_call_id")
    return obs.get("cause") == action["id"] or (call is not None and call == other)


@pytest.mark.parametrize("log", corpus_logs(), ids=lambda p: p.name)
def test_corpus_amortized_max_size_20(log: Path, corpus: Path, cli, tmp_path: Path) -> None:
    work = copy(log, tmp_path)
    events = agent_view(work)
    result = cli("run", work, "-t", "amortized", "-s", "max_size=20")
    assert result.exit_code == 0, result.output
    if len(events) <= 20:
        assert work.read_bytes() == log.read_bytes()
        return
    # the head: the system prompt and the user's task (the first user message)
    head = 1 + next(i for i, e in enumerate(events) if e.get("source") == "user")
    start = len(events) - 9  # max_size // 2 - keep_first
    # Move the start past observations whose action would be forgotten.
    while "observation" in events[start] and any(
        answers(events[start], a) for a in events[head:start]
    ):
        start += 1
    expected = [e["id"] for e in events[:head]] + [e["id"] for e in events[start:]]
    assert view_ids(work) == expected
    assert cli("check", work).exit_code == 0


@pytest.mark.parametrize("log", corpus_logs(), ids=lambda p: p.name)
def test_corpus_conversation_window_after_request(
    log: Path, corpus: Path, cli, tmp_path: Path
) -> None:
    work = copy(log, tmp_path)
    events = agent_view(work)
    assert cli("request", work).exit_code == 0
    result = cli("run", work, "-t", "conversation_window")
    assert result.exit_code == 0, result.output
    users = [e for e in events if e.get("action") == "message" and e.get("source") == "user"]
    if not users:
        assert view_ids(work) == [e["id"] for e in events]
        return
    essential = [*[e for e in events if e.get("action") == "system"][:1], users[0]]
    recall = next(
        (
            e
            for e in events[events.index(users[0]) :]
            if e.get("action") == "recall" and e["args"].get("query") == users[0]["args"]["content"]
        ),
        None,
    )
    if recall is not None:
        essential.append(recall)
        essential += [e for e in events if e.get("observation") and e.get("cause") == recall["id"]][
            :1
        ]
    start = len(events) - max(1, (len(events) - len(essential)) // 2)
    while start < len(events) and "observation" in events[start]:
        start += 1
    keep = {e["id"] for e in essential} | {e["id"] for e in events[start:]}
    assert view_ids(work) == [e["id"] for e in events if e["id"] in keep]
    assert cli("check", work).exit_code == 0


@pytest.mark.parametrize("log", corpus_logs(), ids=lambda p: p.name)
def test_corpus_pipeline_browser_output_then_amortized(
    log: Path, corpus: Path, cli, tmp_path: Path
) -> None:
    work = copy(log, tmp_path)
    stages = 'condensers=[{type="browser_output"},{type="amortized",max_size=20}]'
    piped = cli("run", work, "-t", "pipeline", "-s", stages, "--dry-run", "-f", "jsonl")
    alone = cli("run", work, "-t", "amortized", "-s", "max_size=20", "--dry-run", "-f", "jsonl")
    # The corpus has no browse observations, so the pipeline decides as amortized alone:
    # the same condensation line (timestamps aside), or the same unchanged view.
    drop_time = lambda out: [  # noqa: E731
        {**orjson.loads(line), "timestamp": None} for line in out.splitlines()
    ]
    assert drop_time(piped.stdout_bytes) == drop_time(alone.stdout_bytes)
    assert bool(piped.stdout_bytes) == ("forgot" in alone.stderr)


def test_pair_rule_holds_on_every_corpus_condensation(tmp_path: Path, corpus: Path) -> None:
    for log in corpus_logs():
        view, _ = load_view(str(log))
        for size in (4, 7, 10, 20):
            condenser = build_condenser({"type": "amortized", "max_size": size}, LLMTables({}))
            result = condenser.condense(view)
            if not isinstance(result, Condensation):
                continue
            kept = {e.id for e in apply_condensation(view, result)}
            for event in view:
                if event.is_action or event.cause is None or event.cause not in view.keys:
                    continue
                assert (event.id in kept) == (event.cause in kept), (log.name, size, event.id)


def test_run_action_and_obs_helpers_pair(make_log) -> None:
    view, _ = load_view(str(make_log([run_action(0, "a"), run_obs(1, 0, "a")])))
    assert view[1].cause == 0


def test_run_reports_reading_then_condensing(tmp_path: Path) -> None:
    import contextlib

    from condense_cli.condensers.runner import Feedback, append_request, run_condenser

    log = copy(SAMPLES / "browsing_session.jsonl", tmp_path)
    calls: list[str] = []

    @contextlib.contextmanager
    def reading(source):
        calls.append(f"reading {source.size}")
        yield

    @contextlib.contextmanager
    def condensing():
        calls.append("condensing")
        yield

    condenser = build_condenser({"type": "amortized", "max_size": 8}, LLMTables({}))
    outcome = run_condenser(str(log), condenser, feedback=Feedback(reading, condensing))
    assert outcome.appended
    size = len((SAMPLES / "browsing_session.jsonl").read_bytes())
    assert calls == [f"reading {size}", "condensing"]
    before = log.stat().st_size
    append_request(str(log), feedback=Feedback(reading))
    assert calls[-1] == f"reading {before}"


def test_run_reads_back_from_the_log_only_the_view_it_prints(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`run` prints a view once the log is closed, so such a view first reads all it
    holds from the log (`Replay.hold`; a big Claude Code session's lines hold only
    their place in it). A condensation, a view the condenser left as it was, and the
    views of `run --all` are never printed: nothing is read back (held whole, the
    view took the log's size in memory)."""
    from condense_cli.condensers.runner import Feedback, RunOutcome, run_condenser
    from condense_cli.dialects.claude_code.dialect import ClaudeReplay
    from condense_cli.terminal.outcomes import describe_rewrite
    from tests.dialects.claude_code.test_replay import Builder
    from tests.dialects.fast_paths import FAST, use_path

    b = Builder()
    b.user("fix the bug")
    for n in range(12):
        b.use(f"c{n}", f"m{n}")
        b.result(f"c{n}", f"output {n} " * 20)
    log = b.write(tmp_path / "s.jsonl")
    use_path(monkeypatch, FAST)  # the lines keep only where they are in the log
    held: list[list[Any]] = []
    hold = ClaudeReplay.hold

    def recording(replay: ClaudeReplay, view: Any) -> None:
        held.append(list(view))
        hold(replay, view)

    monkeypatch.setattr(ClaudeReplay, "hold", recording)

    def run(kind: str, prints: bool = True, **options: Any) -> RunOutcome:
        held.clear()
        condenser = build_condenser({"type": kind, **options}, LLMTables({}))
        keep = ClaudeReplay.hold if prints else None
        return run_condenser(str(log), condenser, dry_run=True, feedback=Feedback(keep=keep))

    outcome = run("amortized", max_size=10)
    assert isinstance(outcome.result, Condensation) and not outcome.shows_view
    assert held == []
    outcome = run("noop")
    assert outcome.result.note is not None and describe_rewrite(outcome) is None
    assert not outcome.shows_view and held == []
    outcome = run("observation_masking", attention_window=4)
    assert outcome.shows_view and describe_rewrite(outcome) == "rewrote 10 of 25 events"
    assert held == [list(outcome.result)]
    assert [e.data["uuid"] for e in outcome.result][-2:] == ["u24", "u25"]  # log closed
    outcome = run("observation_masking", prints=False, attention_window=4)
    assert outcome.shows_view and held == []
