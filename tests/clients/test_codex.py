"""The real Codex CLI is the oracle of the Codex dialect.

Each test resumes a rollout with the pinned `codex` against the scripted
Responses server and compares the `input` of the request it sends with
`condense view --format json` of the same rollout. What is ignored, exactly:

- the items the client puts before the history when it resumes without a
  compaction in effect: an `additional_tools` item and its base instructions (a
  developer message); they are not in the rollout;
- the items the client appends to the rollout in this run before it calls the
  model (the new turn's context and the prompt "continue"): they come after the
  view, and are checked to be exactly the tail of the request;
- the small rewrites Codex makes on the way: the key
  `internal_chat_message_metadata_passthrough` of messages, `"content": null`
  added to `reasoning` items, empty `input_text` parts dropped from tool
  outputs, and an output `"aborted"` inserted after a call that has none.

`condense view --format messages` is checked against the same request: its
history items as sent (rewrites and "aborted" outputs included), mapped to chat
messages by `codex_messages.convert` (the mapping the dialect documents), equal
condense's messages.

Skipped (with the reason) when node/npm are missing; a failure to install the
pinned client is an error, not a skip.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from condense_cli.dialects.codex.messages import convert
from tests.clients.install import Clients
from tests.clients.resume import Run, resume_codex
from tests.clients.servers import OpenAIServer
from tests.conftest import CONDENSE
from tests.fake_llm import FakeLLM

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "codex"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# The rollout Codex 0.169.0 wrote when it compacted edgerunner itself (remote
# compaction against the scripted server): the corpus file plus these lines.
REMOTE_TAIL = FIXTURES / "edgerunner-remote-compaction.tail.jsonl"
PASSTHROUGH = "internal_chat_message_metadata_passthrough"
WINDOW = ("-c", "model_context_window=100000000")  # no compaction for being over the window

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run the Codex client",
)


def corpus_rollouts() -> list[Path]:
    return sorted(CORPUS.glob("*.jsonl"))


def remote_compacted(tmp: Path) -> Path:
    """edgerunner as Codex left it after compacting it (see REMOTE_TAIL)."""
    target = tmp / "edgerunner-remote-compacted.jsonl"
    target.write_bytes(
        (CORPUS / "edgerunner.codex-session.jsonl").read_bytes() + REMOTE_TAIL.read_bytes()
    )
    return target


def condense(*args: Any, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(CONDENSE), *map(str, args)], capture_output=True, text=True, timeout=120
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def view_items(rollout: Path) -> list[dict[str, Any]]:
    data = json.loads(condense("view", rollout, "--format", "json").stdout)
    assert data["dialect"] == "codex"
    return data["events"]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def normal(item: dict[str, Any]) -> dict[str, Any]:
    """An item without the rewrites Codex makes when it sends it (see the module doc)."""
    item = {k: v for k, v in item.items() if k != PASSTHROUGH}
    if item.get("type") == "reasoning":
        item.setdefault("content", None)
    if item.get("type") in ("function_call_output", "custom_tool_call_output") and isinstance(
        item.get("output"), list
    ):
        item["output"] = [
            p for p in item["output"] if not (p.get("type") == "input_text" and p.get("text") == "")
        ]
    return item


def appended_prompt(run: Run, before: int) -> list[dict[str, Any]]:
    """The response items the client appended in this run up to its prompt "continue"."""
    appended = [d["payload"] for d in lines(run.session)[before:] if d["type"] == "response_item"]
    prompt = next(
        i
        for i, it in enumerate(appended)
        if it.get("role") == "user" and [p.get("text") for p in it["content"]] == ["continue"]
    )
    return appended[: prompt + 1]


def sent_view(
    request: dict[str, Any], injected: list[dict[str, Any]], expected: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The request's input less what the client injected (see the module doc).

    `injected` is the tail the client added in this run; it must be exactly the
    end of the input. Before the history, at most an `additional_tools` item and
    the base instructions (a developer message) are dropped.
    """
    items = sent_history(request, injected, expected)
    return [normal(it) for it in items if not _synthesized(it, items)]


def sent_history(
    request: dict[str, Any], injected: list[dict[str, Any]], expected: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The request's input between what the client puts before and after the history
    (see `sent_view`), as sent: rewrites and synthesized outputs included."""
    items = list(request["input"])
    assert items[len(items) - len(injected) :] == injected
    items = items[: len(items) - len(injected)]
    head = 0
    while head < min(2, len(items)) and normal(items[head]) != (expected[:1] or [None])[0]:
        assert (
            items[head].get("type") == "additional_tools" or items[head].get("role") == "developer"
        )
        head += 1
    return items[head:]


def _synthesized(item: dict[str, Any], items: list[dict[str, Any]]) -> bool:
    """The output "aborted" Codex inserts right after a call that has none."""
    if not item.get("type", "").endswith("_output") or item.get("output") != "aborted":
        return False
    index = next(i for i, it in enumerate(items) if it is item)
    previous = items[index - 1] if index else {}
    return previous.get("call_id") == item["call_id"]


def resume(
    clients: Clients, server: OpenAIServer, rollout: Path, tmp: Path, **kw: Any
) -> tuple[Run, int]:
    before = len(rollout.read_text(encoding="utf-8").splitlines())
    run = resume_codex(clients.codex, rollout, tmp, server.reply("scripted ok"), **kw)
    assert run.returncode == 0, run.stderr
    return run, before


def assert_sends_the_view(clients: Clients, server: OpenAIServer, rollout: Path, tmp: Path) -> Run:
    """Resume `rollout`; its view must be what the first request sends."""
    expected = [normal(item) for item in view_items(rollout)]
    run, before = resume(clients, server, rollout, tmp, extra=WINDOW)
    first = server.model_requests()[0]
    if first["input"][-1] == {"type": "compaction_trigger"}:
        injected = [first["input"][-1]]  # Codex compacts the history it resumed first
    else:
        injected = appended_prompt(run, before)
        assert len(server.model_requests()) == 1
    assert sent_view(first, injected, expected) == expected
    # the messages condense prints are what the client sent, mapped to chat messages
    sent = convert(sent_history(first, injected, expected)).messages
    assert sent == json.loads(condense("view", rollout, "--format", "messages").stdout)
    return run


# --- 1. what condense views is what the client sends ---------------------------------


@pytest.mark.parametrize("name", [p.name for p in corpus_rollouts()] + ["remote-compacted"])
def test_the_view_is_what_codex_sends_on_resume(
    name: str, clients: Clients, openai: OpenAIServer, tmp_path: Path
) -> None:
    if name == "remote-compacted":
        rollout = remote_compacted(tmp_path)
    else:
        rollout = tmp_path / name
        shutil.copyfile(CORPUS / name, rollout)
    run = assert_sends_the_view(clients, openai, rollout, tmp_path / "run")
    # what the client appended reads, checks and views
    assert condense("check", run.session).returncode == 0


# --- 2. a compaction condense appends is what the client sends next ------------------

SUMMARY = "The user is applying for a grant; the backend lives in server/."


@pytest.fixture
def fake_llm(tmp_path: Path) -> Iterator[Path]:
    """A config.toml whose [llm] is the local fake model, answering SUMMARY."""
    server = FakeLLM().text(SUMMARY)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[llm]\nmodel = "openai/test-model"\nbase_url = "{server.base_url}"\n'
        'api_key = "fake"\ntimeout = 5\nnum_retries = 0\n'
    )
    yield config
    server.close()


def _typed_by_user(item: dict[str, Any]) -> bool:
    """A user message that is not context the client put in (`<environment_context>`,
    `<user_instructions>`, ...)."""
    texts = [c.get("text", "") for c in item.get("content") or [] if isinstance(c, dict)]
    return item.get("role") == "user" and not "".join(texts).lstrip().startswith("<")


@pytest.mark.parametrize("condenser", ["amortized", "llm"])
def test_codex_follows_a_compaction_condense_appended(
    condenser: str, clients: Clients, openai: OpenAIServer, fake_llm: Path, tmp_path: Path
) -> None:
    rollout = tmp_path / "edgerunner.jsonl"
    shutil.copyfile(CORPUS / "edgerunner.codex-session.jsonl", rollout)
    before = view_items(rollout)
    done = condense("run", rollout, "-c", fake_llm, "-t", condenser, "-s", "max_size=40")
    assert f"view {len(before)} -> " in done.stderr
    condensed = view_items(rollout)
    assert len(condensed) < 40
    summaries = [
        it
        for it in condensed
        if it.get(PASSTHROUGH, {}).get("content_item_kinds") == ["compaction.summary"]
    ]
    # the head: keep_first = 1, and on through the user's first task message (keep_task)
    head = 1 + next(i for i, it in enumerate(before) if _typed_by_user(it))
    assert head == 5  # three developer messages, the environment, the task
    if condenser == "llm":
        assert summaries == [summary_message(SUMMARY)]
        assert condensed.index(summaries[0]) == head  # after the task
        assert [it for it in condensed if it not in summaries] == [
            it for it in before if it in condensed
        ]
    else:
        assert summaries == []
        assert condensed == [*before[:head], *before[len(before) - len(condensed) + head :]]
    run = assert_sends_the_view(clients, openai, rollout, tmp_path / "run")
    # the lines Codex appended afterwards still view, check and condense
    resumed = view_items(run.session)
    assert resumed[: len(condensed)] == condensed
    assert condense("check", run.session).returncode == 0
    again = condense("run", run.session, "-t", "amortized", "-s", "max_size=10", "--force")
    assert "appended to" in again.stderr
    # the head (through the task, and the summary after it) and the newest 4
    assert len(view_items(run.session)) <= head + (1 if condenser == "llm" else 0) + 4


def summary_message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": text}],
        PASSTHROUGH: {"content_item_kinds": ["compaction.summary"]},
    }


# --- 3. a compaction the client makes replays to what it sends next -------------------


def test_a_compaction_by_codex_replays_to_its_next_request(
    clients: Clients, openai: OpenAIServer, tmp_path: Path
) -> None:
    rollout = tmp_path / "edgerunner.jsonl"
    shutil.copyfile(CORPUS / "edgerunner.codex-session.jsonl", rollout)
    # edgerunner's 262k tokens are past the limit set here (the window of 0.171.0's
    # default model holds them): Codex compacts before the turn
    run, before = resume(
        clients, openai.reply("ENCRYPTED"), rollout, tmp_path / "run", compact_limit=200_000
    )
    trigger, turn = openai.model_requests()
    assert trigger["input"][-1] == {"type": "compaction_trigger"}
    compacted = [d for d in lines(run.session)[before:] if d["type"] == "compacted"]
    assert len(compacted) == 1
    view = view_items(run.session)
    assert view[-1]["role"] == "assistant"  # the answer to the turn, after the request
    expected = [normal(item) for item in view[:-1]]
    assert {"type": "compaction", "id": "cmp_scripted", "encrypted_content": "ENCRYPTED"} in view
    assert sent_view(turn, [], expected) == expected
    assert condense("check", run.session).returncode == 0


@pytest.mark.real_model
def test_codex_follows_a_summary_a_real_model_wrote(
    clients: Clients, openai: OpenAIServer, tmp_path: Path
) -> None:
    """`llm` with SmolLM2 behind llama.cpp's server, then Codex resumed sends exactly
    the condensed view."""
    from tests.real_model import serving

    rollout = tmp_path / "fundwise.jsonl"
    shutil.copyfile(CORPUS / "FundWise.codex-session.jsonl", rollout)
    with serving(tmp_path) as model:
        config = tmp_path / "config.toml"
        config.write_text(
            model.config() + '[condenser]\ntype = "llm"\nmax_size = 10\nmax_event_length = 300\n'
        )
        done = condense("run", rollout, "-c", config, "--force")
    assert "appended to" in done.stderr, done.stderr
    condensed = view_items(rollout)
    assert any(
        it.get(PASSTHROUGH, {}).get("content_item_kinds") == ["compaction.summary"]
        for it in condensed
    )
    assert_sends_the_view(clients, openai, rollout, tmp_path / "run")
