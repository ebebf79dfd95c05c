"""Timing real processes: one run, and many runs taken in turn.

Every figure is the wall time of a real subprocess (its output discarded) and its
peak memory as `os.wait4` reports it: the `ru_maxrss` of the process and of every
child it waited for. On Linux that covers a forked worker the command reaps before
it exits (`tests/test_bench.py` checks it); it is the largest of those processes,
not their sum. Commands are started by a small launcher process, because a process
started by a big one reports at least the big one's size.

`Code` says which checkout of `condense` a command runs: the same interpreter, with
`PYTHONPATH` set to the checkout and `-P` so that the working directory cannot take
precedence. That is how the benchmark times an earlier commit beside the current one.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


class RunFailed(Exception):
    """A timed command exited with an error, or ran out of time (`timed_out`)."""

    def __init__(self, message: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


@dataclass(frozen=True)
class Code:
    """A checkout of `condense` to run: its root (holding `condense_cli/`)."""

    root: Path
    label: str = "current"

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-P", "-m", "condense_cli", *args]

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(self.root)
        env.update(extra or {})
        return env


def check_checkout(root: Path) -> Path:
    """`root` resolved, or SystemExit when it holds no `condense_cli` package."""
    root = root.resolve()
    if not (root / "condense_cli" / "__init__.py").is_file():
        raise SystemExit(
            f"{root} is not a checkout of condense (no condense_cli/__init__.py); "
            "make one with: git worktree add /tmp/base <commit>"
        )
    # Compiled once here, as an installed package is: with PYTHONDONTWRITEBYTECODE set
    # (it is on the project's machine) every run would otherwise compile its source.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(root / "condense_cli")], check=True
    )
    return root


# The launcher: a small Python process that starts each timed command (fork, exec)
# and reaps it with wait4. On Linux a process's ru_maxrss starts from what it was
# before exec, so a command started by a big process would report at least that
# process's size; started by this one, it reports its own peak (or about 8 MB).
LAUNCHER = r"""
import json, os, signal, sys, time
child = 0
def stop(signum, frame):
    if child:
        try:
            os.killpg(child, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
signal.signal(signal.SIGALRM, stop)
def group_pss_kb(group):
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if int(fields[2]) != group:
                continue
            with open(f"/proc/{name}/smaps_rollup", "rb") as f:
                for row in f:
                    if row.startswith(b"Pss:"):
                        total += int(row.split()[1])
                        break
        except (OSError, IndexError, ValueError):
            pass
    return total
for line in sys.stdin:
    job = json.loads(line)
    errors = os.open(job["errors"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            if job["cwd"]:
                os.chdir(job["cwd"])
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(os.open(job["stdin"], os.O_RDONLY) if job["stdin"] else null, 0)
            os.dup2(null, 1)
            os.dup2(errors, 2)
            os.execve(job["argv"][0], job["argv"], job["env"])
        finally:
            os._exit(127)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    child = pid
    if job["timeout"]:
        signal.setitimer(signal.ITIMER_REAL, job["timeout"])
    tree = 0
    if job["sample"]:
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            tree = max(tree, group_pss_kb(pid))
            time.sleep(0.02)
    else:
        _, status, usage = os.wait4(pid, 0)
    signal.setitimer(signal.ITIMER_REAL, 0)
    child = 0
    seconds = time.perf_counter() - start
    os.close(errors)
    code = os.waitstatus_to_exitcode(status)
    late = bool(job["timeout"]) and code == -signal.SIGKILL and seconds >= job["timeout"]
    sys.stdout.write(json.dumps([seconds, usage.ru_maxrss, code, late, tree]) + "\n")
    sys.stdout.flush()
"""


class Launcher:
    """Starts timed commands from a small process of its own (see LAUNCHER)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-S", "-c", LAUNCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        fd, self.errors = tempfile.mkstemp(prefix="bench-stderr-")
        os.close(fd)

    def run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float | None = None,
        stdin: str | None = None,
    ) -> tuple[float, float]:
        """Wall seconds and peak MB of one run of `argv` (its standard input the file
        `stdin`, else none); RunFailed when it fails or is still running after
        `timeout` seconds (it and its process group are killed)."""
        seconds, peak, _ = self._run(argv, env, cwd, timeout, sample=False, stdin=stdin)
        return seconds, peak

    def tree_peak(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float | None = None,
        stdin: str | None = None,
    ) -> float:
        """The peak MB of one run of `argv` summed over all its processes: the PSS of
        its process group, sampled every 20 ms (an extra run; its time is not used)."""
        return self._run(argv, env, cwd, timeout, sample=True, stdin=stdin)[2]

    def _run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None,
        cwd: Path | None,
        timeout: float | None,
        sample: bool,
        stdin: str | None = None,
    ) -> tuple[float, float, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        job = {
            "argv": list(argv),
            "env": dict(env if env is not None else os.environ),
            "cwd": str(cwd) if cwd else None,
            "errors": self.errors,
            "timeout": timeout,
            "sample": sample,
            "stdin": stdin,
        }
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RunFailed(f"the launcher died running {' '.join(argv)}")
        seconds, maxrss_kb, code, late, tree_kb = json.loads(answer)
        if late:
            raise RunFailed(f"timed out after {timeout:g} s: {' '.join(argv)}", timed_out=True)
        if code != 0:
            message = Path(self.errors).read_bytes()[:2000].decode(errors="replace")
            raise RunFailed(f"exit {code}: {' '.join(argv)}: {message.strip()}")
        return seconds, maxrss_kb / 1024, tree_kb / 1024

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()
        Path(self.errors).unlink(missing_ok=True)

    def __enter__(self) -> Launcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def machine_facts(runs: int, **more: object) -> dict[str, object]:
    """What a result file says of the machine and the run (and `more`)."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d"),
        "runs": runs,
        **more,
    }


@dataclass
class Job:
    """One command to time, in one variant (the current code, a baseline, a floor)."""

    name: str
    variant: str
    argv: list[str]
    env: dict[str, str] | None = None
    runs: int = 1
    times: list[float] = field(default_factory=list)
    peaks: list[float] = field(default_factory=list)
    error: str | None = None
    required: bool = True  # a failure stops the benchmark (else it is recorded)
    timeout: float | None = None  # seconds; a run still going then is stopped and recorded
    timed_out: bool = False
    tree: float | None = None  # peak MB summed over its processes (one sampled run)
    stdin: str | None = None  # a file given as its standard input (a hook's JSON)

    @property
    def seconds(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def spread(self) -> tuple[float, float] | None:
        return (min(self.times), max(self.times)) if self.times else None

    @property
    def peak(self) -> float | None:
        return max(self.peaks) if self.peaks else None


def measure_all(
    launcher: Launcher, jobs: Sequence[Job], cwd: Path | None = None, tree: bool = False
) -> None:
    """Run every job its number of times, in rounds: each round takes every job once,
    so that the machine's drift falls on all of them alike. Jobs of one command (its
    variants) are neighbours and alternate their order from round to round."""
    for round_ in range(max((job.runs for job in jobs), default=0)):
        groups: dict[str, list[Job]] = {}
        for job in jobs:
            groups.setdefault(job.name, []).append(job)
        for group in groups.values():
            ordered = group if round_ % 2 == 0 else group[::-1]
            for job in ordered:
                if round_ >= job.runs or job.error is not None:
                    continue
                try:
                    seconds, peak = launcher.run(job.argv, job.env, cwd, job.timeout, job.stdin)
                except RunFailed as exc:
                    if job.required and not exc.timed_out:
                        raise
                    job.error, job.timed_out = str(exc), exc.timed_out
                    continue
                job.times.append(seconds)
                job.peaks.append(peak)
    if tree:  # one more, sampled run of each current command that ran cleanly
        for job in jobs:
            if job.variant == "current" and job.error is None and job.times:
                try:
                    job.tree = launcher.tree_peak(job.argv, job.env, cwd, job.timeout, job.stdin)
                except RunFailed as exc:
                    job.error = f"the sampled run: {exc}"
