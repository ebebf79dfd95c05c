"""Benchmark `condense cost` over a whole history beside ccusage's native binary: a
tree of Claude Code sessions and a tree of Codex rollouts (about `--megabytes` each,
in the folders their clients keep them in), sized the way sessions are sized
(`many.sizes_mix`), each timed as `ccusage <agent> session --json --offline` and as
`condense cost --by session -f json` reading every file (`--no-cache`, one process
and two) and from its cache (warmed by a run before).

The trees hold hard links into the pool of generated logs, so sessions repeat:
ccusage and condense both count a repeated call once, and both read every file.

    python bench/cost_tree.py                   # 400 MB a tree, 5 runs
    python bench/cost_tree.py --megabytes 100 --runs 2
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import logs, many
from bench.measure import Launcher, machine_facts
from bench.peers import CCUSAGE_VERSION, ccusage_binary

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
AGENTS = {"claude-code": "claude", "codex": "codex"}


def build(root: Path, dialect: str, megabytes: int, data: Path, seed: int) -> tuple[Path, int]:
    """A client's folder under `root` holding about `megabytes` of `dialect`'s sessions;
    the folder to give `condense cost`, and the files' count."""
    pool = {size: logs.ensure_log(data, dialect, size, seed) for size in many.SIZES}
    rng = random.Random(seed)
    total = files = 0
    while total < megabytes * 1_000_000:
        source = pool[many.sizes_mix(1, rng)[0]]
        name = f"{files:08d}-0000-4000-8000-000000000000"
        if dialect == "claude-code":
            target = root / "projects" / f"-home-dev-project-{files % 30}" / f"{name}.jsonl"
        else:
            day = f"{1 + files % 28:02}"
            target = (
                root
                / "sessions"
                / "2026"
                / "11"
                / day
                / f"rollout-2026-11-{day}T00-00-00-{name}.jsonl"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(source, target)
        total += source.stat().st_size
        files += 1
    return root / ("projects" if dialect == "claude-code" else "sessions"), files


def timed(launcher: Launcher, argv: list[str], env: dict[str, str], runs: int) -> dict[str, Any]:
    times = [launcher.run(argv, env=env, timeout=600)[0] for _ in range(runs)]
    return {"seconds": statistics.median(times), "runs": times}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=400)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "cost-tree.json")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    binary = ccusage_binary()
    if isinstance(binary, str):
        raise SystemExit(f"ccusage cannot be had: {binary}")
    rows = []
    with tempfile.TemporaryDirectory() as scratch, Launcher() as launcher:
        for dialect, agent in AGENTS.items():
            home = Path(scratch) / dialect
            folder, files = build(home, dialect, args.megabytes, args.data.resolve(), args.seed)
            cache = Path(scratch) / f"cache-{dialect}"
            env = {**os.environ, "PYTHONPATH": str(ROOT), "TZ": "UTC"}
            env |= {"XDG_CACHE_HOME": str(cache), "CLAUDE_CONFIG_DIR": str(home)}
            env |= {"CODEX_HOME": str(home)}
            env.pop("CI", None)
            cost = [*many.condense_argv(ROOT), "cost", str(folder), "--by", "session", "-f", "json"]
            variants = {
                f"ccusage {CCUSAGE_VERSION}": [
                    str(binary),
                    agent,
                    "session",
                    "--json",
                    "--offline",
                ],
                "condense cost --no-cache -j 1": [*cost, "--no-cache", "-j", "1"],
                "condense cost --no-cache -j 2": [*cost, "--no-cache", "-j", "2"],
                "condense cost (cached)": cost,
            }
            launcher.run(cost, env=env, timeout=600)  # the cache warmed
            for name, command in variants.items():
                row = {"dialect": dialect, "files": files, "megabytes": args.megabytes}
                row |= {"variant": name, **timed(launcher, command, env, args.runs)}
                rows.append(row)
                print(f"{dialect:12} {name:32} {row['seconds']:.3f} s", flush=True)
            shutil.rmtree(home)
    result = {"machine": machine_facts(args.runs), "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
