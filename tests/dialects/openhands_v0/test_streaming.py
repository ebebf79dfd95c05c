"""The streaming fast paths against a straightforward whole-file replay, in every format."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from rich.console import Console

from condense_cli.core.logfile import LogSource
from condense_cli.dialects.openhands_v0.replay import scan_log
from condense_cli.terminal.progress import progress
from tests.conftest import CONDENSE, ROOT
from tests.reference import reference_view

sys.path.insert(0, str(ROOT / "bench"))
from generate import events as generated_events
from generate import write_log


def straightforward(path: Path) -> tuple[list[bytes], list[Any], bool]:
    """Read the whole file, replay it with the reference, and return the kept lines."""
    lines = [line.rstrip(b"\r") for line in path.read_bytes().splitlines() if line.strip()]
    if lines and lines[0].startswith(b"\xef\xbb\xbf"):
        lines[0] = lines[0][3:]
    events = [orjson.loads(line) for line in lines]
    by_id = {e["id"]: line for e, line in zip(events, lines, strict=True)}
    kept, pending = reference_view(events)
    out = []
    for item in kept:
        if isinstance(item, tuple):
            summary = {
                "source": "agent",
                "observation": "condense",
                "content": item[1],
                "extras": {},
            }
            out.append(orjson.dumps(summary))
        else:
            out.append(by_id[item])
    return out, kept, pending


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("generated")
    paths = []
    for count in (7, 150, 3_000):
        path = folder / f"{count}.jsonl"
        write_log(path, count)
        paths.append(path)
    messy = folder / "messy.jsonl"
    body = b"".join(orjson.dumps(e) + b"\r\n\n" for e in generated_events(900, seed=3))
    messy.write_bytes(b"\xef\xbb\xbf" + body)
    paths.append(messy)
    return paths


def test_jsonl_equals_the_straightforward_replay(generated: list[Path], cli) -> None:
    for path in generated:
        expected, _, _ = straightforward(path)
        result = cli("view", path, "--format", "jsonl")
        assert result.stdout_bytes == b"".join(line + b"\n" for line in expected), path.name


def test_json_equals_the_straightforward_replay(generated: list[Path], cli) -> None:
    for path in generated:
        expected, kept, pending = straightforward(path)
        data = orjson.loads(cli("view", path, "--format", "json").stdout_bytes)
        assert [orjson.dumps(e) for e in data["events"]] == [
            orjson.dumps(orjson.loads(x)) for x in expected
        ]
        summaries = [item[1] for item in kept if isinstance(item, tuple)]
        assert data["summary"] == (summaries[0] if summaries else None)
        assert data["unhandled_condensation_request"] is pending


def test_text_lists_exactly_the_replayed_events(generated: list[Path], cli) -> None:
    for path in generated:
        _, kept, _ = straightforward(path)
        out = cli("view", path).stdout
        headings = [line.split()[0] for line in out.splitlines() if line.startswith("#")]
        assert headings == [f"#{item}" for item in kept if not isinstance(item, tuple)]
        assert out.count("=== summary ===") == sum(isinstance(item, tuple) for item in kept)


def test_upto_equals_the_replay_of_a_prefix(generated: list[Path], cli, tmp_path: Path) -> None:
    path = generated[2]
    lines = path.read_bytes().splitlines(keepends=True)
    prefix = tmp_path / "prefix.jsonl"
    prefix.write_bytes(b"".join(lines[:1234]))
    upto = orjson.loads(lines[1233])["id"]
    assert (
        cli("view", path, "-f", "jsonl", "--upto", upto).stdout_bytes
        == cli("view", prefix, "-f", "jsonl").stdout_bytes
    )


def test_the_subprocess_streams_a_large_log(generated: list[Path]) -> None:
    path = generated[2]
    expected, _, _ = straightforward(path)
    done = subprocess.run([str(CONDENSE), "view", str(path), "-f", "jsonl"], capture_output=True)
    assert done.stdout == b"".join(line + b"\n" for line in expected)
    assert done.stderr == b""  # no progress bar when stderr is not a terminal


def test_progress_bar_only_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import condense_cli.terminal.progress as module

    monkeypatch.setattr(module, "THRESHOLD", 1000)
    log = tmp_path / "log.jsonl"
    write_log(log, 400)
    for terminal in (True, False):
        buffer = io.StringIO()
        console = Console(file=buffer, force_terminal=terminal, width=100)
        with LogSource.open(str(log)) as source:
            source.PROGRESS_STEP = 4096
            with progress(source, "reading", console):
                scan_log(source)
        assert ("reading" in buffer.getvalue()) is terminal
