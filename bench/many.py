"""Benchmark `condense` over many logs: a tree of generated logs of every dialect in
the folders their clients keep them in, timed with one process, `--jobs 2` and
`--engine ray` (a Ray started by the command on the same cores).

The tree mixes the dialects (Claude Code 40%, Codex 30%, OpenHands V1 conversation
folders 15%, V0 logs 15%) and their sizes the way sessions are sized: log-normal
around 80 events, 10 to 2,560 events. Each distinct log is generated once (a pool of
9 sizes per dialect); the tree holds hard links to them, so 10,000 logs cost the disk
of 36. Every command is a real subprocess; wall time is the median of `--runs`, peak
memory the PSS of the whole process group (every worker), sampled every 20 ms in one
more run.

    python bench/many.py                        # 10,000 logs, 3 runs
    python bench/many.py --logs 500 --runs 1    # a quick look
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import logs
from bench.measure import Launcher, RunFailed, machine_facts

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIZES = (10, 20, 40, 80, 160, 320, 640, 1280, 2560)  # events of the pool's logs
MIX = {"claude-code": 0.40, "codex": 0.30, "openhands-v1": 0.15, "realistic": 0.15}
MEDIAN_EVENTS, SIGMA = 80, 1.0  # the log-normal of session sizes
COMMANDS = {
    "check": ["check"],
    "stats --no-tokens": ["stats", "--no-tokens", "-f", "csv"],
    "audit": ["audit", "-f", "csv"],
}
ENGINES = {"-j 1": ["-j", "1"], "-j 2": ["-j", "2"], "ray": ["--engine", "ray"]}  # ray: 2 cores


def pool(data: Path, seed: int) -> dict[tuple[str, int], Path]:
    """One generated log per dialect and size (kept in `data` while its generator is
    unchanged, as the main benchmark keeps its logs)."""
    return {(kind, size): logs.ensure_log(data, kind, size, seed) for kind in MIX for size in SIZES}


def sizes_mix(count: int, rng: random.Random) -> list[int]:
    """`count` session sizes, each the pool size nearest a log-normal draw."""
    drawn = [rng.lognormvariate(math.log(MEDIAN_EVENTS), SIGMA) for _ in range(count)]
    return [min(SIZES, key=lambda s: abs(math.log(s) - math.log(max(d, 1)))) for d in drawn]


def build_tree(root: Path, count: int, logs_by: dict[tuple[str, int], Path], seed: int) -> int:
    """`count` logs under `root` (hard links into the pool); their bytes."""
    if root.exists():
        shutil.rmtree(root)
    rng = random.Random(seed)
    kinds = rng.choices(list(MIX), weights=list(MIX.values()), k=count)
    total = 0
    for n, (kind, size) in enumerate(zip(kinds, sizes_mix(count, rng), strict=True)):
        source = logs_by[(kind, size)]
        day = f"{1 + n % 28:02}"
        if kind == "claude-code":
            target = root / "claude" / "projects" / f"-home-dev-project-{n % 50}" / f"{n}.jsonl"
        elif kind == "codex":
            target = root / "codex" / "sessions" / "2026" / "11" / day / f"rollout-{n}.jsonl"
        elif kind == "openhands-v1":
            target = root / "eval" / f"run-{n % 10}" / f"conversation-{n}"
        else:
            target = root / "v0" / f"batch-{n % 20}" / f"task-{n}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, copy_function=os.link)
        else:
            os.link(source, target)
        total += logs.size_bytes(source)
    return total


def condense_argv(code: Path) -> list[str]:
    return [sys.executable, "-c", "from condense_cli.entry import main; main()"]


def measure(
    launcher: Launcher, argv: list[str], env: dict[str, str], runs: int, timeout: float
) -> dict[str, Any]:
    times = []
    try:
        for _ in range(runs):
            seconds, _ = launcher.run(argv, env=env, timeout=timeout)
            times.append(seconds)
        tree = launcher.tree_peak(argv, env=env, timeout=timeout)
    except RunFailed as exc:
        return {"error": str(exc)[:300]}
    return {"seconds": statistics.median(times), "runs": times, "tree_mb": tree}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "many.json")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument(
        "--engines", default=",".join(ENGINES), help="comma-separated: " + ", ".join(ENGINES)
    )
    parser.add_argument(
        "--commands", default=",".join(COMMANDS), help="comma-separated: " + ", ".join(COMMANDS)
    )
    args = parser.parse_args(argv)
    data = args.data.resolve()
    logs_by = pool(data, args.seed)
    tree = data / f"many-{args.logs}"
    log_bytes = build_tree(tree, args.logs, logs_by, args.seed)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("CI", None)
    rows = []
    with Launcher() as launcher:
        for command in args.commands.split(","):
            for engine in args.engines.split(","):
                argv_ = [*condense_argv(ROOT), *COMMANDS[command], str(tree), *ENGINES[engine]]
                got = measure(launcher, argv_, env, args.runs, args.timeout)
                row = {"command": command, "engine": engine, **got}
                if "seconds" in got:
                    row["logs_per_s"] = args.logs / got["seconds"]
                rows.append(row)
                print(_line(row), flush=True)
        # Ray's fixed cost: the same command on two logs, where the work is nothing
        two = [
            *condense_argv(ROOT),
            "check",
            str(logs_by[("codex", 10)]),
            str(logs_by[("codex", 10)]),
        ]
        ray_start = measure(launcher, [*two, "--engine", "ray"], env, args.runs, args.timeout)
        local_two = measure(launcher, [*two, "-j", "2"], env, args.runs, args.timeout)
    machine = machine_facts(args.runs, logs=args.logs, log_bytes=log_bytes)
    fixed = {
        "ray_two_logs_s": ray_start.get("seconds"),
        "local_two_logs_s": local_two.get("seconds"),
    }
    result = {"machine": machine, "rows": rows, "fixed": fixed}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    print()
    print(table(result))


def _line(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"{row['command']:<18} {row['engine']:<14} failed: {row['error']}"
    return (
        f"{row['command']:<18} {row['engine']:<14} {row['seconds']:8.2f} s "
        f"{row['logs_per_s']:8.0f} logs/s {row['tree_mb']:8.0f} MB"
    )


def table(result: dict[str, Any]) -> str:
    """The Markdown table of docs/performance.md."""
    machine = result["machine"]
    lines = [
        f"{machine['logs']:,} logs, {machine['log_bytes'] / 1e6:,.0f} MB; "
        f"{machine['cpus']} CPUs, Python {machine['python']}, median of {machine['runs']} runs",
        "",
        "| command | engine | wall s | logs/s | peak MB (all processes) |",
        "|---|---|---:|---:|---:|",
    ]
    for row in result["rows"]:
        if "error" in row:
            lines.append(f"| `{row['command']}` | {row['engine']} | failed | | |")
            continue
        lines.append(
            f"| `{row['command']}` | {row['engine']} | {row['seconds']:.1f} | "
            f"{row['logs_per_s']:,.0f} | {row['tree_mb']:,.0f} |"
        )
    fixed = result["fixed"]
    if fixed.get("ray_two_logs_s") and fixed.get("local_two_logs_s"):
        lines += [
            "",
            f"Ray's fixed cost (starting a Ray for the command): "
            f"{fixed['ray_two_logs_s'] - fixed['local_two_logs_s']:.1f} s "
            f"({fixed['ray_two_logs_s']:.1f} s against {fixed['local_two_logs_s']:.2f} s "
            "for `check` of two tiny logs).",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
