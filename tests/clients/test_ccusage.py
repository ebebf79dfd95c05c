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

from condense_cli.analysis.cost import price_table
from tests.clients.install import Clients
from tests.clients.resume import codex_exec, codex_rollouts, new_claude_session
from tests.clients.servers import AnthropicServer, OpenAIServer
from tests.clients.test_claude_code_today import bash
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


@pytest.mark.parametrize("request_ids", [True, False], ids=["anthropic", "gateway"])
def test_an_answer_of_several_blocks_is_one_call_to_both(
    clients: Clients, proc: Any, tmp_path: Path, request_ids: bool
) -> None:
    """The pinned client writes an answer of several content blocks (thinking, text,
    a tool call) as a line each, every line with the message's id and whole usage, and
    its request id where the API sends one (Anthropic's does; other gateways do not).
    Both tools count one call per answer, with its tokens once."""
    with AnthropicServer(request_ids=request_ids) as server:
        server.reply(
            [
                {"type": "thinking", "thinking": "Read it first. " * 20, "signature": "c2ln"},
                {"type": "text", "text": "I will run it. " * 30},
                bash("toolu_hi", "echo hi"),
            ],
            [{"type": "text", "text": "It printed hi. " * 10}, {"type": "text", "text": "Done."}],
        )
        session = new_claude_session(clients.claude, tmp_path, server, ["Run echo hi."])
    answers = [json.loads(line) for line in session.read_text().splitlines()]
    answers = [a for a in answers if a.get("type") == "assistant"]
    assert len(answers) == 5 and len({a["message"]["id"] for a in answers}) == 2
    assert all(isinstance(a.get("requestId"), str) is request_ids for a in answers)
    home = tmp_path / "home"
    ours = cost(proc, home, "--by", "session", "--no-cache")["totals"]
    [theirs] = ccusage(clients, home, "claude", "session")["sessions"]
    assert ours["calls"] == 2
    assert (ours["input"], ours["output"]) == (theirs["inputTokens"], theirs["outputTokens"])
    assert ours["input"] == 200  # (each answer's 100, once)


def test_a_streamed_answer_counts_its_whole_output_in_both(
    clients: Clients, proc: Any, tmp_path: Path
) -> None:
    """A session as the client wrote them in early 2026 (an answer's lines hold its
    usage as it streamed) and an answer with no request id: both tools take each
    answer once, at its most complete line."""
    from tests.analysis.test_cost import streamed

    home = tmp_path / "home"
    folder = home / ".claude" / "projects" / "-work-streamed"
    folder.mkdir(parents=True)
    streamed(folder)
    ours = cost(proc, home, "--by", "session", "--no-cache")["totals"]
    [theirs] = ccusage(clients, home, "claude", "session")["sessions"]
    assert (ours["calls"], ours["output"]) == (2, 159 + 40)
    assert (ours["input"], ours["output"], ours["cache_read"]) == (
        theirs["inputTokens"],
        theirs["outputTokens"],
        theirs["cacheReadTokens"],
    )
    assert ours["dollars"] == pytest.approx(theirs["totalCost"], abs=1e-6)  # (ours to 6 places)


def test_a_subagents_calls_are_its_sessions_in_both(
    clients: Clients, proc: Any, tmp_path: Path
) -> None:
    """The pinned client runs a subagent (the Task tool) and writes its transcript in
    the session's own folder (`<session>/subagents/agent-<id>.jsonl`): both tools
    count its call in the session that started it, one row with all four calls."""
    with AnthropicServer(request_ids=True) as server:
        task = {
            "description": "look around",
            "prompt": "List the files and say what you found.",
            "subagent_type": "general-purpose",
        }
        server.reply(
            {"type": "tool_use", "id": "toolu_task", "name": "Task", "input": task},
            "The folder is empty.",
            "The subagent says the folder is empty.",
        )
        session = new_claude_session(
            clients.claude, tmp_path, server, ["Look around with a subagent."], tools="Task"
        )
    [transcript] = (session.parent / session.stem / "subagents").glob("agent-*.jsonl")
    home = tmp_path / "home"
    rows = cost(proc, home, "--by", "session", "--no-cache")["rows"]
    [theirs] = ccusage(clients, home, "claude", "session")["sessions"]
    assert [(r["session"], r["calls"]) for r in rows] == [(str(session), 4)]
    assert (rows[0]["input"], rows[0]["output"]) == (theirs["inputTokens"], theirs["outputTokens"])
    alone = cost(proc, home, str(transcript), "--by", "session", "--no-cache")["rows"]
    assert [(r["session"], r["calls"]) for r in alone] == [(str(session), 1)]


def test_fast_mode_and_us_inference_cost_their_surcharges_here_not_in_ccusage(
    clients: Clients, proc: Any, tmp_path: Path
) -> None:
    """The pinned client records how the API served each answer (`speed`,
    `inference_geo`, from the API's own usage). LiteLLM's table gives the model's
    surcharges for them (Claude Opus 5.5: fast 2x, US-only 1.1x) and `cost` applies
    them, as LiteLLM does; ccusage 20.0.24 prices such a session as if served at the
    standard rates (the difference docs/cost.md states)."""
    with AnthropicServer(request_ids=True) as server:
        server.served = {"speed": "fast", "inference_geo": "us"}
        server.reply("Quick answer.", "Another.")
        session = new_claude_session(clients.claude, tmp_path, server, ["Say it.", "Again."])
    answers = [json.loads(line) for line in session.read_text().splitlines()]
    usages = [a["message"]["usage"] for a in answers if a.get("type") == "assistant"]
    assert [(u["speed"], u["inference_geo"]) for u in usages] == [("fast", "us")] * 2
    standard = tmp_path / "standard" / ".claude" / "projects" / session.parent.name
    standard.mkdir(parents=True)
    (standard / session.name).write_text(
        session.read_text()
        .replace('"speed":"fast"', '"speed":"standard"')
        .replace('"inference_geo":"us"', '"inference_geo":""')
    )
    home = tmp_path / "home"
    ours, ours_standard = (
        cost(proc, folder, "--no-cache")["totals"] for folder in (home, tmp_path / "standard")
    )
    assert ours["calls"] == ours_standard["calls"] == 2
    assert ours["dollars"] == pytest.approx(ours_standard["dollars"] * 2.0 * 1.1, abs=2e-6)
    theirs, theirs_standard = (
        ccusage(clients, folder, "claude", "daily")["totals"]["totalCost"]
        for folder in (home, tmp_path / "standard")
    )
    assert theirs == pytest.approx(theirs_standard)


@pytest.mark.parametrize("tier", ["fast", "flex"])
def test_a_codex_thread_at_a_service_tier_costs_its_rates_in_both(
    clients: Clients, proc: Any, tmp_path: Path, tier: str
) -> None:
    """Codex asks for a service tier (`fast` is the API's `priority`) and writes it in
    the thread's settings; its calls cost that tier's rates in LiteLLM's table (before,
    `cost` priced them at the default tier's). ccusage 20.0.24 does so for `priority`,
    and prices `flex` at the default rates (the difference docs/cost.md states)."""
    with OpenAIServer() as server:
        server.reply("Hi.")
        args = ["-m", "gpt-5.5", "-c", f'service_tier="{tier}"', "Say hi."]
        codex_exec(clients.codex, tmp_path, server, args, 1_000_000_000)
    [rollout] = codex_rollouts(tmp_path)
    asked = "priority" if tier == "fast" else tier
    assert f'"service_tier":"{asked}"' in rollout.read_text()
    [row] = cost(proc, tmp_path / "home", "--by", "model", "--no-cache")["rows"]
    [theirs] = ccusage(clients, tmp_path / "home", "codex", "session")["sessions"]
    assert row["model"] == f"gpt-5.5 ({asked} processing)"
    entry = price_table()["gpt-5.5"]

    def at(suffix: str) -> float:
        rates = (entry[f"input_cost_per_token{suffix}"], entry[f"output_cost_per_token{suffix}"])
        return float(row["input"] * rates[0] + row["output"] * rates[1])

    assert row["dollars"] == pytest.approx(at(f"_{asked}"), abs=1e-6)
    assert theirs["costUSD"] == pytest.approx(at("_priority" if tier == "fast" else ""))


def test_web_searches_cost_their_price_here_not_in_ccusage(
    clients: Clients, proc: Any, tmp_path: Path
) -> None:
    """The pinned client records the web searches the API ran for an answer
    (`server_tool_use.web_search_requests`); `cost` adds their price from LiteLLM's
    table (a cent each for Claude models), as LiteLLM does, and says so under the
    table; ccusage 20.0.24 leaves them out (the difference docs/cost.md states). The
    session is priced as `claude-opus-4-7`, which ccusage's own table has too."""
    with AnthropicServer(request_ids=True) as server:
        server.served = {"server_tool_use": {"web_search_requests": 3, "web_fetch_requests": 0}}
        server.reply("Found it.")
        session = new_claude_session(clients.claude, tmp_path, server, ["Look it up."])
    [answer] = [json.loads(x) for x in session.read_text().splitlines() if '"assistant"' in x]
    assert answer["message"]["usage"]["server_tool_use"]["web_search_requests"] == 3
    text = session.read_text().replace(answer["message"]["model"], "claude-opus-4-7")
    homes = {}
    for searches in (3, 0):
        home = tmp_path / f"searched-{searches}"
        folder = home / ".claude" / "projects" / session.parent.name
        folder.mkdir(parents=True)
        ran = f'"web_search_requests":{searches}'
        (folder / session.name).write_text(text.replace('"web_search_requests":3', ran))
        homes[searches] = home
    ours = {n: cost(proc, home, "--no-cache")["totals"] for n, home in homes.items()}
    theirs = {
        n: ccusage(clients, h, "claude", "daily")["totals"]["totalCost"] for n, h in homes.items()
    }
    each = price_table()["claude-opus-4-7"]["search_context_cost_per_query"]
    assert ours[3]["web_searches"] == 3 and "web_searches" not in ours[0]
    added = 3 * each["search_context_size_medium"]
    assert ours[3]["dollars"] == pytest.approx(ours[0]["dollars"] + added, abs=1e-6)
    assert ours[0]["dollars"] == pytest.approx(theirs[0], abs=1e-6)
    assert theirs[3] == pytest.approx(theirs[0])
    said = proc("cost", homes[3], "--no-cache").stdout.decode()
    assert "the dollars hold the 3 web searches the calls ran" in said
