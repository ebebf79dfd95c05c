"""The benchmark's generated logs.

Every kind of generated log must be a log `condense` reads without a single problem,
and replay to the view its generator meant.
"""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from bench import logs
from bench.generate import write_log
from bench.textpool import Texts

# --------------------------------------------------------------------------------------
# Generated logs


def test_uniform_kind_is_byte_for_byte_the_generator_of_the_earlier_figures(
    tmp_path: Path,
) -> None:
    # Hashes of what bench/generate.py wrote at 958ac9f (before the realistic kind).
    for count, digest in (
        (10, "b0d4872f3f6530320a8d1fe157d25e61bff4a3cf2851b3f1f70de816190ca035"),
        (2000, "43fe9b07ca71e4074a174af2eb418e14b6753f1b1c46b329e1204a1e21c64b7b"),
    ):
        path = tmp_path / f"{count}.jsonl"
        write_log(path, count, "uniform")
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_realistic_kind_is_the_same_for_a_seed_and_differs_between_seeds(
    tmp_path: Path,
) -> None:
    a, b, c = (tmp_path / n for n in ("a.jsonl", "b.jsonl", "c.jsonl"))
    write_log(a, 300, "realistic", seed=3)
    write_log(b, 300, "realistic", seed=3)
    write_log(c, 300, "realistic", seed=4)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def _outputs(path: Path) -> str:
    """The tool outputs of a V0 log (its observations' contents), joined."""
    lines = map(orjson.loads, path.read_bytes().splitlines())
    return "\n".join(e["content"] for e in lines if "observation" in e)


def test_realistic_text_is_varied_escaped_and_partly_non_ascii(tmp_path: Path) -> None:
    uniform, realistic = tmp_path / "u.jsonl", tmp_path / "r.jsonl"
    write_log(uniform, 2000, "uniform")
    write_log(realistic, 2000, "realistic")
    assert len(set(WORD.findall(_outputs(uniform)))) <= 26  # the old generator's words
    assert len(set(WORD.findall(_outputs(realistic)))) > 3000
    raw = realistic.read_bytes()
    non_ascii = sum(raw.count(bytes([b])) for b in range(128, 256)) / len(raw)
    assert 0.004 < non_ascii < 0.05  # a realistic few percent at most
    assert raw.count(b"\\u001b") > 100  # ANSI colours in terminal output
    assert raw.count(b'\\"') > 1000 and raw.count(b"\\n") > 10_000
    assert raw.count(b"\\\\") > 100  # backslashes inside strings (regexes, paths)
    longest = max(len(line) for line in raw.splitlines())
    assert 10_000 < longest < 40_000  # browse pages of 10-30 KB


def test_text_pools_hold_thousands_of_distinct_words() -> None:
    texts = Texts(random.Random(1), scale=0.1)
    assert texts.distinct_words > 3000
    assert all(10_000 <= len(page) < 32_000 for page in texts.pages)


# The smallest logs of each kind that hold at least one of its condensations.
SMALL = {
    "uniform": 300,
    "realistic": 300,
    "openhands-v1": 400,
    "openhands-v1-jsonl": 400,
    "claude-code": 1200,
    "codex": 2500,
}


# The old generator's one flaw, kept for comparable figures: its last condensation
# ends between a call and its result.
UNIFORM_WARNING = (
    "{path}:157: warning: the model never sees this: observation for tool call "
    "toolu_00000155: its action is not in the view"
)


@pytest.mark.parametrize("kind", list(logs.KINDS))
def test_every_generated_log_checks_clean_and_replays_to_the_view_it_meant(
    kind: str, tmp_path: Path, proc: Any
) -> None:
    spec = logs.KINDS[kind]
    path = logs.log_path(tmp_path, kind, SMALL[kind])
    manifest = spec.write(path, SMALL[kind], 7)
    checked = proc("check", path)
    assert checked.returncode == 0, checked.stderr.decode()
    said = checked.stderr.decode().splitlines()
    if kind == "uniform":
        assert checked.stdout.decode().splitlines() == [UNIFORM_WARNING.format(path=path)]
        assert said == ["1 log ok (openhands-v0; 1 warning)"]
    elif kind.startswith("openhands-v1"):  # the generation it replayed comes first
        assert checked.stdout == b""
        assert said == [
            f"{path}: replayed as the multi-summary SDK (Mar 2026) showed it ({_v1_reason(path)})",
            "1 log ok (openhands-v1)",
        ]
    else:
        assert checked.stdout == b""
        assert said == [f"1 log ok ({spec.dialect})"]
    shown = proc("view", path, "--format", "json")
    assert shown.returncode == 0, shown.stderr.decode()
    view = orjson.loads(shown.stdout)
    assert view["dialect"] == spec.dialect
    assert view["unhandled_condensation_request"] is False
    if manifest is None:  # the uniform kind: condensations 104 (2..55) and 205 (56..155)
        ids = [e.get("id") for e in view["events"]]
        assert ids == [0, 1, None, *range(156, 205), *range(206, 300)]
        return
    assert manifest.condensations >= 1
    assert len(view["events"]) == manifest.view_events
    assert view["summary"] == manifest.summary
    # The view as JSONL reads back as the same view.
    lines = proc("view", path, "--format", "jsonl")
    again = proc("view", "-", "--format", "json", "--dialect", spec.dialect, input=lines.stdout)
    assert again.returncode == 0, again.stderr.decode()
    back = orjson.loads(again.stdout)
    assert (len(back["events"]), back["summary"]) == (manifest.view_events, manifest.summary)


def _v1_reason(path: Path) -> str:
    if path.is_dir():
        return "events/.eventlog.lock exists (an SDK from January 2026 on wrote it)"
    return "the newest event is dated 2026-03-02, when the SDK showed several summaries"


def test_the_realistic_log_checks_clean_in_process_too(tmp_path: Path, cli: Any) -> None:
    path = tmp_path / "r.jsonl"
    write_log(path, 300, "realistic")
    result = cli("check", str(path))
    assert result.exit_code == 0
    assert result.stderr == "1 log ok (openhands-v0)\n"


def test_codex_logs_hold_both_local_and_remote_compactions(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    logs.KINDS["codex"].write(path, 8000, 7)
    compactions = [
        line["payload"]
        for line in map(orjson.loads, path.read_bytes().splitlines())
        if line["type"] == "compacted"
    ]
    kinds = {"remote" if c["message"] == "" else "local" for c in compactions}
    assert kinds == {"local", "remote"}


def test_a_log_is_generated_once_and_again_when_its_generator_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = logs.ensure_log(tmp_path, "uniform", 10)
    stamp = path.with_name(path.name + ".stamp")
    assert path.name == "uniform-10.jsonl" and stamp.exists()
    path.write_bytes(b"kept\n")
    assert logs.ensure_log(tmp_path, "uniform", 10).read_bytes() == b"kept\n"
    stamp.write_text("another generator")
    assert logs.ensure_log(tmp_path, "uniform", 10).read_bytes() != b"kept\n"
