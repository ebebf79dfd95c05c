"""Benchmark `condense` on generated logs of 10k, 100k and 1M events.

Every figure is the median wall time of several runs of a real subprocess and
its peak memory (`os.wait4` gives each child's own `ru_maxrss`). In the same
run, on the same files, it times the floors a user would compare with:
reading the file line by line, and `orjson.loads` of every line.

    python bench/bench.py                      # 10k, 100k, 1M; results in bench/results.json
    python bench/bench.py --sizes 10000 --runs 1
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import write_log

HERE = Path(__file__).resolve().parent
CONDENSE = [sys.executable, "-m", "condense_cli"]
FLOOR_READ = "import sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f: pass\n"
FLOOR_LOADS = (
    "import sys, orjson\nloads = orjson.loads\n"
    "with open(sys.argv[1], 'rb') as f:\n    for line in f: loads(line)\n"
)
TARGETS = {"view --format jsonl": 1.25, "check": 1.5}
MEMORY_TARGET_MB = 150


def run_once(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak MB of one run of `command` (output discarded)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(command)}: {proc.stderr.read().decode()[:500]}")
    proc.stderr.close()
    return elapsed, usage.ru_maxrss / 1024


def measure_all(
    named: dict[str, list[str]], runs: dict[str, int]
) -> dict[str, tuple[float, float]]:
    """Median seconds and peak MB per command, the commands taken in turn each round
    so that the machine's drift falls on all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in named}
    peaks: dict[str, list[float]] = {name: [] for name in named}
    for round_ in range(max(runs.values())):
        for name, command in named.items():
            if round_ < runs[name]:
                seconds, peak = run_once(command)
                times[name].append(seconds)
                peaks[name].append(peak)
    return {name: (statistics.median(times[name]), max(peaks[name])) for name in named}


def commands(log: Path, tiny: Path) -> dict[str, list[str]]:
    """What is timed, by name."""
    return {
        "floor: read lines": [sys.executable, "-c", FLOOR_READ, str(log)],
        "floor: orjson.loads": [sys.executable, "-c", FLOOR_LOADS, str(log)],
        "view --format jsonl": [*CONDENSE, "view", str(log), "--format", "jsonl"],
        "view --format json": [*CONDENSE, "view", str(log), "--format", "json"],
        "check": [*CONDENSE, "check", str(log)],
        "stats": [*CONDENSE, "stats", str(log), "--format", "json"],
        "stats --no-tokens": [*CONDENSE, "stats", str(log), "--format", "json", "--no-tokens"],
        "run amortized --dry-run": [
            *CONDENSE,
            "run",
            str(log),
            "--type",
            "amortized_forgetting",
            "--dry-run",
            "--force",
        ],
        "simulate llm (placeholder summaries)": [
            *CONDENSE,
            "simulate",
            str(log),
            "--type",
            "llm",
            "--format",
            "json",
        ],
        "start-up (view, tiny log)": [*CONDENSE, "view", str(tiny), "--format", "jsonl"],
    }


# `simulate` holds the whole history in memory (each step is incremental): timed up to
# this size.
SIMULATE_MAX = 100_000


def bench_size(
    events: int, runs: int, data: Path, only: set[str] | None = None
) -> list[dict[str, object]]:
    log = data / f"{events}.jsonl"
    if not log.exists():
        print(f"generating {log} ...", file=sys.stderr)
        write_log(log, events)
    tiny = data / "tiny.jsonl"
    if not tiny.exists():
        write_log(tiny, 10)
    size_mb = log.stat().st_size / 1e6
    named = {
        name: command
        for name, command in commands(log, tiny).items()
        if (only is None or name in only or name.startswith("floor: orjson"))
        and not (name.startswith("simulate") and events > SIMULATE_MAX)
    }
    # Tokenizing a million events takes minutes: one run of `stats` is enough there.
    per_command = {name: (1 if name == "stats" and events >= 1_000_000 else runs) for name in named}
    results = measure_all(named, per_command)
    rows = []
    for name, (seconds, peak) in results.items():
        tiny_run = name.startswith("start-up")
        rows.append(
            {
                "events": events,
                "log_mb": round(size_mb, 1),
                "command": name,
                "runs": per_command[name],
                "seconds": round(seconds, 3),
                "events_per_s": None if tiny_run else round(events / seconds),
                "mb_per_s": None if tiny_run else round(size_mb / seconds, 1),
                "peak_mb": round(peak, 1),
            }
        )
        print(f"{events:>9,} {name:28s} {seconds:8.3f} s {peak:7.1f} MB", file=sys.stderr)
    floor = next(r["seconds"] for r in rows if r["command"] == "floor: orjson.loads")
    for row in rows:
        if not str(row["command"]).startswith("start-up"):
            row["ratio_to_loads"] = round(float(row["seconds"]) / float(floor), 2)  # type: ignore[arg-type]
    return rows


def table(rows: list[dict[str, object]]) -> str:
    """A Markdown table of the results."""
    lines = [
        "| events | log MB | command | seconds | events/s | MB/s | peak MB | x orjson.loads |",
        "|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cells = [
            f"{r['events']:,}",
            f"{r['log_mb']:,}",
            str(r["command"]),
            f"{r['seconds']:.3f}",
            "-" if r["events_per_s"] is None else f"{r['events_per_s']:,}",
            "-" if r["mb_per_s"] is None else f"{r['mb_per_s']:,}",
            f"{r['peak_mb']:,}",
            "-" if "ratio_to_loads" not in r else f"{r['ratio_to_loads']:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verdicts(rows: list[dict[str, object]]) -> list[str]:
    """The targets for the largest log, met or missed."""
    largest = max(int(r["events"]) for r in rows)  # type: ignore[call-overload]
    out = []
    for r in rows:
        if r["events"] != largest:
            continue
        limit = TARGETS.get(str(r["command"]))
        if limit is not None:
            ratio = r["ratio_to_loads"]
            out.append(
                f"{r['command']}: {ratio}x orjson.loads (target {limit}x): "
                + ("met" if float(ratio) <= limit else "MISSED")
            )  # type: ignore[arg-type]
        if r["command"] == "view --format jsonl":
            peak = float(r["peak_mb"])  # type: ignore[arg-type]
            out.append(
                f"view --format jsonl peak {peak} MB (target {MEMORY_TARGET_MB} MB): "
                + ("met" if peak < MEMORY_TARGET_MB else "MISSED")
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--out", type=Path, default=HERE / "results.json")
    parser.add_argument(
        "--only", help="comma-separated command names to time (the orjson floor always runs)"
    )
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    args.data.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        rows += bench_size(
            size, args.runs if size < 1_000_000 else max(3, args.runs // 2), args.data, only
        )
    machine = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d"),
        "runs": args.runs,
    }
    result = {"machine": machine, "rows": rows, "verdicts": verdicts(rows)}
    args.out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    print(table(rows))
    print()
    for line in result["verdicts"]:
        print(f"- {line}")
    print(f"\n{machine['platform']}, Python {machine['python']}, {machine['cpus']} CPUs")


if __name__ == "__main__":
    main()
