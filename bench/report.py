"""Benchmark `condense report` on big sessions: the command's wall time and peak memory,
the page's size, and, in Debian's headless Chromium (driven by Playwright, when both are
on the machine), how long the page takes to open and to find a line of the session's
last event (which sits in the last lazily loaded chunk).

The sessions are generated Claude Code sessions (the corpus' shapes, compactions kept),
by default of 4,000, 20,000 and 40,000 events (about 10, 50 and 100 MB).

    python bench/report.py                          # 10 / 50 / 100 MB, 3 runs
    python bench/report.py --events 400 --runs 1    # a quick look
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import logs
from bench.measure import Launcher, machine_facts

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KIND = "claude-code"
# Chromium as the tests start it: headless, and asking nothing of the network.
LAUNCH = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]


def condense_argv() -> list[str]:
    return [sys.executable, "-c", "from condense_cli.entry import main; main()"]


def needle(log: Path) -> str:
    """A line of the session's last event with text: what the browser is asked to find."""
    from condense_cli.dialects import read_log

    with read_log(str(log)) as replay:
        last = [e for e in replay.history() if e is not None and e.text.strip()][-1]
    line = max(last.text.splitlines(), key=len).strip()
    return line[:60]


def chromium() -> str | None:
    """Debian's Chromium (`make browser`), or the one `$CONDENSE_CHROMIUM` names."""
    return os.environ.get("CONDENSE_CHROMIUM") or shutil.which("chromium")


def in_browser(page: Path, find: str) -> dict[str, Any] | None:
    """Seconds to open the page, and to find `find` (None without Chromium or Playwright)."""
    executable = chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if executable is None:
        return None
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable, args=LAUNCH)
        tab = browser.new_page(viewport={"width": 1280, "height": 800})
        start = time.perf_counter()
        tab.goto(page.resolve().as_uri(), wait_until="load", timeout=600_000)
        opened = time.perf_counter() - start
        tab.fill("#find", find)
        start = time.perf_counter()
        tab.press("#find", "Enter")
        tab.wait_for_selector(".hit", timeout=600_000)
        found = time.perf_counter() - start
        shown = tab.evaluate("() => document.querySelectorAll('section.event').length")
        browser.close()
    return {"open_s": opened, "find_s": found, "events_in_dom": shown}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="4000,20000,40000", help="comma-separated sizes")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "report.json")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("CI", None)
    rows = []
    with tempfile.TemporaryDirectory() as scratch, Launcher() as launcher:
        for count in (int(n) for n in args.events.split(",")):
            log = logs.ensure_log(args.data.resolve(), KIND, count, args.seed)
            for options in ([], ["--no-tokens"]):
                page = Path(scratch) / f"{count}.html"
                command = [*condense_argv(), "report", str(log), "-o", str(page), *options]
                times, peaks = [], []
                for _ in range(args.runs):
                    seconds, peak = launcher.run(command, env=env, timeout=args.timeout)
                    times.append(seconds)
                    peaks.append(peak)
                row: dict[str, Any] = {
                    "events": count,
                    "log_bytes": logs.size_bytes(log),
                    "options": " ".join(options),
                    "seconds": statistics.median(times),
                    "runs": times,
                    "peak_mb": max(peaks),
                    "page_bytes": page.stat().st_size,
                    "page_events": page.read_bytes().count(b'<section class="event '),
                }
                if not options:
                    row["browser"] = in_browser(page, needle(log))
                rows.append(row)
                print(_line(row), flush=True)
    machine = machine_facts(args.runs)
    result = {"machine": machine, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    print()
    print(table(result))


def _line(row: dict[str, Any]) -> str:
    browser = row.get("browser")
    opened = (
        f"  opens in {browser['open_s']:.1f} s, finds in {browser['find_s']:.2f} s"
        if browser
        else ""
    )
    return (
        f"{row['events']:>7} events {row['log_bytes'] / 1e6:6.0f} MB {row['options']:<12}"
        f"{row['seconds']:7.1f} s {row['peak_mb']:7.0f} MB  page {row['page_bytes'] / 1e6:5.1f} MB"
        + opened
    )


def table(result: dict[str, Any]) -> str:
    """The Markdown table of docs/performance.md."""
    machine = result["machine"]
    lines = [
        f"{machine['cpus']} CPUs, Python {machine['python']}, median of {machine['runs']} runs",
        "",
        "| session | report | wall s | peak MB | page MB | opens in Chromium | finds the last "
        "event |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for row in result["rows"]:
        browser = row.get("browser")
        opened = f"{browser['open_s']:.1f} s" if browser else "n/a"
        found = f"{browser['find_s']:.2f} s" if browser else "n/a"
        if row["options"]:
            opened = found = ""
        lines.append(
            f"| {row['events']:,} events, {row['log_bytes'] / 1e6:,.0f} MB | "
            f"{row['options'] or 'tokens'} | {row['seconds']:.1f} | {row['peak_mb']:,.0f} | "
            f"{row['page_bytes'] / 1e6:,.1f} | {opened} | {found} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
