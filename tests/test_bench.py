"""The benchmark's own machinery: its generated logs, its measurements, its tables.

Every kind of generated log must be a log `condense` reads without a single problem,
and replay to the view its generator meant; the measurements must report what they
claim (a forked worker's memory, a baseline checkout's code); the reports must say
exactly what the figures are.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest

from bench import bench, breakeven, logs, peers
from bench.generate import write_log
from bench.measure import Code, Job, Launcher, RunFailed, check_checkout, measure_all
from bench.textpool import Texts
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # each test generates logs or runs the benchmark script

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
    "openhands-v1-uncompacted": 400,  # none: a conversation with no condenser
    "claude-code": 1200,
    "claude-code-uncompacted": 1200,  # none: a session that never filled its window
    "codex": 2500,
    "codex-uncompacted": 2500,  # none: a session that never filled its window
    "gemini-cli": 2000,
    "gemini-cli-uncompacted": 2000,  # none: a session that never filled its window
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
    elif spec.dialect == "gemini-cli":  # the client's own duplicate results, noted
        [note] = checked.stdout.decode().splitlines()  # one, however many results
        assert "note: Gemini CLI 0.61.0 sends the result of call" in note and "more)" in note
        assert said == ["1 log ok (gemini-cli)"]
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
    if kind.endswith("-uncompacted"):
        assert manifest.condensations == 0
    else:
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


# --------------------------------------------------------------------------------------
# Measuring


FORKS = textwrap.dedent(
    """
    import os, sys, time
    pid = os.fork()
    if pid == 0:
        block = bytearray(200 * 1024 * 1024)
        block[::4096] = b"x" * len(block[::4096])
        os._exit(0)
    if sys.argv[1] == "reap":
        os.waitpid(pid, 0)
    else:
        time.sleep(1.0)  # the worker is done but never reaped
    """
)


def test_peak_memory_covers_a_forked_worker_the_command_reaps(tmp_path: Path) -> None:
    with Launcher() as launcher:
        _, reaped = launcher.run([sys.executable, "-c", FORKS, "reap"])
        _, unreaped = launcher.run([sys.executable, "-c", FORKS, "leave"])
    assert reaped > 200  # the worker's 200 MB, though the parent stayed small
    assert unreaped < 60  # a worker nobody waits for is not counted


BOTH = textwrap.dedent(
    """
    import os, time
    pid = os.fork()
    block = bytearray(100 * 1024 * 1024)
    block[::4096] = b"x" * len(block[::4096])
    time.sleep(0.6)
    if pid:
        os.waitpid(pid, 0)
    else:
        os._exit(0)
    """
)


def test_tree_memory_sums_processes_that_peak_together() -> None:
    with Launcher() as launcher:
        _, peak = launcher.run([sys.executable, "-c", BOTH])
        tree = launcher.tree_peak([sys.executable, "-c", BOTH])
    assert 100 < peak < 150  # wait4: the larger of the two
    assert tree > 190  # sampled: both at once


def test_the_launcher_reports_a_commands_own_peak_not_the_benchmarks() -> None:
    ballast = bytearray(300 * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])
    # Started straight from this (now big) process, a tiny command reports our size...
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    _, _, usage = os.wait4(child.pid, 0)
    assert usage.ru_maxrss / 1024 > 300
    # ...started by the launcher, its own.
    with Launcher() as launcher:
        _, peak = launcher.run([sys.executable, "-c", "pass"])
    del ballast
    assert peak < 60


def test_a_run_past_its_timeout_is_stopped_and_recorded() -> None:
    slow = Job(
        "slow",
        "current",
        [sys.executable, "-c", "import time; time.sleep(30)"],
        runs=3,
        timeout=0.5,
    )
    failing = Job(
        "bad", "baseline", [sys.executable, "-c", "raise SystemExit(3)"], runs=2, required=False
    )
    with Launcher() as launcher:
        measure_all(launcher, [slow, failing])
        with pytest.raises(RunFailed, match="exit 3"):
            launcher.run(failing.argv)
    assert (slow.times, slow.timed_out, slow.error is not None) == ([], True, True)
    assert failing.times == [] and failing.error is not None
    assert failing.error.startswith("exit 3: ")


def _fake_checkout(root: Path, says: str) -> Path:
    package = root / "condense_cli"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(f"print({says!r})\n")
    return root


def test_a_baseline_runs_its_own_checkout_even_from_the_current_one(tmp_path: Path) -> None:
    base = Code(check_checkout(_fake_checkout(tmp_path / "base", "baseline code")), "baseline")
    current = Code(check_checkout(ROOT))
    for code, expected in ((base, "baseline code"), (current, "condense 0.1.0")):
        done = subprocess.run(
            code.argv("--version"),
            env=code.env(),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.stdout.strip() == expected


def test_a_folder_without_condense_cli_is_refused_as_a_baseline(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="is not a checkout of condense"):
        check_checkout(tmp_path)


# --------------------------------------------------------------------------------------
# Reporting


def _job(name: str, variant: str, times: list[float], peak: float) -> Job:
    job = Job(name, variant, ["x"], runs=len(times))
    job.times, job.peaks = times, [peak] * len(times)
    return job


def test_rows_and_table_put_the_baseline_beside_the_current_figures() -> None:
    jobs = [
        _job("floor: read lines", "floor", [0.5, 0.4, 0.6], 10.0),
        _job("floor: orjson.loads", "floor", [1.0, 1.2, 0.9], 13.0),
        _job("check", "current", [0.6, 0.5, 0.7], 40.0),
        _job("check", "baseline", [1.2, 1.1, 1.5], 45.5),
    ]
    rows = bench.rows_of("realistic", 1000, 2_000_000, jobs)
    assert rows[2] == {
        "log": "realistic",
        "events": 1000,
        "log_mb": 2.0,
        "command": "check",
        "runs": 3,
        "seconds": 0.6,
        "min": 0.5,
        "max": 0.7,
        "peak_mb": 40.0,
        "ratio_to_loads": 0.6,
        "events_per_s": 1667,
        "mb_per_s": 3.3,
        "before_seconds": 1.2,
        "before_min": 1.1,
        "before_max": 1.5,
        "before_peak_mb": 45.5,
        "before_ratio_to_loads": 1.2,
        "after_over_before": 0.5,
    }
    assert bench.table(rows).splitlines() == [
        "| log | events | log MB | command | runs | seconds | min-max | events/s | MB/s "
        "| peak MB | x orjson.loads | before s | before min-max | after/before "
        "| before peak MB | before x loads |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        "| realistic | 1,000 | 2.0 | floor: read lines | 3 | 0.500 | 0.400-0.600 | 2,000 | 4.0 "
        "| 10.0 | 0.50 | - | - | - | - | - |",
        "| realistic | 1,000 | 2.0 | floor: orjson.loads | 3 | 1.000 | 0.900-1.200 | 1,000 "
        "| 2.0 | 13.0 | 1.00 | - | - | - | - | - |",
        "| realistic | 1,000 | 2.0 | check | 3 | 0.600 | 0.500-0.700 | 1,667 | 3.3 | 40.0 "
        "| 0.60 | 1.200 | 1.100-1.500 | 0.50 | 45.5 | 1.20 |",
    ]


def test_a_stopped_run_shows_as_such_in_the_table() -> None:
    stopped = Job("stats", "current", ["x"], runs=1, timeout=120.0)
    stopped.timed_out, stopped.error = True, "timed out after 120 s: x"
    rows = bench.rows_of("codex", 10, 1_000_000, [stopped])
    assert rows == [
        {
            "log": "codex",
            "events": 10,
            "log_mb": 1.0,
            "command": "stats",
            "runs": 0,
            "timed_out": 120.0,
        }
    ]
    assert bench.table(rows).splitlines()[-1] == (
        "| codex | 10 | 1.0 | stats | 0 | > 120 (stopped) | - | - | - | - | - |"
    )


def test_the_tree_column_follows_peak_memory_and_judges_memory_when_larger() -> None:
    job = _job("check", "current", [2.0], 30.0)
    job.tree = 52.5
    floor = _job("floor: orjson.loads", "floor", [4.0], 13.0)
    rows = bench.rows_of("realistic", 1_000_000, 3_000_000_000, [floor, job])
    lines = bench.table(rows).splitlines()
    assert lines[0].endswith("| MB/s | peak MB | tree MB | x orjson.loads |")
    assert lines[-1].endswith("| 30.0 | 52.5 | 0.50 |")
    assert bench.verdicts(rows)[1:] == [
        "check peak summed over its processes 52.5 MB (limit < 150 MB): met "
        "(realistic, 1,000,000 events)",
        "check peak summed over its processes 52.5 MB (aim <= 60 MB): met "
        "(realistic, 1,000,000 events)",
    ]


def test_verdicts_judge_the_largest_log_and_say_when_it_is_not_the_target_size() -> None:
    rows = [
        {"log": "uniform", "events": 10, "command": "start-up: --version", "seconds": 0.1},
        {
            "log": "realistic",
            "events": 1000,
            "command": "check",
            "ratio_to_loads": 0.3,
            "peak_mb": 70.0,
        },
        {
            "log": "realistic",
            "events": 100_000,
            "command": "check",
            "ratio_to_loads": 0.45,
            "peak_mb": 70.0,
        },
        {
            "log": "realistic",
            "events": 100_000,
            "command": "stats",
            "seconds": 9.0,
            "after_over_before": 0.5,
        },
    ]
    where = " (realistic, 100,000 events; the target is for 1,000,000)"
    assert bench.verdicts(rows) == [
        f"check: 0.45x orjson.loads (target <= 0.5x): met{where}",
        f"check peak 70.0 MB (limit < 150 MB): met{where}",
        f"check peak 70.0 MB (aim <= 60 MB): MISSED{where}",
        f"stats: 0.5x the baseline's (target <= 0.4x): MISSED{where}",
        "start-up: --version: 0.100 s (target <= 0.12 s): met",
    ]


def test_the_benchmark_runs_end_to_end_with_a_baseline(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    bench.main(
        [
            "--sizes",
            "50",
            "--logs",
            "uniform",
            "--dialects",
            "none",
            "--runs",
            "1",
            "--only",
            "check",
            "--no-startup",
            "--baseline",
            str(ROOT),
            "--data",
            str(tmp_path),
            "--out",
            str(out),
        ]
    )
    result = orjson.loads(out.read_bytes())
    assert [r["command"] for r in result["rows"]] == [
        "floor: read lines",
        "floor: orjson.loads",
        bench.BOUND,
        "check",
    ]
    check = result["rows"][3]
    assert (check["log"], check["events"], check["runs"]) == ("uniform", 50, 1)
    assert check["before_seconds"] > 0 and check["seconds"] > 0
    assert result["notes"] == [bench.PEAK_NOTE]


def test_a_peer_is_timed_beside_its_command_and_judged(tmp_path: Path) -> None:
    jobs = [
        _job("floor: orjson.loads", "floor", [1.0], 13.0),
        _job("stats --no-tokens", "current", [2.0, 2.2, 1.8], 90.0),
        _job("stats --no-tokens", "peer: ccusage 20.0.24 claude session", [2.5, 2.4, 2.6], 250.0),
    ]
    rows = bench.rows_of("claude-code", 1000, 2_000_000, jobs)
    assert {k: v for k, v in rows[1].items() if k.startswith(("peer", "over"))} == {
        "peer": "ccusage 20.0.24 claude session",
        "peer_seconds": 2.5,
        "peer_min": 2.4,
        "peer_max": 2.6,
        "peer_peak_mb": 250.0,
        "peer_ratio_to_loads": 2.5,
        "over_peer": 0.8,
    }
    lines = bench.table(rows).splitlines()
    assert lines[0].endswith("| peer | peer s | peer peak MB | x peer |")
    assert lines[2].endswith("| 1.00 | - | - | - | - |")  # the floor has no peer
    assert lines[3].endswith("| ccusage 20.0.24 claude session | 2.500 | 250.0 | 0.80 |")
    assert len({line.count("|") for line in lines}) == 1
    assert bench.verdicts(rows) == [
        "stats --no-tokens: 2.0 s against ccusage 20.0.24 claude session: 2.5 s (target: faster): "
        "met (claude-code, 1,000 events)"
    ]
    rows[1]["seconds"] = 2.5
    assert bench.verdicts(rows)[0].startswith("stats --no-tokens: 2.5 s against")
    assert "MISSED" in bench.verdicts(rows)[0]


@pytest.mark.parametrize(
    ("dialect", "found"),
    [("claude-code", "projects/bench/*.jsonl"), ("codex", "sessions/2026/11/28/rollout-*.jsonl")],
)
def test_ccusage_reads_the_session_through_a_folder_of_its_own(
    dialect: str, found: str, tmp_path: Path
) -> None:
    # A stand-in for ccusage: it lists what it finds where ccusage looks for the
    # agent's sessions (CLAUDE_CONFIG_DIR, CODEX_HOME), as its own search does (it
    # follows no symbolic link), and reads it.
    launcher = tmp_path / "ccusage"
    variable = "CLAUDE_CONFIG_DIR" if dialect == "claude-code" else "CODEX_HOME"
    launcher.write_text(
        f"#!{sys.executable}\n"
        "import os, sys, pathlib\n"
        f"home = pathlib.Path(os.environ[{variable!r}])\n"
        f"found = [p for p in sorted(home.glob({found!r})) if not p.is_symlink()]\n"
        "print(len(found), sum(len(p.read_bytes()) for p in found), *sys.argv[1:])\n"
    )
    launcher.chmod(0o755)
    data = tmp_path / "data"
    log = logs.ensure_log(data, dialect, 50)
    first = peers.ccusage_on(log, dialect, data, launcher)
    again = peers.ccusage_on(log, dialect, data, launcher)  # the link is kept, not doubled
    assert first == again
    done = subprocess.run(first.argv, env=first.env, capture_output=True, text=True, check=True)
    agent = peers.AGENTS[dialect]
    size = str(log.stat().st_size)
    assert done.stdout.split() == ["1", size, agent, "session", "--json", "--offline"]
    [linked] = Path(first.env[variable]).glob(found)
    assert os.path.samefile(linked, log)
    linked.unlink()
    linked.write_text("a file left by another data folder is linked again")
    peers.ccusage_on(log, dialect, data, launcher)
    assert os.path.samefile(linked, log)


def test_the_benchmark_script_runs_every_v0_command_on_both_kinds_of_log(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "bench.py"),
            "--sizes",
            "300",
            "--runs",
            "1",
            "--dialects",
            "none",
            "--data",
            str(tmp_path / "data"),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    results = orjson.loads(out.read_bytes())
    commands = [(row["log"], row["command"]) for row in results["rows"]]
    per_log = ["floor: read lines", "floor: orjson.loads", bench.BOUND]
    per_log += [  # V0: no hooks, and no usage for `cost` to read
        name
        for name in bench.COMMANDS
        if name not in bench.HOOK_COMMANDS and name not in bench.COST_COMMANDS
    ]
    assert commands == [
        *(("uniform", name) for name in bench.STARTUP),
        *(("uniform", name) for name in per_log),
        *(("realistic", name) for name in per_log),
    ]
    assert all(row["seconds"] > 0 and row["peak_mb"] > 0 for row in results["rows"])
    assert len(results["verdicts"]) == 2 * 6 + 3  # two logs x (jsonl, check) x 3, start-up
    assert "| realistic | 300 |" in done.stdout


def test_breakeven_finds_the_size_from_which_two_processes_always_win() -> None:
    def row(mb: float, one: float, two: float) -> dict[str, Any]:
        return {"log_mb": mb, "one": one, "two": two}

    assert breakeven.crossover([row(1, 1, 2), row(10, 2, 1), row(50, 5, 3)]) == 10
    assert breakeven.crossover([row(1, 1, 0.5), row(10, 2, 3), row(50, 5, 3)]) == 50
    assert breakeven.crossover([row(1, 1, 2), row(10, 2, 3)]) is None


def test_breakeven_times_both_settings_of_the_variable(tmp_path: Path) -> None:
    out = tmp_path / "breakeven.json"
    breakeven.main(
        ["--sizes-mb", "0.05", "--runs", "1", "--data", str(tmp_path), "--out", str(out)]
    )
    result = orjson.loads(out.read_bytes())
    assert [(r["command"], r["events"]) for r in result["rows"]] == [
        ("check", 15),
        ("view --format jsonl", 15),
    ]
    assert all(r["one"] > 0 and r["two"] > 0 for r in result["rows"])


def test_the_many_logs_tree_holds_logs_of_every_dialect(tmp_path: Path, monkeypatch) -> None:
    from bench import many

    monkeypatch.setattr(many, "SIZES", (10, 40))
    pool = many.pool(tmp_path / "data", 7)
    total = many.build_tree(tmp_path / "tree", 60, pool, 7)
    from condense_cli.dialects.discovery import find_logs

    found = find_logs([str(tmp_path / "tree")])
    assert len(found.logs) == 60 and not found.skipped
    assert total == sum(logs.size_bytes(Path(log)) for log in found.logs)
    done = subprocess.run(
        [*many.condense_argv(ROOT), "stats", str(tmp_path / "tree"), "--no-tokens", "-f", "csv"],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0 and done.stderr == b""
    rows = done.stdout.decode().splitlines()[1:-1]
    assert len(rows) == 60
    dialects = {row.split(",")[1] for row in rows}
    assert dialects == {"claude-code", "codex", "openhands-v1", "openhands-v0"}


@pytest.mark.parametrize("dialect", ["claude-code", "codex"])
def test_the_cost_tree_holds_sessions_where_their_client_keeps_them(
    tmp_path: Path, monkeypatch, dialect: str
) -> None:
    from bench import cost_tree, many

    monkeypatch.setattr(many, "SIZES", (10, 40))
    folder, files = cost_tree.build(tmp_path / "home", dialect, 1, tmp_path / "data", 7)
    assert folder.name == ("projects" if dialect == "claude-code" else "sessions")
    found = sorted(folder.rglob("*.jsonl"))
    assert len(found) == files and sum(f.stat().st_size for f in found) >= 1_000_000
    done = subprocess.run(
        [*many.condense_argv(ROOT), "cost", str(folder), "--no-cache", "-f", "json"],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "c")},
    )
    # (the shortest generated sessions end before their first call: said, not failed)
    said = done.stderr.decode()
    assert done.returncode == 0 and re.fullmatch(
        r"(\d+ of the \d+ logs read records? no model call\n)?", said
    )
    assert orjson.loads(done.stdout)["totals"]["calls"] > 0


def test_the_report_benchmark_times_the_command_and_the_page(tmp_path: Path) -> None:
    """`bench/report.py` on a small generated session: both variants timed, the page's
    size, and (where Chromium is) the page opened and its last event found."""
    from bench import report

    out = tmp_path / "report.json"
    report.main(
        ["--events", "400", "--runs", "1", "--data", str(tmp_path / "data"), "--out", str(out)]
    )
    rows = orjson.loads(out.read_bytes())["rows"]
    assert [(r["events"], r["options"]) for r in rows] == [(400, ""), (400, "--no-tokens")]
    assert all(r["seconds"] > 0 and r["page_bytes"] > r["log_bytes"] / 10 for r in rows)
    browser = rows[0]["browser"]
    if shutil.which("chromium") or os.environ.get("CI"):
        assert browser is not None and browser["open_s"] > 0 and browser["find_s"] > 0
        # a session this small fits the first chunk: every event is shown at once
        assert browser["events_in_dom"] == rows[0]["page_events"] > 300


@pytest.mark.parametrize(
    ("kind", "dialect"),
    [("realistic", "openhands-v0"), ("claude-code", "claude-code"), ("codex", "codex")],
)
def test_the_bound_decodes_every_line_of_a_log_with_the_code_on_its_path(
    tmp_path: Path, kind: str, dialect: str
) -> None:
    log = logs.ensure_log(tmp_path, kind, 300)
    lines = log.read_bytes().count(b"\n")
    script = str(ROOT / "bench" / "bounds.py")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, script, str(log), dialect], env=env, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout) == (0, f"{lines} lines decoded\n"), done.stderr
    # A block the decoder refuses (a message or payload that is no object) is read
    # line by line, as the exact path reads it
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(log.read_bytes() + b'{"type": "x", "message": "a", "payload": "b"}\n')
    done = subprocess.run(
        [sys.executable, script, str(odd), dialect], env=env, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout) == (0, f"{lines + 1} lines decoded\n"), done.stderr
    done = subprocess.run([sys.executable, script, str(log)], env=env, capture_output=True)
    assert done.returncode == 2 and b"usage: bounds.py LOG" in done.stderr


def test_the_bound_is_timed_beside_the_floors_on_the_dialects_it_applies_to(
    tmp_path: Path,
) -> None:
    out = tmp_path / "results.json"
    bench.main(
        [
            "--logs",
            "none",
            "--dialects",
            "claude-code,openhands-v1",
            "--dialect-sizes",
            "50",
            "--runs",
            "1",
            "--only",
            "check",
            "--no-startup",
            "--no-peers",
            "--data",
            str(tmp_path),
            "--out",
            str(out),
        ]
    )
    rows = orjson.loads(out.read_bytes())["rows"]
    commands = [(r["log"], r["command"]) for r in rows]
    assert commands == [
        ("claude-code", "floor: read lines"),
        ("claude-code", "floor: orjson.loads"),
        ("claude-code", bench.BOUND),
        ("claude-code", "check"),
        ("openhands-v1", "floor: read lines"),  # a folder of files: no block decoder
        ("openhands-v1", "floor: orjson.loads"),
        ("openhands-v1", "check"),
    ]
    bound = rows[2]
    assert bound["seconds"] > 0 and bound["ratio_to_loads"] > 0


def test_the_hooks_are_timed_with_their_json_on_standard_input(tmp_path: Path) -> None:
    """The hook rows give the hook the JSON a client sends (naming the log) on stdin,
    and only on the dialects whose clients have hooks."""
    out = tmp_path / "results.json"
    bench.main(
        [
            *("--logs", "none", "--dialects", "claude-code,openhands-v1"),
            *("--dialect-sizes", "50", "--runs", "1", "--only", "hook pre-compact"),
            *("--no-startup", "--no-peers", "--data", str(tmp_path), "--out", str(out)),
        ]
    )
    rows = orjson.loads(out.read_bytes())["rows"]
    hooks = [(r["log"], r["seconds"] > 0) for r in rows if r["command"] == "hook pre-compact"]
    assert hooks == [("claude-code", True)]
    given = orjson.loads((tmp_path / "claude-code-50.jsonl.hook.json").read_bytes())
    assert given["transcript_path"] == str(tmp_path / "claude-code-50.jsonl")


def test_the_search_benchmark_builds_queries_and_follows_a_turn(
    tmp_path: Path, monkeypatch
) -> None:
    """`bench/search.py` on a small tree: the index built, queried, and queried again
    after a session grew by a turn, whose new words are then found."""
    from bench import many, search

    monkeypatch.setattr(many, "SIZES", (10, 40))
    out = tmp_path / "search.json"
    search.main(
        ["--logs", "30", "--runs", "1", "--data", str(tmp_path / "data"), "--out", str(out)]
    )
    result = orjson.loads(out.read_bytes())
    assert result["build_s"] > 0 and result["query_s"] > 0 and result["update_after_a_turn_s"] > 0
    assert result["index_mb"] > 0 and result["machine"]["logs"] == 30
    assert 0 < result["index_query_s"] < result["query_in_process_s"] < result["query_s"]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "data" / "search-cache")}
    tree = tmp_path / "data" / "search-30"
    done = subprocess.run(
        [*many.condense_argv(ROOT), "search", "turn", str(tree), "-f", "json"],
        capture_output=True,
        env={**env, "PYTHONPATH": str(ROOT)},
    )
    hits = orjson.loads(done.stdout)["hits"]
    assert any(h["who"] == "user" and "turn" in h["snippet"] for h in hits)
