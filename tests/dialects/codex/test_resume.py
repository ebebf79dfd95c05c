"""Codex's compaction on resume, on hand-made rollouts (the real client proves the
same limits in `tests/clients/test_codex_today.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from condense_cli.core.jsonlines import encode
from condense_cli.dialects.codex.resume import (
    CLIENT,
    MAX_OVERHEAD,
    after_compaction,
    default_limit,
)
from tests.dialects.codex.test_replay import META, item, line, said, user


def token_count(tokens: int, window: int = 258_400) -> dict[str, Any]:
    usage = {"input_tokens": tokens, "output_tokens": 0, "total_tokens": tokens}
    info = {"total_token_usage": usage, "last_token_usage": usage, "model_context_window": window}
    return line("event_msg", {"type": "token_count", "info": info, "rate_limits": None})


def write(path: Path, tokens: int) -> Path:
    lines = [META] + [item(user(f"u{i}")) if i % 2 == 0 else item(said(f"a{i}")) for i in range(8)]
    lines.append(token_count(tokens))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(encode(x) + b"\n" for x in lines))
    return path


def test_the_default_limit_is_ninety_percent_of_the_full_window() -> None:
    assert default_limit(258_400) == 244_800  # a 272k model, reported at 95%


def test_over_the_limit_is_a_warning_and_a_line_on_view(tmp_path: Path, cli) -> None:
    log = write(tmp_path / "r.jsonl", 250_000)
    checked = cli("check", log)
    assert checked.exit_code == 0
    assert f"{log}:10: warning: the last token count (line 10) says" in checked.stdout
    assert f"over the 244,800 at which {CLIENT} compacts" in checked.stdout
    assert cli("check", "--strict", log).exit_code == 1
    assert "will compact the thread" in cli("view", log).stderr
    under = write(tmp_path / "under.jsonl", 200_000)
    assert cli("check", "--strict", under).stdout == ""
    stats = orjson.loads(cli("stats", under, "-f", "json", "--no-tokens").stdout_bytes)
    assert stats["client"]["resume_compaction"]["compacts_on_resume"] is False


def test_the_limit_of_the_codex_home_the_rollout_is_in_is_read(tmp_path: Path, cli) -> None:
    home = tmp_path / ".codex"
    log = write(home / "sessions" / "2026" / "11" / "25" / "rollout-x.jsonl", 60_000)
    (home / "config.toml").write_text("model_auto_compact_token_limit = 50000\n")
    checked = cli("check", log).stdout
    source = f"(model_auto_compact_token_limit in {home / 'config.toml'})"
    assert f"over the 50,000 at which {CLIENT} compacts {source}" in checked
    (home / "config.toml").write_text("model_auto_compact_token_limit = 900000\n")
    assert cli("check", "--strict", log).stdout == ""  # the lower limit, the model's, wins


def test_run_writes_the_count_codex_writes_after_a_compaction(tmp_path: Path, cli) -> None:
    log = write(tmp_path / "r.jsonl", 250_000)
    assert cli("run", log, "-t", "amortized", "-s", "max_size=4").exit_code == 0
    compacted, event, count = (orjson.loads(x) for x in log.read_bytes().splitlines()[-3:])
    assert (compacted["type"], event["payload"]["type"]) == ("compacted", "context_compacted")
    last = count["payload"]["info"]["last_token_usage"]
    assert last["input_tokens"] == last["output_tokens"] == 0
    assert 0 < last["total_tokens"] <= MAX_OVERHEAD + 100
    assert count["payload"]["info"]["total_token_usage"]["total_tokens"] == 250_000
    assert cli("check", "--strict", log).stdout == ""


def test_the_estimate_keeps_what_was_not_the_view_up_to_a_cap() -> None:
    info = {"last_token_usage": {"total_tokens": 1}}
    small = after_compaction(info, None, 20_000, 40_000, 4_000)
    assert small["info"]["last_token_usage"]["total_tokens"] == 10_000 + 1_000
    big = after_compaction(info, {"x": 1}, 900_000, 40_000, 4_000)
    assert big["info"]["last_token_usage"]["total_tokens"] == MAX_OVERHEAD + 1_000
    assert big["rate_limits"] == {"x": 1}
