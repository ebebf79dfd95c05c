"""The V0 scan's fast path (simdjson and msgspec), in one process and in two, against
the full validator (orjson) alone: same index, same problems, same errors, on every
input."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense_cli.core.errors import LogError
from condense_cli.core.logfile import LogSource
from condense_cli.dialects.openhands_v0 import chunks
from condense_cli.dialects.openhands_v0 import replay as openhands_v0
from condense_cli.dialects.openhands_v0.replay import scan_log
from condense_cli.fast import halves
from tests.conftest import condensation, msg, run_action, run_obs

EXACT, TWO, VALIDATOR = "one process", "two processes", "the full validator alone"


def use_path(monkeypatch: pytest.MonkeyPatch, path: str, block: int = 256, batch: int = 7) -> None:
    """Force one way of scanning, with small blocks, batches and stretches so that a
    small log has many; VALIDATOR sends every line through the full validator (orjson)."""
    monkeypatch.setattr(halves, "BLOCK", block)
    monkeypatch.setattr(openhands_v0, "STRETCH_LINES", 5)
    monkeypatch.setattr(openhands_v0, "BATCH_LINES", batch)
    monkeypatch.setattr(chunks, "CHUNK_MIN", 500)
    monkeypatch.setenv("CONDENSE_PARALLEL_MIN_BYTES", "0" if path == TWO else str(1 << 60))
    monkeypatch.setenv("CONDENSE_FAST_MIN_BYTES", str(1 << 60) if path == VALIDATOR else "0")


def outcome(log: Path, collect: bool = True, upto: int | None = None) -> Any:
    """Everything a scan decides, or the error it stops with."""
    with LogSource.open(str(log)) as source:
        try:
            index = scan_log(source, collect=collect, upto=upto)
        except LogError as exc:
            return ("error", str(exc))
    return (
        bytes(index.line_ids),
        bytes(index.line_offsets),
        sorted(index.special.items()),
        index.replay_end,
        index.clean,
        list(index.forgotten),
        (index.summary, index.summary_offset, index.summary_line),
        index.unhandled_request,
        [(c.id, c.line, c.ranges, c.forgotten_events, c.view_size) for c in index.condensations],
        (index.requests, index.events, index.visible_events, index.kept_events, index.max_key),
        [(p.line, p.message, p.severity) for p in index.problems],
    )


def every_path(
    monkeypatch: pytest.MonkeyPatch, log: Path, block: int = 256, batch: int = 7, **scan: Any
) -> dict[str, Any]:
    results = {}
    for path in (EXACT, TWO, VALIDATOR):
        use_path(monkeypatch, path, block, batch)
        results[path] = outcome(log, **scan)
    return results


def story(size: int = 40) -> list[bytes]:
    """Lines of an ordinary session with a condensation, a request and a hidden event."""
    events: list[dict[str, Any]] = [msg(0, "fix the bug"), msg(1, "héllo ✓ 日本")]
    for i in range(2, size, 2):
        events += [run_action(i, f"tc{i}"), run_obs(i + 1, i, f"tc{i}", "x" * (i * 7 % 90))]
    events.append(condensation(size, start=2, end=11, summary="so far", offset=1))
    events.append({"id": size + 1, "action": "condensation_request", "args": {}})
    events.append({"id": size + 2, "observation": "null", "content": "", "extras": {}})
    events.append({"id": size + 3, "action": "run", "args": {"command": "ls", "hidden": True}})
    events += [run_action(size + 4), run_obs(size + 5, size + 4)]
    return [orjson.dumps(e) for e in events]


# Lines the fast path must treat exactly as the exact path does, each placed in the
# middle of an ordinary log (its id fits between its neighbours).
TRICKY = {
    "overflowing exponent": b'{"id":20,"action":"run","args":{"command":"x"},"cost":1e400}',
    "overflowing signed exponent": b'{"id":20,"observation":"run","content":"","x":[-2E+308]}',
    "overflowing integer": b'{"id":20,"action":"run","args":{},"n":' + b"9" * 400 + b"}",
    "largest double": b'{"id":20,"action":"run","args":{},"x":1.7976931348623157e308}',
    "exponent that underflows": b'{"id":20,"action":"run","args":{},"x":1e-400}',
    "hex id in text": b'{"id":20,"action":"run","args":{"command":"git show 3e400a1"}}',
    "invalid UTF-8": b'{"id":20,"action":"run","args":{"command":"\xff"}}',
    "invalid UTF-8 in a field read": b'{"id":20,"action":"r\xffun","args":{}}',
    "encoded surrogate": b'{"id":20,"action":"run","args":{},"x":"\xed\xa0\x80"}',
    "lone surrogate escape": b'{"id":20,"action":"run","args":{},"x":"\\ud800"}',
    "trailing garbage": b'{"id":20,"action":"run","args":{}} x',
    "two objects": b'{"id":20,"action":"run","args":{}}{"id":21,"action":"run","args":{}}',
    "leading space": b' {"id":20,"action":"run","args":{}}',
    "trailing space": b'{"id":20,"action":"run","args":{}} ',
    "carriage return": b'{"id":20,"action":"run","args":{}}\r',
    "blank": b"",
    "spaces": b"   ",
    "split object": b'{"id":20,"action":"run",\n"args":{}}',
    # as many values as lines, each line ending with "}": only the "{" check sees it
    "two objects then a split one": b'{"id":20,"action":"run","args":{}}{"id":21,"args":{}\n}',
    "duplicate id key": b'{"id":99,"id":20,"action":"run","args":{}}',
    "null action": b'{"id":20,"action":null,"observation":"run","content":""}',
    "both kinds": b'{"id":20,"action":"run","observation":"run","args":{}}',
    "hidden in extras": b'{"id":20,"observation":"run","content":"","extras":{"hidden":true}}',
    "hidden at the top": b'{"id":20,"action":"run","args":{},"hidden":true}',
    "args not an object": b'{"id":20,"action":"run","args":"ls"}',
    "float id": b'{"id":20.0,"action":"run","args":{}}',
    "boolean id": b'{"id":true,"action":"run","args":{}}',
    "id beyond 64 bits": b'{"id":18446744073709551616,"action":"run","args":{}}',
    "repeated id": b'{"id":19,"action":"run","args":{}}',
    "deep nesting": b'{"id":20,"action":"run","args":{},"x":' + b"[" * 1000 + b"]" * 1000 + b"}",
    "control character": b'{"id":20,"action":"run","args":{"command":"a\tb"}}',
    "NaN": b'{"id":20,"action":"run","args":{},"x":NaN}',
    "not an object": b"[20]",
    "summary line": b'{"source":"agent","observation":"condense","content":"s","extras":{}}',
    "no id": b'{"action":"run","args":{"command":"ls"}}',
    "null id": b'{"id":null,"action":"run","args":{}}',
    # what simdjson and msgspec must not be let to judge differently from orjson
    "byte-order mark in the middle": b'\xef\xbb\xbf{"id":20,"action":"run","args":{}}',
    "id past 63 bits": b'{"id":18446744073709551615,"action":"run","args":{}}',
    "id past 64 bits as a float": b'{"id":123456789012345678901234567890,"action":"run"}',
    "escaped key": b'{"\\u0069d":20,"action":"run","args":{"\\u0068idden":true}}',
    "escaped special type": b'{"id":20,"action":"\\u0063ondensation","args":{}}',
    "hidden twice, last false": b'{"id":20,"action":"run","args":{"hidden":true,"hidden":false}}',
    "hidden twice, last true": b'{"id":20,"action":"run","args":{"hidden":false,"hidden":true}}',
    "hidden not a boolean": b'{"id":20,"action":"run","args":{"hidden":1}}',
    "null observation beside an action": b'{"id":20,"action":"run","observation":null}',
    "action in extras only": b'{"id":20,"observation":"run","extras":{"action":"x"}}',
    "nested 1024 deep": b'{"id":20,"action":"run","x":' + b"[" * 1023 + b"]" * 1023 + b"}",
    "nested 1025 deep": b'{"id":20,"action":"run","x":' + b"[" * 1024 + b"]" * 1024 + b"}",
    "NUL byte after": b'{"id":20,"action":"run","args":{}}\x00',
    "escaped NUL": b'{"id":20,"action":"run","args":{"command":"\\u0000"}}',
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_a_tricky_line_is_judged_alike_on_every_path(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = story()
    lines[20:20] = [TRICKY[name]]
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    for collect in (True, False):
        results = every_path(monkeypatch, log, collect=collect)
        assert results[TWO] == results[EXACT] == results[VALIDATOR], name


def test_fast_path_refuses_what_orjson_refuses(tmp_path: Path, monkeypatch) -> None:
    lines = story()
    lines[20:20] = [TRICKY["overflowing exponent"]]
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    use_path(monkeypatch, TWO)
    error = outcome(log, collect=False)
    assert error[0] == "error"
    assert error[1] == (
        f"{log}:21: invalid JSON at column 55: number is infinity when parsed as double "
        """(line starts '{"id":20,"action":"run","args":{"command":"x"},"cost":1e400}')"""
    )


@pytest.mark.parametrize("block", [64, 300, 4096, 1 << 20])
def test_block_sizes_and_endings(block: int, tmp_path: Path, monkeypatch) -> None:
    """Lines longer than a block, CRLF endings, a BOM, and a torn last line."""
    lines = story(120)
    lines[30] = orjson.dumps(run_obs(31, 30, content="long " * 2000))
    variants = {
        "lf": b"\n".join(lines) + b"\n",
        "crlf": b"\r\n".join(lines) + b"\r\n",
        "bom": b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n",
        "torn": b"\n".join(lines) + b"\n" + lines[-1][:-9],
        "no final newline": b"\n".join(lines),
    }
    for name, data in variants.items():
        log = tmp_path / f"{name}.jsonl"
        log.write_bytes(data)
        results = every_path(monkeypatch, log, block=block)
        assert results[TWO] == results[EXACT] == results[VALIDATOR], name


def test_upto_takes_one_process_and_agrees(tmp_path: Path, monkeypatch) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join(story(200)) + b"\n")
    for upto in (0, 7, 100, 150, 10**6):
        results = every_path(monkeypatch, log, upto=upto)
        assert results[TWO] == results[EXACT] == results[VALIDATOR]


# Random logs: ordinary events with, here and there, a line from TRICKY or a corrupted one.
corruptions = st.sampled_from(sorted(TRICKY))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    size=st.integers(min_value=4, max_value=120),
    inserts=st.lists(st.tuples(st.integers(0, 130), corruptions), max_size=4),
    cut=st.integers(min_value=0, max_value=40),
    block=st.sampled_from([48, 200, 1000]),
    batch=st.sampled_from([1, 7, 256]),
)
def test_random_logs_are_judged_alike(size, inserts, cut, block, batch, tmp_path_factory) -> None:
    lines = story(size)
    for at, name in inserts:
        lines[at:at] = [TRICKY[name].replace(b'"id":20', b'"id":%d' % at)]
    data = b"\n".join(lines) + b"\n"
    data = data[: len(data) - cut]
    log = tmp_path_factory.mktemp("random") / "log.jsonl"
    log.write_bytes(data)
    with pytest.MonkeyPatch.context() as monkeypatch:
        results = every_path(monkeypatch, log, block=block, batch=batch)
    assert results[TWO] == results[EXACT] == results[VALIDATOR]


def test_a_failed_worker_changes_nothing(tmp_path: Path, monkeypatch) -> None:
    """The parent sorts the chunks its worker did not deliver when the worker dies or
    fails, at the start or after sending some."""
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join(story(300)) + b"\n")
    expected = every_path(monkeypatch, log)[EXACT]
    classify_range = openhands_v0.classify_range
    parent = os.getpid()

    def killed(*args: Any) -> Any:
        os.kill(os.getpid(), signal.SIGKILL)

    def failing(*args: Any) -> Any:
        raise MemoryError

    chunks_sorted = []

    def dies_midway(*args: Any) -> Any:  # on its third chunk, after sending two
        chunks_sorted.append(args)
        if len(chunks_sorted) == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return classify_range(*args)

    for broken in (killed, failing, dies_midway):

        def in_the_worker(*args: Any, broken: Any = broken) -> Any:
            """The parent sorts its own half with the same function."""
            return classify_range(*args) if os.getpid() == parent else broken(*args)

        use_path(monkeypatch, TWO)
        monkeypatch.setattr(openhands_v0, "classify_range", in_the_worker)
        assert outcome(log) == expected, broken.__name__
    with pytest.raises(ChildProcessError):  # every worker was reaped
        os.waitpid(-1, os.WNOHANG)


def test_no_fork_means_one_process(tmp_path: Path, monkeypatch) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join(story(300)) + b"\n")
    expected = every_path(monkeypatch, log)[EXACT]

    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    use_path(monkeypatch, TWO)
    monkeypatch.setattr(os, "fork", no_fork)
    assert outcome(log) == expected


def test_a_log_growing_during_the_scan_is_read_as_opened(tmp_path: Path, monkeypatch) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join(story(100)) + b"\n")
    expected = every_path(monkeypatch, log)
    for path in (EXACT, TWO):
        use_path(monkeypatch, path)
        with LogSource.open(str(log)) as source:
            with log.open("ab") as writer:
                writer.write(orjson.dumps(msg(10_000)) + b"\n")
            index = scan_log(source, collect=True)
        assert index.max_key == 105
        assert bytes(index.line_ids) == expected[EXACT][0]
        log.write_bytes(b"\n".join(story(100)) + b"\n")


def test_cli_subprocess_agrees_on_a_big_log(tmp_path: Path, proc) -> None:
    """The real command on a big log (several MB), split over two processes or
    not, prints what the exact path prints."""
    lines = story(4000)
    big = [orjson.dumps(run_obs(5000 + i, 0, content="ü" * 700 + str(i))) for i in range(4000)]
    log = tmp_path / "big.jsonl"
    log.write_bytes(b"\n".join(lines + big) + b"\n")
    assert log.stat().st_size > 4_000_000
    outputs = {}
    for name, threshold in (("one", str(1 << 60)), ("two", "0")):
        env = {**os.environ, "CONDENSE_PARALLEL_MIN_BYTES": threshold}
        outputs[name] = [
            proc(*command, env=env)
            for command in (
                ("view", log, "-f", "jsonl"),
                ("check", log),
                ("stats", log, "--no-tokens", "-f", "json"),
            )
        ]
    for one, two in zip(outputs["one"], outputs["two"], strict=True):
        assert one.returncode == two.returncode == 0
        assert one.stdout == two.stdout and one.stderr == two.stderr
    with LogSource.open(str(log)) as source:
        index = scan_log(source)
    view = outputs["one"][0].stdout.splitlines()
    assert len(view) == index.view_size
    assert view[0] == lines[0] and view[-1] == big[-1]
