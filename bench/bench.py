"""Benchmark `condense` on generated logs, against the floors and an earlier checkout.

Logs (see `bench/logs.py`): OpenHands V0 logs of two kinds, `uniform` (the generator
of the earlier figures) and `realistic`, at `--sizes`; and logs of the other dialects
(an OpenHands V1 conversation folder and its JSONL form, a Claude Code session, a Codex
rollout) at `--dialect-sizes`. Every command is a real subprocess, timed in rounds
with the floors a user would compare with (reading every line; `orjson.loads` of
every line or event file), with a peer where one reads the same log (ccusage's native
binary beside `cost` on a Claude Code session and a Codex rollout; see `bench/peers.py`)
and, with `--baseline DIR`, with the same command run from an earlier checkout (same
interpreter, `PYTHONPATH=DIR`), interleaved run by run. condense's cache is the
benchmark's own (`XDG_CACHE_HOME` in its data folder).
Medians, their spread and the peak memory go to a table and `bench/results.json`.

    python bench/bench.py                                # the full benchmark (GBs of logs)
    python bench/bench.py --sizes 10000 --runs 1 --dialects none
    git worktree add /tmp/base 958ac9f && python bench/bench.py --baseline /tmp/base
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import bounds, logs, peers
from bench.measure import Code, Job, Launcher, check_checkout, machine_facts, measure_all

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LOG = "{log}"  # stands for the log's path in a command
HALF = "{half}"  # half the log's events: a line, position or id to give `--upto`
STDIN = "{stdin}"  # the argument after it is the file given as standard input
HOOK_INPUT = "{hook input}"  # a hook's JSON naming the log, as its client sends it

FLOOR_READ = """import os, sys
path = sys.argv[1]
if os.path.isdir(path):
    folder = os.path.join(path, "events")
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f: f.read()
else:
    with open(path, "rb") as f:
        for line in f: pass
"""
FLOOR_LOADS = """import os, sys, orjson
loads = orjson.loads
path = sys.argv[1]
if os.path.isdir(path):
    folder = os.path.join(path, "events")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name), "rb") as f: loads(f.read())
else:
    with open(path, "rb") as f:
        for line in f: loads(line)
"""
FLOORS = {"floor: read lines": FLOOR_READ, "floor: orjson.loads": FLOOR_LOADS}
LOADS = "floor: orjson.loads"
# The fast path's reading alone, in one process, with the current code (`bounds.py`):
# on two cores, half of it is as low as `view` and `check` can go by this design.
BOUND = "bound: validate and decode"

COMMANDS: dict[str, list[str]] = {
    "view --format jsonl": ["view", LOG, "--format", "jsonl"],
    "view --format json": ["view", LOG, "--format", "json"],
    "check": ["check", LOG],
    "stats": ["stats", LOG, "--format", "json"],
    "stats --no-tokens": ["stats", LOG, "--format", "json", "--no-tokens"],
    "audit": ["audit", LOG, "--format", "json"],
    "run amortized --dry-run": [
        "run",
        LOG,
        "--type",
        "amortized_forgetting",
        "--dry-run",
        "--force",
    ],
    "simulate llm (placeholder summaries)": ["simulate", LOG, "--type", "llm", "--format", "json"],
    # what the session cost: reading its calls, and from condense's cache of them
    "cost --no-cache": ["cost", LOG, "--by", "session", "-f", "json", "--no-cache"],
    "cost (cached)": ["cost", LOG, "--by", "session", "-f", "json"],
    "view --format jsonl --upto half": ["view", LOG, "--format", "jsonl", "--upto", HALF],
    "diff --upto half": ["diff", LOG, "--upto", HALF, "--format", "json"],
    # inside the agent: the hook's JSON (naming the log) on standard input
    "hook pre-compact": ["hook", "pre-compact", STDIN, HOOK_INPUT],
    "hook post-compact": ["hook", "post-compact", STDIN, HOOK_INPUT],
}
HOOK_COMMANDS = ("hook pre-compact", "hook post-compact")
HOOK_DIALECTS = ("claude-code", "codex")  # the clients with hooks
DIALECT_COMMANDS = (
    *HOOK_COMMANDS,
    "view --format jsonl",
    "view --format json",
    "check",
    "stats",
    "stats --no-tokens",
    "audit",
    "run amortized --dry-run",
    "simulate llm (placeholder summaries)",
    "cost --no-cache",
    "cost (cached)",
    "view --format jsonl --upto half",
    "diff --upto half",
)
COST_COMMANDS = ("cost --no-cache", "cost (cached)")
CACHED = "cost (cached)"  # run once before it is timed: the cache then holds the log
STARTUP: dict[str, list[str]] = {
    "start-up: view tiny --format jsonl": ["view", LOG, "--format", "jsonl"],
    "start-up: view tiny": ["view", LOG],
    "start-up: --version": ["--version"],
}
# `simulate` steps a condenser after every event (23 s for 100k V0 events): on the V0
# logs, which go up to 1M events, it is timed up to this size.
SIMULATE_MAX_BYTES = 400_000_000

# Issue 15's targets.
LOADS_TARGET = 0.5  # `view --format jsonl` and `check`, x the orjson.loads floor, at 1M
MEMORY_LIMIT_MB = 150
MEMORY_AIM_MB = 60
STARTUP_TARGET_S = 0.12
STATS_TARGET = 0.4  # x the baseline's `stats`
PEER = "peer: "  # a peer's variant starts so; the rest is what the report calls it
PEER_COMMAND = "cost --no-cache"  # the command timed beside ccusage
TARGET_EVENTS = 1_000_000

PEAK_NOTE = (
    "peak MB is ru_maxrss from os.wait4: the largest resident set of the command's "
    "process and of every child it waited for (a forked scan worker that is reaped is "
    "included; tests/test_bench.py verifies this on Linux). It is the largest of those "
    "processes, not their sum; --tree-memory adds tree MB, the sum over all of them "
    "(proportional set sizes, so pages a forked worker shares count once), sampled "
    "every 20 ms in one extra run."
)


def runs_for(command: str, log_bytes: int, events: int, runs: int) -> int:
    """How often to time a command on a log: fewer runs where one takes minutes."""
    if command in ("stats", "audit"):
        if log_bytes >= 1_000_000_000:
            return 1
        if log_bytes >= 100_000_000:
            return min(runs, 3)
    return max(3, runs // 2) if events >= TARGET_EVENTS and runs > 3 else runs


def group_jobs(
    log: Path,
    names: list[str],
    codes: list[Code],
    runs: dict[str, int],
    table: dict[str, list[str]],
    timeout: float | None = None,
    half: int = 1,
) -> list[Job]:
    """The jobs that time `names` on `log` in every variant, floors first (`half`:
    what `HALF` stands for)."""
    jobs = [
        Job(name, "floor", [sys.executable, "-c", script, str(log)], runs=runs[name])
        for name, script in FLOORS.items()
        if name in runs
    ]
    hook_input = log.with_name(log.name + ".hook.json")
    for name in names:
        args = [
            {LOG: str(log), HALF: str(half), HOOK_INPUT: str(hook_input)}.get(a, a)
            for a in table[name]
        ]
        stdin = None
        if STDIN in args:  # `STDIN FILE`: the file is the command's standard input
            at = args.index(STDIN)
            stdin, args = args[at + 1], args[:at] + args[at + 2 :]
            hook_input.write_bytes(orjson.dumps({"transcript_path": str(log), "trigger": "auto"}))
        for code in codes:
            required = code.label == "current"
            jobs.append(
                Job(
                    name,
                    code.label,
                    code.argv(*args),
                    # the bench's, one a checkout: the caches key what they hold by
                    # the code that read it, so a shared one flips between the two
                    code.env({"XDG_CACHE_HOME": str(log.parent / f"cache-{code.label}")}),
                    runs=runs[name],
                    required=required,
                    timeout=timeout,
                    stdin=stdin,
                )
            )
    return jobs


def timeout_for(log_bytes: int, override: float | None) -> float:
    """How long one run may take before it is stopped: `--timeout`, else a second per
    MB of log (two minutes at least)."""
    return override if override is not None else max(120.0, log_bytes / 1e6)


def _figures(job: Job, prefix: str, floor_s: float | None, startup: bool) -> dict[str, Any]:
    """A job's median, spread, peak and ratio to the floor, or why it has none."""
    out: dict[str, Any] = {}
    if job.seconds is not None and job.spread is not None:
        out[f"{prefix}seconds"] = round(job.seconds, 3)
        out[f"{prefix}min"] = round(job.spread[0], 3)
        out[f"{prefix}max"] = round(job.spread[1], 3)
        out[f"{prefix}peak_mb"] = round(job.peak or 0.0, 1)
        if not startup and floor_s:
            out[f"{prefix}ratio_to_loads"] = round(job.seconds / floor_s, 2)
    if job.timed_out:
        out[f"{prefix}timed_out"] = job.timeout
    elif job.error is not None:
        out[f"{prefix}error"] = job.error.splitlines()[0][:200]
    return out


def rows_of(kind: str, events: int, log_bytes: int, jobs: list[Job]) -> list[dict[str, Any]]:
    """One row per command: the current figures, and the baseline's beside them."""
    mb = log_bytes / 1e6
    by = {(j.name, j.variant): j for j in jobs}
    floor = by.get((LOADS, "floor"))
    floor_s = floor.seconds if floor is not None else None
    rows = []
    for name in dict.fromkeys(j.name for j in jobs):
        main = by.get((name, "floor")) or by[(name, "current")]
        startup = name.startswith("start-up")
        row: dict[str, Any] = {
            "log": kind,
            "events": events,
            "log_mb": round(mb, 1),
            "command": name,
            "runs": len(main.times),
            **_figures(main, "", floor_s, startup),
        }
        if main.tree is not None:
            row["tree_mb"] = round(main.tree, 1)
        seconds = row.get("seconds")
        if seconds is not None and not startup:
            row["events_per_s"] = round(events / seconds)
            row["mb_per_s"] = round(mb / seconds, 1)
        peer = next((j for j in jobs if j.name == name and j.variant.startswith(PEER)), None)
        if peer is not None:
            row["peer"] = peer.variant.removeprefix(PEER)
            row.update(_figures(peer, "peer_", floor_s, startup))
            if seconds is not None and row.get("peer_seconds"):
                row["over_peer"] = round(seconds / row["peer_seconds"], 2)
        before = by.get((name, "baseline"))
        if before is not None:
            row.update(_figures(before, "before_", floor_s, startup))
            if seconds is not None and row.get("before_seconds"):
                row["after_over_before"] = round(seconds / row["before_seconds"], 2)
        rows.append(row)
        print(_progress(row), file=sys.stderr)
    return rows


def _seconds(row: dict[str, Any], prefix: str = "") -> str:
    """A median as the table shows it, or what became of the runs."""
    if f"{prefix}timed_out" in row and f"{prefix}seconds" not in row:
        return f"> {row[f'{prefix}timed_out']:.0f} (stopped)"
    if f"{prefix}error" in row and f"{prefix}seconds" not in row:
        return "failed"
    return _num(row.get(f"{prefix}seconds"))


def _progress(row: dict[str, Any]) -> str:
    line = f"{row['log']:>18} {row['events']:>9,} {row['command']:36s} {_seconds(row):>9} s"
    line += f" {_num(row.get('peak_mb'), 1):>7} MB"
    if "before_seconds" in row or "before_error" in row or "before_timed_out" in row:
        line += f"   before {_seconds(row, 'before_')} s"
        if "after_over_before" in row:
            line += f" ({row['after_over_before']}x)"
    if "peer" in row:
        line += f"   {row['peer'].split()[0]} {_seconds(row, 'peer_')} s"
    return line


def bench_log(
    launcher: Launcher,
    kind: str,
    events: int,
    data: Path,
    codes: list[Code],
    runs: int,
    only: set[str] | None,
    seed: int,
    timeout: float | None = None,
    tree: bool = False,
    with_peers: bool = True,
) -> list[dict[str, Any]]:
    """Time every command that applies to one generated log, and its peers."""
    log = logs.ensure_log(data, kind, events, seed)
    log_bytes = logs.size_bytes(log)
    names = list(COMMANDS) if kind in logs.V0_KINDS else list(DIALECT_COMMANDS)
    names = [
        n
        for n in names
        if (only is None or n in only)
        and not (
            n.startswith("simulate") and kind in logs.V0_KINDS and log_bytes > SIMULATE_MAX_BYTES
        )
        and (n not in HOOK_COMMANDS or logs.KINDS[kind].dialect in HOOK_DIALECTS)
        and (n not in COST_COMMANDS or logs.KINDS[kind].dialect in peers.AGENTS)
    ]
    dialect = logs.KINDS[kind].dialect
    bounded = dialect in bounds.DIALECTS and log.is_file()
    plan = {
        n: runs_for(n, log_bytes, events, runs)
        for n in [*FLOORS, *([BOUND] if bounded else []), *names]
    }
    limit = timeout_for(log_bytes, timeout)
    jobs = group_jobs(log, names, codes, plan, COMMANDS, limit, half=max(1, events // 2))
    if bounded:
        current = next(code for code in codes if code.label == "current")
        argv = [sys.executable, str(HERE / "bounds.py"), str(log), dialect]
        jobs.insert(len(FLOORS), Job(BOUND, "floor", argv, current.env(), plan[BOUND]))
    if with_peers and PEER_COMMAND in names:
        peer = peer_jobs(log, dialect, data, plan[PEER_COMMAND], timeout_for(log_bytes, timeout))
        jobs += peer
    for job in jobs:
        if job.name == CACHED:
            subprocess.run(job.argv, env=job.env, cwd=data, capture_output=True, check=False)
    measure_all(launcher, jobs, cwd=data, tree=tree)
    return rows_of(kind, events, log_bytes, jobs)


def peer_jobs(log: Path, dialect: str, data: Path, runs: int, timeout: float) -> list[Job]:
    """ccusage on a Claude Code session or a Codex rollout, beside `cost`; none (said
    so) when it cannot be installed."""
    binary = peers.ccusage_binary()
    if isinstance(binary, str):
        print(f"no ccusage beside {PEER_COMMAND}: {binary}", file=sys.stderr)
        return []
    peer = peers.ccusage_on(log, dialect, data, binary)
    variant = PEER + peer.label
    return [Job(PEER_COMMAND, variant, peer.argv, peer.env, runs, required=False, timeout=timeout)]


def bench_startup(
    launcher: Launcher, data: Path, codes: list[Code], runs: int
) -> list[dict[str, Any]]:
    """Start-up: `view` of a 10-event log (as JSONL and as text) and `--version`."""
    tiny = logs.ensure_log(data, "uniform", 10)
    plan = dict.fromkeys(STARTUP, max(5, runs * 2))
    jobs = group_jobs(tiny, list(STARTUP), codes, plan, STARTUP, timeout=60.0)
    measure_all(launcher, jobs, cwd=data)
    return rows_of("uniform", 10, logs.size_bytes(tiny), jobs)


# --- reporting ---------------------------------------------------------------------------


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}"


def _spread(row: dict[str, Any], prefix: str = "") -> str:
    if f"{prefix}min" not in row:
        return "-"
    return f"{row[f'{prefix}min']:.3f}-{row[f'{prefix}max']:.3f}"


def table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table; the baseline's columns when any row has them."""
    compare = any(key.startswith("before_") for r in rows for key in r)
    tree = any("tree_mb" in r for r in rows)
    beside = any("peer" in r for r in rows)
    head = [
        "log",
        "events",
        "log MB",
        "command",
        "runs",
        "seconds",
        "min-max",
        "events/s",
        "MB/s",
        "peak MB",
        "x orjson.loads",
    ]
    if tree:
        head.insert(head.index("peak MB") + 1, "tree MB")
    if compare:
        head += ["before s", "before min-max", "after/before", "before peak MB", "before x loads"]
    if beside:
        head += ["peer", "peer s", "peer peak MB", "x peer"]
    lines = [
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---" if h in ("log", "command") else "---:" for h in head) + "|",
    ]
    for r in rows:
        cells = [
            r["log"],
            _num(r["events"]),
            _num(r["log_mb"], 1),
            r["command"],
            str(r["runs"]),
            _seconds(r),
            _spread(r),
            _num(r.get("events_per_s")),
            _num(r.get("mb_per_s"), 1),
            _num(r.get("peak_mb"), 1),
            _num(r.get("ratio_to_loads"), 2),
        ]
        if tree:
            cells.insert(head.index("tree MB"), _num(r.get("tree_mb"), 1))
        if compare:
            floor = r["command"].startswith(("floor", "bound"))
            cells += (
                ["-"] * 5
                if floor
                else [
                    _seconds(r, "before_"),
                    _spread(r, "before_"),
                    _num(r.get("after_over_before"), 2),
                    _num(r.get("before_peak_mb"), 1),
                    _num(r.get("before_ratio_to_loads"), 2),
                ]
            )
        if beside:
            peer_cells = [r.get("peer", "-"), _seconds(r, "peer_"), _num(r.get("peer_peak_mb"), 1)]
            cells += [*peer_cells, _num(r.get("over_peer"), 2)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """Issue 15's targets, met or missed, on the largest V0 log of each kind; and each
    peer, beaten or not."""
    out: list[str] = []

    def say(what: str, ok: bool, where: str = "") -> None:
        out.append(f"{what}: {'met' if ok else 'MISSED'}{where}")

    for kind in logs.V0_KINDS:
        mine = [r for r in rows if r["log"] == kind and not r["command"].startswith("start-up")]
        if not mine:
            continue
        largest = max(r["events"] for r in mine)
        where = f" ({kind}, {largest:,} events" + (
            ")" if largest >= TARGET_EVENTS else f"; the target is for {TARGET_EVENTS:,})"
        )
        for r in (r for r in mine if r["events"] == largest):
            command = r["command"]
            if command in ("view --format jsonl", "check"):
                ratio, peak = r.get("ratio_to_loads"), r.get("peak_mb")
                what = "peak"
                if peak is not None and r.get("tree_mb", 0) > peak:
                    peak, what = r["tree_mb"], "peak summed over its processes"
                if ratio is None or peak is None:
                    say(f"{command}: no figure ({_seconds(r)})", False, where)
                    continue
                say(
                    f"{command}: {ratio}x orjson.loads (target <= {LOADS_TARGET}x)",
                    ratio <= LOADS_TARGET,
                    where,
                )
                say(
                    f"{command} {what} {peak} MB (limit < {MEMORY_LIMIT_MB} MB)",
                    peak < MEMORY_LIMIT_MB,
                    where,
                )
                say(
                    f"{command} {what} {peak} MB (aim <= {MEMORY_AIM_MB} MB)",
                    peak <= MEMORY_AIM_MB,
                    where,
                )
            if command == "stats" and "after_over_before" in r:
                ratio = r["after_over_before"]
                say(
                    f"stats: {ratio}x the baseline's (target <= {STATS_TARGET}x)",
                    ratio <= STATS_TARGET,
                    where,
                )
    for r in rows:
        if "peer_seconds" in r and "seconds" in r:
            say(
                f"{r['command']}: {r['seconds']} s against {r['peer']}: {r['peer_seconds']} s "
                "(target: faster)",
                r["seconds"] < r["peer_seconds"],
                f" ({r['log']}, {r['events']:,} events)",
            )
        if r["command"].startswith("start-up"):
            seconds = r.get("seconds")
            say(
                f"{r['command']}: {_seconds(r)} s (target <= {STARTUP_TARGET_S} s)",
                seconds is not None and seconds <= STARTUP_TARGET_S,
            )
    return out


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip()


def describe(root: Path) -> str:
    """The commit a checkout is at ("+ changes" when its tree differs)."""
    commit = _git(root, "rev-parse", "--short", "HEAD") or "unknown"
    dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
    return commit + (" + changes" if dirty else "")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="10000,100000,1000000",
        help="events in the OpenHands V0 logs (uniform and realistic)",
    )
    parser.add_argument(
        "--logs", default=",".join(logs.V0_KINDS), help="V0 log kinds: uniform, realistic (or none)"
    )
    parser.add_argument(
        "--dialects",
        default=",".join(logs.DIALECT_KINDS),
        help="other dialects' logs: " + ", ".join(logs.DIALECT_KINDS) + " (or none)",
    )
    parser.add_argument(
        "--dialect-sizes", default="10000,100000", help="events in the other dialects' logs"
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a checkout of an earlier commit, timed beside the current code",
    )
    parser.add_argument(
        "--code", type=Path, default=ROOT, help="the checkout to time (default: this one)"
    )
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--out", type=Path, default=HERE / "results.json")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--timeout",
        type=float,
        help="stop a run after this many seconds and record it (default: a second per MB "
        "of log, at least 120)",
    )
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up rows")
    parser.add_argument(
        "--tree-memory",
        action="store_true",
        help="one more run of each command, sampling the memory of all its processes "
        "together (PSS of its process group every 20 ms): the tree MB column",
    )
    parser.add_argument(
        "--no-peers",
        action="store_true",
        help="time no peer (ccusage beside cost on a Claude Code session and a Codex rollout)",
    )
    parser.add_argument(
        "--only", help="comma-separated command names to time (the floors always run)"
    )
    args = parser.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    kinds = _names(args.logs, logs.V0_KINDS, "--logs")
    dialects = _names(args.dialects, logs.DIALECT_KINDS, "--dialects")
    codes = [Code(check_checkout(args.code), "current")]
    if args.baseline is not None:
        codes.append(Code(check_checkout(args.baseline), "baseline"))
    data = args.data.resolve()
    data.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    with Launcher() as launcher:  # first, while this process is small
        if not args.no_startup:
            rows += bench_startup(launcher, data, codes, args.runs)
        every_log = [(size, kind) for size in _sizes(args.sizes) for kind in kinds] + [
            (size, kind) for size in _sizes(args.dialect_sizes) for kind in dialects
        ]
        for size, kind in every_log:
            rows += bench_log(
                launcher,
                kind,
                size,
                data,
                codes,
                args.runs,
                only,
                args.seed,
                args.timeout,
                args.tree_memory,
                not args.no_peers,
            )
    machine = machine_facts(
        args.runs,
        code=describe(codes[0].root),
        baseline=describe(codes[1].root) if len(codes) > 1 else None,
    )
    result = {"machine": machine, "rows": rows, "verdicts": verdicts(rows), "notes": [PEAK_NOTE]}
    args.out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    print(table(rows))
    print()
    for line in result["verdicts"]:
        print(f"- {line}")
    print()
    print(f"Notes: {PEAK_NOTE}")
    compared = f"; baseline {machine['baseline']}" if machine["baseline"] else ""
    print(
        f"{machine['platform']}, Python {machine['python']}, {machine['cpus']} CPUs; "
        f"code {machine['code']}{compared}"
    )


def _sizes(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s.strip()] if text != "none" else []


def _names(text: str, valid: tuple[str, ...], option: str) -> list[str]:
    if text == "none":
        return []
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise SystemExit(
            f"{option}: unknown {', '.join(unknown)}; choose from {', '.join(valid)} or none"
        )
    return names


if __name__ == "__main__":
    main()
