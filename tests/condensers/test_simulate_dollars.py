"""`simulate` in dollars: a call at each of the log's turns, sending the view then,
its prefix read from the prompt cache, and the summariser's calls; against the same
history with no condensation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from condense_cli.analysis.cost import use_prices
from condense_cli.analysis.economics import Turns, price_run
from condense_cli.condensers.offline import placeholder
from condense_cli.condensers.simulate import turn_steps
from condense_cli.config.loading import configured_tokenizer
from condense_cli.core.usage import Usage
from condense_cli.dialects import read_log
from tests import stories
from tests.conftest import CORPUS, require_corpus

READ, WRITE, IN, OUT = 0.3e-6, 3.75e-6, 3e-6, 15e-6
RATES = {
    "made-model": {
        "input_cost_per_token": IN,
        "output_cost_per_token": OUT,
        "cache_creation_input_token_cost": WRITE,
        "cache_read_input_token_cost": READ,
    }
}
V1 = CORPUS.parent / "openhands-v1" / "0535c419f44a4e248c72e40c77a06a32"
V0 = CORPUS / "ponylang-ponyc-4588.jsonl"
CLAUDE = CORPUS.parent / "claude-code" / "FundWise.claude-session.jsonl"
SONNET_4 = (  # the V1 conversation's model has no price in LiteLLM's table
    '["litellm_proxy/anthropic/claude-sonnet-4-20250514"]\n'
    f"input_cost_per_token = {IN}\noutput_cost_per_token = {OUT}\n"
    f"cache_creation_input_token_cost = {WRITE}\ncache_read_input_token_cost = {READ}\n"
)


@pytest.fixture
def made_prices() -> Iterator[None]:
    use_prices(RATES)
    yield
    use_prices({})


def test_each_call_reads_what_it_shares_with_the_call_before(made_prices) -> None:
    """Calls after steps 0, 2 and 3 of views of 10, 20, 30 and 5 tokens, 100 tokens
    of system prompt before each; step 3 shares 2 tokens with step 2 (a condensation)."""
    turns = Turns("made-model", overhead=100, output=30, cache="writes")
    at, tokens, shared = [0, 2, 3], [10, 20, 30, 5], [0, 10, 20, 2]
    summariser = Usage("", "made-model", input=50, output=5)
    cost = price_run(turns, at, tokens, shared, summariser, 1)
    # written: 110, then 130 - (100 + 10), then 105 - (100 + 2); read: 110, then 102
    assert (cost.calls, cost.prompt, cost.cache_read) == (3, 110 + 130 + 105, 212)
    assert cost.dollars == pytest.approx(133 * WRITE + 212 * READ + 30 * OUT)
    assert cost.summariser_dollars == pytest.approx(50 * IN + 5 * OUT)
    assert cost.total == pytest.approx(cost.dollars + cost.summariser_dollars)
    # a model that bills only reads of its cache (OpenAI's), and one with no cache
    reads = price_run(Turns("made-model", 100, 30, "reads"), at, tokens, shared)
    assert reads.dollars == pytest.approx(133 * IN + 212 * READ + 30 * OUT)
    plain = price_run(Turns("made-model", 100, 30, "none"), at, tokens, shared)
    assert (plain.cache_read, plain.dollars) == (0, pytest.approx(345 * IN + 30 * OUT))


def test_a_turn_is_each_run_of_the_agents_actions() -> None:
    """An OpenHands V0 observation is the agent's too: a turn starts where an action
    of the agent follows anything that is not one."""
    require_corpus(V0.parent)
    with read_log(str(V0)) as replay:  # its events read their records while it is open
        history = list(replay.history())
        events = [e for e in history if e is not None]
        steps = turn_steps(history)
        assert len(steps) == 49
        for step in steps:
            after, before = events[step + 1], events[step]
            assert after.source == "agent" and after.is_action
            assert not (before.source == "agent" and before.is_action)


def test_two_configurations_compared_in_dollars(cli, proc, tmp_path: Path) -> None:
    """On a V1 conversation: the condenser that does nothing costs what the history
    with no condensation costs; the summariser's calls are its condensations, priced
    with the placeholder summaries it wrote; and the command says the same in a
    subprocess as in this process."""
    require_corpus(V1)
    prices = tmp_path / "prices.toml"
    prices.write_text(SONNET_4)
    summary = tmp_path / "summary.toml"
    summary.write_text('[condenser]\ntype = "llm"\nmax_size = 80\nkeep_first = 4\n')
    nothing = tmp_path / "nothing.toml"
    nothing.write_text('[condenser]\ntype = "noop"\n')
    args = ("simulate", V1, "-c", summary, "-c", nothing, "--prices", prices)
    data = orjson.loads(proc(*args, "-f", "json").stdout)
    assert orjson.loads(cli(*args, "-f", "json").stdout_bytes) == data
    dollars = data["dollars"]
    assert dollars["turns"]["calls_recorded"] == 167
    assert dollars["turns"]["recorded"]["dollars"] == pytest.approx(3.72, abs=0.01)
    (llm, noop), (llm_run, _) = dollars["runs"], data["runs"]
    none = dollars["uncondensed"]
    assert llm["calls"] == noop["calls"] == none["calls"] == 167
    assert noop == none  # replayed step by step, or added up at once: the same calls
    assert llm["summariser"]["calls"] == llm_run["condensations"] == 7
    answer = configured_tokenizer(str(summary)).count(placeholder(500))  # each summary
    assert llm["summariser"]["tokens"] == llm_run["summariser_tokens"] + 7 * answer
    assert llm["total_dollars"] == pytest.approx(llm["dollars"] + llm["summariser"]["dollars"])
    assert llm["prompt_tokens"] < none["prompt_tokens"]
    text = proc(*args).stdout.decode()
    assert "against no condensation" in text and "$0.00 saved" in text
    assert "at each of the agent's 167 turns" in text
    assert "as the log's 167 calls of the agent were made" in text


def test_a_log_that_records_no_call_is_priced_as_its_view_alone_and_says_so(
    proc, tmp_path: Path
) -> None:
    """A V1 conversation whose state holds no metrics: each turn is priced as the view
    alone, and the notes under the table say so, say that no rates tell how the
    model caches, and name the model without a price, a line each."""
    conversation = V1.parent / "47be65612b9246c8991628ac9af4996a"
    require_corpus(conversation)
    text = proc("simulate", conversation, "-t", "llm", "-s", "max_size=30").stdout.decode()
    notes = text[text.index("\ndollars:\n") :].split("\n\n")[0].splitlines()[2:]
    model = "litellm_proxy/anthropic/claude-sonnet-4-20250514"
    assert notes == [
        f"  a call at each of the agent's 38 turns, at {model}'s rates; the log records "
        "none of the agent's calls, so each sends the view alone and no answer is counted",
        "  prompt cache: none counted (no rates of the model say how it caches)",
        "  with no condensation: $? (744,067 prompt tokens)",
        f"  the summariser at the rates of {model} (its config's [llm] model, else the agent's)",
        f"  $?: no price for {model} (--prices takes yours)",
    ]


def test_a_log_with_no_model_is_not_priced(cli, tmp_path: Path) -> None:
    log = stories.write("openhands-v0", tmp_path / "s.jsonl")
    result = cli("simulate", log, "-f", "json")
    assert orjson.loads(result.stdout_bytes)["dollars"] is None
    assert "dollars: the log names no model" in cli("simulate", log).stdout


def test_a_summariser_that_calls_its_model_is_priced_by_the_usage_it_reports(
    config: Path, fake, cli, tmp_path: Path
) -> None:
    """With --call-model, the scripted model's own counts (1,000 prompt and 100 answer
    tokens a call), at the rates of the config's [llm] model."""
    require_corpus(V1)
    fake.text("the summary", prompt_tokens=1000, completion_tokens=100).forever()
    with config.open("a") as file:
        file.write('[condenser]\ntype = "llm"\nmax_size = 80\nkeep_first = 4\n')
    prices = tmp_path / "prices.toml"
    prices.write_text(
        SONNET_4
        + SONNET_4.replace("litellm_proxy/anthropic/claude-sonnet-4-20250514", "openai/test-model")
    )
    args = ("simulate", V1, "-c", config, "--call-model", "--prices", prices, "-f", "json")
    data = orjson.loads(cli(*args).stdout_bytes)
    [run], [cost] = data["runs"], data["dollars"]["runs"]
    assert run["condensations"] == len(fake.requests) == 7
    assert cost["summariser"] == {
        "calls": 7,
        "model": "openai/test-model",
        "tokens": 7 * 1100,
        "dollars": pytest.approx(7 * (1000 * IN + 100 * OUT)),
    }


def test_compare_ranks_configurations_over_many_logs(cli, proc, tmp_path: Path) -> None:
    """Two V1 conversations and a Claude Code session under three configurations:
    the rows add up what `simulate` says of each log alone, are ranked by dollars, and
    keeping everything keeps every fact and costs what no condensation costs."""
    require_corpus(V1)
    prices = tmp_path / "prices.toml"
    prices.write_text(SONNET_4)
    configs = []
    for name, table in (
        ("nothing", 'type = "noop"'),
        ("forget", 'type = "amortized_forgetting"\nmax_size = 60'),
        ("summary", 'type = "llm"\nmax_size = 60\nkeep_first = 4'),
    ):
        path = tmp_path / f"{name}.toml"
        path.write_text(f"[condenser]\n{table}\n")
        configs += ["-c", path]
    logs = [V1, V1.parent / "81f92eeb84c0468dbc1837c63c4f72ec", CLAUDE]
    args = ("simulate", "--compare", *logs, *configs, "--prices", prices)
    data = orjson.loads(proc(*args, "-f", "json", "-j", "2").stdout)
    assert orjson.loads(cli(*args, "-f", "json", "-j", "1").stdout_bytes) == data
    rows = {row["configuration"]: row for row in data["configurations"]}
    assert [r["dollars"] for r in data["configurations"]] == sorted(
        r["dollars"] for r in data["configurations"]
    )
    nothing = rows["nothing.toml"]
    assert nothing["facts_kept"] == nothing["facts"] > 0
    assert nothing["dollars"] == pytest.approx(nothing["uncondensed_dollars"])
    assert nothing["condensations"] == 0 and nothing["priced_logs"] == 3
    # each log alone, added up: the same calls, tokens and dollars
    alone = [
        orjson.loads(proc("simulate", log, *configs, "--prices", prices, "-f", "json").stdout)
        for log in logs
    ]
    for index, name in enumerate(("nothing.toml", "forget.toml", "summary.toml")):
        costs = [one["dollars"]["runs"][index] for one in alone]
        assert rows[name]["calls"] == sum(c["calls"] for c in costs)
        assert rows[name]["prompt_tokens"] == sum(c["prompt_tokens"] for c in costs)
        assert rows[name]["dollars"] == pytest.approx(sum(c["total_dollars"] for c in costs))
        fired = sum(one["runs"][index]["condensations"] for one in alone)
        assert rows[name]["condensations"] == fired
    assert rows["forget.toml"]["facts_kept"] < rows["forget.toml"]["facts"]
    table = proc(*args).stdout.decode()
    assert "cheapest first" in table and "$0.00 saved" in table
    lines = proc(*args, "-f", "csv").stdout.decode().splitlines()
    assert lines[0].startswith("rank,configuration,logs,calls,prompt_tokens")
    assert len(lines) == 4


def test_simulate_takes_one_log_unless_it_compares(cli, tmp_path: Path) -> None:
    first = stories.write("openhands-v0", tmp_path / "a.jsonl")
    second = stories.write("openhands-v0", tmp_path / "b.jsonl")
    result = cli("simulate", first, second)
    assert result.exit_code == 2
    assert "give --compare" in result.stderr


def test_the_report_ranks_its_configurations_as_compare_does(proc, tmp_path: Path) -> None:
    require_corpus(V1)
    prices = tmp_path / "prices.toml"
    prices.write_text(SONNET_4)
    configs = []
    for name, table in (("forget", 'type = "amortized_forgetting"'), ("nothing", 'type = "noop"')):
        path = tmp_path / f"{name}.toml"
        path.write_text(f"[condenser]\n{table}\n")
        configs += ["-c", path]
    page = tmp_path / "page.html"
    done = proc("report", V1, *configs, "--prices", prices, "-o", page)
    assert done.returncode == 0, done.stderr
    data = orjson.loads(
        proc("simulate", "--compare", V1, *configs, "--prices", prices, "-f", "json").stdout
    )
    html = page.read_text()
    rows = [row for row in data["configurations"]]
    at = [html.index(f"<tr><td>{row['configuration']}</td>") for row in rows]
    assert at == sorted(at)  # cheapest first, as simulate --compare ranks them
    for row in rows:
        assert f"${row['dollars']:,.2f}</td>" in html
    assert 'style="width:100.0%"' in html  # the dearest's bar is whole
