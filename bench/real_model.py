"""The LLM condensers with a real local model: seconds, calls and facts kept.

Starts SmolLM2-135M behind llama.cpp's server (installed by `make model`) on 127.0.0.1,
runs each LLM condenser (`run --force`) on the first `--lines` lines of one corpus
session of each dialect, and `condense audit` on the result. Prints a Markdown table:
seconds and model calls per 100 forgotten events, and the share of the forgotten
events' facts the summary kept (audit's figure; OpenHands' own summaries in the V1
corpus are the row to compare with: `condense audit ../shared/corpus/openhands-v1/*/`).

    .venv/bin/python bench/real_model.py [--lines 80] [--out bench/results/...md]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from tests.condensers.test_real_model import CONDENSERS, SESSIONS, session_copy  # noqa: E402
from tests.real_model import ModelServer, serving  # noqa: E402

CONDENSE = Path(sys.executable).parent / "condense"
CALLS = re.compile(r"(\d+) calls")


def run(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CONDENSE), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=3600
    )


def kept_share(log: Path, cwd: Path) -> str:
    """The share of facts the newest condensation's summary kept (or kept in view)."""
    done = run("audit", log, "--format", "json", cwd=cwd)
    if done.returncode not in (0, 1):
        return "-"
    condensations = json.loads(done.stdout).get("condensations") or []
    if not condensations:
        return "-"
    figures = condensations[-1].get("all") or {}
    share = figures.get("kept_percent")
    return f"{share:.0f}% of {figures.get('facts', 0)}" if share is not None else "-"


def measure(model: ModelServer, dialect: str, condenser: str, lines: int) -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        log = session_copy(dialect, tmp, lines)
        config = tmp / "config.toml"
        config.write_text(model.config() + CONDENSERS[condenser])
        before = json.loads(run("view", log, "--format", "json", cwd=tmp).stdout)["forgotten"]
        start_time = time.perf_counter()
        done = run("run", log, "-c", config, "--force", cwd=tmp)
        seconds = time.perf_counter() - start_time
        if done.returncode != 0:
            return [dialect, condenser, "failed", "-", "-", "-", done.stderr.strip()[:80]]
        after = json.loads(run("view", log, "--format", "json", cwd=tmp).stdout)["forgotten"]
        forgotten = max(1, after - before)
        found = CALLS.search(done.stderr)
        calls = int(found.group(1)) if found else 1
        per = 100 / forgotten
        return [
            dialect,
            condenser,
            f"{forgotten}",
            f"{seconds:.1f}",
            f"{seconds * per:.1f}",
            f"{calls * per:.1f}",
            kept_share(log, tmp),
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=80)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--dialects", default=",".join(SESSIONS), help="comma-separated")
    args = parser.parse_args()
    header = [
        "dialect",
        "condenser",
        "forgotten",
        "seconds",
        "s / 100 forgotten",
        "calls / 100 forgotten",
        "facts kept",
    ]
    rows = [header, ["---"] * len(header)]
    with tempfile.TemporaryDirectory() as folder, serving(Path(folder)) as model:
        for dialect in args.dialects.split(","):
            for condenser in CONDENSERS:
                rows.append(measure(model, dialect, condenser, args.lines))
                print(" | ".join(rows[-1]), file=sys.stderr)
    table = "\n".join("| " + " | ".join(row) + " |" for row in rows) + "\n"
    print(table)
    if args.out:
        args.out.write_text(table)


if __name__ == "__main__":
    main()
