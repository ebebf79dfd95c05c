"""What a compaction cost and saved (`cost --compactions`): its own call, the prompt
cache the calls after it wrote again, what they did not send; by hand on made calls,
then on the corpus sessions and through the command."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from condense_cli.analysis.cost import use_prices
from condense_cli.analysis.economics import total, weigh
from condense_cli.core.usage import Compaction, Spending, Usage
from condense_cli.dialects import read_log
from tests.conftest import CORPUS, require_corpus

RATES = {  # a made model, priced in dollars per million tokens
    "made-model": {
        "input_cost_per_token": 3e-6,
        "output_cost_per_token": 15e-6,
        "cache_creation_input_token_cost": 3.75e-6,
        "cache_read_input_token_cost": 0.3e-6,
    }
}
POSTHOG = CORPUS.parent / "claude-code" / "posthog-impact-dashboard.claude-session.jsonl"
V1 = CORPUS.parent / "openhands-v1" / "0535c419f44a4e248c72e40c77a06a32"


@pytest.fixture(autouse=True)
def made_prices() -> Iterator[None]:
    use_prices(RATES)
    yield
    use_prices({})


def call(read: int = 0, written: int = 0, given: int = 0, output: int = 0) -> Usage:
    return Usage("", "made-model", given, output, written, 0, read)


def test_a_compaction_is_weighed_by_the_calls_around_it() -> None:
    """100,000 tokens of prompt before, 20,000 after: 80,000 (+ the answer) dropped
    from each of the three calls after it; the first call writes its 15,000 again,
    the second 5,000 beyond its growth of 1,000, the third only its growth."""
    before = [call(read=90_000, written=10_000, output=1_000)]
    after = [
        call(read=5_000, written=15_000, output=500),
        call(read=15_000, written=6_000, output=500),  # prompt 21,000: grew 1,000
        call(read=21_000, written=500, output=500),  # grew 500, wrote 500: warm again
    ]
    own = call(read=100_000, output=2_000)
    spending = Spending([*before, *after], [Compaction(1, 1, own)])
    [figures] = weigh(spending)
    assert figures.dropped == 100_000 + 1_000 - 20_000
    assert figures.calls_after == 3
    assert figures.rewritten == 15_000 + 5_000
    assert figures.rewritten_dollars == pytest.approx(20_000 * (3.75 - 0.3) / 1e6)
    assert figures.saved == 3 * 81_000
    assert figures.saved_dollars == pytest.approx(3 * 81_000 * 0.3 / 1e6)
    assert figures.own_dollars == pytest.approx((100_000 * 0.3 + 2_000 * 15) / 1e6)
    assert figures.net_dollars == pytest.approx(
        figures.saved_dollars - figures.rewritten_dollars - figures.own_dollars
    )


def test_without_the_cache_the_dropped_tokens_are_input_and_nothing_is_rewritten() -> None:
    spending = Spending(
        [call(given=50_000, output=100), call(given=10_000), call(given=11_000)],
        [Compaction(1, 1)],
    )
    [figures] = weigh(spending)
    assert (figures.dropped, figures.rewritten, figures.own_calls) == (40_100, 0, 0)
    assert figures.saved_dollars == pytest.approx(2 * 40_100 * 3.0 / 1e6)


def test_back_to_back_compactions_are_weighed_apart() -> None:
    """No call between them: neither can be weighed (the first has no call after
    it, the second none since the first), and neither takes the other's."""
    spending = Spending(
        [call(given=50_000), call(given=10_000)], [Compaction(1, 1), Compaction(2, 1)]
    )
    first, second = weigh(spending)
    assert (first.calls_after, second.calls_after) == (0, 0)
    assert (first.unmeasured, second.unmeasured) == (1, 1)
    assert total([first, second]).compactions == 2


def test_posthog_compaction_as_claude_code_recorded_it() -> None:
    """The one compaction of a real session: the last call before it sent 166,609
    tokens and answered 798; the first after it sent 34,765. The client records no
    call of its own: it is built from the boundary (167,766 read, 6,977 written)."""
    require_corpus(POSTHOG.parent)
    with read_log(str(POSTHOG)) as replay:
        spending = replay.spending()
    assert spending is not None
    [compaction] = spending.compactions
    assert (compaction.after, compaction.estimated) == (83, True)
    assert compaction.call is not None
    assert (compaction.call.cache_read, compaction.call.output) == (167_766, 6_977)
    [figures] = weigh(spending)
    assert figures.dropped == 166_609 + 798 - 34_765
    assert figures.calls_after == 101
    # 18,434 written whole, then 18,434, 27,794 and 27,988 beyond what the prompt grew
    assert figures.rewritten == 18_434 + 18_434 + 27_794 + 27_988
    assert figures.saved == 101 * figures.dropped


def test_a_v1_condensation_falls_where_its_response_is_with_the_condensers_call() -> None:
    """The SDK's condenser ran every 21 agent calls; each condensation's own call is
    the condenser's, in order."""
    require_corpus(V1)
    with read_log(str(V1)) as replay:
        spending = replay.spending()
    assert spending is not None
    assert [c.after for c in spending.compactions] == [40, 61, 82, 103, 124, 145, 166]
    assert all(c.call is not None and c.call.service == "condenser" for c in spending.compactions)
    assert not any(c.service == "condenser" for c in spending.calls)


def test_cost_compactions_through_the_command(proc, tmp_path: Path) -> None:
    require_corpus(POSTHOG.parent)
    prices = tmp_path / "prices.toml"
    prices.write_text(
        '["claude-opus-4-7"]\n'
        "input_cost_per_token = 5e-6\noutput_cost_per_token = 25e-6\n"
        "cache_creation_input_token_cost = 6.25e-6\ncache_read_input_token_cost = 0.5e-6\n"
        "cache_creation_input_token_cost_above_1hr = 10e-6\n"
    )
    args = ("cost", POSTHOG, "--compactions", "--prices", prices)
    data = json.loads(proc(*args, "-f", "json").stdout)
    [row] = data["compactions"]["rows"]
    assert row["compaction"] == 1 and row["own_call"]["estimated"] == 1
    assert row["saved"] == {"tokens": 13_396_842, "dollars": pytest.approx(6.698421)}
    assert row["cache_rewritten"]["dollars"] == pytest.approx(92_650 * 9.5e-6)
    assert data["compactions"]["totals"]["net_dollars"] == row["net_dollars"]
    text = proc(*args).stdout.decode()
    assert "~$0.26" in text and "$5.56" in text  # its own call built, not recorded


def test_a_prices_file_that_is_wrong_is_refused_by_name(proc, tmp_path: Path) -> None:
    bad = tmp_path / "prices.json"
    bad.write_text('{"made-model": {"input_cost_per_token": "cheap"}}')
    result = proc("cost", tmp_path, "--prices", bad)
    assert result.returncode == 2
    assert "model 'made-model' needs input_cost_per_token as a number" in result.stderr.decode()
    assert b"Traceback" not in result.stderr


SONNET_4 = (  # Sonnet 4's rates, for the V1 conversations (their model has none in the table)
    '["litellm_proxy/anthropic/claude-sonnet-4-20250514"]\n'
    "input_cost_per_token = 3e-6\noutput_cost_per_token = 15e-6\n"
    "cache_creation_input_token_cost = 3.75e-6\ncache_read_input_token_cost = 0.3e-6\n"
)


def test_cost_stats_audit_and_report_give_a_compaction_the_same_figures(
    proc, tmp_path: Path
) -> None:
    """One compaction, four commands: the same dollars in each, as JSON and in words."""
    require_corpus(POSTHOG.parent)
    cost = json.loads(proc("cost", POSTHOG, "--compactions", "-f", "json").stdout)
    [figures] = [
        {k: v for k, v in r.items() if k not in ("session", "compaction")}
        for r in cost["compactions"]["rows"]
    ]
    stats = json.loads(proc("stats", POSTHOG, "--no-tokens", "-f", "json").stdout)
    assert stats["economics"] == figures == stats["condensations"][0]["economics"]
    audit = json.loads(proc("audit", POSTHOG, "-f", "json").stdout)
    assert audit["condensations"][0]["economics"] == figures
    said = "saved 13,396,842 tokens ($6.70) on the 101 calls after it; net $5.56"
    assert said in proc("stats", POSTHOG, "--no-tokens").stdout.decode()
    assert said in proc("audit", POSTHOG).stdout.decode()
    page = tmp_path / "page.html"
    assert proc("report", POSTHOG, "--no-tokens", "-o", page).returncode == 0
    html = page.read_text()
    assert said in html and "<dd>$5.56</dd>" in html and 'band-net">net $5.56' in html


def test_stats_over_a_tree_adds_up_each_logs_net_at_the_users_prices(
    cli, proc, tmp_path: Path
) -> None:
    """Over the V1 conversations: a net per log where each compaction is weighed and
    priced (an idle snapshot records no call: `-`), the total equal to `cost`'s, and
    the same in two workers as in this process."""
    require_corpus(V1)
    prices = tmp_path / "prices.toml"
    prices.write_text(SONNET_4)
    tree = V1.parent
    cost = json.loads(proc("cost", tree, "--compactions", "--prices", prices, "-f", "json").stdout)
    weighed = cost["compactions"]["totals"]
    args = ("stats", tree, "--no-tokens", "--prices", prices, "-f", "json")
    one = json.loads(cli(*args, "-j", "1").stdout)
    two = json.loads(proc(*args, "-j", "2").stdout)
    assert one == two
    nets = {row["log"]: row["compactions_net_dollars"] for row in one["logs"]}
    assert one["total"]["compactions_net_dollars"] == pytest.approx(
        sum(n for n in nets.values() if n is not None)
    )
    unweighed = [
        row
        for row in one["logs"]
        if row["condensations"] and row["compactions_net_dollars"] is None
    ]
    assert unweighed and weighed.get("unmeasured")
    # without the rates, no log is priced: no net, where before there was
    bare = json.loads(cli("stats", tree, "--no-tokens", "-f", "json", "-j", "1").stdout)
    assert all(row["compactions_net_dollars"] is None for row in bare["logs"])
    assert round(one["total"]["compactions_net_dollars"], 2) == round(
        sum(r["net_dollars"] for r in cost["compactions"]["rows"] if "unmeasured" not in r), 2
    )
