"""Where a two-process scan starts to pay: `check` and `view --format jsonl` timed on
logs of 1 to 200 MB with one process and with two, interleaved.

The scan splits a log between two processes when it is at least
`CONDENSE_PARALLEL_MIN_BYTES` long; this script sets that variable to 0 (two
processes on any log) and to a huge number (always one), times both on realistic
OpenHands V0 logs of each size, and prints the medians, their spread and the
crossover: the smallest size from which two processes are faster at every larger
size. A checkout whose scan ignores the variable shows no crossover.

    python bench/breakeven.py                       # 1..200 MB, 5 runs each
    python bench/breakeven.py --sizes-mb 1,5,20 --runs 3 --code /work/wt-scan
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import logs
from bench.measure import Code, Job, Launcher, check_checkout, measure_all

HERE = Path(__file__).resolve().parent
VARIABLE = "CONDENSE_PARALLEL_MIN_BYTES"
SETTINGS = {"one": str(10**18), "two": "0"}  # processes -> the variable's value
COMMANDS = {"check": ["check"], "view --format jsonl": ["view", "--format", "jsonl"]}
BYTES_PER_EVENT = {"realistic": 3300, "uniform": 1690}  # about, to size the logs


def events_for(megabytes: float, kind: str) -> int:
    return max(10, round(megabytes * 1e6 / BYTES_PER_EVENT[kind]))


def crossover(rows: list[dict[str, Any]]) -> float | None:
    """The smallest size (MB) from which two processes win at every larger size."""
    found = None
    for row in sorted(rows, key=lambda r: r["log_mb"], reverse=True):
        if row["two"] < row["one"]:
            found = row["log_mb"]
        else:
            break
    return found


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| log MB | events | command | one process s | spread | two processes s | spread "
        "| two/one |",
        "|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['log_mb']:,.1f} | {r['events']:,} | {r['command']} | {r['one']:.3f} | "
            f"{r['one_min']:.3f}-{r['one_max']:.3f} | {r['two']:.3f} | "
            f"{r['two_min']:.3f}-{r['two_max']:.3f} | {r['two'] / r['one']:.2f} |"
        )
    lines.append("")
    for command in COMMANDS:
        mine = [r for r in rows if r["command"] == command]
        size = crossover(mine)
        if size is None:
            lines.append(f"- {command}: two processes were never faster at these sizes")
            continue
        below = [r["log_mb"] for r in mine if r["log_mb"] < size]
        between = f" (slower at {max(below):g} MB)" if below else ""
        lines.append(f"- {command}: two processes are faster from {size:g} MB on{between}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", default="1,2,5,10,20,50,100,200")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kind", choices=logs.V0_KINDS, default="realistic")
    parser.add_argument(
        "--code", type=Path, default=HERE.parent, help="the checkout to time (default: this one)"
    )
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--out", type=Path, default=HERE / "breakeven.json")
    args = parser.parse_args(argv)
    code = Code(check_checkout(args.code))
    data = args.data.resolve()
    rows: list[dict[str, Any]] = []
    with Launcher() as launcher:
        for megabytes in (float(s) for s in args.sizes_mb.split(",")):
            events = events_for(megabytes, args.kind)
            log = logs.ensure_log(data, args.kind, events)
            jobs = [
                Job(
                    command,
                    processes,
                    code.argv(*args_[:1], str(log), *args_[1:]),
                    code.env({VARIABLE: value}),
                    runs=args.runs,
                )
                for command, args_ in COMMANDS.items()
                for processes, value in SETTINGS.items()
            ]
            measure_all(launcher, jobs, cwd=data)
            by = {(j.name, j.variant): j for j in jobs}
            for command in COMMANDS:
                one, two = by[(command, "one")], by[(command, "two")]
                row = {
                    "log_mb": round(logs.size_bytes(log) / 1e6, 1),
                    "events": events,
                    "command": command,
                    "runs": args.runs,
                    "one": statistics.median(one.times),
                    "one_min": min(one.times),
                    "one_max": max(one.times),
                    "one_peak_mb": one.peak,
                    "two": statistics.median(two.times),
                    "two_min": min(two.times),
                    "two_max": max(two.times),
                    "two_peak_mb": two.peak,
                }
                rows.append(row)
                print(
                    f"{row['log_mb']:8.1f} MB {command:22s} one {row['one']:.3f} s  "
                    f"two {row['two']:.3f} s",
                    file=sys.stderr,
                )
    result = {
        "code": str(code.root),
        "kind": args.kind,
        "rows": rows,
        "crossover_mb": {c: crossover([r for r in rows if r["command"] == c]) for c in COMMANDS},
    }
    args.out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    print(report(rows))


if __name__ == "__main__":
    main()
