"""OpenHands' own config.template.toml, read as it is (SPEC section 4)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.dialects.openhands_v0.replay import load_view
from tests.conftest import ROOT, lines_of, msg, run_action, run_obs
from tests.fake_llm import FakeLLM

TEMPLATE = ROOT.parent / "shared" / "corpus" / "openhands-config" / "config.template.toml"
IGNORED_NOTE = (
    "Note: ignoring OpenHands LLM settings that condense does not use: "
    "[llm.draft_editor] correct_num"
)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONDENSE_CONFIG", raising=False)


def switched(text: str, block: str) -> str:
    """The template with `type = "noop"` commented out and one commented example
    block (the lines after `# N. ...` up to the next blank line) uncommented."""
    lines = text.replace('\ntype = "noop"\n', '\n#type = "noop"\n', 1).split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(block))
    end = next(i for i in range(start, len(lines)) if not lines[i].strip())
    for i in range(start + 1, end):
        if lines[i].startswith("#") and not lines[i].startswith("# "):
            lines[i] = lines[i][1:]
    return "\n".join(lines)


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def long_session(pairs: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [msg(0, "fix the bug")]
    for k in range(pairs):
        a = 1 + 2 * k
        events += [run_action(a, f"c{a}"), run_obs(a + 1, a, f"c{a}")]
    return events


def test_the_template_as_it_is(cli, proc, tmp_path: Path) -> None:
    result = cli("config", "-c", TEMPLATE)
    assert result.exit_code == 0, result.output
    assert result.stderr == f"{IGNORED_NOTE}\nconfiguration read from {TEMPLATE}\n"
    table = tomllib.loads(result.stdout)
    assert table["condenser"] == {"type": "noop"}
    assert table["llm"]["model"] == "gpt-4o"
    assert set(table["llm"]) >= {"draft_editor", "gpt4o-mini"}
    done = proc("config", "-c", TEMPLATE)
    assert done.returncode == 0
    assert tomllib.loads(done.stdout.decode()) == table


def test_the_template_in_the_working_directory_lets_every_command_run(
    cli, proc, tmp_path: Path
) -> None:
    write_config(tmp_path, TEMPLATE.read_text())
    log = tmp_path / "log.jsonl"
    log.write_bytes(lines_of(long_session(3)))
    stats = proc("stats", log, "--format", "json")
    assert stats.returncode == 0, stats.stderr
    assert orjson.loads(stats.stdout)["tokens"]["tokenizer"] == (
        "tiktoken o200k_base (as litellm counts for gpt-4o)"
    )
    assert cli("view", log).exit_code == 0
    run = cli("run", log)
    assert run.exit_code == 0
    assert run.stderr == (
        f"{IGNORED_NOTE}\nnoop: the noop condenser never condenses; nothing appended\n"
    )


def token_counter(**kwargs: Any) -> int:
    from condense_cli.llm.client import litellm_module

    return int(litellm_module().token_counter(**kwargs))


def last_summary(log: Path) -> str:
    """The summary of the log's last line (a condensation)."""
    summary: str = orjson.loads(log.read_bytes().splitlines()[-1])["args"]["summary"]
    return summary


def test_the_template_switched_to_llm(cli, fake: FakeLLM, tmp_path: Path) -> None:
    text = switched(TEMPLATE.read_text(), "# 4. LLM Summarizing Condenser")
    text = switched(text, "# Example of a custom LLM configuration")
    write_config(tmp_path, text)
    log = tmp_path / "log.jsonl"
    log.write_bytes(lines_of(long_session(55)))  # 111 events, over max_size 100
    for step in range(20):
        fake.text(f"USER_CONTEXT: fix the bug (step {step})")
    result = cli(
        "run",
        log,
        "-s",
        f'llm.condenser.base_url="{fake.base_url}"',
        "-s",
        'llm.condenser.api_key="sk-test"',
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == (
        "Note: ignoring OpenHands LLM settings that condense does not use: "
        "[llm.draft_editor] correct_num"
    )
    sent = fake.requests[0]
    assert (sent["model"], sent["temperature"]) == ("gpt-4o", 0.1)
    # max_input_tokens = 1024 is the window: the forgotten events go in several calls,
    # each prompt within it, each carrying the summary so far
    calls = len(fake.requests)
    assert calls > 1 and f"{calls} calls" in result.stderr
    counts = [token_counter(model="gpt-4o", messages=r["messages"]) for r in fake.requests]
    assert max(counts) + max(r["max_tokens"] for r in fake.requests) <= 1024
    assert "fix the bug (step 0)" in fake.requests[1]["messages"][0]["content"]
    assert last_summary(log) == f"USER_CONTEXT: fix the bug (step {calls - 1})"
    view, _ = load_view(str(log))
    # keep_first 1, the summary, and the newest 100 // 2 - 1 - 1 = 48 events
    assert [e.id if e.id is not None else "S" for e in view] == [0, "S", *range(63, 111)]
    assert cli("config").stdout.count("[llm.condenser]") == 1


def test_the_template_switched_to_amortized(cli, tmp_path: Path) -> None:
    write_config(tmp_path, switched(TEMPLATE.read_text(), "# 5. Amortized Forgetting Condenser"))
    log = tmp_path / "log.jsonl"
    log.write_bytes(lines_of(long_session(55)))
    result = cli("run", log)
    assert result.exit_code == 0, result.output
    view, _ = load_view(str(log))
    # keep_first 1 and the newest 49, less observation 62, whose action is forgotten
    assert [e.id for e in view] == [0, *range(63, 111)]


def test_the_template_switched_to_a_pipeline(cli, tmp_path: Path) -> None:
    stages = (
        'type = "pipeline"\n'
        '[[condenser.condensers]]\ntype = "observation_masking"\nattention_window = 100\n'
        '[[condenser.condensers]]\ntype = "amortized"\nkeep_first = 1\nmax_size = 100\n'
    )
    write_config(tmp_path, TEMPLATE.read_text().replace('type = "noop"\n', stages, 1))
    log = tmp_path / "log.jsonl"
    log.write_bytes(lines_of(long_session(55)))
    result = cli("run", log)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1].startswith("pipeline: forgot 62 events (ids 1..62)")
    assert [e.id for e in load_view(str(log))[0]] == [0, *range(63, 111)]


def test_keys_neither_openhands_nor_condense_knows_are_errors(cli, tmp_path: Path) -> None:
    text = TEMPLATE.read_text().replace("[llm.draft_editor]\n", "[llm.draft_editor]\nbogus = 1\n")
    write_config(tmp_path, text)
    result = cli("config")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[1].startswith(
        "Error: config.toml: [llm.draft_editor] unknown key 'bogus'; valid keys: model, "
    )


def test_llmconfig_keys_litellm_takes_are_passed_on(cli, fake: FakeLLM, tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        '[condenser]\ntype = "llm"\nmax_size = 20\nllm_config = "m"\n'
        f'[llm.m]\nmodel = "openai/test-model"\nbase_url = "{fake.base_url}"\n'
        'api_key = "sk-test"\ntop_k = 5\nreasoning_effort = "low"\n'
        'safety_settings = [{ category = "hate", threshold = "low" }]\n'
        "input_cost_per_token = 0.001\noutput_cost_per_token = 0.002\n"
        "completion_kwargs = { presence_penalty = 0.5 }\n"
        'native_tool_calling = true\nembedding_model = "local"\n',
    )
    log = tmp_path / "log.jsonl"
    log.write_bytes(lines_of(long_session(15)))
    fake.text("summary")
    result = cli("run", log, "-c", config)
    assert result.exit_code == 0, result.output
    sent = fake.requests[0]
    assert {k: sent[k] for k in ("top_k", "reasoning_effort", "presence_penalty")} == {
        "top_k": 5,
        "reasoning_effort": "low",
        "presence_penalty": 0.5,
    }
    assert sent["safety_settings"] == [{"category": "hate", "threshold": "low"}]
    lines = result.stderr.splitlines()
    assert lines[0] == (
        "Note: ignoring OpenHands LLM settings that condense does not use: "
        "[llm.m] embedding_model, native_tool_calling"
    )
    # 120 prompt and 40 completion tokens at the configured prices
    assert lines[1].endswith(f", $0.2000; appended to {log}")


def test_aws_keys_are_masked(cli, tmp_path: Path) -> None:
    write_config(
        tmp_path,
        '[llm]\nmodel = "bedrock/anthropic.claude-3"\naws_access_key_id = "AKIA-SECRET"\n'
        'aws_secret_access_key = "very-secret"\naws_region_name = "us-east-1"\n',
    )
    out = cli("config").stdout
    assert 'aws_access_key_id = "***"' in out
    assert 'aws_secret_access_key = "***"' in out
    assert 'aws_region_name = "us-east-1"' in out
    assert "SECRET" not in out and "very-secret" not in out
