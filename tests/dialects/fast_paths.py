"""Helpers for the differential tests of the dialects' fast paths (msgspec blocks)
against their exact paths (orjson line by line)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.fast import lines as fastlines
from condense_cli.fast.halves import SPLIT_ENV
from condense_cli.llm.messages import Conversion

EXACT, FAST = "exact", "fast"
SPLIT = "fast, in two processes"  # a dialect whose fast path forks for big logs


def converted(conversion: Conversion) -> Any:
    """A conversion's messages and every change it reports."""
    changes = conversion.dropped + conversion.inserted + conversion.approximated
    return conversion.messages, [(c.kind, c.event, c.line, c.reason) for c in changes]


def use_path(monkeypatch: pytest.MonkeyPatch, path: str, block: int = 256) -> None:
    """Force one way of reading, with small blocks so that a small log has many
    (`SPLIT`: the fast path, in two processes for a log of two lines or more)."""
    monkeypatch.setattr(fastlines, "BLOCK_BYTES", block)
    monkeypatch.setattr(fastlines, "FAST_MIN_BYTES", 1 << 60 if path == EXACT else 0)
    if path == SPLIT:
        monkeypatch.setenv(SPLIT_ENV, "0")
    else:
        monkeypatch.delenv(SPLIT_ENV, raising=False)


def both_paths(
    monkeypatch: pytest.MonkeyPatch,
    outcome: Callable[..., Any],
    log: Path,
    block: int = 256,
    paths: tuple[str, ...] = (EXACT, FAST),
    **read: Any,
) -> dict[str, Any]:
    """What `outcome(log, **read)` (a dialect's summary of a read) is on each path."""
    results = {}
    for path in paths:
        use_path(monkeypatch, path, block)
        results[path] = outcome(log, **read)
    return results


def judged_alike(
    monkeypatch: pytest.MonkeyPatch,
    outcome: Callable[..., Any],
    log_path: Path,
    lines: list[bytes],
    at: int,
    tricky: bytes,
    paths: tuple[str, ...] = (EXACT, FAST),
) -> None:
    """`lines` with the `tricky` line put in at `at` read alike on every path, with
    problems collected or raised."""
    lines = [*lines[:at], tricky, *lines[at:]]
    log_path.write_bytes(b"\n".join(lines) + b"\n")
    for collect in (True, False):
        results = both_paths(monkeypatch, outcome, log_path, paths=paths, collect=collect)
        for path in paths:
            assert results[path] == results[EXACT], (path, tricky)


def fresh_ids(value: Any, ids: set[str], suffix: str) -> Any:
    """`value` with every string in `ids` given `suffix` (a copy of a session whose
    uuids, message ids and tool call ids are all new)."""
    if isinstance(value, str):
        return value + suffix if value in ids else value
    if isinstance(value, list):
        return [fresh_ids(v, ids, suffix) for v in value]
    if isinstance(value, dict):
        return {k: fresh_ids(v, ids, suffix) for k, v in value.items()}
    return value


def repeated(lines: list[bytes], copies: int, ids: set[str]) -> bytes:
    """`copies` copies of a log's lines, each copy with fresh ids (copy 0 unchanged)."""
    out = list(lines)
    for copy in range(1, copies):
        out += [orjson.dumps(fresh_ids(orjson.loads(x), ids, f"-{copy}")) for x in lines]
    return b"\n".join(out) + b"\n"


def line_endings(lines: list[bytes], torn: bytes) -> dict[str, bytes]:
    """A log's lines written with each line ending the paths must read alike: LF,
    CRLF, a byte-order mark, a torn last line (`torn`), no final newline, blank lines."""
    return {
        "lf": b"\n".join(lines) + b"\n",
        "crlf": b"\r\n".join(lines) + b"\r\n",
        "bom": b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n",
        "torn": b"\n".join(lines) + b"\n" + torn,
        "no final newline": b"\n".join(lines),
        "blank lines": b"\n\n".join(lines) + b"\n\n",
    }


# The commands a big never-compacted log is run through on both paths: the views used
# while the log is open, and (`run`) once it is closed.
WHOLE_VIEW_COMMANDS = (
    ("view", "-f", "jsonl"),
    ("view", "-f", "json"),
    ("view", "-f", "messages"),
    ("view", "--no-pager"),
    ("check",),
    ("stats", "--no-tokens", "-f", "json"),
    ("audit", "-f", "json"),
    ("run", "--type", "observation_masking", "--dry-run", "-f", "json"),
    ("simulate", "--type", "amortized", "-f", "json"),  # the history, read while open
)


def printed_alike(
    monkeypatch: pytest.MonkeyPatch,
    proc: Callable[..., Any],
    cli: Callable[..., Any],
    log: Path,
    commands: Iterable[tuple[str, ...]],
) -> list[Any]:
    """Each command (its name, then its options) on `log`, a log above the fast path's
    threshold, as a real subprocess: it prints what the exact path prints in-process,
    and exits alike. The subprocesses' results, in order."""
    assert log.stat().st_size > fastlines.FAST_MIN_BYTES
    runs = [(name, log, *options) for name, *options in commands]
    fast = [proc(*run, env={**os.environ, "COLUMNS": "100"}) for run in runs]
    use_path(monkeypatch, EXACT, block=1 << 20)
    for run, done in zip(runs, fast, strict=True):
        exact = cli(*run)
        assert done.returncode == exact.exit_code, (run, done.stderr)
        assert done.stdout == exact.stdout_bytes, run
    return fast


def reported_alike(
    monkeypatch: pytest.MonkeyPatch, proc: Callable[..., Any], cli: Callable[..., Any], log: Path
) -> bytes:
    """`report` on `log`, a log above the fast path's threshold, as a real subprocess:
    the page the exact path lays out in-process, but for the command its footer names.
    The page."""
    assert log.stat().st_size > fastlines.FAST_MIN_BYTES
    fast = proc("report", log, "--no-tokens", "-o", "-")
    assert fast.returncode == 0, fast.stderr.decode()
    with monkeypatch.context() as patched:
        use_path(patched, EXACT, block=1 << 20)
        exact = cli("report", log, "--no-tokens", "-o", "-")
    assert exact.exit_code == 0, exact.output
    footer = re.compile(rb"<footer>.*</footer>")
    assert footer.sub(b"", fast.stdout) == footer.sub(b"", exact.stdout_bytes)
    return bytes(fast.stdout)


def walked(replay: Any, view: Any = None) -> tuple[Any, Conversion, list[dict[str, Any]]]:
    """Walk a replay's view every way a command does (`check`'s lost context, which
    must find nothing; `stats` without tokens; `audit`; the messages one at a time):
    its stats, and the conversion and messages of `view` (by default its view)."""
    from condense_cli.analysis.audit import audit_log
    from condense_cli.analysis.checks import lost_context

    assert lost_context(replay) == []
    stats = replay.stats(None)
    audit_log(replay)
    conversion = Conversion()
    messages = list(replay.each_message(replay.view() if view is None else view, conversion))
    return stats, conversion, messages
