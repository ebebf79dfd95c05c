"""The sessions Claude Code writes today, made fresh by the pinned client in each run.

Each session here is written by the real `claude` against the scripted Messages
server (tool calls run for real: `Bash`), then proved the way
`test_claude_code` proves the corpus: resumed, the client sends condense's view,
and `view --format messages` is what it sends, its resume repairs included.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.clients.install import Clients
from tests.clients.resume import killed_claude_session, new_claude_session, resume_claude
from tests.clients.servers import AnthropicServer
from tests.clients.test_claude_code import (
    _llm_config,
    assert_client_sends_the_view,
    condense_messages,
    condense_view,
    no_config,
    resume,
)
from tests.fake_llm import FakeLLM

__all__ = ["no_config"]  # a fixture used here

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run the Claude Code client",
)


def bash(call_id: str, command: str) -> dict[str, Any]:
    """A scripted answer: the model calls Bash."""
    return {
        "type": "tool_use",
        "id": call_id,
        "name": "Bash",
        "input": {"command": command, "description": "run it"},
    }


def copy(session: Path, tmp: Path) -> Path:
    target = tmp / session.name
    shutil.copyfile(session, target)
    return target


@pytest.fixture(scope="module")
def compacted(clients: Clients, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two turns (one runs `echo`), `/compact`, and a turn after it."""
    tmp = tmp_path_factory.mktemp("compacted")
    with AnthropicServer() as server:
        server.reply(
            bash("toolu_echo", "echo the build is green"),
            "Fixed; the API is unchanged.",
            "Added a test.",
            "<summary>The parser is fixed, the API kept stable, a test added.</summary>",
            "Ran it again.",
        )
        prompts = [
            "Fix the parser and keep the API stable.",
            "Now add a test.",
            "/compact",
            "Run it again.",
        ]
        return new_claude_session(clients.claude, tmp, server, prompts)


@pytest.fixture(scope="module")
def interrupted(clients: Clients, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three turns, then a fourth killed while its Bash call ran."""
    tmp = tmp_path_factory.mktemp("interrupted")
    with AnthropicServer() as server:
        server.reply(
            bash("toolu_echo", "echo started"),
            "Started.",
            "Configured.",
            "Deployed.",
            bash("toolu_wait", "python3 -c 'import time; time.sleep(60)'"),
        )
        prompts = ["Start the server.", "Configure it.", "Deploy it."]
        session = new_claude_session(clients.claude, tmp, server, prompts)
        return killed_claude_session(
            clients.claude, tmp, server, "Wait for it.", "toolu_wait", resume=session
        )


def test_a_fresh_session_with_a_compaction_is_what_the_client_sends(
    compacted: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = copy(compacted, tmp_path)
    view = condense_view(proc, session)
    assert view[0].is_summary and "API kept stable" in view[0].text
    assert [e.text for e in view[1:]][-2:] == ["Run it again.", "Ran it again."]
    assert proc("check", "--strict", session).returncode == 0
    stats = json.loads(proc("stats", session, "-f", "json", "--no-tokens").stdout)
    assert [c["threshold"]["fired"] for c in stats["condensations"]] == ["manual"]  # /compact
    assert_client_sends_the_view(proc, clients, session, tmp_path / "client")


def test_an_interrupted_call_is_repaired_as_the_client_repairs_it(
    interrupted: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = copy(interrupted, tmp_path)
    messages = condense_messages(proc, session)
    assert messages[-2]["role"] == "tool" and "[Tool call interrupted" in messages[-2]["content"]
    assert messages[-1] == {"role": "assistant", "content": "No response requested."}
    checked = proc("check", session)
    assert checked.returncode == 0
    assert b"answers it as interrupted when the session resumes" in checked.stdout
    assert proc("check", "--strict", session).returncode == 1
    # the client sends the repaired view, and what it wrote checks clean
    resumed = assert_client_sends_the_view(proc, clients, session, tmp_path / "client")
    assert proc("check", "--strict", resumed).returncode == 0


@pytest.mark.parametrize("kind", ["llm", "hybrid"])
def test_the_client_follows_a_condensation_of_an_interrupted_session(
    kind: str, interrupted: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    """`llm`'s condensation, and `hybrid`'s (masking, then the same summary)."""
    session = copy(interrupted, tmp_path)
    fake = FakeLLM().text("SUMMARY: the user waits for the server.")
    try:
        config = _llm_config(tmp_path, fake)
        done = proc("run", session, "-c", config, "-t", kind, "-s", "condenser.max_size=6")
    finally:
        fake.close()
    assert done.returncode == 0, done.stderr
    assert_client_sends_the_view(proc, clients, session, tmp_path / "client")


# --- records the client passes over, and its compaction on resume ---------------------


@pytest.fixture(scope="module")
def listed(clients: Clients, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One turn whose Bash call prints fifty lines."""
    tmp = tmp_path_factory.mktemp("listed")
    with AnthropicServer() as server:
        server.reply(bash("toolu_seq", "seq 1 50"), "Listed them.")
        return new_claude_session(clients.claude, tmp, server, ["List the numbers."])


def lines_of(session: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in session.read_text(encoding="utf-8").splitlines()]


def append(session: Path, line: dict[str, Any]) -> None:
    with session.open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def sent_result(body: dict[str, Any], call: str) -> Any:
    return next(
        b["content"]
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result" and b.get("tool_use_id") == call
    )


def test_a_microcompaction_by_an_older_client_is_not_redone_on_resume(
    listed: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = copy(listed, tmp_path)
    last = [x for x in lines_of(session) if x.get("type") == "assistant"][-1]
    append(
        session,
        {
            **{k: last[k] for k in ("cwd", "sessionId", "userType", "isSidechain")},
            "parentUuid": last["uuid"],
            "type": "system",
            "subtype": "microcompact_boundary",
            "content": "Context microcompacted",
            "uuid": str(uuid.uuid4()),
            "timestamp": last["timestamp"],
            "level": "info",
            "microcompactMetadata": {
                "trigger": "auto",
                "preTokens": 45000,
                "tokensSaved": 21000,
                "compactedToolIds": ["toolu_seq"],
            },
        },
    )
    # the client sends the result in full: so does the view
    assert_client_sends_the_view(proc, clients, session, tmp_path / "client")
    tool = next(m for m in condense_messages(proc, session) if m["role"] == "tool")
    assert tool["content"].splitlines() == [str(n) for n in range(1, 51)]
    checked = proc("check", "--strict", session)
    assert checked.returncode == 0, checked.stdout
    assert b"note: microcompaction (1 tool result cleared" in checked.stdout
    stats = json.loads(proc("stats", session, "-f", "json", "--no-tokens").stdout)
    [micro] = stats["client"]["microcompactions"]
    assert (micro["tokens_saved"], micro["tool_results"]) == (21000, 1)


def test_a_content_replacement_is_not_applied_on_resume(
    listed: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = copy(listed, tmp_path)
    session_id = lines_of(session)[0]["sessionId"]
    replaced = {"kind": "tool-result", "toolUseId": "toolu_seq", "replacement": "REPLACED"}
    append(
        session,
        {"type": "content-replacement", "sessionId": session_id, "replacements": [replaced]},
    )
    with AnthropicServer() as server:
        resume(clients, session, tmp_path / "client", server.reply("ok"))
        [body] = server.model_requests()
    assert sent_result(body, "toolu_seq").splitlines()[-1] == "50"
    assert_client_sends_the_view(proc, clients, session, tmp_path / "again")
    checked = proc("check", "--strict", session)
    assert checked.returncode == 0
    assert b"note: content replacement of 1 tool result" in checked.stdout


def with_context(original: Path, tmp: Path, tokens: int) -> Path:
    """The session with its last response saying it took `tokens` of context."""
    tmp.mkdir()
    session = tmp / original.name
    lines = lines_of(original)
    last = max(i for i, x in enumerate(lines) if x.get("type") == "assistant")
    lines[last]["message"]["usage"] = {"input_tokens": tokens - 10, "output_tokens": 10}
    session.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return session


def client_compacts(
    clients: Clients, session: Path, tmp: Path, extra: tuple[str, ...] = ()
) -> bool:
    """Resume `session` (the client's options `extra`): does the client ask for a
    summary before anything else?"""
    with AnthropicServer() as server:
        resume(clients, session, tmp, server.reply("<summary>S</summary>", "ok"), extra=extra)
        first = server.model_requests()[0]
    return "<summary>" in json.dumps(first["messages"][-1])


def on_model(session: Path, model: str) -> Path:
    """`session` with every answer written by `model`."""
    lines = lines_of(session)
    for line in lines:
        if line.get("type") == "assistant":
            line["message"]["model"] = model
    session.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return session


@pytest.mark.parametrize(
    ("model", "tokens", "extra", "compacts"),
    [
        # natively 1M in the client's catalog: condense once assumed 200k and warned
        ("claude-opus-4-7", 190_000, (), False),
        # 200k by default: over 177,000 the client compacts
        ("claude-sonnet-4-6", 180_000, (), True),
        # a response used 311,789 without compacting: it ran as [1m], and so resumes
        ("claude-sonnet-4-6", 311_789, ("--model", "claude-sonnet-4-6[1m]"), False),
        # new in 2.1.332's catalog, natively 1M, named by the families condense knows
        ("claude-opus-5-5", 190_000, (), False),
        ("claude-fable-5-2", 190_000, (), False),
        ("claude-haiku-4-5", 180_000, (), True),
        # a model not in the catalog: the client gives it 1M (condense once said nothing)
        ("claude-nova-9", 190_000, (), False),
        ("claude-nova-9", 990_000, (), True),
    ],
)
def test_what_condense_says_of_each_model_family_is_what_the_client_does(
    listed: Path,
    clients: Clients,
    proc: Callable[..., Any],
    tmp_path: Path,
    model: str,
    tokens: int,
    extra: tuple[str, ...],
    compacts: bool,
) -> None:
    session = on_model(with_context(listed, tmp_path / "session", tokens), model)
    assert client_compacts(clients, session, tmp_path / "client", extra) is compacts
    checked = proc("check", "--strict", session)
    assert (b"will compact the session" in checked.stdout) is compacts, checked.stdout
    assert checked.returncode == (1 if compacts else 0)


def test_a_session_that_ran_as_1m_is_compacted_by_a_plain_resume_as_condense_notes(
    listed: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    """311,789 tokens on claude-sonnet-4-6 without a compaction: it ran as `[1m]`.
    Resumed as `[1m]` the client does not compact it; resumed plainly, it does, at once.
    condense warns of neither (CI stays green) and notes both."""
    session = on_model(with_context(listed, tmp_path / "session", 311_789), "claude-sonnet-4-6")
    assert client_compacts(clients, session, tmp_path / "plain") is True
    one_m = ("--model", "claude-sonnet-4-6[1m]")
    assert client_compacts(clients, session, tmp_path / "1m", one_m) is False
    checked = proc("check", "--strict", session)
    assert checked.returncode == 0, checked.stdout
    assert b"resumed the same way (`--model claude-sonnet-4-6[1m]`" in checked.stdout
    assert b"compacts the session at once (311,789 tokens, past 177,000)" in checked.stdout


def test_disable_1m_holds_a_1m_model_to_200k_as_the_client_does(
    listed: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = on_model(with_context(listed, tmp_path / "session", 190_000), "claude-opus-4-7")
    settings = tmp_path / "client" / "home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"env": {"CLAUDE_CODE_DISABLE_1M_CONTEXT": "1"}}))
    assert client_compacts(clients, session, tmp_path / "client") is True
    held = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CLAUDE_CODE_DISABLE_1M_CONTEXT": "1"}
    checked = proc("check", "--strict", session, env=held)
    assert checked.returncode == 1
    assert b"CLAUDE_CODE_DISABLE_1M_CONTEXT holds claude-opus-4-7 to" in checked.stdout
    assert b"will compact the session" in checked.stdout
    assert proc("check", "--strict", session).returncode == 0  # 1M without the setting
    stats = proc("stats", session, "-f", "json", "--no-tokens", "--client-config", settings)
    assert json.loads(stats.stdout)["client"]["resume_compaction"]["compacts_on_resume"]


def test_with_auto_compaction_off_the_client_refuses_what_condense_says_it_will(
    listed: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    """`autoCompactEnabled: false`: the client does not compact a 180,000-token
    claude-sonnet-4-6 session on resume; it refuses the prompt as too long."""
    session = on_model(with_context(listed, tmp_path / "session", 180_000), "claude-sonnet-4-6")
    settings = tmp_path / "client" / "home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"autoCompactEnabled": False}))
    with AnthropicServer() as server:
        run = resume_claude(clients.claude, session, tmp_path / "client", server.reply("ok"))
        assert server.model_requests() == []
    assert run.returncode == 1 and "Prompt is too long" in run.stdout
    stats = proc("stats", session, "-f", "json", "--no-tokens", "--client-config", settings)
    said = json.loads(stats.stdout)["client"]["resume_compaction"]
    assert said["compacts_on_resume"] is False
    assert "refuses the prompt as too long" in said["says"]


@pytest.mark.parametrize(
    ("tokens", "says"),
    [(950_000, "no"), (970_000, "may make it compact"), (979_000, "will compact")],
)
def test_condense_says_when_the_client_compacts_on_resume(
    listed: Path,
    clients: Clients,
    proc: Callable[..., Any],
    tmp_path: Path,
    tokens: int,
    says: str,
) -> None:
    session = with_context(listed, tmp_path / "session", tokens)
    compacts = client_compacts(clients, session, tmp_path / "client")
    assert compacts is (says != "no")  # (where condense says "may", this one does)
    stats = json.loads(proc("stats", session, "-f", "json", "--no-tokens").stdout)
    said = stats["client"]["resume_compaction"]
    assert (said["context_tokens"], said["threshold"]) == (tokens, 977_000)
    assert said["compacts_on_resume"] is (says == "will compact")
    assert said["may_compact_on_resume"] is (says != "no")
    viewed = proc("view", session)
    checked = proc("check", session)
    assert checked.returncode == 0
    warned = f"{says} the session".encode()
    assert (warned in checked.stdout) is (says != "no")
    assert (warned in viewed.stderr) is (says != "no")
    assert proc("check", "--strict", session).returncode == (0 if says == "no" else 1)


def rewrite_last_request(session: Path, change: Callable[[dict[str, Any]], None]) -> None:
    lines = lines_of(session)
    last = max(i for i, x in enumerate(lines) if x.get("type") == "api-request")
    change(lines[last])
    session.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def test_the_requests_the_session_records_are_a_second_oracle(
    listed: Path, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = copy(listed, tmp_path)
    checked = proc("check", "--strict", session)
    assert checked.returncode == 0 and checked.stdout == b"", checked.stdout
    said = b"the view differs from what the client recorded sending here: "

    def drop_last(request: dict[str, Any]) -> None:
        request["tail"] = request["tail"][:-1]

    rewrite_last_request(session, drop_last)
    checked = proc("check", session)
    assert checked.returncode == 0  # a warning
    assert said + b"the client sent 2 messages where the view has 3" in checked.stdout
    assert proc("check", "--strict", session).returncode == 1

    def unknown(request: dict[str, Any]) -> None:
        request["tail"] = [*request["tail"], "0" * 64]

    (tmp_path / "unknown").mkdir()
    session = copy(listed, tmp_path / "unknown")
    rewrite_last_request(session, unknown)
    assert said + b"message 4 is one (sha256 000000000000...) that neither" in (
        proc("check", session).stdout
    )

    def no_shape(request: dict[str, Any]) -> None:
        request["shapeHash"] = "gone"

    (tmp_path / "shape").mkdir()
    session = copy(listed, tmp_path / "shape")
    rewrite_last_request(session, no_shape)
    checked = proc("check", "--strict", session)
    assert checked.returncode == 0
    assert b"note: the request recorded here is incomplete (its shape gone" in checked.stdout


def test_a_condensed_session_is_not_compacted_again_on_resume(
    interrupted: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = with_context(interrupted, tmp_path / "session", 990_000)
    assert b"will compact the session" in proc("check", session).stdout
    done = proc("run", session, "-t", "amortized", "-s", "condenser.max_size=6")
    assert done.returncode == 0, done.stderr
    # the copies keep the old usage; the client does not go by it, nor does condense
    assert b"compact the session" not in proc("check", session).stdout
    assert not client_compacts(clients, session, tmp_path / "client")


def test_a_pin_kept_in_the_session_is_skipped_by_the_client_and_kept(
    compacted: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    """`condense pin` writes its record into a Claude Code session: the client
    resumes it sending exactly condense's view, keeps the record, and condense
    reads the pin back from what the client left."""
    session = copy(compacted, tmp_path)
    pinned = proc("pin", session, "keep the API stable")
    assert pinned.returncode == 0 and pinned.stderr.endswith(f"pinned in {session}\n".encode())
    assert not (tmp_path / f"{session.name}.pins.json").exists()
    [record] = [json.loads(x) for x in session.read_text().splitlines() if "condense-pin" in x]
    assert record["pin"] == "keep the API stable" and record["sessionId"]
    assert b"\nalready pinned in" in proc("pin", session, "keep the API stable").stderr
    # the client's own /compact wrote "the API kept stable": not the pin as written
    dropped = "warning: this compaction dropped the pin 'keep the API stable'"
    assert dropped.encode() in proc("check", session).stdout
    resumed = assert_client_sends_the_view(proc, clients, session, tmp_path / "client")
    assert proc("pin", resumed, "--list").stdout == b"keep the API stable\n"
    audit = json.loads(proc("audit", resumed, "-f", "json").stdout)
    assert audit["condensations"][0]["lost"][0] == {"kind": "pins", "fact": "keep the API stable"}


def test_a_fresh_sessions_piped_view_is_a_clean_session(
    compacted: Path, interrupted: Path, proc: Callable[..., Any]
) -> None:
    """What the client writes today (a /compact, an interrupted call) pipes clean."""
    from tests.test_pipes import assert_pipes_clean

    for session in (compacted, interrupted):
        assert_pipes_clean(proc, session)
