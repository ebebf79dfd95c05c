"""The Claude Code dialect on hand-made sessions whose answer is known, and the corpus."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.dialects import read_log
from condense_cli.dialects.claude_code.events import api_messages
from tests.conftest import ROOT
from tests.fake_llm import FakeLLM

CORPUS = ROOT.parent / "shared" / "corpus" / "claude-code"
FUNDWISE = CORPUS / "FundWise.claude-session.jsonl"
POSTHOG = CORPUS / "posthog-impact-dashboard.claude-session.jsonl"
SID = "00000000-0000-4000-8000-000000000000"


@pytest.fixture(autouse=True)
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONDENSE_CONFIG", raising=False)


class Builder:
    """Session lines with uuids u1, u2, ... chained on the previous message by default."""

    def __init__(self, model: str = "m") -> None:
        self.model = model  # of every answer ("m": a model no catalog names)
        self.lines: list[dict[str, Any]] = [
            {"type": "queue-operation", "operation": "enqueue", "sessionId": SID}
        ]
        self.last: str | None = None
        self.count = 0

    def _add(self, data: dict[str, Any], parent: str | bool | None) -> str:
        self.count += 1
        uid = f"u{self.count}"
        parent_uuid = self.last if parent is True else parent
        self.lines.append(
            {"parentUuid": parent_uuid, "isSidechain": False, **data, "uuid": uid, "sessionId": SID}
        )
        self.last = uid
        return uid

    def user(self, content: Any, parent: str | bool | None = True, **extra: Any) -> str:
        data = {"type": "user", "message": {"role": "user", "content": content}, **extra}
        return self._add(data, parent)

    def assistant(self, blocks: list[dict[str, Any]], mid: str, parent: Any = True) -> str:
        message = {"id": mid, "role": "assistant", "model": self.model, "content": blocks}
        message["usage"] = {"input_tokens": 10, "cache_read_input_tokens": 90}
        return self._add({"type": "assistant", "message": message}, parent)

    def use(self, call: str, mid: str, parent: Any = True) -> str:
        block = {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": call}}
        return self.assistant([block], mid, parent)

    def result(self, call: str, text: str, parent: Any = True) -> str:
        return self.user([{"type": "tool_result", "tool_use_id": call, "content": text}], parent)

    def say(self, text: str, mid: str) -> str:
        return self.assistant([{"type": "text", "text": text}], mid)

    def attachment(self) -> str:
        return self._add({"type": "attachment", "attachment": {"type": "todo_reminder"}}, True)

    def boundary(self, **meta: Any) -> str:
        data = {
            "type": "system",
            "subtype": "compact_boundary",
            "logicalParentUuid": self.last,
            "compactMetadata": {"trigger": "manual", "preTokens": 100, **meta},
        }
        return self._add(data, None)

    def other(self, kind: str) -> None:
        self.lines.append({"type": kind, "sessionId": SID})

    def write(self, path: Path) -> Path:
        path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in self.lines))
        return path


def basic() -> Builder:
    """prompt (line 2), attachment, thinking+text answer, a tool call and its result."""
    b = Builder()
    b.user("fix the bug")  # line 2
    b.attachment()  # 3
    b.assistant([{"type": "thinking", "thinking": "", "signature": "s"}], "m1")  # 4
    b.say("looking", "m1")  # 5
    b.other("last-prompt")  # 6
    b.use("c1", "m2")  # 7
    b.result("c1", "out1")  # 8
    b.say("done", "m3")  # 9
    return b


def keys(path: Path) -> list[Any]:
    with read_log(str(path)) as replay:
        return ["S" if e.is_summary else e.key for e in replay.view()]


def test_the_view_is_the_chain_of_messages_keyed_by_line(tmp_path: Path, cli) -> None:
    log = basic().write(tmp_path / "s.jsonl")
    assert keys(log) == [2, 4, 5, 7, 8, 9]
    out = cli("view", log).stdout
    assert out.splitlines()[0] == (
        f"{log} (claude-code): 6 events in view, 0 forgotten, 0 condensations"
    )
    assert "\n#7 agent action:Bash\n" in out
    assert "\n#8 environment observation:tool_result (answers #7)\n    out1\n" in out
    data = orjson.loads(cli("view", log, "-f", "json").stdout_bytes)
    assert next(iter(data)) == "dialect" and data["dialect"] == "claude-code"
    assert [e["uuid"] for e in data["events"]] == ["u1", "u3", "u4", "u5", "u6", "u7"]


def relinked_only(piped: bytes, originals: list[bytes]) -> None:
    """`piped` is `originals` as a session of its own: each line byte for byte, or,
    where its parent was left out, the same but for a parentUuid that names an
    earlier line of `piped` (or none)."""
    seen: set[str] = set()
    lines = piped.splitlines(keepends=True)
    assert len(lines) == len(originals)
    for line, original in zip(lines, originals, strict=True):
        data, was = orjson.loads(line), orjson.loads(original)
        if line != original:
            assert {**data, "parentUuid": None} == {**was, "parentUuid": None}
            assert was["parentUuid"] not in seen
        assert data["parentUuid"] is None or data["parentUuid"] in seen
        seen.add(data["uuid"])


def test_jsonl_is_the_kept_lines_byte_for_byte_and_reads_back(tmp_path: Path, proc) -> None:
    log = basic().write(tmp_path / "s.jsonl")
    lines = log.read_bytes().splitlines(keepends=True)
    done = proc("view", log, "-f", "jsonl")
    relinked_only(done.stdout, [lines[i - 1] for i in (2, 4, 5, 7, 8, 9)])
    # the attachment (line 3) is left out: the answer after it is the prompt's child
    assert orjson.loads(done.stdout.splitlines()[1])["parentUuid"] == "u1"
    assert proc("check", "-", input=done.stdout).returncode == 0
    again = proc("view", "-", "-f", "jsonl", input=done.stdout)
    assert again.returncode == 0, again.stderr
    assert again.stdout == done.stdout


def test_a_branch_abandoned_by_a_rewind_is_not_in_the_view(tmp_path: Path) -> None:
    b = Builder()
    first = b.user("first")  # 2
    b.say("answer A", "m1")  # 3
    b.user("retry", parent=first)  # 4: the user went back to line 2
    b.say("answer B", "m2")  # 5
    assert keys(b.write(tmp_path / "s.jsonl")) == [2, 4, 5]


def test_parallel_calls_on_a_side_branch_are_put_back_in_file_order(tmp_path: Path) -> None:
    b = Builder()
    b.user("go")  # 2
    a1 = b.use("c1", "m1")  # 3
    b.use("c2", "m1")  # 4 (same response, chained on 3)
    b.result("c2", "out2")  # 5 (chained on 4: a side branch)
    b.result("c1", "out1", parent=a1)  # 6 (the chain goes on from here)
    b.say("both done", "m2")  # 7
    log = b.write(tmp_path / "s.jsonl")
    assert keys(log) == [2, 3, 4, 5, 6, 7]
    with read_log(str(log)) as replay:
        messages = api_messages(replay.view().events)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert [b["id"] for b in messages[1]["content"]] == ["c1", "c2"]
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["c2", "c1"]


def test_messages_merge_as_the_client_merges_them() -> None:
    b = Builder()
    b.user("A")
    b.user([{"type": "text", "text": "B"}])
    b.use("c1", "m1")
    b.result("c1", "out")
    b.use("c2", "m1")  # the same response, written after the first result
    from condense_cli.dialects.claude_code.events import ClaudeEvent

    events = [ClaudeEvent(x, i, None) for i, x in enumerate(b.lines[1:])]
    assert api_messages(events) == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "A\n"}, {"type": "text", "text": "B"}],
        },
        {
            "role": "assistant",
            "content": [b.lines[3]["message"]["content"][0], b.lines[5]["message"]["content"][0]],
        },
        {"role": "user", "content": b.lines[4]["message"]["content"]},
    ]


def compacted() -> Builder:
    """Three turns, then a client compaction that keeps nothing but its summary."""
    b = basic()
    b.boundary(postTokens=20, durationMs=5)  # line 10
    b.user("SUMMARY", isCompactSummary=True, isVisibleInTranscriptOnly=True)  # 11
    b.attachment()  # 12
    b.say("resumed", "m4")  # 13
    return b


def test_the_view_starts_at_the_latest_boundary_with_its_summary(tmp_path: Path, cli) -> None:
    log = compacted().write(tmp_path / "s.jsonl")
    assert keys(log) == ["S", 13]
    header = cli("view", log).stdout.splitlines()[0]
    assert header.endswith("2 events in view, 6 forgotten, 1 condensation, summary at 0")
    stats = orjson.loads(cli("stats", log, "--no-tokens", "-f", "json").stdout_bytes)
    [record] = stats["condensations"]
    assert record["line"] == 10 and record["forgotten_ranges"] == [[2, 2], [4, 5], [7, 9]]
    assert record["log"] == {
        "trigger": "manual",
        "pre_tokens": 100,
        "post_tokens": 20,
        "duration_ms": 5,
    }
    assert (record["view_size_before"], record["view_size_after"]) == (6, 1)


def test_a_preserved_segment_follows_its_anchor(tmp_path: Path) -> None:
    b = basic()
    b.boundary(preservedSegment={"headUuid": "u5", "anchorUuid": "u9", "tailUuid": "u7"})
    b.user("SUMMARY", isCompactSummary=True)  # 11 (u9)
    b.user("next")  # 12
    assert keys(b.write(tmp_path / "s.jsonl")) == ["S", 7, 8, 9, 12]


def test_a_view_with_a_preserved_segment_reads_back_from_jsonl(tmp_path: Path, proc) -> None:
    b = basic()
    b.boundary(preservedSegment={"headUuid": "u5", "anchorUuid": "u9", "tailUuid": "u7"})
    b.user("SUMMARY", isCompactSummary=True)  # 11 (u9)
    b.user("next")  # 12
    log = b.write(tmp_path / "s.jsonl")
    lines = log.read_bytes().splitlines(keepends=True)
    done = proc("view", log, "-f", "jsonl")
    relinked_only(done.stdout, [lines[i - 1] for i in (10, 11, 7, 8, 9, 12)])
    again = proc("view", "-", "-f", "jsonl", input=done.stdout)
    assert again.stdout == done.stdout


def test_upto_takes_a_line_or_a_uuid(tmp_path: Path, cli) -> None:
    log = basic().write(tmp_path / "s.jsonl")
    by_line = orjson.loads(cli("view", log, "--upto", "7", "-f", "json").stdout_bytes)
    by_uuid = orjson.loads(cli("view", log, "--upto", "u5", "-f", "json").stdout_bytes)
    assert [e["uuid"] for e in by_line["events"]] == ["u1", "u3", "u4", "u5"]
    assert by_uuid == by_line
    bad = cli("view", log, "--upto", "nope")
    assert bad.exit_code == 2
    assert bad.stderr == f"Error: --upto 'nope': no line of {log} has this uuid\n"


def test_check_reports_what_breaks_sessions(tmp_path: Path, cli) -> None:
    b = Builder()
    b.user("go")  # 2
    b.say("hm", "m1")  # 3
    b.user("lost", parent="u99")  # 4: parent points nowhere
    b.lines[-1]["uuid"] = "u1"  # ...and reuses a uuid
    b.boundary()  # 5: no summary follows
    log = b.write(tmp_path / "s.jsonl")
    with log.open("ab") as f:
        f.write(b"{not json\n")
    result = cli("check", log)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{log}:4: duplicate uuid u1 (first on line 2)",
        f"{log}:4: parentUuid u99 points to no line of this session",
        f"{log}:5: compact_boundary without an isCompactSummary message",
        f"{log}:6: invalid JSON: unexpected character, expected a string key",
    ]
    assert result.stderr == "1 of 1 log failed the check (4 problems)\n"


def test_check_finds_unpaired_tool_calls_in_the_view(tmp_path: Path, cli) -> None:
    b = Builder()
    b.user("go")  # 2
    b.use("c1", "m1")  # 3: never answered
    b.result("c9", "stray")  # 4: answers nothing
    b.say("hm", "m2")  # 5
    b.use("c2", "m3")  # 6: the session stopped while it ran
    log = b.write(tmp_path / "s.jsonl")
    result = cli("check", log)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{log}:3: tool_use c1 has no tool_result",
        f"{log}:4: tool_result for c9: no tool_use before it",
        f"{log}:6: warning: tool_use c2 has no tool_result: the session ended while it ran; "
        "Claude Code answers it as interrupted when the session resumes",
    ]


def test_a_result_answering_a_list_is_a_problem_under_a_line_with_tool_blocks(
    tmp_path: Path, cli
) -> None:
    """A `tool_use_id` that is not a string is reported, also on the parent of a line
    with tool blocks (whose ids the session shares with its parent's)."""
    b = basic()
    b.user([{"type": "tool_result", "tool_use_id": ["c1"]}])  # 10
    b.result("c1", "again")  # 11: its parent's tool blocks hold the list
    log = b.write(tmp_path / "s.jsonl")
    result = cli("check", log)
    assert result.exit_code == 1
    problem = f"{log}:10: tool_result for ['c1']: no tool_use before it"
    assert result.stdout.splitlines() == [problem]


def test_a_bad_line_is_one_message_and_exit_1(tmp_path: Path, cli) -> None:
    log = basic().write(tmp_path / "s.jsonl")
    with log.open("ab") as f:
        f.write(b'{"type": "user", "uuid": "x"}\n')
    result = cli("view", log)
    assert result.exit_code == 1
    assert result.stderr == f'Error: {log}:10: a user line needs a "message" object\n'


def test_run_forgets_by_copying_what_it_keeps(tmp_path: Path, cli) -> None:
    b = Builder()
    b.user("task")  # 2
    for k in range(6):  # 3..14
        b.use(f"c{k}", f"m{k}")
        b.result(f"c{k}", f"out{k}")
    log = b.write(tmp_path / "s.jsonl")
    before = log.read_bytes()
    result = cli("run", log, "-t", "amortized_forgetting", "-s", "condenser.max_size=6")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == (
        f"amortized_forgetting: forgot 10 events (ids 3..12), view 13 -> 3; appended to {log}\n"
    )
    assert log.read_bytes().startswith(before)
    added = [orjson.loads(x) for x in log.read_bytes()[len(before) :].splitlines()]
    boundary, *copies = added
    assert boundary["subtype"] == "compact_boundary" and boundary["parentUuid"] is None
    assert boundary["logicalParentUuid"] == "u13"
    assert boundary["compactMetadata"] == {
        "trigger": "manual",
        "preTokens": 100,
        "condense": {"summary": False},
    }
    assert [c["condenseCopyOf"] for c in copies] == ["u1", "u12", "u13"]
    assert [c["parentUuid"] for c in copies] == [boundary["uuid"]] + [
        c["uuid"] for c in copies[:-1]
    ]
    assert copies[1]["message"]["id"] != "m5" and copies[1]["message"]["id"].startswith("msg_")
    assert "requestId" not in copies[1]
    assert keys(log) == [16, 17, 18]
    assert cli("check", log).exit_code == 0
    stats = orjson.loads(cli("stats", log, "--no-tokens", "-f", "json").stdout_bytes)
    assert stats["condensations"][0]["forgotten_ranges"] == [[3, 12]]
    # one numbering: the copies are shown by their originals' numbers everywhere
    view = orjson.loads(cli("view", log, "-f", "json").stdout_bytes)
    assert [e["uuid"] for e in view["events"]] == [c["uuid"] for c in copies]
    text = cli("view", log, "--no-pager").stdout
    assert "#2 user action:message" in text and "#14 environment" in text
    assert "(answers #13)" in text
    with read_log(str(log)) as replay:
        assert [e.id for e in replay.view()] == [2, 13, 14]
        from condense_cli.agent.memory import ForgottenIndex

        forgotten = ForgottenIndex(replay)
        assert [e.id for e in forgotten.events] == [str(n) for n in range(3, 13)]


def test_run_with_llm_puts_the_summary_after_the_head(tmp_path: Path, cli) -> None:
    b = Builder()
    b.user("task")  # 2
    for k in range(6):
        b.use(f"c{k}", f"m{k}")
        b.result(f"c{k}", f"out{k}")
    log = b.write(tmp_path / "s.jsonl")
    fake = FakeLLM().text("THE SUMMARY")
    try:
        config = tmp_path / "config.toml"
        config.write_text(
            f'[llm]\nmodel = "openai/test-model"\nbase_url = "{fake.base_url}"\n'
            'api_key = "sk-test"\ntimeout = 5\nnum_retries = 0\n'
        )
        result = cli("run", log, "-c", config, "-t", "llm", "-s", "condenser.max_size=8")
    finally:
        fake.close()
    assert result.exit_code == 0, result.stderr
    assert "<event id=3 source=agent type=action:Bash>" in fake.prompt()
    with read_log(str(log)) as replay:
        view = replay.view()
    assert [e.text if e.is_summary else e.key for e in view] == [16, "THE SUMMARY", 18, 19]
    assert view.summary_offset == 1
    assert cli("check", log).exit_code == 0


def test_request_is_a_line_the_view_reads_as_pending(tmp_path: Path, cli) -> None:
    log = basic().write(tmp_path / "s.jsonl")
    result = cli("request", log)
    assert result.exit_code == 0
    last = orjson.loads(log.read_bytes().splitlines()[-1])
    assert last["type"] == "condense-request" and last["sessionId"] == SID
    assert cli("view", log).stdout.splitlines()[0].endswith("condensation request pending")
    done = cli("run", log, "-t", "conversation_window")
    assert done.exit_code == 0, done.stderr
    header = cli("view", log).stdout.splitlines()[0]
    assert "pending" not in header and "1 condensation" in header


def test_masking_rewrites_results_for_this_step_only(tmp_path: Path, cli) -> None:
    log = basic().write(tmp_path / "s.jsonl")
    before = log.read_bytes()
    result = cli(
        "run", log, "-t", "observation_masking", "-s", "condenser.attention_window=1", "-f", "jsonl"
    )
    assert result.exit_code == 0
    assert log.read_bytes() == before
    lines = [orjson.loads(x) for x in result.stdout_bytes.splitlines()]
    assert lines[4]["message"]["content"][0]["content"] == "<MASKED>"


# --- the corpus ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("session", "events", "forgotten"), [(FUNDWISE, 218, 0), (POSTHOG, 241, 295)]
)
def test_corpus_sessions_view_check_and_condense(
    session: Path, events: int, forgotten: int, tmp_path: Path, cli
) -> None:
    header = cli("view", session).stdout.splitlines()[0]
    assert f"(claude-code): {events} events in view, {forgotten} forgotten" in header
    assert cli("check", session).exit_code == 0
    log = tmp_path / session.name
    shutil.copyfile(session, log)
    result = cli("run", log, "-t", "amortized_forgetting", "-s", "condenser.max_size=40")
    assert result.exit_code == 0, result.stderr
    assert cli("check", log).exit_code == 0
    assert len(keys(log)) <= 21


def test_the_corpus_compaction_keeps_the_client_figures(cli) -> None:
    stats = orjson.loads(cli("stats", POSTHOG, "--no-tokens", "-f", "json").stdout_bytes)
    [record] = stats["condensations"]
    assert (record["line"], record["forgotten_events"], record["summary_chars"]) == (
        831,
        295,
        11_255,
    )
    assert record["log"] == {
        "trigger": "auto",
        "pre_tokens": 167_766,
        "post_tokens": 6_977,
        "duration_ms": 122_374,
    }


# --- --format messages ---------------------------------------------------------------


def test_messages_are_the_api_messages_in_chat_form(tmp_path: Path, cli, proc) -> None:
    b = basic()
    b.user(
        [
            {"type": "text", "text": "<system-reminder>\nx\n</system-reminder>"},
            {"type": "text", "text": "more"},
        ]
    )
    path = b.write(tmp_path / "s.jsonl")
    expected = [
        {"role": "user", "content": "fix the bug"},
        {"role": "assistant", "content": "looking"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "Bash", "arguments": '{"command":"c1"}'},
                }
            ],
        },
        {"role": "tool", "content": "out1", "tool_call_id": "c1", "name": "Bash"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "more"},
    ]
    done = cli("view", path, "-f", "messages")
    assert done.exit_code == 0, done.output
    assert orjson.loads(done.stdout_bytes) == expected
    assert orjson.loads(proc("view", path, "-f", "messages").stdout) == expected


def test_a_tool_result_whose_id_is_a_list_is_an_answer_to_nothing(tmp_path: Path, cli) -> None:
    """It crashed the replay (an unhashable dictionary key)."""
    b = basic()
    b.user([{"type": "tool_result", "tool_use_id": ["c1"], "content": "x"}])  # line 10
    log = b.write(tmp_path / "s.jsonl")
    result = cli("check", log)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0] == (
        f"{log}:10: tool_result for ['c1']: no tool_use before it"
    )


# --- work that grows with the session, not with sessions x compactions ------------------


class CountedLines(list):  # type: ignore[type-arg]
    """A session's list of lines that counts every line read out of it."""

    def __init__(self, lines: list[Any]) -> None:
        super().__init__(lines)
        self.read = 0

    def __iter__(self) -> Any:
        for line in super().__iter__():
            self.read += 1
            yield line

    def __reversed__(self) -> Any:
        for line in super().__reversed__():
            self.read += 1
            yield line

    def __getitem__(self, index: Any) -> Any:
        found = super().__getitem__(index)
        self.read += len(found) if isinstance(index, slice) else 1
        return found

    def index(self, value: Any, *args: Any) -> int:
        at = super().index(value, *args)
        self.read += at + 1
        return at


def compactions(count: int, model: str = "m", **meta: Any) -> Builder:
    """`count` rounds of four turns, each with two parallel calls (the second answered
    on a side branch), then a client compaction (its `compactMetadata`: `meta`)."""
    b = Builder(model)
    b.user("task")
    for k in range(count):
        for t in range(4):
            call = f"c{k}.{t}"
            first = b.use(call, f"m{k}.{t}")
            b.use(f"{call}b", f"m{k}.{t}")
            b.result(f"{call}b", "out b")
            b.result(call, "out a", parent=first)
            b.say("ok", f"n{k}.{t}")
        b.boundary(**meta)
        b.user(f"SUMMARY {k}", isCompactSummary=True)
    b.say("done", "end")
    return b


def lines_read_per_line(tmp_path: Path, count: int) -> float:
    """Lines read out of the session's line list, per line, by everything the
    commands ask of a replay: view, check, condensations, stats, audit, simulate."""
    from condense_cli.core.logfile import LogSource
    from condense_cli.dialects.claude_code.chain import read_session
    from condense_cli.dialects.claude_code.dialect import ClaudeReplay

    log = compactions(count).write(tmp_path / f"s{count}.jsonl")
    with LogSource.open(str(log)) as source:  # a big session's lines are read back from it
        session = read_session(source, collect=True)
        lines = session.lines = CountedLines(session.lines)
        replay = ClaudeReplay(session)
        assert len(replay.condensations) == count and not replay.problems
        assert replay.forgotten_events == 1 + 20 * count  # the task, then each round
        replay.messages(replay.view())
        list(replay.view_lines())
        replay.stats(None)
        steps = list(replay.condensation_steps())
        history = list(replay.history())
    assert len(steps) == count and len(history) == 2 + 20 * count
    return lines.read / len(lines)


def parallel_rounds(count: int, b: Builder | None = None, tag: str = "") -> Builder:
    """`count` turns of two parallel calls, the second answered on a side branch, and
    no compaction (after the lines of `b`, when given): the active chain holds nearly
    every line."""
    if b is None:
        b = Builder()
        b.user("task")
    for k in range(count):
        first = b.use(f"c{tag}{k}", f"m{tag}{k}")
        b.use(f"c{tag}{k}b", f"m{tag}{k}")
        b.result(f"c{tag}{k}b", "out b")
        b.result(f"c{tag}{k}", "out a", parent=first)
        b.say("ok", f"n{tag}{k}")
    return b


def grown(log: Path, count: int, tag: str) -> None:
    """`log` with `count` more turns of `parallel_rounds` chained on its last line."""
    b = Builder()
    b.lines, b.last = [], orjson.loads(log.read_bytes().splitlines()[-1])["uuid"]
    b.count = 1000 * len(tag)  # uuids of their own
    with log.open("ab") as f:
        f.write(b"".join(orjson.dumps(x) + b"\n" for x in parallel_rounds(count, b, tag).lines))


def test_a_chain_holding_most_of_the_session_indexes_the_lines_off_it(tmp_path: Path) -> None:
    """The view of a session never compacted indexes only the lines off its chain for
    the parallel calls it puts back, instead of every line: the same chain as with
    the index of every line, twice at most, then that index is made."""
    from condense_cli.core.logfile import LogSource
    from condense_cli.dialects.claude_code.chain import active_chain, read_session, walk
    from condense_cli.dialects.claude_code.lines import OWN_SIDES

    log = parallel_rounds(20).write(tmp_path / "s.jsonl")
    with LogSource.open(str(log)) as source:
        own, shared = read_session(source), read_session(source)
    shared.side_of(set())  # a chain holding no line: the index of every line is made
    assert shared._side is not None
    numbers = [x.number for x in active_chain(own).lines]
    assert own._side is None  # the chain indexed what is off it, for itself
    assert numbers == [x.number for x in active_chain(shared).lines]
    walked = [x.number for x in walk(own, own.lines[-1]).lines]
    assert len(numbers) == len(walked) + 40 and set(walked) < set(numbers)  # siblings back
    for _ in range(OWN_SIDES - 1):
        assert [x.number for x in active_chain(own).lines] == numbers and own._side is None
    assert [x.number for x in active_chain(own).lines] == numbers and own._side is not None


@pytest.mark.parametrize("made", ["compactions", "run", "corpus"])
def test_a_compactions_record_counts_the_events_of_its_views(
    tmp_path: Path, cli, made: str
) -> None:
    """A compaction's record is made from the lines of the view before it, not its
    events: what it forgot is every event of that view that is no summary and that
    the view after it does not hold (as itself or as a copy), as the events say."""
    from condense_cli.core.intervals import runs

    if made == "run":  # each run after the first forgets copies the one before wrote
        log = parallel_rounds(6).write(tmp_path / "s.jsonl")
        for tag in ("x", "xy", "xyz"):
            done = cli("run", log, "-t", "amortized_forgetting", "-s", "condenser.max_size=8")
            assert done.exit_code == 0, done.stderr
            grown(log, 3, tag)
    elif made == "compactions":
        log = compactions(4).write(tmp_path / "s.jsonl")
    else:
        log = POSTHOG
    with read_log(str(log)) as replay:
        boundaries = replay.boundaries()
        assert len(boundaries) == {"run": 3, "compactions": 4, "corpus": 1}[made]
        for boundary, record in zip(boundaries, replay.condensations, strict=True):
            before, after = replay.before(boundary), replay.after(boundary)
            kept = {e.copy_of or e.uuid for e in after}
            gone = [e.key for e in before if e.key is not None and e.uuid not in kept]
            assert (record.ranges, record.forgotten_events) == (runs(gone), len(gone))
            assert replay.size_before(boundary) == len(before)
        assert replay.model == "m" or made == "corpus"


def test_replay_work_grows_with_the_session_not_with_its_compactions(tmp_path: Path) -> None:
    """Every compaction's views used to rescan the whole session (`view --format json`
    of the 100k-line benchmark session did not finish in 4 minutes): per line, a
    session with 40 compactions must cost what one with 4 costs."""
    few, many = lines_read_per_line(tmp_path, 4), lines_read_per_line(tmp_path, 40)
    assert many <= few + 1, (few, many)


def test_each_compactions_views_are_made_once_for_its_record_step_and_stats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The views before a compaction are the slow part of its record: the walk of the
    audit's steps (or of `stats`) keeps the records, the sizes `stats` shows and the
    models `thresholds` reads, and none is made again for them."""
    from condense_cli.analysis.audit import audit_log
    from condense_cli.dialects.claude_code.dialect import ClaudeReplay

    log = compactions(5, "claude-sonnet-4-6", trigger="auto", preTokens=170_000).write(
        tmp_path / "s.jsonl"
    )
    made: list[int] = []
    before = ClaudeReplay._messages_before  # the chain walked back from the compaction

    def counted(self: ClaudeReplay, boundary: Any) -> Any:
        made.append(boundary.number)
        return before(self, boundary)

    monkeypatch.setattr(ClaudeReplay, "_messages_before", counted)
    with read_log(str(log)) as replay:
        steps = list(replay.condensation_steps())
        assert len(steps) == 5 and len(made) == 5
        records = replay.condensations
        rows = replay.stats(None).condensations
        thresholds = replay.thresholds()
    assert len(made) == 5
    with read_log(str(log)) as fresh:  # each made on its own, they are the same
        assert fresh.stats(None).condensations == rows and fresh.condensations == records
        assert fresh.thresholds() == thresholds
    assert len(made) == 10
    with read_log(str(log)) as audited:  # its steps, then its thresholds
        assert len(audit_log(audited).condensations) == 5
    assert len(made) == 15
    assert [r.view_size_before for r in rows] == [len(s.before) for s in steps]
    assert len(thresholds) == 5
    assert all("window of claude-sonnet-4-6 less" in t.source for t in thresholds.values())
