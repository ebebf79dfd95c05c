"""`view -f jsonl` of a clean log is a clean log of the same dialect (SPEC section 15):
for every corpus log of every dialect that checks clean, its piped view checks clean,
views back to the same view and converts to the same messages."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CONDENSE, CORPUS, require_corpus

SHARED = CORPUS.parent


def every_log() -> list[Any]:
    found = [
        *sorted(SHARED.glob("openhands/*.jsonl")),
        *sorted(p for p in SHARED.glob("openhands-v1/*") if p.is_dir()),
        *sorted(SHARED.glob("claude-code/*.jsonl")),
        *sorted(SHARED.glob("codex/*.jsonl")),
    ]
    return found or [pytest.param(SHARED / "absent", id="corpus-absent")]


@pytest.mark.parametrize("log", every_log(), ids=lambda p: f"{p.parent.name}/{p.name[:24]}")
def test_a_clean_logs_piped_view_is_a_clean_log_with_the_same_view(log: Path, cli) -> None:
    require_corpus(log.parent)
    checked = cli("check", log)
    assert checked.exit_code == 0, checked.stdout[:2000]  # every corpus log checks clean
    piped = cli("view", log, "-f", "jsonl").stdout_bytes
    again = cli("check", "-", input=piped)
    assert again.exit_code == 0, again.stdout[:2000]
    # no problem of its own: the warnings of the view's events, and no more
    assert again.stdout.count(": warning:") <= checked.stdout.count(": warning:")
    assert ": error" not in again.stdout
    assert cli("view", "-", "-f", "jsonl", input=piped).stdout_bytes == piped
    messages = cli("view", log, "-f", "messages").stdout_bytes
    assert cli("view", "-", "-f", "messages", input=piped).stdout_bytes == messages


def assert_pipes_clean(proc: Any, log: Path) -> None:
    """`view -f jsonl LOG` checks clean, views back to itself and to the same messages,
    through real processes."""
    piped = proc("view", log, "-f", "jsonl").stdout
    checked = proc("check", "-", input=piped)
    assert checked.returncode == 0, checked.stdout
    assert proc("view", "-", "-f", "jsonl", input=piped).stdout == piped
    messages = proc("view", log, "-f", "messages").stdout
    assert proc("view", "-", "-f", "messages", input=piped).stdout == messages


@pytest.mark.parametrize(
    "where", ["claude-code/FundWise.claude-session.jsonl", "codex/edgerunner.codex-session.jsonl"]
)
def test_a_shell_pipe_of_a_view_checks_clean(where: str, tmp_path: Path) -> None:
    """The pipe the issue saw fail, through real processes and a real shell."""
    log = SHARED / where
    require_corpus(log.parent)
    done = subprocess.run(
        f'"{CONDENSE}" view "{log}" -f jsonl | "{CONDENSE}" check -',
        shell=True,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert done.stderr.decode().startswith(f"1 log ok ({where.split('/')[0]}")
