"""Claude Code's fast path (msgspec blocks, lines parsed lazily) against the exact
path (orjson line by line): the same lines, problems, view and errors on every input."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense_cli.core.errors import ConfigError, LogError
from condense_cli.dialects import read_log
from condense_cli.dialects.claude_code.lines import tool_blocks
from tests.conftest import require_corpus
from tests.dialects.claude_code.test_replay import CORPUS, Builder, basic
from tests.dialects.fast_paths import (
    EXACT,
    FAST,
    SPLIT,
    WHOLE_VIEW_COMMANDS,
    both_paths,
    converted,
    judged_alike,
    line_endings,
    printed_alike,
    repeated,
    reported_alike,
    use_path,
    walked,
)

DIALECT = "claude-code"
PATHS = (EXACT, FAST, SPLIT)  # a big session is read in two processes


def outcome(log: Path, collect: bool = True, upto: str | None = None) -> Any:
    """Everything a replay decides about a session, or the error it stops with."""
    try:
        with read_log(str(log), dialect=DIALECT, collect=collect, upto=upto) as replay:
            session = replay.session  # type: ignore[attr-defined]
            lines = [
                (
                    x.number,
                    x.raw,
                    x.type,
                    x.uuid,
                    x.parent,
                    x.is_boundary,
                    x.sidechain,
                    x.compact_summary,
                    x.copy,
                    x.message_id,
                    x.tools,
                    x.odd_use,
                    list(x.data),  # its keys: a deeply nested value cannot be compared
                )
                for x in session.lines
            ]
            events = [
                (e.key, e.line, e.answers, e.raw, list(e.data), e.tool_call_id, e.source)
                for e in replay.view()
            ]
            return (
                session.size,
                lines,
                {uuid: line.number for uuid, line in session.by_uuid.items()},
                [(p.line, p.message, p.severity) for p in replay.problems],
                b"".join(replay.view_lines()),
                events,
                [
                    (c.id, c.line, c.ranges, c.forgotten_events, c.summary_chars, c.view_size)
                    for c in replay.condensations
                ],
                [None if e is None else (e.key, e.raw) for e in replay.history()],
                converted(replay.messages(replay.view())),
            )
    except (LogError, ConfigError) as exc:
        return ("error", type(exc).__name__, str(exc))


def story() -> list[bytes]:
    """A session with a compaction, parallel calls on a side branch, a sidechain, a
    copy `condense run` wrote, a dangling parent and lines outside the tree."""
    b = basic()  # lines 1-9
    b.other("queue-operation")
    first = b.use("c2", "m5")
    b.use("c3", "m5")
    b.result("c3", "out3 héllo ✓ 日本")
    b.result("c2", "out2", parent=first)
    b.user("aside", isSidechain=True)
    b.boundary(postTokens=20)
    b.user("SUMMARY", isCompactSummary=True, isVisibleInTranscriptOnly=True)
    b.user("kept again", condenseCopyOf="u1")
    b.say("resumed", "m6")
    b.user("lost parent", parent="nowhere")
    b.use("c4", "m7")
    b.result("c4", "x" * 300)
    b.result("c9", "an answer to nothing")
    b.say("end", "m8")
    return [orjson.dumps(x) for x in b.lines]


USER = b'"type":"user","uuid":"t1","parentUuid":null'


def user(after: bytes = b"", message: bytes = b'{"content":"x"}') -> bytes:
    """A user line with `message`, then `after` (more fields, or garbage)."""
    return b"{" + USER + b',"message":' + message + after


def result(call: bytes) -> bytes:
    """A user line with one tool_result whose `tool_use_id` is `call` (JSON)."""
    return user(b"}", b'{"content":[{"type":"tool_result","tool_use_id":' + call + b"}]}")


# Lines the fast path must judge exactly as the exact path does, each placed in the
# middle of an ordinary session.
TRICKY = {
    "overflowing exponent": user(b',"cost":1e400}'),
    "overflowing signed exponent": user(b',"x":[-2E+308]}'),
    "overflowing integer": user(b',"n":' + b"9" * 400 + b"}"),
    "largest double": user(b',"x":1.7976931348623157e308}'),
    "overflow after a space": user(b',"x": 1e400}'),
    "overflow after a comma": user(b',"x":[1,-2E+308]}'),
    "overflow shape in a uuid": user(b',"x":"c610adf4-81d8-4e93-8e3e-529650ef9145"}'),
    "overflow shape after a space in a string": user(b',"x":"git show 3e400a1"}'),
    "underflowing exponent": user(b',"x":1e-400}'),
    "invalid UTF-8": user(b"}", b'{"content":"\xff"}'),
    "invalid UTF-8 in a skipped field": user(b',"z":"\xc3("}'),
    "encoded surrogate": user(b',"z":"\xed\xa0\x80"}'),
    "lone surrogate escape": user(b',"z":"\\ud800"}'),
    "trailing garbage": user(b"} x"),
    "two objects": b'{"type":"last-prompt"}{"type":"last-prompt"}',
    "leading space": b' {"type":"last-prompt"}',
    "trailing space": b'{"type":"last-prompt"} ',
    "carriage return": user(b"}\r"),
    "blank": b"",
    "spaces": b"   ",
    "split object": user(b"\n}"),
    "two objects then a split one": b'{"type":"last-prompt"}{"type":"ai-title",\n"x":1}',
    "duplicate type key": b'{"type":"user","type":"last-prompt","uuid":5}',
    "duplicate uuid key": user(b',"uuid":"u3"}'),
    "deep nesting": user(b',"x":' + b"[" * 1000 + b"]" * 1000 + b"}"),
    "NaN": user(b',"x":NaN}'),
    "not an object": b'["user"]',
    "a string": b'"user"',
    "null": b"null",
    # wrong types of each field the fast path reads
    "type a number": b'{"type":5,"uuid":"t1"}',
    "type null": b'{"type":null,"uuid":"t1"}',
    "no type": b'{"uuid":"t1","message":{"content":"x"}}',
    "uuid a number": b'{"type":"user","uuid":5,"message":{"content":"x"}}',
    "system without uuid": b'{"type":"system","subtype":"informational"}',
    "attachment uuid null": b'{"type":"attachment","uuid":null}',
    "parentUuid a number": user(b',"parentUuid":5}'),
    "parentUuid an object off the tree": b'{"type":"last-prompt","parentUuid":{"a":1}}',
    "uuid a number off the tree": b'{"type":"queue-operation","uuid":7}',
    "subtype a number": b'{"type":"system","uuid":"t1","subtype":5}',
    "boundary subtype off the system": b'{"type":"attachment","subtype":"compact_boundary"}',
    "isSidechain a string": user(b',"isSidechain":"true"}'),
    "isCompactSummary 1": user(b',"isCompactSummary":1}'),
    "condenseCopyOf null": user(b',"condenseCopyOf":null}'),
    "message a string": user(b"}", b'"hello"'),
    "message a string off the tree": b'{"type":"last-prompt","message":"hello"}',
    "message null": user(b"}", b"null"),
    "no message": b"{" + USER + b"}",
    "message id a number": b'{"type":"assistant","uuid":"t1","message":{"id":5,"content":[]}}',
    "content a number": user(b"}", b'{"content":5}'),
    "content an object": user(b"}", b'{"content":{"type":"text"}}'),
    "content null": user(b"}", b'{"content":null}'),
    "no content": user(b"}", b'{"role":"user"}'),
    "a block not an object": user(b"}", b'{"content":["x",{"type":"text"}]}'),
    "block type a number": user(b"}", b'{"content":[{"type":5}]}'),
    "tool_use id a number": user(b"}", b'{"id":"m","content":[{"type":"tool_use","id":5}]}'),
    "a result, then a tool_use without an id": user(
        b"}", b'{"content":[{"type":"tool_result","tool_use_id":"c1"},{"type":"tool_use"}]}'
    ),
    "tool_use_id a number": result(b"5"),
    "tool_use_id a 20-digit number": result(b"18446744073709551616"),
    "tool_use_id null": result(b"null"),
    "tool_use_id a list": result(b'["c1"]'),
    "tool_use_id an answered call": result(b'"c1"'),
    "a boundary": b'{"type":"system","subtype":"compact_boundary","uuid":"t1","parentUuid":null}',
    "a request": b'{"type":"condense-request","requestUuid":"r1"}',
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_a_tricky_line_is_judged_alike_on_both_paths(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged_alike(monkeypatch, outcome, tmp_path / "s.jsonl", story(), 12, TRICKY[name], PATHS)


def test_the_fast_path_reads_ordinary_lines_lazily_and_reports_a_bad_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exactness check above must not pass only because every block fell back."""
    lines = story()
    lines[12:12] = [TRICKY["uuid a number"]]
    log = tmp_path / "s.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    use_path(monkeypatch, FAST, block=1 << 20)
    with read_log(str(log), dialect=DIALECT, collect=True) as replay:
        session = replay.session  # type: ignore[attr-defined]
        assert [(p.line, p.message) for p in replay.problems] == [
            (13, 'a user line needs a "uuid" string'),
            (21, "parentUuid nowhere points to no line of this session"),
            (24, "tool_result for c9: no tool_use before it"),
        ]
        assert [x._data for x in session.lines[:3]] == [None, None, None]  # not parsed
        # nor kept: a line keeps where it is, and its bytes are read back from the log
        assert [x._raw for x in session.lines[:3]] == [None, None, None]
        assert [x.raw for x in session.lines[:3]] == lines[:3]
        assert [x.size for x in session.lines[:3]] == [len(x) for x in lines[:3]]
    assert outcome(log, collect=False) == (
        "error",
        "LogError",
        f'{log}:13: a user line needs a "uuid" string',
    )


def test_a_block_goes_whole_to_the_exact_path_only_for_a_line_simdjson_refuses() -> None:
    """A uuid such as `…-8e3e-529650…` has the shape of an overflowing number but sits
    in a string: its block takes the fast path; a real overflowing number does not."""
    from condense_cli.dialects.claude_code.fast import DECODER

    fine = ["overflow shape in a uuid", "overflow shape after a space in a string"]
    fine.append("largest double")
    block = b"\n".join(TRICKY[name] for name in fine) + b"\n"
    decoded = DECODER.decode(block)
    assert decoded is not None
    assert decoded[1] == [TRICKY[name] for name in fine]
    for name in ("overflowing exponent", "overflow after a comma", "overflowing integer"):
        assert DECODER.decode(block + TRICKY[name] + b"\n") is None, name


@pytest.mark.parametrize("block", [64, 300, 4096, 1 << 20])
def test_block_sizes_and_endings(block: int, tmp_path: Path, monkeypatch) -> None:
    """Lines longer than a block, CRLF endings, a BOM, and a torn last line."""
    lines = story()
    for name, data in line_endings(lines, torn=lines[-1][:-9]).items():
        log = tmp_path / f"{name}.jsonl"
        log.write_bytes(data)
        for collect in (True, False):
            results = both_paths(monkeypatch, outcome, log, block, PATHS, collect=collect)
            assert results[FAST] == results[SPLIT] == results[EXACT], name


def test_upto_agrees(tmp_path: Path, monkeypatch) -> None:
    """Up to a line (read in blocks up to it) or a uuid (the whole session, then cut)."""
    lines = story()
    for name, data in line_endings(lines, torn=lines[6][:20]).items():
        log = tmp_path / f"{name}.jsonl"
        log.write_bytes(data)
        count = data.count(b"\n")
        lines_up_to = ("0", "3", "12", str(count - 1), str(count), str(count + 1), "900")
        for upto in (*lines_up_to, "u7", "u15", "nowhere"):
            results = both_paths(monkeypatch, outcome, log, paths=PATHS, upto=upto)
            assert results[FAST] == results[SPLIT] == results[EXACT], (name, upto)


def decoded_here(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The offsets of the blocks this process decodes from now on (a forked child's
    are its own)."""
    from condense_cli.dialects.claude_code import fast

    offsets: list[int] = []
    records_of = fast.records_of

    def noted(block: bytes, offset: int) -> Any:
        offsets.append(offset)
        return records_of(block, offset)

    monkeypatch.setattr(fast, "records_of", noted)
    return offsets


def test_a_big_session_is_read_in_two_processes(tmp_path: Path, monkeypatch) -> None:
    """This process decodes the blocks before `PARENT_SHARE` of the log, a forked child
    the rest, and the session is the exact path's."""
    from condense_cli.dialects.claude_code.fast import PARENT_SHARE

    log = tmp_path / "s.jsonl"
    log.write_bytes(b"\n".join(story() * 4) + b"\n")  # the uuids repeat: problems
    exact = both_paths(monkeypatch, outcome, log, paths=(EXACT,))[EXACT]
    use_path(monkeypatch, SPLIT)
    offsets = decoded_here(monkeypatch)
    assert outcome(log) == exact
    size = log.stat().st_size
    assert offsets and offsets[0] == 0
    assert max(offsets) < PARENT_SHARE * size < max(offsets) + 256 + 400  # a line at most


def test_what_the_child_does_not_send_is_read_here(tmp_path: Path, monkeypatch) -> None:
    import os

    from condense_cli.dialects.claude_code import fast

    log = tmp_path / "s.jsonl"
    log.write_bytes(b"\n".join(story() * 4) + b"\n")
    exact = [both_paths(monkeypatch, outcome, log, paths=(EXACT,), collect=c) for c in (1, 0)]
    use_path(monkeypatch, SPLIT)
    records_of, parent, in_child = fast.records_of, os.getpid(), []

    def fails_in_the_child_after_a_block(block: bytes, offset: int) -> Any:
        if os.getpid() != parent:
            in_child.append(offset)
            if len(in_child) > 1:
                raise RuntimeError("the child fails after its first block")
        return records_of(block, offset)

    monkeypatch.setattr(fast, "records_of", fails_in_the_child_after_a_block)
    offsets = decoded_here(monkeypatch)
    assert [{EXACT: outcome(log, collect=c)} for c in (1, 0)] == exact
    assert in_child == []  # (the child's own list)
    assert max(offsets) > 0.9 * log.stat().st_size  # the end was read here


def corpus_sessions() -> list[Path]:
    return sorted(require_corpus(CORPUS).glob("*.jsonl"))


@pytest.mark.parametrize("block", [4096, 1 << 20])
def test_corpus_sessions_agree(block: int, monkeypatch) -> None:
    sessions = corpus_sessions()
    assert len(sessions) >= 2
    for session in sessions:
        results = both_paths(monkeypatch, outcome, session, block, PATHS)
        assert results[FAST] == results[SPLIT] == results[EXACT], session.name
        assert results[FAST][4]  # a view was written


# Random sessions: built from a few kinds of line, with tricky lines here and there.
steps = st.lists(
    st.sampled_from(["user", "say", "call", "result", "side", "attach", "other", "boundary"]),
    min_size=1,
    max_size=40,
)


def random_session(kinds: list[str]) -> list[bytes]:
    b = Builder()
    calls = 0
    for kind in kinds:
        if kind == "user":
            b.user(f"ask {len(b.lines)}")
        elif kind == "say":
            b.say("ünïcode ✓ answer", f"m{len(b.lines)}")
        elif kind == "call":
            calls += 1
            b.use(f"c{calls}", f"m{calls}")
        elif kind == "result":
            b.result(f"c{calls}", "out")
        elif kind == "side":
            b.user("aside", isSidechain=True)
        elif kind == "attach":
            b.attachment()
        elif kind == "other":
            b.other("queue-operation")
        else:
            b.boundary()
            b.user("SUMMARY", isCompactSummary=True)
    return [orjson.dumps(x) for x in b.lines]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    kinds=steps,
    inserts=st.lists(st.tuples(st.integers(0, 45), st.sampled_from(sorted(TRICKY))), max_size=4),
    cut=st.integers(min_value=0, max_value=40),
    block=st.sampled_from([48, 200, 1000]),
)
def test_random_sessions_are_judged_alike(kinds, inserts, cut, block, tmp_path_factory) -> None:
    lines = random_session(kinds)
    for at, name in inserts:
        lines[at:at] = [TRICKY[name]]
    data = b"\n".join(lines) + b"\n"
    data = data[: len(data) - cut]
    log = tmp_path_factory.mktemp("random") / "s.jsonl"
    log.write_bytes(data)
    with pytest.MonkeyPatch.context() as monkeypatch:
        for collect in (True, False):
            results = both_paths(monkeypatch, outcome, log, block, PATHS, collect=collect)
            assert results[FAST] == results[SPLIT] == results[EXACT]


def session_ids(lines: list[bytes]) -> set[str]:
    """The uuids, message ids and tool call ids of a session."""
    ids: set[str] = set()
    for line in lines:
        data = orjson.loads(line)
        if isinstance(data.get("uuid"), str):
            ids.add(data["uuid"])
        message = data.get("message")
        if isinstance(message, dict):
            if isinstance(message.get("id"), str):
                ids.add(message["id"])
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if isinstance(block, dict) and isinstance(block.get("id"), str):
                    ids.add(block["id"])
    return ids


def test_cli_subprocess_on_a_big_session_prints_what_the_exact_path_prints(
    tmp_path: Path, proc, cli, monkeypatch
) -> None:
    """The real command on a session above FAST_MIN_BYTES (a corpus session repeated
    with fresh ids, compactions and all) prints what the exact path prints in-process."""
    source = CORPUS / "posthog-impact-dashboard.claude-session.jsonl"
    require_corpus(CORPUS)
    lines = source.read_bytes().splitlines()
    log = tmp_path / "big.jsonl"
    log.write_bytes(repeated(lines, 3, session_ids(lines)))
    commands = [
        ("view", "-f", "jsonl"),
        ("check",),
        ("stats", "--no-tokens", "-f", "json"),
        # printed once the log is closed: the condensations' figures are at hand
        ("view", "-f", "json"),
        ("view", "--no-pager"),
        ("run", "--type", "recent_events", "--dry-run", "--force", "-f", "json"),
    ]
    reported_alike(monkeypatch, proc, cli, log)
    fast = printed_alike(monkeypatch, proc, cli, log, commands)
    assert all(done.returncode == 0 for done in fast)
    view = fast[0].stdout.splitlines()
    last_copy = log.read_bytes().splitlines()[-len(lines) :]
    # the newest copy's compaction and chain (a line whose parent is left out relinked)
    assert len(view) == 242 and orjson.loads(view[0])["subtype"] == "compact_boundary"
    uuids = {orjson.loads(x).get("uuid") for x in last_copy}
    assert {orjson.loads(x).get("uuid") for x in view} <= uuids


def test_stats_lets_every_parsed_line_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`stats` parses each line once for its type and text and keeps only the counts:
    a session read by the fast path keeps its lines' bytes, parsed are only the
    compactions' boundaries (their metadata). It used to keep every line parsed
    (227 MB for the 10k-line benchmark session, of 26 MB)."""
    from tests.dialects.claude_code.test_replay import compactions

    use_path(monkeypatch, FAST)
    log = compactions(3).write(tmp_path / "s.jsonl")
    with read_log(str(log), dialect=DIALECT) as replay:
        numbers = replay.stats(None)
        session = replay.session  # type: ignore[attr-defined]
        parsed = [x.number for x in session.lines if x._data is not None]
        assert parsed == [x.number for x in session.lines if x.is_boundary] == [23, 45, 67]
        assert numbers.visible_events == 65 and numbers.chars.view == len("SUMMARY 2done")


def test_a_walk_over_the_view_holds_one_line_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check`, `stats`, `audit` and the messages read a fast-path line when its turn
    comes and keep no copy of it, parsed or not: a never-compacted session's view is
    all of it (they held all of it, parsed: 1.1 GB for a 257 MB session)."""
    use_path(monkeypatch, FAST, block=1 << 20)
    log = uncompacted(40).write(tmp_path / "s.jsonl")
    with read_log(str(log), dialect=DIALECT) as replay:
        events = replay.events  # type: ignore[attr-defined]
        assert len(events) == 1 + 40 * 3 + 1
        stats, conversion, messages = walked(replay)
        assert all(e._data is None and e._raw is None for e in events)
        lines = replay.session.lines  # type: ignore[attr-defined]
        assert all(x._data is None and x._raw is None for x in lines)
    assert stats.view_events == len(events)
    # a call and its word are one response (its result between them), then the
    # running call, the interrupted-call result put in for it, and the reply after it
    assert len(messages) == 1 + 40 * 2 + 3
    assert [c.event for c in conversion.inserted] == [events[-1].key, None]


def uncompacted(turns: int, output_chars: int = 100) -> Builder:
    """A session that never compacted: a task, then `turns` responses of a call, its
    result and a word, then a call still running when the session ended."""
    b = Builder()
    b.user("task")
    for n in range(turns):
        b.use(f"c{n}", f"m{n}")
        b.result(f"c{n}", f"turn {n}: " + "lorem ipsum dolor " * (output_chars // 18))
        b.say("ok", f"m{n}")
    b.use("running", "last")
    return b


def test_cli_subprocess_on_a_big_never_compacted_session_prints_what_the_exact_path_prints(
    tmp_path: Path, proc, cli, monkeypatch
) -> None:
    """The real commands on a session above FAST_MIN_BYTES whose view is all of it,
    read a line at a time, print what the exact path prints in-process (`run` prints
    its views once the log is closed; `diff`, `simulate` and `report` read its lines
    while it is open)."""
    log = uncompacted(1500, 3000).write(tmp_path / "s.jsonl")
    more = [("diff", "--type", "recent_events", "-f", "json")]
    fast = printed_alike(monkeypatch, proc, cli, log, [*WHOLE_VIEW_COMMANDS, *more])
    assert all(done.returncode == 0 for done in fast)
    assert len(orjson.loads(fast[2].stdout)) == 1 + 1500 * 2 + 3


@pytest.mark.parametrize("path", [FAST, EXACT])
def test_a_session_holds_each_repeated_string_once(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line's `parentUuid` is its parent's own `uuid` string, the lines of one
    response share its id, the lines of one type its name, and a tool result the id
    of its parent's call: read in blocks or line by line, equal strings are one."""
    use_path(monkeypatch, path)
    log = tmp_path / "s.jsonl"
    log.write_bytes(b"\n".join(story()) + b"\n")
    with read_log(str(log), dialect=DIALECT) as replay:
        session = replay.session  # type: ignore[attr-defined]
        children = [x for x in session.lines if x.parent in session.by_uuid]
        assert len(children) >= 15
        assert all(x.parent is session.by_uuid[x.parent].uuid for x in children)
        pairs = list(pairwise(session.lines))
        same = [
            (a, b) for a, b in pairs if a.message_id is not None and a.message_id == b.message_id
        ]
        assert same and all(a.message_id is b.message_id for a, b in same)
        first_of_type = {x.type: x.type for x in reversed(session.lines)}
        assert all(x.type is first_of_type[x.type] for x in session.lines)
        answered = [
            (call, use)
            for x in children
            for is_use, call in tool_blocks(x.tools)
            if not is_use
            for _, use in tool_blocks(session.by_uuid[x.parent].tools)
            if use == call
        ]
        assert len(answered) >= 3 and all(call is use for call, use in answered)


# Content whose pairing facts the blocks and the line's `tools` must read alike.
PAIRING_CONTENTS: list[Any] = [
    "plain text",
    [{"type": "text", "text": "x"}, {"type": "tool_use", "id": "c1", "name": "Bash"}],
    [{"type": "tool_use", "id": 5}, {"type": "tool_use", "id": "c2", "name": "Bash"}],
    [{"type": "tool_use"}, {"type": "tool_result", "tool_use_id": "c1"}],
    [{"type": "tool_result", "tool_use_id": "c1"}, {"type": "tool_use", "id": None}],
    [{"type": "tool_result", "tool_use_id": 5}, {"type": "tool_result", "tool_use_id": "c1"}],
    [{"type": "tool_result", "tool_use_id": ["c1"]}],
    [{"type": "tool_result", "tool_use_id": "c1"}, {"type": "tool_use", "id": "c3"}],
    ["not a block", {"type": "tool_result"}],
    [],
]


@pytest.mark.parametrize("path", [FAST, EXACT])
def test_an_event_answers_from_its_line_as_from_its_blocks(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A view's events answer what they pair by (`tool_call_id`, `is_action`,
    `source`) from what their session line read (`Line.tools`, `Line.odd_use`),
    without a parse: as an event made from the parsed line alone does, for odd
    blocks and on the corpus sessions."""
    from condense_cli.dialects.claude_code.events import ClaudeEvent

    b = basic()
    for n, content in enumerate(PAIRING_CONTENTS):
        b.assistant(content if isinstance(content, list) else [], f"p{n}")
        b.user(content)
    logs = [b.write(tmp_path / "odd.jsonl"), *sorted(require_corpus(CORPUS).glob("*.jsonl"))]
    use_path(monkeypatch, path)
    answers = {}
    for log in logs:
        with read_log(str(log)) as replay:
            view = replay.view()
            answers[log] = [(e.tool_call_id, e.is_action, e.source) for e in view]
            alone = [ClaudeEvent(e.data, e.key, None) for e in view]
            assert answers[log] == [(e.tool_call_id, e.is_action, e.source) for e in alone]
            assert all(e.read_from is not None for e in view if not e.is_summary)
    calls = [call for call, _, _ in answers[logs[0]]]
    # c2 follows a tool_use without an id; c3 a result (a tool_use pairs first)
    assert calls.count("c3") == 2 and "c2" not in calls
