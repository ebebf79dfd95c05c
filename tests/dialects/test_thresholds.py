"""Each compaction against the threshold its client was configured with (`stats`)."""

from __future__ import annotations

import orjson

from condense_cli.dialects.base import Threshold
from tests.conftest import require_corpus
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
