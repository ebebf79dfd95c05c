"""Benchmark `condense search` over a tree of sessions of every dialect (the tree
`bench/many.py` builds: hard links into a pool of generated logs, mixed and sized as
sessions are): the index built from nothing (`--rebuild`), a query once it is built,
a query after one session grew by a turn, and the index's size. Every command is a
real subprocess with a cache of its own; wall time is the median of `--runs`.

    python bench/search.py                     # 2,000 sessions, 3 runs
    python bench/search.py --logs 300 --runs 1
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import many
from bench.measure import Launcher, machine_facts

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
QUERY = "error test"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "search.json")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    data = args.data.resolve()
    logs_by = many.pool(data, args.seed)
    tree = data / f"search-{args.logs}"
    log_bytes = many.build_tree(tree, args.logs, logs_by, args.seed)
    cache = data / "search-cache"
    shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(cache)}
    env.pop("CI", None)
    search = [*many.condense_argv(ROOT), "search", QUERY, str(tree), "-f", "json"]
    grown = _session_to_grow(tree)
    rows: dict[str, Any] = {}
    with Launcher() as launcher:
        build = [launcher.run([*search, "--rebuild"], env=env)[0] for _ in range(args.runs)]
        query = [launcher.run(search, env=env)[0] for _ in range(args.runs)]
        update = []
        for _ in range(args.runs):
            _grow(grown)
            update.append(launcher.run(search, env=env)[0])
    in_process = _in_process(tree, cache / "condense", args.runs)
    rows = {
        "build_s": statistics.median(build),
        "build_mb_per_s": log_bytes / 1e6 / statistics.median(build),
        "query_s": statistics.median(query),
        "update_after_a_turn_s": statistics.median(update),
        # in a process already running (MCP's search_history): the sessions found and
        # their states compared, then the index's query; and the index's query alone
        "query_in_process_s": statistics.median(in_process["whole"]),
        "index_query_s": statistics.median(in_process["index"]),
        "index_mb": (cache / "condense" / "search.sqlite").stat().st_size / 1e6,
        "runs": {"build": build, "query": query, "update": update, **in_process},
    }
    machine = machine_facts(args.runs, logs=args.logs, log_bytes=log_bytes, query=QUERY)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(orjson.dumps({"machine": machine, **rows}, option=orjson.OPT_INDENT_2))
    print(
        f"{args.logs:,} sessions, {log_bytes / 1e6:,.0f} MB: built in {rows['build_s']:.1f} s "
        f"({rows['build_mb_per_s']:.0f} MB/s), queried in {rows['query_s']:.2f} s, "
        f"after a turn in {rows['update_after_a_turn_s']:.2f} s (in a running process "
        f"{rows['query_in_process_s']:.3f} s, the index's query {rows['index_query_s']:.3f} s); "
        "index "
        f"{rows['index_mb']:.0f} MB"
    )


def _in_process(tree: Path, folder: Path, runs: int) -> dict[str, list[float]]:
    """The query's seconds in this process, as a running `condense mcp` answers it:
    the tree walked and the states compared, then the index's query (`whole`); and
    the index's query alone (`index`)."""
    from condense_cli.analysis.search import SearchIndex
    from condense_cli.dialects.discovery import find_logs

    whole, index_only = [], []
    for _ in range(runs):
        started = time.perf_counter()
        index = SearchIndex(folder)
        logs = find_logs([str(tree)], None, index.files()).logs
        if index.stale(logs):
            raise SystemExit("the index is not up to date with the tree")
        asked = time.perf_counter()
        hits = list(index.search(QUERY, logs, 20))
        done = time.perf_counter()
        index.close()
        if not hits:
            raise SystemExit(f"no hit for {QUERY!r}")
        whole.append(done - started)
        index_only.append(done - asked)
    return {"whole": whole, "index": index_only}


def _session_to_grow(tree: Path) -> Path:
    """A Claude Code session of the tree, made a file of its own (not a link into the
    pool, which other trees share)."""
    session = sorted((tree / "claude" / "projects").rglob("*.jsonl"))[0]
    body = session.read_bytes()
    session.unlink()
    session.write_bytes(body)
    return session


def _grow(session: Path) -> None:
    """One more turn: a user line like the session's last one, with new words."""
    lines = session.read_bytes().splitlines()
    last = orjson.loads(lines[-1])
    line = {
        "type": "user",
        "uuid": f"bench-{len(lines)}",
        "parentUuid": last.get("uuid"),
        "sessionId": last.get("sessionId"),
        "timestamp": last.get("timestamp"),
        "message": {"role": "user", "content": f"one more error test, turn {len(lines)}"},
    }
    with session.open("ab") as out:
        out.write(orjson.dumps(line) + b"\n")


if __name__ == "__main__":
    main()
