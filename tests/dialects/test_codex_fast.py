"""Codex's fast path (msgspec blocks, items parsed lazily) against the exact path
(orjson line by line): the same history, problems, view and errors on every input."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense_cli import fastlines
from condense_cli.dialects import codex, read_log
from condense_cli.errors import ConfigError, LogError
from tests.conftest import ROOT, require_corpus
from tests.dialects.fast_paths import EXACT, FAST, repeated, use_path
from tests.dialects.test_codex import (
    CORPUS,
    META,
    PLAIN,
    TS,
    call,
    item,
    line,
    output,
    said,
    user,
)

DIALECT = "codex"


def outcome(log: Path, collect: bool = True, upto: str | None = None) -> Any:
    """Everything a replay decides about a rollout, or the error it stops with."""
    try:
        with read_log(str(log), dialect=DIALECT, collect=collect, upto=upto) as replay:
            state = replay.state  # type: ignore[attr-defined]
            history = [
                (e.line, e.sub, e.raw, e.item_type, e.tool_call_id, e.summary, list(e.data))
                for e in state.history
            ]
            view = replay.view()
            return (
                replay.lines,  # type: ignore[attr-defined]
                history,
                [(p.line, p.message, p.severity) for p in replay.problems],
                b"".join(replay.view_lines()),
                [(e.key, e.id, e.answers, e.is_summary, e.raw) for e in view],
                (view.summary_offset, view.unhandled_request, state.requests, state.tokens_seen),
                [(c.line, c.before, c.after, c.summary_chars, c.says) for c in state.compactions],
                [None if e is None else (e.key, e.raw) for e in replay.history()],
            )
    except (LogError, ConfigError) as exc:
        return ("error", type(exc).__name__, str(exc))


def both_paths(
    monkeypatch: pytest.MonkeyPatch, log: Path, block: int = 256, **read: Any
) -> dict[str, Any]:
    results = {}
    monkeypatch.setattr(codex, "_now", lambda: TS)  # the time stamp of a pending request
    for path in (EXACT, FAST):
        use_path(monkeypatch, path, block)
        results[path] = outcome(log, **read)
    return results


def story() -> list[bytes]:
    """A rollout with token counts, a compaction, a rollback, a request, a system
    message, a ghost snapshot and an unanswered call."""
    lines = [
        *PLAIN,
        line(
            "event_msg", {"type": "token_count", "info": {"last_token_usage": {"total_tokens": 9}}}
        ),
        item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "héllo ✓ 日本"}]}),
        item({"type": "message", "role": "system", "content": []}),
        item({"type": "ghost_snapshot", "ghost_commit": {}}),
        item(user("second")),
        item(call("c2")),
        item(output("c2", "x" * 300)),
        line("compacted", {"message": "", "replacement_history": [user("second"), said("ok")]}),
        line("event_msg", {"type": "context_compacted"}),
        line("condensation_request", {"requested_by": "condense"}),
        item(user("third")),
        item(said("answer")),
        item(user("fourth")),
        line("event_msg", {"type": "thread_rolled_back", "num_turns": 1}),
        item({"type": "custom_tool_call", "name": "apply_patch", "input": "*", "call_id": "c3"}),
        item(output("c9", "an answer to nothing")),
        line("world_state", {"x": 1}),
    ]
    return [orjson.dumps(x) for x in lines]


ITEM = b'{"type":"response_item","payload":{"type":"message","role":"user","content":[]'


def with_item(after: bytes) -> bytes:
    """A user message item, then `after` (more payload fields and the line's end)."""
    return ITEM + after


# Lines the fast path must judge exactly as the exact path does, each placed in the
# middle of an ordinary rollout.
TRICKY = {
    "overflowing exponent": with_item(b',"cost":1e400}}'),
    "overflow after a space": with_item(b',"cost": 1e400}}'),
    "overflowing integer": with_item(b"}," + b'"n":' + b"9" * 400 + b"}"),
    "largest double": with_item(b',"x":1.7976931348623157e308}}'),
    "underflowing exponent": with_item(b',"x":1e-400}}'),
    "overflow shape in a uuid": with_item(b',"x":"c610adf4-81d8-4e93-8e3e-529650ef9145"}}'),
    "invalid UTF-8": with_item(b',"x":"\xff"}}'),
    "invalid UTF-8 in a read field": b'{"type":"response_item","payload":{"type":"\xff"}}',
    "encoded surrogate": with_item(b',"x":"\xed\xa0\x80"}}'),
    "lone surrogate escape": with_item(b',"x":"\\ud800"}}'),
    "trailing garbage": with_item(b"}} x"),
    "two objects": with_item(b"}}") + with_item(b"}}"),
    "leading space": b" " + with_item(b"}}"),
    "trailing space": with_item(b"}} "),
    "carriage return": with_item(b"}}\r"),
    "blank": b"",
    "spaces": b"   ",
    "split object": with_item(b"\n}}"),
    "two objects then a split one": with_item(b"}}") + b'{"type":"world_state",\n"payload":{}}',
    "duplicate type key": b'{"type":"compacted","type":"response_item","payload":{"type":"x"}}',
    "duplicate payload key": b'{"type":"response_item","payload":5,"payload":'
    + orjson.dumps(said("dup"))
    + b"}",
    "deep nesting": with_item(b',"x":' + b"[" * 1000 + b"]" * 1000 + b"}}"),
    "NaN": with_item(b',"x":NaN}}'),
    "not an object": b'["response_item"]',
    "null": b"null",
    # wrong types of each field the fast path reads
    "type a number": b'{"type":5,"payload":{}}',
    "type a list": b'{"type":["response_item"],"payload":{}}',
    "no type": b'{"payload":{"type":"message"}}',
    "unknown line type": b'{"type":"mystery","payload":{}}',
    "payload a string": b'{"type":"response_item","payload":"x"}',
    "payload null": b'{"type":"response_item","payload":null}',
    "no payload": b'{"type":"turn_context"}',
    "payload of an unknown line a list": b'{"type":"mystery","payload":[1]}',
    "item type a number": b'{"type":"response_item","payload":{"type":5}}',
    "item type a list": b'{"type":"response_item","payload":{"type":["message"]}}',
    "unknown item type": b'{"type":"response_item","payload":{"type":"hologram"}}',
    "role a number": b'{"type":"response_item","payload":{"type":"message","role":5}}',
    "call_id a number": b'{"type":"response_item","payload":{"type":"function_call","call_id":5}}',
    "call_id of a message": b'{"type":"response_item","payload":{"type":"message","call_id":"c1"}}',
    "output of an earlier call": orjson.dumps(item(output("c1", "again"))),
    "event type a list": b'{"type":"event_msg","payload":{"type":["token_count"]}}',
    "token count": b'{"type":"event_msg","payload":{"type":"token_count","info":null}}',
    "rollback": b'{"type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":2}}',
    "legacy compaction": b'{"type":"compacted","payload":{"message":"so far"}}',
    "bad compaction": b'{"type":"compacted","payload":{"replacement_history":[1]}}',
    "a request": b'{"type":"condensation_request"}',
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_a_tricky_line_is_judged_alike_on_both_paths(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = story()
    lines[10:10] = [TRICKY[name]]
    log = tmp_path / "r.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    for collect in (True, False):
        results = both_paths(monkeypatch, log, collect=collect)
        assert results[FAST] == results[EXACT], name


PROBLEMS = [
    (11, 'a response item needs a string "type", not an integer'),
    (
        25,
        "function_call_output for call 'c9' has no call before it in the view; "
        "the model would see an answer to nothing",
    ),
    (
        24,
        "custom_tool_call 'c3' has no output in the view; "
        'Codex answers it "aborted" when the session is resumed',
    ),
]


def test_the_fast_path_reads_items_lazily_and_reports_a_bad_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exactness checks above must not pass only because every block fell back."""
    lines = story()
    lines[10:10] = [TRICKY["item type a number"]]
    log = tmp_path / "r.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    use_path(monkeypatch, FAST, block=1 << 20)
    with read_log(str(log), dialect=DIALECT, collect=True) as replay:
        state = replay.state  # type: ignore[attr-defined]
        assert [(p.line, p.message) for p in replay.problems] == PROBLEMS
        assert [e._data for e in state.history[-2:]] == [None, None]  # not parsed
    assert outcome(log, collect=False) == (
        "error",
        "LogError",
        f'{log}:11: a response item needs a string "type", not an integer',
    )


@pytest.mark.parametrize("block", [64, 300, 4096, 1 << 20])
def test_block_sizes_and_endings(block: int, tmp_path: Path, monkeypatch) -> None:
    """Lines longer than a block, CRLF endings, a BOM, and a torn last line."""
    lines = story()
    variants = {
        "lf": b"\n".join(lines) + b"\n",
        "crlf": b"\r\n".join(lines) + b"\r\n",
        "bom": b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n",
        "torn": b"\n".join(lines) + b"\n" + lines[-1][:-9],
        "no final newline": b"\n".join(lines),
        "blank lines": b"\n\n".join(lines) + b"\n\n",
    }
    for name, data in variants.items():
        log = tmp_path / f"{name}.jsonl"
        log.write_bytes(data)
        for collect in (True, False):
            results = both_paths(monkeypatch, log, block=block, collect=collect)
            assert results[FAST] == results[EXACT], name


def test_upto_agrees(tmp_path: Path, monkeypatch) -> None:
    log = tmp_path / "r.jsonl"
    log.write_bytes(b"\n".join(story()) + b"\n")
    for upto in ("3", "12", "c2", "c3", "nowhere"):
        results = both_paths(monkeypatch, log, upto=upto)
        assert results[FAST] == results[EXACT], upto


@pytest.mark.parametrize("block", [4096, 1 << 20])
def test_corpus_rollouts_agree(block: int, monkeypatch) -> None:
    rollouts = sorted(require_corpus(CORPUS).glob("*.jsonl"))
    assert len(rollouts) >= 2
    rollouts.append(ROOT / "tests" / "fixtures" / "edgerunner-remote-compaction.tail.jsonl")
    for rollout in rollouts:
        results = both_paths(monkeypatch, rollout, block=block)
        assert results[FAST] == results[EXACT], rollout.name
        assert results[FAST][3]  # a view was written


# Random rollouts: built from a few kinds of line, with tricky lines here and there.
KINDS = {
    "user": item(user("ask ünï ✓")),
    "say": item(said("answer")),
    "call": item(call("c1")),
    "output": item(output("c1")),
    "tokens": line("event_msg", {"type": "token_count", "info": {"last_token_usage": {}}}),
    "event": line("event_msg", {"type": "agent_message", "message": "hi"}),
    "context": line("turn_context", {"cwd": "/w"}),
    "compact": line("compacted", {"message": "s", "replacement_history": [user("again")]}),
    "rollback": line("event_msg", {"type": "thread_rolled_back", "num_turns": 1}),
    "request": line("condensation_request", {}),
}


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    kinds=st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=40),
    inserts=st.lists(st.tuples(st.integers(0, 45), st.sampled_from(sorted(TRICKY))), max_size=4),
    cut=st.integers(min_value=0, max_value=40),
    block=st.sampled_from([48, 200, 1000]),
)
def test_random_rollouts_are_judged_alike(kinds, inserts, cut, block, tmp_path_factory) -> None:
    lines = [orjson.dumps(META)] + [orjson.dumps(KINDS[k]) for k in kinds]
    for at, name in inserts:
        lines[at:at] = [TRICKY[name]]
    data = b"\n".join(lines) + b"\n"
    data = data[: len(data) - cut]
    log = tmp_path_factory.mktemp("random") / "r.jsonl"
    log.write_bytes(data)
    with pytest.MonkeyPatch.context() as monkeypatch:
        for collect in (True, False):
            results = both_paths(monkeypatch, log, block=block, collect=collect)
            assert results[FAST] == results[EXACT]


def rollout_ids(lines: list[bytes]) -> set[str]:
    """The call ids and item ids of a rollout."""
    ids: set[str] = set()
    for raw in lines:
        payload = orjson.loads(raw).get("payload")
        if isinstance(payload, dict):
            ids |= {v for k in ("call_id", "id") if isinstance(v := payload.get(k), str)}
    return ids


def test_cli_subprocess_on_a_big_rollout_prints_what_the_exact_path_prints(
    tmp_path: Path, proc, cli, monkeypatch
) -> None:
    """The real command on a rollout above FAST_MIN_BYTES (a corpus rollout repeated
    with fresh ids) prints what the exact path prints in-process."""
    source = require_corpus(CORPUS) / "edgerunner.codex-session.jsonl"
    lines = source.read_bytes().splitlines()
    log = tmp_path / "big.jsonl"
    log.write_bytes(repeated(lines, 3, rollout_ids(lines)))
    assert log.stat().st_size > fastlines.FAST_MIN_BYTES
    commands = [
        ("view", log, "-f", "jsonl"),
        ("check", log),
        ("stats", log, "--no-tokens", "-f", "json"),
    ]
    fast = [proc(*command, env={**os.environ, "COLUMNS": "100"}) for command in commands]
    use_path(monkeypatch, EXACT, block=1 << 20)
    for command, done in zip(commands, fast, strict=True):
        exact = cli(*command)
        assert done.returncode == exact.exit_code, done.stderr
        assert done.stdout == exact.stdout_bytes
    items = [x for x in log.read_bytes().splitlines() if x.startswith(b'{"timestamp"')]
    view = fast[0].stdout.splitlines()
    assert len(view) == 3 * 573 and set(view) <= set(items)  # every copy's items
