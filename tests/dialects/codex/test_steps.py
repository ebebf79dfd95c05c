"""A rollout's compaction steps from any compaction on: read from the compaction
before it when that one replaced the history, they are the steps the whole walk
gives, on both reading paths."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.core.events import Event, model_text
from condense_cli.core.logfile import LogSource
from condense_cli.dialects import counting, read_log
from condense_cli.dialects.base import CondensationStep
from condense_cli.dialects.codex.items import CodexEvent
from tests.dialects.codex.test_replay import META, call, item, line, output, said, user
from tests.dialects.fast_paths import EXACT, FAST, SPLIT, use_path


def seen(step: CondensationStep) -> Any:
    """All a step holds, comparable."""

    def view(events: Any) -> Any:
        return [(e.key, e.text, e.is_summary, e.answers) for e in events], events.summary_offset

    forgotten = [(e.key, e.text) for e in step.forgotten]
    return step.id, step.line, view(step.before), forgotten, step.summary, view(step.after)


def compacted(*kept: str) -> dict[str, Any]:
    history = [user(text) for text in kept] + [user(f"SUMMARY of {len(kept)}")]
    return line("compacted", {"message": "", "replacement_history": history})


def turns(first: int, count: int) -> list[dict[str, Any]]:
    """User turns with calls and outputs, and what the agent said."""
    lines = []
    for n in range(first, first + count):
        lines += [item(user(f"task {n}")), item(call(f"c{n}", f"pytest -k t{n}"))]
        lines += [item(output(f"c{n}", f"FAILED t{n}" if n % 3 else "ok")), item(said(f"d{n}"))]
    return lines


ROLLOUT = [
    META,
    line("turn_context", {"cwd": "/w", "model": "gpt-5.5"}),
    *turns(0, 4),
    compacted("task 0"),
    *turns(4, 3),
    line("event_msg", {"type": "thread_rolled_back", "num_turns": 1}),
    *turns(7, 2),
    line("condensation_request", {"requested_by": "condense"}),
    compacted("task 4", "task 7"),
    *turns(9, 3),
    line("compacted", {"message": "a legacy summary"}),  # keeps the user turns
    *turns(12, 2),
    compacted("task 12"),
    item(output("c99", "an answer to nothing")),
    *turns(14, 3),
    line("event_msg", {"type": "thread_rolled_back", "num_turns": 9}),  # past the compaction
    *turns(17, 1),
    compacted(),
    *turns(18, 2),
]


def every_start(path: Path) -> Iterator[tuple[int, list[Any], list[Any]]]:
    with read_log(str(path)) as replay:
        assert replay.steps_start_anywhere
        whole = [seen(s) for s in replay.condensation_steps()]
        assert len(whole) == replay.step_count
        for first in range(1, len(whole) + 1):
            yield (
                first,
                whole[first - 1 :],
                [seen(s) for s in replay.condensation_steps_from(first)],
            )


@pytest.mark.parametrize("path", [EXACT, FAST])
def test_every_start_gives_the_walks_steps(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replacement histories, a legacy compaction (the next start walks from the top),
    rollbacks (one past a compaction), a request and an unanswered output."""
    use_path(monkeypatch, path, block=512)
    log = tmp_path / "rollout.jsonl"
    log.write_bytes(b"".join(orjson.dumps(x) + b"\r\n" for x in ROLLOUT))
    starts = list(every_start(log))
    assert len(starts) == 5
    for first, whole, from_there in starts:
        assert from_there == whole, f"from compaction {first}"


def test_a_start_reads_from_the_compaction_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk from compaction 3 reads lines from compaction 2 on; compaction 4, after
    a legacy compaction (which keeps what came before it), walks from the top."""
    use_path(monkeypatch, EXACT)
    log = tmp_path / "rollout.jsonl"
    log.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in ROLLOUT))
    starts: list[int] = []
    lines = LogSource.raw_lines

    def raw_lines(self: LogSource, start: int = 0) -> Iterator[bytes]:
        starts.append(start)
        return lines(self, start)

    with read_log(str(log)) as replay:
        monkeypatch.setattr(LogSource, "raw_lines", raw_lines)
        compactions = [n for n, x in enumerate(ROLLOUT, 1) if x["type"] == "compacted"]
        list(replay.condensation_steps_from(3))
        list(replay.condensation_steps_from(4))
        second = replay.source.line_start(compactions[1])  # type: ignore[attr-defined]
    assert starts == [second, 0]
    assert log.read_bytes()[second:].startswith(orjson.dumps(ROLLOUT[compactions[1] - 1]))


def test_a_line_start_is_found_past_many_chunks(tmp_path: Path) -> None:
    log = tmp_path / "lines.jsonl"
    data = b"".join(b"%d%s\n" % (i, b"x" * (i % 700)) for i in range(20_000))
    log.write_bytes(data)
    starts = [0]
    for raw in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(raw))
    with LogSource.open(str(log)) as source:
        for number in (1, 2, 1500, 1501, 19_999, 20_000, 20_001, 20_002):
            assert source.line_start(number) == starts[min(number - 1, 20_000)], number


@pytest.mark.parametrize("path", [EXACT, FAST, SPLIT])
def test_stats_takes_the_counts_of_the_views_own_items_by_line(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The view's items that are the rollout's own lines take the counts the walk made
    of them (in two processes, the second half's lines numbered after the first's; a
    blank line numbered too); only the rest, a replacement history's items, is
    counted again."""
    use_path(monkeypatch, path)
    lines = [orjson.dumps(x) for x in ROLLOUT]
    lines.insert(5, b"")
    log = tmp_path / "rollout.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    counted: list[str] = []  # the texts the view's tally makes (not the walk's)

    def recorded(event: Event) -> str:
        counted.append(model_text(event))
        return counted[-1]

    monkeypatch.setattr(counting, "model_text", recorded)
    with read_log(str(log)) as replay:
        report = replay.stats(None)
        view = list(replay.view())
        again = [model_text(e) for e in view if e.sub]  # type: ignore[attr-defined]
        texts = [model_text(e) for e in view]
    assert again and len(again) < len(view)
    assert counted == again
    assert report.chars.view == sum(map(len, texts))


@pytest.mark.parametrize("path", [EXACT, FAST, SPLIT])
def test_checks_changes_match_the_conversion_without_parsing_the_fast_paths_items(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check` asks only what the conversion drops and puts in: the same as converting
    the view, from each item's type and call id, so the fast path's items are not
    parsed; only one whose call id the fast path could not read (none) is. A call or an
    output whose call id is a number, or an output without one, Codex cannot decode: it
    skips their lines, and so do the view and the conversion."""
    use_path(monkeypatch, path)
    odd = {"type": "function_call", "name": "exec_command", "arguments": "ls", "call_id": 7}
    lines = [
        *ROLLOUT,
        compacted("task 18"),
        item(output("c-none", "an output whose call was compacted away")),
        item({"type": "reasoning", "summary": [], "encrypted_content": "x"}),
        item(call("c-never")),  # no output: Codex sends "aborted"
        item(odd),
        item({"type": "function_call_output", "call_id": 7, "output": "seven"}),
        item({"type": "custom_tool_call", "name": "apply_patch", "input": "*", "call_id": "p"}),
        item({"type": "custom_tool_call_output", "call_id": "p", "output": "done"}),
        item({"type": "local_shell_call", "action": {"command": ["ls"]}}),  # no call id:
        item({"type": "function_call_output", "output": "?"}),  # `""` and `"None"` differ
        item(said("done")),
    ]
    log = tmp_path / "rollout.jsonl"
    log.write_bytes(b"\n".join(map(orjson.dumps, lines)) + b"\n")
    with read_log(str(log), collect=True) as replay:  # the orphan is an error too
        view = replay.view()
        whole = replay.messages(view)
        events: list[Any] = list(view)
        paired = ("function_call", "function_call_output", "local_shell_call")
        numbered = {  # a call or an output whose call id is a number, or none
            e.id
            for e in events
            if e.data.get("type") in paired and not isinstance(e.data.get("call_id"), str)
        }
        assert not any(e.data.get("call_id") == 7 for e in events)  # skipped, as Codex does
        parsed: list[object] = []
        parse = CodexEvent._parse

        def noted(self: CodexEvent) -> dict[str, Any]:
            parsed.append(self.id)
            return parse(self)

        monkeypatch.setattr(CodexEvent, "_parse", noted)
        changes = replay.conversion_changes(view)
    assert changes.report() == whole.report()
    assert [c.kind for c in changes.lost] == ["orphan result", "orphan result"]
    assert len(changes.inserted) == 2  # "aborted" for c-never and the local shell call
    assert len(numbered) == 1  # the local shell call
    if path != EXACT:  # the exact path keeps every item parsed
        assert set(parsed) == numbered  # a replacement history's items are kept parsed
