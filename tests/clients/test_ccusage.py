"""`condense cost` beside ccusage (the pinned native binary, `--offline`), on the
same Claude Code sessions and Codex rollouts laid out where each client keeps them:
per session and per day the two agree within 1% (on the corpus: to the cent). One
difference, on purpose: after `condense run` a Claude Code session holds copies of
kept answers, with their old usage; they are no calls, and ccusage counts them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.clients.install import Clients
from tests.conftest import CORPUS, require_corpus

pytestmark = pytest.mark.skipif(
    shutil.which("npm") is None, reason="npm is needed to install ccusage"
)


def home_of(tmp: Path) -> Path:
    """The corpus sessions where the clients keep them, under a home of their own."""
    require_corpus(CORPUS.parent / "codex")
    home = tmp / "home"
    for session in sorted((CORPUS.parent / "claude-code").glob("*.jsonl")):
        folder = home / ".claude" / "projects" / f"-work-{session.stem.split('.')[0]}"
        folder.mkdir(parents=True)
        shutil.copyfile(session, folder / session.name)
    day = home / ".codex" / "sessions" / "2026" / "05" / "04"
    day.mkdir(parents=True)
    for rollout in sorted((CORPUS.parent / "codex").glob("*.jsonl")):
        shutil.copyfile(rollout, day / rollout.name)
    return home


def ccusage(clients: Clients, home: Path, *args: str) -> Any:
    env = {"HOME": str(home), "TZ": "UTC", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [str(clients.ccusage), *args, "--offline", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def cost(proc: Any, home: Path, *args: str) -> Any:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    done = proc("cost", *args, "-f", "json", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_cost_agrees_with_ccusage_per_session_and_per_day(
    clients: Clients, proc: Any, tmp_path: Path
) -> None:
    home = home_of(tmp_path)
    ours = {Path(r["session"]).stem: r for r in cost(proc, home, "--by", "session")["rows"]}
    theirs = {  # (Claude Code's sessions by their id, Codex's by their file)
        s.get("sessionFile", s.get("sessionId")): s.get("costUSD", s.get("totalCost"))
        for agent in ("claude", "codex")
        for s in ccusage(clients, home, agent, "session")["sessions"]
    }
    assert set(ours) == set(theirs)
    for name, row in ours.items():
        assert row["dollars"] == pytest.approx(theirs[name], rel=0.01)
    for by, report, key in (("day", "daily", "daily"), ("week", "weekly", "weekly")):
        ours_by = {r[by]: r["dollars"] for r in cost(proc, home, "--by", by)["rows"]}
        theirs_by = {d["period"]: d["totalCost"] for d in ccusage(clients, home, report)[key]}
        assert ours_by == pytest.approx(theirs_by, rel=0.01), by
    # billing blocks: ccusage draws them for Claude Code's calls, by their start
    claude = home.parent / "claude-only"
    shutil.copytree(home / ".claude", claude / ".claude")
    ours_blocks = {r["block"]: r["dollars"] for r in cost(proc, claude, "--by", "block")["rows"]}
    theirs_blocks = {
        b["startTime"][:16] + "Z": b["costUSD"]  # 2026-04-26T21:00:00.000Z
        for b in ccusage(clients, claude, "blocks")["blocks"]
        if not b["isGap"]
    }
    assert ours_blocks == pytest.approx(theirs_blocks, rel=0.01)


def test_after_condense_run_ccusage_counts_the_copies_and_cost_does_not(
    clients: Clients, proc: Any, tmp_path: Path
) -> None:
    home = home_of(tmp_path)
    [session] = (home / ".claude" / "projects").glob("*posthog*/*.jsonl")
    before = cost(proc, home, "--by", "session")["totals"]["dollars"]
    their_before = ccusage(clients, home, "claude", "daily")["totals"]["totalCost"]
    done = proc("run", session, "--type", "amortized", "-s", "max_size=40", "-s", "keep_first=1")
    assert done.returncode == 0, done.stderr
    assert cost(proc, home, "--by", "session")["totals"]["dollars"] == pytest.approx(before)
    assert ccusage(clients, home, "claude", "daily")["totals"]["totalCost"] > their_before


def test_a_gemini_session_costs_what_ccusage_says_after_a_tool_call_and_a_resume(
    clients: Clients, proc: Any, tmp_path: Path
) -> None:
    """The client writes the model's message again with its tool calls, and the whole
    list again when it resumes: each call is counted once, by both."""
    from tests.clients.resume import gemini_run
    from tests.clients.servers import GeminiServer
    from tests.clients.test_gemini_cli import MODEL, READ

    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("the parser lives in src/parse.py\n")
    with GeminiServer() as server:
        server.reply(READ, "The parser is in src/parse.py.")
        first = gemini_run(
            clients.gemini, tmp_path, server, "Where is it?", extra=(*MODEL, "--yolo")
        )
        assert first.returncode == 0, first.stderr[-2000:]
    with GeminiServer() as server:
        server.reply("Fine.")
        again = gemini_run(clients.gemini, tmp_path, server, "Thanks.", True, MODEL)
        assert again.returncode == 0 and again.session == first.session
    home = tmp_path / "home"
    [ours] = cost(proc, home, "--by", "session")["rows"]
    [theirs] = ccusage(clients, home, "gemini", "session")["sessions"]
    assert ours["calls"] == 3  # the call, the answer after the tool, the resumed turn
    assert (ours["input"], ours["output"]) == (theirs["inputTokens"], theirs["outputTokens"])
    assert ours["dollars"] == pytest.approx(theirs["totalCost"], rel=0.01)
