"""Codex's fast path (msgspec blocks, items parsed lazily) against the exact path
(orjson line by line): the same history, problems, views and errors on every input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.core.errors import ConfigError, LogError
from condense_cli.core.jsonlines import encode
from condense_cli.dialects import read_log
from condense_cli.dialects.codex.items import CodexEvent
from tests.conftest import require_corpus
from tests.dialects.codex.test_replay import CORPUS, META, TS, call, item, line, output, said, user
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
    reported_alike,
    use_path,
    walked,
)

DIALECT = "codex"
PATHS = (EXACT, FAST, SPLIT)  # a big rollout is decoded in two processes


def outcome(log: Path, collect: bool = True, upto: str | None = None) -> Any:
    """Everything a replay decides about a rollout, or the error it stops with."""
    try:
        with read_log(str(log), dialect=DIALECT, collect=collect, upto=upto) as replay:
            state = replay.state  # type: ignore[attr-defined]
            view = replay.view()
            return (
                [(p.line, p.message, p.severity) for p in replay.problems],
                b"".join(replay.view_lines()),
                [(e.id, e.key, e.cause, e.type, e.tool_call_id, encode(e.data)) for e in view],
                [
                    (c.id, c.line, c.forgotten_events, c.summary_chars, c.view_size)
                    for c in replay.condensations
                ],
                (state.model, state.tokens_seen, state.token_line, state.request_pending),
                (state.paginated, state.next_ordinal, state.unnumbered, replay.lines),  # type: ignore[attr-defined]
                [
                    (s.id, [e.id for e in s.before], [e.id for e in s.forgotten], s.summary)
                    for s in replay.condensation_steps()
                ],
                [
                    None if e is None else (e.id, e.key, e.raw, e.cause, e.tool_call_id, e.text)
                    for e in replay.history()
                ],
                converted(replay.messages(view)),
            )
    except (LogError, ConfigError) as exc:
        return ("error", type(exc).__name__, str(exc))


def story(paginated: bool = False) -> list[bytes]:
    """A rollout with turns, parallel calls, a token count, a rollback, a compaction
    with a replacement history, a legacy one, a request, and more turns after them."""
    lines = [
        META
        if not paginated
        else line("session_meta", {**META["payload"], "history_mode": "paginated"}),
        item(user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>")),
        line("turn_context", {"cwd": "/w", "model": "gpt-5.5"}),
        item(user("fix the bug in héllo ✓ 日本")),
        line("event_msg", {"type": "user_message", "message": "fix the bug"}),
        item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]}),
        item(call("c1", "pytest -q")),
        item(call("c2", "ls")),
        item(output("c2", "a.py")),
        item(output("c1", "FAILED tests/test_a.py::test_x - ValueError: bad")),
        line(
            "event_msg",
            {"type": "token_count", "info": {"last_token_usage": {"total_tokens": 900}}},
        ),
        item({"type": "ghost_snapshot", "ghost_commit": {"id": "g"}}),
        item({"type": "message", "role": "system", "content": "not sent"}),
        item(user("now the docs")),
        item(said("on it")),
        line("event_msg", {"type": "thread_rolled_back", "num_turns": 1}),
        item(user("the docs, then")),
        item(call("c3")),
        item(output("c3", "x" * 300)),
        line(
            "compacted",
            {"message": "", "replacement_history": [user("fix the bug"), user("SUMMARY")]},
        ),
        line("event_msg", {"type": "context_compacted"}),
        line("turn_context", {"cwd": "/w", "model": "gpt-5.6"}),
        item(said("resumed")),
        item(call("c4")),
        line("condensation_request", {"requested_by": "condense"}),
        line("compacted", {"message": "a legacy summary"}),
        item(output("c9", "an answer to nothing")),
        item(said("end")),
        line("world_state", {"x": 1}),
    ]
    if paginated:
        lines = [{**x, "ordinal": i} for i, x in enumerate(lines)]
    return [orjson.dumps(x) for x in lines]


def response(payload: bytes, after: bytes = b"") -> bytes:
    return (
        b'{"timestamp":"'
        + TS.encode()
        + b'","type":"response_item","payload":'
        + payload
        + after
        + b"}"
    )


# Lines the fast path must judge exactly as the exact path does, each placed in the
# middle of an ordinary rollout.
TRICKY = {
    "overflowing exponent": response(b'{"type":"message","role":"user","x":1e400}'),
    "overflowing integer": response(b'{"type":"message","role":"user","n":' + b"9" * 400 + b"}"),
    "invalid UTF-8 in a skipped field": response(b'{"type":"message","z":"\xc3("}'),
    "lone surrogate escape": response(b'{"type":"message","z":"\\ud800"}'),
    "trailing garbage": response(b'{"type":"message"}', b"} x"),
    "two objects": b'{"type":"world_state"}{"type":"world_state"}',
    "carriage return": response(b'{"type":"message","role":"user","content":"x"}', b"\r"),
    "blank": b"",
    "spaces": b"   ",
    "split object": response(b'{"type":"message",\n"role":"user"}'),
    "deep nesting": response(b'{"type":"message","x":' + b"[" * 1000 + b"]" * 1000 + b"}"),
    "not an object": b'["response_item"]',
    "null": b"null",
    "duplicate type key": b'{"type":"response_item","type":"world_state","payload":{}}',
    "duplicate payload key": response(b'{"type":"message"}', b',"payload":{"type":"reasoning"}'),
    "duplicate item type": response(b'{"type":"message","type":"function_call","call_id":"c7"}'),
    "duplicate call id": response(b'{"type":"function_call","call_id":"c7","call_id":"c8"}'),
    "type a number": b'{"type":5,"payload":{}}',
    "no type": b'{"payload":{"type":"message"}}',
    "payload a string": b'{"type":"response_item","payload":"message"}',
    "payload null": b'{"type":"response_item","payload":null}',
    "no payload": b'{"type":"response_item"}',
    "item type a number": response(b'{"type":5}'),
    "item type unknown": response(b'{"type":"hologram"}'),
    "item type a list": response(b'{"type":["message"]}'),
    "role a number": response(b'{"type":"message","role":5,"content":"x"}'),
    "call id a number": response(b'{"type":"function_call","call_id":5}'),
    "call id a 20-digit number": response(
        b'{"type":"function_call_output","call_id":18446744073709551616}'
    ),
    "call id null": response(b'{"type":"function_call","call_id":null}'),
    "an answered call": response(b'{"type":"function_call_output","call_id":"c4","output":"ok"}'),
    "a system message": response(b'{"type":"message","role":"system","content":"s"}'),
    "event_msg payload a list": b'{"type":"event_msg","payload":[1]}',
    "event_msg type a number": b'{"type":"event_msg","payload":{"type":5}}',
    "a token count": b'{"type":"event_msg","payload":{"type":"token_count","info":null}}',
    "a rollback": b'{"type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":9}}',
    "model a number": b'{"type":"turn_context","payload":{"model":5}}',
    "model a string": b'{"type":"turn_context","payload":{"model":"o9"}}',
    "turn_context payload a string": b'{"type":"turn_context","payload":"x"}',
    "unknown line type": b'{"type":"hologram","payload":{}}',
    "a request": b'{"type":"condensation_request","payload":{}}',
    "a second session_meta": b'{"type":"session_meta","payload":{"id":"s2"}}',
}
# Items Codex cannot decode (it skips their lines), and their near misses it can.
TEXT = b'[{"type":"input_text","text":"hi"}]'
UNDECODABLE = {
    "message without a role": response(b'{"type":"message","content":' + TEXT + b"}"),
    "message, role a number": response(b'{"type":"message","role":1,"content":' + TEXT + b"}"),
    "message, content a string": response(b'{"type":"message","role":"user","content":"hi"}'),
    "message, a part of unknown type": response(
        b'{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},'
        b'{"type":"hologram"}]}'
    ),
    "message, a part without text": response(
        b'{"type":"message","role":"user","content":[{"type":"output_text"}]}'
    ),
    "message, a part not an object": response(b'{"type":"message","role":"user","content":[5]}'),
    "message, an image": response(
        b'{"type":"message","role":"user","content":[{"type":"input_image","image_url":"u"}]}'
    ),
    "call without arguments": response(b'{"type":"function_call","name":"x","call_id":"c"}'),
    "call, arguments encrypted": response(
        b'{"type":"function_call","name":"x","call_id":"c","encrypted_function_args":"e"}'
    ),
    "output a number": response(b'{"type":"function_call_output","call_id":"c","output":5}'),
    "output an array": response(b'{"type":"function_call_output","call_id":"c","output":[]}'),
    "custom call without input": response(b'{"type":"custom_tool_call","name":"x","call_id":"c"}'),
    "reasoning without summary": response(b'{"type":"reasoning","encrypted_content":"e"}'),
    "compaction without content": response(b'{"type":"compaction"}'),
    "type a number": response(b'{"type":5}'),
}


@pytest.mark.parametrize("name", sorted(UNDECODABLE))
def test_an_item_codex_may_not_decode_is_judged_alike_on_both_paths(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged_alike(
        monkeypatch, outcome, tmp_path / "rollout.jsonl", story(), 12, UNDECODABLE[name], PATHS
    )


def test_a_line_codex_cannot_decode_is_skipped_with_a_warning(tmp_path: Path) -> None:
    lines = story()
    lines += [UNDECODABLE["message without a role"], UNDECODABLE["message, an image"]]
    skipped, image = len(lines) - 1, len(lines)
    log = write(tmp_path, lines)
    with read_log(str(log), dialect=DIALECT, collect=True) as replay:
        view = [e.line for e in replay.view()]  # type: ignore[attr-defined]
        problems = replay.problems
    assert view[-1] == image and skipped not in view  # the image decodes
    assert [(p.line, p.severity, p.message) for p in problems if p.line == skipped] == [
        (
            skipped,
            "warning",
            "Codex cannot decode this line and skips it: this response item is a message "
            "without a string role",
        )
    ]


# The same, for a paginated rollout: ordinals right and wrong.
ORDINALS = {
    "ordinal missing": response(b'{"type":"message","role":"user","content":"x"}'),
    "ordinal a string": response(b'{"type":"message"}', b',"ordinal":"12"'),
    "ordinal negative": response(b'{"type":"message"}', b',"ordinal":-1'),
    "ordinal a float": response(b'{"type":"message"}', b',"ordinal":12.0'),
    "ordinal true": response(b'{"type":"message"}', b',"ordinal":true'),
    "ordinal 20 digits": response(b'{"type":"message"}', b',"ordinal":18446744073709551616'),
    "ordinal too far": response(b'{"type":"message"}', b',"ordinal":99'),
    "ordinal repeated": response(b'{"type":"message"}', b',"ordinal":11'),
    "ordinal null": response(b'{"type":"message"}', b',"ordinal":null'),
}


def write(tmp_path: Path, lines: list[bytes]) -> Path:
    log = tmp_path / "rollout.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    return log


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_a_tricky_line_is_judged_alike_on_both_paths(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged_alike(monkeypatch, outcome, tmp_path / "rollout.jsonl", story(), 12, TRICKY[name], PATHS)


@pytest.mark.parametrize("name", sorted(ORDINALS))
def test_a_paginated_rollouts_ordinals_are_judged_alike_on_both_paths(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = story(paginated=True)
    lines[12:12] = [ORDINALS[name]]
    log = write(tmp_path, lines)
    results = both_paths(monkeypatch, outcome, log, paths=PATHS)
    assert results[FAST] == results[SPLIT] == results[EXACT], name


def test_upto_agrees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Up to a line (read in blocks up to it) or an item (read line by line)."""
    lines = story()
    for name, data in line_endings(lines, torn=lines[6][:20]).items():
        log = tmp_path / f"{name}.jsonl"
        log.write_bytes(data)
        count = data.count(b"\n")
        for upto in ("0", "1", "9", "20", str(count - 1), str(count), str(count + 1), "c3"):
            results = both_paths(monkeypatch, outcome, log, 300, PATHS, upto=upto)
            assert results[FAST] == results[SPLIT] == results[EXACT], (name, upto)


@pytest.mark.parametrize("block", [64, 300, 4096, 1 << 20])
def test_block_sizes_and_endings(block: int, tmp_path: Path, monkeypatch) -> None:
    """Lines longer than a block, CRLF endings, a BOM, blank lines, a torn last line."""
    lines = story()
    for name, data in line_endings(lines, torn=lines[6][:20]).items():
        log = tmp_path / f"{name}.jsonl"
        log.write_bytes(data)
        results = both_paths(monkeypatch, outcome, log, block, PATHS)
        assert results[FAST] == results[SPLIT] == results[EXACT], name


def test_the_fast_path_keeps_items_unparsed_until_asked(tmp_path: Path, monkeypatch) -> None:
    """The checks above must not pass only because every line fell back: ordinary
    items are neither parsed nor kept until the view is asked for, then read back."""
    lines = story()
    log = write(tmp_path, lines)
    use_path(monkeypatch, FAST, block=1 << 20)
    with read_log(str(log), dialect=DIALECT, collect=True) as replay:
        history = replay.state.history  # type: ignore[attr-defined]
        fast = [e for e in history if e.fast_type is not None]
        assert [e.line for e in fast] == [27, 28]  # after the last compaction (line 26)
        assert [(e._data, e._raw) for e in fast] == [(None, None), (None, None)]
        view = replay.view()
        assert [e.data for e in fast] == [orjson.loads(x)["payload"] for x in lines[26:28]]
        assert [(e._data, e._raw) for e in fast] == [(None, None), (None, None)]
    assert len(view) == len(history)


def test_a_big_rollout_is_read_in_two_processes_but_not_its_walks(
    tmp_path: Path, monkeypatch
) -> None:
    """The read decodes the blocks before `PARENT_SHARE` of the rollout here and a
    forked child the rest; a walk of its history (or steps: `audit` runs those in two
    processes of its own) decodes every block here; all read as the exact path does."""
    from condense_cli.dialects.codex import fast

    log = write(tmp_path, [orjson.dumps(x) for x in uncompacted(40)])
    exact = both_paths(monkeypatch, outcome, log, paths=(EXACT,))[EXACT]
    use_path(monkeypatch, SPLIT)
    assert outcome(log) == exact
    offsets: list[int] = []  # the blocks decoded in this process
    records_of = fast.records_of

    def noted(block: bytes, offset: int) -> Any:
        offsets.append(offset)
        return records_of(block, offset)

    monkeypatch.setattr(fast, "records_of", noted)
    size = log.stat().st_size
    with read_log(str(log), dialect=DIALECT, collect=True) as replay:
        assert offsets[0] == 0
        assert max(offsets) < fast.PARENT_SHARE * size < max(offsets) + 256 + 400
        offsets.clear()
        assert len(list(replay.history())) == len(exact[2])
        assert max(offsets) > 0.9 * size


def test_a_walk_over_the_view_holds_one_item_at_a_time(tmp_path: Path, monkeypatch) -> None:
    """`check`, `stats` and `audit` read a fast-path item when its turn comes and keep
    no copy of it: a never-compacted view is the whole rollout (they held all of it,
    288-322 MB for a 188 MB rollout)."""
    lines = [orjson.dumps(x) for x in uncompacted(40)]
    log = write(tmp_path, lines)
    use_path(monkeypatch, FAST, block=1 << 20)
    with read_log(str(log), dialect=DIALECT, collect=True) as replay:
        fast = [e for e in replay.state.history if e.fast_type is not None]  # type: ignore[attr-defined]
        assert len(fast) == 40 * 4 + 1
        stats, conversion, messages = walked(replay)
        assert all(e._data is None and e._raw is None for e in fast)
    assert stats.view_events == len(fast)
    assert len(messages) == 40 * 4 + 1  # the last call joins the last answer, "aborted"
    assert messages[-1] == {
        "role": "tool",
        "content": "aborted",
        "tool_call_id": "unanswered",
        "name": "exec_command",
    }
    assert [c.reason for c in conversion.inserted] == [
        'call unanswered has no output: Codex sends "aborted" for it'
    ]


@pytest.mark.parametrize("path", [EXACT, FAST])
def test_a_history_holds_no_item_parsed(path: str, tmp_path: Path, monkeypatch) -> None:
    """`simulate` and `report` hold the whole history: each item reads its line back
    when asked and keeps no copy (a history held every payload and line: 513 MB for
    a 190 MB rollout)."""
    log = write(tmp_path, [orjson.dumps(x) for x in uncompacted(40)])
    use_path(monkeypatch, path, block=1 << 20)
    with read_log(str(log), dialect=DIALECT) as replay:
        history = [e for e in replay.history() if isinstance(e, CodexEvent)]
        texts = [e.text for e in history]
        causes = [e.cause for e in history]
        assert all(e._data is None and e._raw is None for e in history)
    assert len(history) == 40 * 4 + 1
    assert texts[:2] == ["question 0", "exec_command(cat f0.py)"]
    assert texts[2].startswith("turn 0: lorem ipsum")
    assert causes[:4] == [None, None, 1, None]  # the output answers the call's key


def uncompacted(turns: int, output_chars: int = 100) -> list[dict[str, Any]]:
    """A rollout that never compacted: `turns` turns of a question, a call, its output
    and an answer, then a call with no output."""
    lines = [META, line("turn_context", {"cwd": "/w", "model": "gpt-5.5"})]
    for n in range(turns):
        text = f"turn {n}: " + "lorem ipsum dolor " * (output_chars // 18)
        lines += [
            item(user(f"question {n}")),
            item(call(f"c{n}", f"cat f{n}.py")),
            item(output(f"c{n}", text)),
            item(said(f"answer {n}")),
        ]
    return [*lines, item(call("unanswered"))]


def test_cli_subprocess_on_a_big_never_compacted_rollout_prints_what_the_exact_path_prints(
    tmp_path: Path, proc, cli, monkeypatch
) -> None:
    """The real commands on a rollout above FAST_MIN_BYTES whose view is all of it,
    printed once its items are read one at a time, print what the exact path prints
    in-process (`run` prints its views once the log is closed; `simulate` and `report`
    read the history's items while it is open)."""
    log = write(tmp_path, [orjson.dumps(x) for x in uncompacted(2200, 2000)])
    assert b"question 2199" in reported_alike(monkeypatch, proc, cli, log)
    fast = printed_alike(monkeypatch, proc, cli, log, WHOLE_VIEW_COMMANDS)
    assert fast[4].returncode == 0 and b"'unanswered' has no output" in fast[4].stdout
    assert len(orjson.loads(fast[2].stdout)) == 2200 * 4 + 1


@pytest.mark.parametrize("name", ["FundWise.codex-session.jsonl", "edgerunner.codex-session.jsonl"])
def test_corpus_rollouts_read_alike_on_both_paths(name: str, monkeypatch) -> None:
    require_corpus(CORPUS)
    results = both_paths(monkeypatch, outcome, CORPUS / name, 4096, PATHS)
    assert results[FAST] == results[SPLIT] == results[EXACT]
    assert results[FAST][0] is not None and results[FAST][0] != "error"


def test_a_compaction_step_reads_back_only_items_of_a_kind_it_kept(
    tmp_path: Path, monkeypatch
) -> None:
    """A step finds what a compaction forgot by comparing items; an item of a kind the
    compaction kept none of (here calls, outputs, reasoning) is forgotten unread."""
    log = write(tmp_path, story())
    use_path(monkeypatch, FAST, block=1 << 20)
    parsed: list[str | None] = []
    parse = CodexEvent._parse

    def counted(event: CodexEvent) -> dict[str, Any]:
        parsed.append(event.fast_type)
        return parse(event)

    monkeypatch.setattr(CodexEvent, "_parse", counted)
    with read_log(str(log), dialect=DIALECT, collect=True) as replay:
        parsed.clear()
        steps = list(replay.condensation_steps())
        gone = [[e.item_type for e in step.forgotten] for step in steps]
    calls, outputs = ["function_call"] * 2, ["function_call_output"] * 2
    assert gone == [
        ["message", "message", "reasoning", *calls, *outputs, "message", *calls[1:], *outputs[1:]],
        ["message", "function_call"],
    ]
    assert set(parsed) == {"message"}
