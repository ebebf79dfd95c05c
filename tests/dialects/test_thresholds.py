"""Each compaction against the threshold its client was configured with (`stats`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson
import pytest

from condense_cli.dialects.reports import Threshold
from tests.conftest import corpus_copy, require_corpus
from tests.dialects.claude_code.test_replay import POSTHOG
from tests.dialects.openhands_v1.test_replay import conversations
from tests.dialects.openhands_v1.test_replay import corpus as v1_corpus


def test_where_a_compaction_fired() -> None:
    assert Threshold("tokens", 167_766, 167_000, "s", 10_000).fired == "at"
    early = Threshold("tokens", 120_000, 167_000, "s", 10_000)
    assert early.fired == "early"
    assert early.describe() == "early by 47,000 tokens (120,000 against 167,000 tokens)"
    assert Threshold("events", 95, 81, "s", 1).fired == "late"
    assert Threshold("tokens", 5, 167_000, "s", manual=True).fired == "manual"
    assert early.to_json()["by"] == -47_000


def test_every_v1_corpus_condensation_fired_at_its_max_size(cli) -> None:
    v1_corpus("")
    seen = 0
    for folder in conversations():
        data = orjson.loads(cli("stats", folder, "-f", "json", "--no-tokens").stdout_bytes)
        for row in data["condensations"]:
            threshold = row["threshold"]
            assert (threshold["unit"], threshold["threshold"]) == ("events", 81)
            assert threshold["fired"] == "at", (folder, row["line"])
            assert (
                threshold["source"]
                == "max_size 80 of the LLMSummarizingCondenser in base_state.json"
            )
            seen += 1
    assert seen == 45


def test_the_posthog_compaction_fired_at_its_clients_threshold(cli) -> None:
    require_corpus(POSTHOG.parent)
    data = orjson.loads(cli("stats", POSTHOG, "-f", "json", "--no-tokens").stdout_bytes)
    [row] = data["condensations"]
    assert row["threshold"] == {
        "unit": "tokens",
        "measured": 167_766,
        "threshold": 167_000,
        "fired": "at",
        "by": 766,
        "source": "the 200,000-token window of claude-opus-4-7 less 33,000 (Claude Code 2.1.112)",
    }
    assert "fired against" in cli("stats", POSTHOG, "--no-tokens").stdout


def test_a_compaction_condense_wrote_is_measured_against_no_client_threshold(tmp_path, cli) -> None:
    """`condense run` compacted the session, not the client: there is no threshold of
    the client's that it fired at (it once said "fired manual ... against 167,000")."""
    require_corpus(POSTHOG.parent)
    log = tmp_path / POSTHOG.name
    shutil.copyfile(POSTHOG, log)
    cli("run", log, "--type", "amortized", "-s", "max_size=40", "-s", "keep_first=1")
    rows = orjson.loads(cli("stats", log, "-f", "json", "--no-tokens").stdout_bytes)[
        "condensations"
    ]
    assert ["threshold" in r for r in rows] == [True, False]  # the client's, condense's
    assert "manual" not in cli("audit", log).stdout


# --- the agent's own settings (`--client-config`) -----------------------------------


def test_claude_code_settings_lower_the_threshold(tmp_path, cli) -> None:
    require_corpus(POSTHOG.parent)
    settings = tmp_path / "settings.json"
    settings.write_text(
        '{"autoCompactWindow": 150000, "env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "60"}}'
    )
    args = ("stats", POSTHOG, "-f", "json", "--no-tokens", "--client-config", settings)
    [row] = orjson.loads(cli(*args).stdout_bytes)["condensations"]
    # (150,000 less the answer's 20,000) at 60%, lower than 150,000 less 33,000
    assert (row["threshold"]["threshold"], row["threshold"]["fired"]) == (78_000, "late")
    assert row["threshold"]["by"] == 167_766 - 78_000
    assert row["threshold"]["source"] == (
        f"the 200,000-token window of claude-opus-4-7, lowered to 150,000 by autoCompactWindow "
        f"in {settings}, at 60% of it less 20,000 by CLAUDE_AUTOCOMPACT_PCT_OVERRIDE in "
        f"{settings} (Claude Code 2.1.112)"
    )
    text = cli("stats", POSTHOG, "--no-tokens", "--client-config", settings).stdout
    assert "late by" in text and "89,766" in text
    assert "lowered to 150,000 by autoCompactWindow" in text
    # a model's own setting replaces the top-level one; "auto" and a bad percent are ignored
    settings.write_text(
        '{"autoCompactWindow": 150000, "modelSettings": {"claude-opus-4-7": '
        '{"autoCompactWindow": 120000}}, "env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "x"}}'
    )
    [row] = orjson.loads(cli(*args).stdout_bytes)["condensations"]
    assert row["threshold"]["threshold"] == 120_000 - 33_000
    settings.write_text('{"autoCompactWindow": "auto"}')
    [row] = orjson.loads(cli(*args).stdout_bytes)["condensations"]
    assert (row["threshold"]["threshold"], row["threshold"]["fired"]) == (167_000, "at")


def test_codex_config_sets_the_limit(tmp_path, cli) -> None:
    from condense_cli.core.jsonlines import encode
    from tests.dialects.codex.test_replay import META, item, line, said, user
    from tests.dialects.codex.test_resume import token_count

    lines = [META, item(user("fix it")), item(said("on it")), token_count(200_000)]
    lines.append(line("compacted", {"message": "", "replacement_history": [user("fix it")]}))
    log = tmp_path / "rollout.jsonl"
    log.write_bytes(b"".join(encode(x) + b"\n" for x in lines))
    stats = ("stats", log, "-f", "json", "--no-tokens")
    [row] = orjson.loads(cli(*stats).stdout_bytes)["condensations"]
    assert (row["threshold"]["threshold"], row["threshold"]["fired"]) == (244_800, "early")
    config = tmp_path / "config.toml"
    config.write_text("model_context_window = 400000\nmodel_auto_compact_token_limit = 190000\n")
    [row] = orjson.loads(cli(*stats, "--client-config", config).stdout_bytes)["condensations"]
    assert row["threshold"] == {
        "unit": "tokens",
        "measured": 200_000,
        "threshold": 190_000,
        "fired": "at",
        "by": 10_000,
        "source": f"model_auto_compact_token_limit in {config}",
    }
    config.write_text("model_context_window = 200000\n")
    [row] = orjson.loads(cli(*stats, "--client-config", config).stdout_bytes)["condensations"]
    assert row["threshold"]["threshold"] == 180_000
    assert row["threshold"]["source"] == f"90% of model_context_window 200,000 in {config}"


def test_an_openhands_config_sets_max_size_for_v0_and_v1(tmp_path, cli) -> None:
    from tests.conftest import lines_of, msg

    config = tmp_path / "config.toml"
    config.write_text('[condenser]\ntype = "llm"\nmax_size = 10\n')
    log = tmp_path / "v0.jsonl"
    log.write_bytes(lines_of([msg(i, f"step {i}", source="agent") for i in range(30)]))
    assert cli("run", log, "-t", "amortized", "-s", "max_size=20").exit_code == 0
    stats = ("stats", log, "-f", "json", "--no-tokens")
    [row] = orjson.loads(cli(*stats).stdout_bytes)["condensations"]
    assert "threshold" not in row  # a V0 log does not record its condenser
    assert "--client-config" in cli("stats", log, "--no-tokens").stdout
    [row] = orjson.loads(cli(*stats, "--client-config", config).stdout_bytes)["condensations"]
    assert (row["threshold"]["measured"], row["threshold"]["threshold"]) == (30, 11)
    assert row["threshold"]["fired"] == "late"
    audit = cli("audit", log, "--client-config", config).stdout
    assert "fired late by 19 events (30 against 11 events)" in audit
    # V1: the file replaces what base_state.json records
    v1_corpus("")
    folder = conversations()[0]
    v1 = ("stats", folder, "-f", "json", "--no-tokens", "--client-config", config)
    rows = orjson.loads(cli(*v1).stdout_bytes)["condensations"]
    assert rows and {r["threshold"]["threshold"] for r in rows} == {11}
    assert {r["threshold"]["fired"] for r in rows} == {"late"}
    assert rows[0]["threshold"]["source"] == f"max_size 10 of the llm condenser in {config}"


def test_a_bad_client_config_is_one_clear_error(tmp_path, cli, proc) -> None:
    require_corpus(POSTHOG.parent)
    bad = tmp_path / "settings.json"
    bad.write_text("{not json")
    result = cli("stats", POSTHOG, "--no-tokens", "--client-config", bad)
    assert result.exit_code == 2
    assert f"{bad}: is not valid JSON" in result.stderr
    bad.write_text('{"autoCompactWindow": 5}')
    done = proc("audit", POSTHOG, "--client-config", bad)
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    assert b"autoCompactWindow must be a whole number of at least 100,000 (got 5)" in done.stderr
    missing = cli("stats", POSTHOG, "--client-config", tmp_path / "nope.toml")
    assert missing.exit_code == 2 and "nope.toml: no such file" in missing.stderr


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("/dev/zero", "is not a regular file (a FIFO, a socket or a device)"),  # never read
        ("a FIFO", "is not a regular file (a FIFO, a socket or a device)"),  # never blocks
        ("a folder", "is not a regular file (a folder)"),
        ("100,000 deep", "nests deeper than condense reads"),
        ('{"autoCompactWindow": "²"}', "autoCompactWindow must be a whole number"),
        ("[condenser]\nmax_size = -3\n", "max_size of [condenser] must be a whole number"),
        ('model_auto_compact_token_limit = "abc"\n', "must be a whole number of at least 1"),
        ("model_context_window = 0\n", "must be a whole number of at least 1 (got 0)"),
    ],
)
def test_a_client_config_condense_cannot_take_as_the_client_does_is_refused(
    case: str, said: str, tmp_path: Path, proc
) -> None:
    """Each was read without bound, hung, crashed or was ignored without a word
    (issue 55, item 16): now one message, exit 2, at once."""
    require_corpus(POSTHOG.parent)
    if case == "/dev/zero":
        path = Path(case)
    else:
        path = tmp_path / ("settings.json" if case.startswith("{") else "config.toml")
        if case == "a FIFO":
            os.mkfifo(path)
        elif case == "a folder":
            path.mkdir()
        elif case == "100,000 deep":
            path.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
        else:
            path.write_text(case)
    log = POSTHOG  # each setting where the dialect that reads it meets it
    if "model_" in case:
        log = corpus_copy("codex", tmp_path / "logs")
    elif "max_size" in case:
        log = corpus_copy("openhands-v0", tmp_path / "logs")
    done = proc("stats", "--no-tokens", log, "--client-config", path, timeout=30)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr.decode() and b"this is a bug" not in done.stderr
