"""The rollouts Codex writes today, made fresh by the pinned client in each run.

Codex 0.169 writes paginated rollouts (an `ordinal` on every line) and compacts
them into `compacted` lines of its own. Each rollout here is written by the
real `codex` against the scripted Responses server, then proved the way
`test_codex` proves the corpus: the view is what the client sends when it
resumes, a compaction condense appends is followed by the client, and `check`
fails what the client refuses.
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.clients.install import Clients
from tests.clients.resume import Run, codex_exec, codex_rollouts, new_codex_session, resume_codex
from tests.clients.servers import OpenAIServer
from tests.clients.test_codex import (
    SUMMARY,
    appended_prompt,
    assert_sends_the_view,
    condense,
    fake_llm,
    lines,
    normal,
    sent_view,
    view_items,
)

__all__ = ["fake_llm"]  # a fixture used here

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run the Codex client",
)

TOOL_CALL = {
    "type": "custom_tool_call",
    "id": "ctc_scripted",
    "status": "completed",
    "call_id": "call_scripted",
    "name": "exec",
    "input": 'text("the build is green")',
}
PROMPTS = ["Fix the parser and keep the API stable.", "Now add a test.", "Run it again."]


def fresh(clients: Clients, tmp: Path, compact: bool) -> Path:
    """A paginated rollout of three turns, the first with a tool call; with
    `compact`, the client compacts it (remotely) at every turn after the first."""
    with OpenAIServer() as server:
        if compact:
            server.reply(TOOL_CALL, "Fixed.", "ENCRYPTED-1", "Added.", "ENCRYPTED-2", "Done.")
            server.input_tokens = 60_000
        else:
            server.reply(TOOL_CALL, "Fixed.", "Added.", "Done.")
        limit = 50_000 if compact else 1_000_000_000
        rollout = new_codex_session(clients.codex, tmp, server, PROMPTS, limit)
    target = tmp / "rollout.jsonl"
    shutil.copyfile(rollout, target)
    return target


@pytest.fixture(scope="module")
def paginated(clients: Clients, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh(clients, tmp_path_factory.mktemp("paginated"), compact=False)


@pytest.fixture(scope="module")
def compacted(clients: Clients, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh(clients, tmp_path_factory.mktemp("compacted"), compact=True)


def copy(rollout: Path, tmp: Path) -> Path:
    target = tmp / rollout.name
    shutil.copyfile(rollout, target)
    return target


@pytest.mark.parametrize("kind", ["paginated", "compacted"])
def test_the_view_is_what_codex_sends_on_resume(
    kind: str,
    request: pytest.FixtureRequest,
    clients: Clients,
    openai: OpenAIServer,
    tmp_path: Path,
) -> None:
    rollout = copy(request.getfixturevalue(kind), tmp_path)
    meta = lines(rollout)[0]
    assert meta["payload"]["history_mode"] == "paginated"
    assert [d["ordinal"] for d in lines(rollout)] == list(range(len(lines(rollout))))
    if kind == "compacted":
        assert sum(d["type"] == "compacted" for d in lines(rollout)) >= 2
    run = assert_sends_the_view(clients, openai, rollout, tmp_path / "run")
    assert condense("check", run.session).returncode == 0


# --- a compaction condense appends: numbered, and followed by the client -------------


@pytest.mark.parametrize(
    ("kind", "condenser"),
    [("paginated", "amortized"), ("paginated", "llm"), ("compacted", "llm")],
)
def test_codex_follows_a_compaction_condense_appended_to_a_paginated_rollout(
    kind: str,
    condenser: str,
    request: pytest.FixtureRequest,
    clients: Clients,
    openai: OpenAIServer,
    fake_llm: Path,
    tmp_path: Path,
) -> None:
    rollout = copy(request.getfixturevalue(kind), tmp_path)
    before = lines(rollout)
    size = len(view_items(rollout))
    done = condense("run", rollout, "-c", fake_llm, "-t", condenser, "-s", f"max_size={size - 3}")
    assert "appended to" in done.stderr
    after = lines(rollout)
    assert after[: len(before)] == before
    added = [d["type"] + ":" + d["payload"].get("type", "") for d in after[len(before) :]]
    assert added == ["compacted:", "event_msg:context_compacted", "event_msg:token_count"]
    assert [d["ordinal"] for d in after] == list(range(len(after)))
    if condenser == "llm":
        assert SUMMARY in json.dumps(view_items(rollout))
    run = assert_sends_the_view(clients, openai, rollout, tmp_path / "run")
    checked = condense("check", "--strict", run.session, check=False)
    if kind == "compacted":  # the scripted usage made Codex compact at every turn
        assert "compactions back to back" in checked.stdout
        assert checked.stdout.count("\n") == 1
    else:
        assert checked.returncode == 0, checked.stdout


@pytest.mark.parametrize("kind", ["llm", "hybrid"])
def test_codex_resumes_in_place_after_condense_ran_in_its_own_home(
    kind: str, clients: Clients, fake_llm: Path, tmp_path: Path
) -> None:
    """The path a user takes: condense the rollout where Codex keeps it (beside its
    thread_history SQLite), then `codex exec resume` in the same CODEX_HOME (`llm`'s
    condensation, and `hybrid`'s)."""
    with OpenAIServer() as server:
        server.reply(TOOL_CALL, "Fixed.", "Added.", "Done.")
        rollout = new_codex_session(clients.codex, tmp_path, server, PROMPTS)
    assert (tmp_path / "home" / ".codex" / "thread_history_1.sqlite").exists()
    done = condense("run", rollout, "-c", fake_llm, "-t", kind, "-s", "max_size=8")
    assert "appended" in done.stderr, done.stderr
    expected = [normal(item) for item in view_items(rollout)]
    before = len(lines(rollout))
    with OpenAIServer() as server:
        server.reply("resumed")
        first = resume_in_place(clients, tmp_path, server, rollout)
    run = Run(0, "", "", rollout)
    assert sent_view(first, appended_prompt(run, before), expected) == expected
    assert [d["ordinal"] for d in lines(rollout)] == list(range(len(lines(rollout))))
    assert condense("check", "--strict", rollout).returncode == 0


def resume_in_place(
    clients: Clients, tmp: Path, server: OpenAIServer, rollout: Path
) -> dict[str, Any]:
    """`codex exec resume <id> continue` in the CODEX_HOME under `tmp`; the first
    request it sent."""
    session_id = lines(rollout)[0]["payload"]["id"]
    codex_exec(clients.codex, tmp, server, ["resume", session_id, "continue"], 10**9)
    return server.model_requests()[0]


def test_a_request_condense_appends_is_numbered_and_codex_resumes(
    paginated: Path, clients: Clients, openai: OpenAIServer, tmp_path: Path
) -> None:
    rollout = copy(paginated, tmp_path)
    condense("request", rollout)
    after = lines(rollout)
    assert after[-1]["type"] == "condensation_request"
    assert after[-1]["ordinal"] == after[-2]["ordinal"] + 1
    view = json.loads(condense("view", rollout, "--format", "json").stdout)
    assert view["unhandled_condensation_request"] is True
    assert condense("check", "--strict", rollout).returncode == 0
    assert_sends_the_view(clients, openai, rollout, tmp_path / "run")


# --- check fails what the client refuses ---------------------------------------------


def rewrite(rollout: Path, change: Any) -> None:
    """Apply `change(lines)` to the parsed lines and write them back."""
    data = lines(rollout)
    change(data)
    rollout.write_text("".join(json.dumps(d) + "\n" for d in data))


def test_check_fails_a_rollout_codex_refuses_for_its_last_ordinal(
    paginated: Path, clients: Clients, openai: OpenAIServer, tmp_path: Path
) -> None:
    rollout = copy(paginated, tmp_path)
    rewrite(rollout, lambda data: data[-1].pop("ordinal"))
    refused = resume_codex(clients.codex, rollout, tmp_path / "run", openai.reply("no"))
    assert refused.returncode != 0
    assert "is missing an ordinal" in refused.stderr
    done = condense("check", rollout, check=False)
    assert done.returncode == 1
    assert f"{rollout}:{len(lines(rollout))}:" in done.stdout + done.stderr
    assert "refuses to resume" in done.stdout + done.stderr
    # view still shows the history; a compaction appended numbers the lines again
    assert view_items(rollout) == view_items(paginated)


ODD_ORDINALS = {
    "gap": lambda data: [d.update(ordinal=d["ordinal"] + 2) for d in data[10:]],
    "repeat": lambda data: data[10].update(ordinal=data[9]["ordinal"]),
    "back": lambda data: data[10].update(ordinal=data[9]["ordinal"] - 5),
    "missing": lambda data: data[10].pop("ordinal"),
    "a string": lambda data: data[10].update(ordinal=str(data[10]["ordinal"])),
}


@pytest.mark.parametrize("fault", sorted(ODD_ORDINALS))
def test_odd_ordinals_mid_rollout_are_noted_and_codex_reads_past_them(
    fault: str, paginated: Path, clients: Clients, openai: OpenAIServer, tmp_path: Path
) -> None:
    """Codex 0.171.0 resumes such a rollout whole (and forks and pages it, and numbers
    on from the last line: tried by hand): `check` notes the first odd line and passes,
    even with --strict, and what condense appends is numbered as Codex numbers on."""
    rollout = copy(paginated, tmp_path)
    rewrite(rollout, ODD_ORDINALS[fault])
    assert_sends_the_view(clients, openai, rollout, tmp_path / "run")
    done = condense("check", "--strict", rollout)
    assert f"{rollout}:11: note: this paginated rollout line has" in done.stdout + done.stderr
    assert "Codex 0.171.0 reads past it" in done.stdout + done.stderr
    condense("request", rollout)
    after = lines(rollout)
    assert after[-1]["ordinal"] == after[-2]["ordinal"] + 1


USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix it."}]}
SUMMARY_ITEM = {**USER, "content": [{"type": "input_text", "text": "SUMMARY"}]}
UNDECODABLE = {  # the line appended, and whether Codex can decode it
    "compacted, history a string": ("compacted", {"message": "", "replacement_history": "x"}),
    "compacted, neither": ("compacted", {}),
    "compacted, an item without its content": (
        "compacted",
        {"message": "", "replacement_history": [USER, {"type": "compaction"}]},
    ),
    "compacted, a part of unknown type": (
        "compacted",
        {"message": "", "replacement_history": [{**USER, "content": [{"type": "hologram"}]}]},
    ),
    "compacted, history without a message": ("compacted", {"replacement_history": [USER]}),
    "compacted, decodable": (
        "compacted",
        {"message": "", "replacement_history": [USER, SUMMARY_ITEM]},
    ),
    "item, a message without a role": ("response_item", {"type": "message", "content": []}),
    "item, a call without arguments": (
        "response_item",
        {"type": "function_call", "name": "exec", "call_id": "c9"},
    ),
}


@pytest.mark.parametrize("case", sorted(UNDECODABLE))
def test_a_line_codex_cannot_decode_is_skipped_as_codex_skips_it(
    case: str, paginated: Path, clients: Clients, openai: OpenAIServer, tmp_path: Path
) -> None:
    """Codex skips a line it cannot decode (a compaction too: the history goes on as if
    it were not there); `view` skips it and `check` warns of it."""
    kind, payload = UNDECODABLE[case]

    def append(data: list[dict[str, Any]]) -> None:
        last = data[-1]
        data.append({**last, "type": kind, "ordinal": last["ordinal"] + 1, "payload": payload})

    rollout = copy(paginated, tmp_path)
    rewrite(rollout, append)
    assert_sends_the_view(clients, openai, rollout, tmp_path / "run")
    done = condense("check", rollout)
    skipped = (
        f"{rollout}:{len(lines(rollout))}: warning: Codex cannot decode this line and skips it"
    )
    assert (skipped in done.stdout) == ("decodable" not in case), done.stdout


RESET = {  # the model's call for a new context window
    "type": "function_call",
    "id": "fc_reset",
    "status": "completed",
    "call_id": "call_reset",
    "name": "new_context",
    "namespace": "functions",
    "arguments": "{}",
}


def test_a_new_context_window_the_model_asks_for_is_what_codex_sends(
    clients: Clients, openai: OpenAIServer, tmp_path: Path
) -> None:
    """With `features.token_budget`, Codex offers the model `new_context`; a call writes
    a `compacted` line whose history is Codex's fresh context alone. condense replays it
    as the client sends it next, notes that the user's words are gone, measures it
    against no limit of Codex's, and audits what it forgot."""
    prompts = ["Read the notes and keep the API stable.", "Then reset your context."]
    with OpenAIServer() as server:
        server.reply("Read them.", RESET, "Started afresh.")
        rollout = new_codex_session(
            clients.codex, tmp_path, server, prompts, features="token_budget = true"
        )
        after_reset = json.dumps(server.model_requests()[-1]["input"])
    assert "keep the API stable" not in after_reset and "<environment_context>" in after_reset
    (line,) = [n for n, d in enumerate(lines(rollout), 1) if d["type"] == "compacted"]
    assert_sends_the_view(clients, openai, rollout, tmp_path / "run")
    checked = condense("check", "--strict", rollout).stdout
    said = f"{rollout}:{line}: note: the model started a new context window (new_context)"
    assert said in checked and "none of the user's 2 messages" in checked
    stats = json.loads(condense("stats", rollout, "-f", "json", "--no-tokens").stdout)
    [row] = stats["condensations"]
    assert "threshold" not in row and row["log_says"]["by"].startswith("the model's new_context")
    audit = condense("audit", rollout).stdout
    assert "constraints: keep the API stable. (#13)" in audit  # the task's clauses: lost
    assert "instructions: Read the notes (#13)" in audit
    assert "fired" not in audit


# --- forks: a history that starts in another rollout ---------------------------------


def test_a_fork_replays_its_base_and_is_what_codex_sends(
    clients: Clients, openai: OpenAIServer, tmp_path: Path
) -> None:
    with OpenAIServer() as server:
        server.reply(TOOL_CALL, "Fixed.", "Added.", "Forked.")
        base = new_codex_session(clients.codex, tmp_path, server, PROMPTS[:2])
        session_id = lines(base)[0]["payload"]["id"]
        fork_prompt = ["fork", session_id, "Try it another way."]
        codex_exec(clients.codex, tmp_path, server, fork_prompt, 10**9)
        sent = server.model_requests()[-1]
    (fork,) = set(codex_rollouts(tmp_path)) - {base}
    meta = lines(fork)[0]
    assert meta["payload"]["history_base"]["thread_id"] == session_id
    assert meta["ordinal"] == meta["payload"]["history_base"]["end_ordinal_exclusive"]
    items = view_items(fork)
    # the fork's first request is its whole view but the answer it got
    assert sent_view(sent, [], [normal(i) for i in items[:-1]]) == [normal(i) for i in items[:-1]]
    assert condense("check", "--strict", fork).returncode == 0
    headers = [h for h in condense("view", fork, "--full").stdout.splitlines() if h[:1] == "#"]
    assert headers[0].startswith("#base:")
    assert not headers[-1].startswith("#base:")
    # its history names the base's items as its view does
    simulated = condense("simulate", fork, "-f", "csv").stdout.splitlines()
    steps = [row.split(",")[1] for row in simulated]
    assert steps[1].startswith("base:") and not steps[-1].startswith("base:")
    # resumed by the client beside its base, the fork (base and all) is what it sends
    items = [normal(i) for i in view_items(fork)]
    before = len(lines(fork))
    first = resume_in_place(clients, tmp_path, openai.reply("again"), fork)
    assert sent_view(first, appended_prompt(Run(0, "", "", fork), before), items) == items


def test_a_fork_without_its_base_says_which_rollout_it_needs(
    clients: Clients, openai: OpenAIServer, tmp_path: Path
) -> None:
    server = openai
    server.reply("Fixed.", "Forked.")
    base = new_codex_session(clients.codex, tmp_path, server, PROMPTS[:1])
    session_id = lines(base)[0]["payload"]["id"]
    codex_exec(clients.codex, tmp_path, server, ["fork", session_id, "Again."], 10**9)
    (fork,) = set(codex_rollouts(tmp_path)) - {base}
    alone = tmp_path / "alone" / fork.name
    alone.parent.mkdir()
    shutil.copyfile(fork, alone)
    refused = resume_codex(clients.codex, alone, tmp_path / "run", server)
    assert refused.returncode != 0
    assert "missing source rollout" in refused.stderr
    for command in (["view"], ["check"]):
        done = condense(*command, alone, check=False)
        assert done.returncode == 1
        assert f"fork of thread {session_id}" in done.stdout + done.stderr
        assert "Traceback" not in done.stderr


# --- the client's compaction on resume ---------------------------------------------


def with_context(rollout: Path, tokens: int) -> None:
    """The rollout's token counts say the context holds `tokens`."""

    def change(data: list[dict[str, Any]]) -> None:
        for d in data:
            info = d["payload"].get("info") if d["type"] == "event_msg" else None
            if d["payload"].get("type") == "token_count" and info:
                for key in ("total_token_usage", "last_token_usage"):
                    info[key] |= {"input_tokens": tokens - 2, "total_tokens": tokens}

    rewrite(rollout, change)


def own_limit(rollout: Path) -> int:
    """The limit the client that wrote `rollout` compacts at for its model: from the
    window its last token count records (0.169.0's default model records 258,400 and
    compacts at 244,800; 0.171.0's records 475,000 and compacts at 450,000)."""
    from condense_cli.dialects.codex.resume import default_limit

    windows = [
        d["payload"]["info"]["model_context_window"]
        for d in lines(rollout)
        if d["type"] == "event_msg"
        and d["payload"].get("type") == "token_count"
        and d["payload"].get("info")
    ]
    return default_limit(windows[-1])


def compacts_first(clients: Clients, rollout: Path, tmp: Path) -> bool:
    """Resume `rollout` (Codex's own limit): does it compact before the prompt?"""
    with OpenAIServer() as server:
        run = resume_codex(clients.codex, rollout, tmp, server.reply("SUMMARY", "ok"))
        assert run.returncode == 0, run.stderr
        first = server.model_requests()[0]
    return first["input"][-1] == {"type": "compaction_trigger"}


@pytest.mark.parametrize("over", [False, True])
def test_condense_says_when_codex_compacts_on_resume(
    over: bool, paginated: Path, clients: Clients, tmp_path: Path
) -> None:
    rollout = copy(paginated, tmp_path)
    limit = own_limit(rollout)  # 90% of the full window the recorded one stands for
    tokens = limit + 5_200 if over else limit - 4_800
    with_context(rollout, tokens)
    assert compacts_first(clients, rollout, tmp_path / "client") is over
    said = json.loads(condense("stats", rollout, "-f", "json", "--no-tokens").stdout)["client"]
    compaction = said["resume_compaction"]
    assert (compaction["context_tokens"], compaction["threshold"]) == (tokens, limit)
    assert compaction["compacts_on_resume"] is over
    checked = condense("check", rollout)
    assert ("will compact the thread as soon as it resumes" in checked.stdout) is over
    assert condense("check", "--strict", rollout, check=False).returncode == (1 if over else 0)


def test_after_condense_runs_codex_does_not_compact_again(
    paginated: Path, clients: Clients, openai: OpenAIServer, tmp_path: Path
) -> None:
    rollout = copy(paginated, tmp_path)
    limit = own_limit(rollout)
    with_context(rollout, limit + 5_200)
    condense("run", rollout, "-t", "amortized", "-s", "max_size=4")
    count = lines(rollout)[-1]["payload"]
    assert count["type"] == "token_count"
    assert count["info"]["last_token_usage"]["total_tokens"] < limit
    assert condense("check", "--strict", rollout).stdout == ""
    # without that count, Codex summarises the condensed thread again before anything else
    assert not compacts_first(clients, rollout, tmp_path / "client")
    assert_sends_the_view(clients, openai, rollout, tmp_path / "again")
    (tmp_path / "stale").mkdir()
    stale = copy(paginated, tmp_path / "stale")
    with_context(stale, limit + 5_200)
    condense("run", stale, "-t", "amortized", "-s", "max_size=4")
    rewrite(stale, lambda data: data.pop())
    assert compacts_first(clients, stale, tmp_path / "stale-client")


def test_stats_puts_each_compaction_against_the_limit_of_its_codex_home(compacted: Path) -> None:
    [in_home] = codex_rollouts(compacted.parent)  # where Codex wrote it, its config beside
    data = json.loads(condense("stats", in_home, "-f", "json", "--no-tokens").stdout)
    thresholds = [c["threshold"] for c in data["condensations"]]
    assert thresholds and all(t["threshold"] == 50_000 for t in thresholds)
    assert all(t["source"].startswith("model_auto_compact_token_limit in ") for t in thresholds)
    assert all(t["measured"] >= 50_000 and t["fired"] in ("at", "late") for t in thresholds)
    # a copy outside its home has only the model's own limit to go by
    copied = json.loads(condense("stats", compacted, "-f", "json", "--no-tokens").stdout)
    assert {c["threshold"]["threshold"] for c in copied["condensations"]} == {own_limit(compacted)}


def test_a_pin_stays_beside_a_rollout_because_codex_numbers_only_its_own_lines(
    paginated: Path, clients: Clients, openai: OpenAIServer, tmp_path: Path
) -> None:
    """Codex skips a line it does not know but does not count it: the next line it
    writes takes the same ordinal, which Codex's paged history has been seen to stop
    at. So a pin of a Codex rollout is kept beside it, and the rollout stays Codex's."""
    (tmp_path / "probe").mkdir()
    probe = copy(paginated, tmp_path / "probe")
    last = lines(probe)[-1]
    unknown = {"timestamp": last["timestamp"], "ordinal": last["ordinal"] + 1, "type": "x-pin"}
    with probe.open("a", encoding="utf-8") as out:
        out.write(json.dumps(unknown | {"payload": {"pin": "keep the API stable"}}) + "\n")
    run = assert_sends_the_view(clients, openai, probe, tmp_path / "run")  # skipped ...
    after = [d["ordinal"] for d in lines(run.session)]
    assert len(after) != len(set(after))  # ... and its ordinal taken again
    taken = next(b for a, b in itertools.pairwise(after) if b != a + 1)
    said = condense("check", run.session).stdout  # noted: Codex reads past it
    assert f"has ordinal {taken} where {taken + 1} comes next" in said
    # condense keeps the pin beside the rollout, which stays as it was
    rollout = copy(paginated, tmp_path)
    before = rollout.read_bytes()
    condense("pin", rollout, "keep the API stable")
    assert rollout.read_bytes() == before
    side = tmp_path / f"{rollout.name}.pins.json"
    assert json.loads(side.read_text()) == {"pins": ["keep the API stable"]}
    assert condense("pin", rollout, "--list").stdout == "keep the API stable\n"


@pytest.mark.parametrize("kind", ["paginated", "compacted"])
def test_a_fresh_rollouts_piped_view_is_a_clean_rollout(
    kind: str, request: pytest.FixtureRequest, proc: Any
) -> None:
    """A paginated rollout Codex writes today, compacted or not, pipes clean."""
    from tests.test_pipes import assert_pipes_clean

    assert_pipes_clean(proc, request.getfixturevalue(kind))


def test_a_remote_compactions_own_call_is_counted_and_weighed(compacted: Path, proc: Any) -> None:
    """Codex writes a `token_usage_record` for every call; the call of a remote
    compaction has that record and no `token_count`. `cost` counts it (three turns'
    four calls and the three compactions': 7), and `--compactions` gives each its call."""
    records = [d for d in lines(compacted) if d["type"] == "token_usage_record"]
    counts = [d for d in lines(compacted) if d["payload"].get("type") == "token_count"]
    assert len(records) == 7 and len(counts) == 7  # (three counts of no call, after compacting)
    data = json.loads(proc("cost", compacted, "--compactions", "-f", "json").stdout)
    assert data["totals"]["calls"] == 7
    rows = data["compactions"]["rows"]
    assert [r["compaction"] for r in rows] == [1, 2, 3]
    assert all(r["own_call"] == {**r["own_call"], "recorded": 1, "tokens": 60_001} for r in rows)
