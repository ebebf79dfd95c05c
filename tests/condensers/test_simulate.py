"""`condense simulate`: the history replayed under a condenser, step by step."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense_cli.condensers.base import Condenser, Result
from condense_cli.core.events import Condensation, View
from condense_cli.llm.tokens import tokenizer_for
from tests import stories
from tests.conftest import msg, request, run_action, run_obs

# amortized_forgetting, max_size 4, keep_first 1, on the story's 9 events: at step 5
# the view [1..5] keeps the head and the newest pair (4, 5); at step 7 [1, 4, 5, 6, 7]
# keeps the head and 7. Each time the cached prefix ends after the head.
EVENTS = [1, 2, 3, 4, 3, 4, 2, 3, 4]
TEXTS = [
    [stories.FIRST],
    [stories.FIRST, stories.COMMAND],
    [stories.FIRST, stories.COMMAND, stories.OUTPUT],
]


@pytest.mark.parametrize("dialect", stories.able("simulates"))
def test_amortized_forgetting_fires_where_the_view_outgrows_max_size(
    dialect: str, tmp_path: Path, cli
) -> None:
    log = stories.write(dialect, tmp_path / "s.jsonl")
    result = cli("simulate", log, "-t", "amortized", "-s", "max_size=4", "-f", "json")
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout_bytes)
    assert (data["dialect"], data["events"]) == (dialect, 9)
    [run] = data["runs"]
    assert run["label"] == "amortized_forgetting"
    assert run["series"]["events"] == EVENTS
    assert (run["condensations"], run["fired_at"]) == (2, [5, 7])
    assert run["view_events"] == {"peak": 4, "mean": 2.9, "final": 4}
    assert (run["cache_busts"], run["events_rewritten"]) == (2, 3)
    assert run["summariser_tokens"] == 0


def test_tokens_are_those_of_the_view_after_each_step(tmp_path: Path, cli) -> None:
    log = stories.write("openhands-v0", tmp_path / "s.jsonl")
    data = orjson.loads(cli("simulate", log, "-f", "json").stdout_bytes)
    count = tokenizer_for("gpt-4o-mini").count_batch
    [run] = data["runs"]
    assert run["label"] == "noop"
    assert run["series"]["tokens"][:3] == [sum(count(texts)) for texts in TEXTS]
    assert run["series"]["events"] == list(range(1, 10))
    assert (run["cache_busts"], run["condensations"]) == (0, 0)


def test_masking_busts_the_cache_each_time_it_masks_one_more_result(tmp_path: Path, cli) -> None:
    log = stories.write("openhands-v0", tmp_path / "s.jsonl")
    args = ("-t", "observation_masking", "-s", "attention_window=2", "-f", "json")
    [run] = orjson.loads(cli("simulate", log, *args).stdout_bytes)["runs"]
    # a result is masked once 2 events or more follow it: result 3 at step 5 (the
    # cached prefix ends before it, at 2 of 5 events), result 5 at step 7 (4 of 7);
    # result 8 never is
    assert (run["cache_busts"], run["condensations"]) == (2, 0)
    assert run["events_rewritten"] == 3 + 3


def test_llm_summaries_are_placeholders_and_their_prompts_are_counted(
    tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    log = stories.write("openhands-v0", tmp_path / "s.jsonl")
    args = (
        "-t",
        "llm",
        "-s",
        "max_size=4",
        "-s",
        "keep_first=0",
        "-s",
        "keep_task=false",
        "--summary-tokens",
        "20",
    )
    [run] = orjson.loads(cli("simulate", log, *args, "-f", "json").stdout_bytes)["runs"]
    # step 5: the summary and the newest pair (4, 5); step 7: the summary and 7
    assert run["fired_at"] == [5, 7]
    assert run["series"]["events"] == [1, 2, 3, 4, 3, 4, 2, 3, 4]
    assert run["summariser_tokens"] > 0
    # the placeholder is about 20 tokens: "[placeholder summary]" and 16 words
    assert run["series"]["tokens"][4] < run["series"]["tokens"][3]


def test_configs_and_variants_are_columns_of_the_table(tmp_path: Path, proc) -> None:
    log = stories.write("openhands-v0", tmp_path / "s.jsonl")
    a = tmp_path / "a.toml"
    a.write_text('[condenser]\ntype = "amortized"\nmax_size = 4\n')
    b = tmp_path / "b.toml"
    b.write_text('[condenser]\ntype = "noop"\n')
    done = proc("simulate", log, "-c", a, "-c", b)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0] == (
        f"simulate {log} (openhands-v0): 9 events as the agent saw them; "
        "tokens: tiktoken o200k_base (as litellm counts for gpt-4o-mini)"
    )
    assert lines[1].split() == ["a.toml", "b.toml"]
    assert lines[2].split() == ["condensations", "2", "0"]
    assert lines[3].split() == ["first", "fired", "at", "step", "5", "-"]
    assert lines[7].split() == ["cache", "busts", "2", "0"]
    assert lines[8].split() == ["events", "rewritten", "3", "0"]
    assert lines[-1] == "  1 = a.toml   2 = b.toml"
    csv = proc("simulate", log, "-t", "amortized", "--variant", "max_size=4", "-f", "csv")
    rows = csv.stdout.decode().splitlines()
    assert rows[0] == (
        "step,event,amortized_forgetting max_size=4 events,amortized_forgetting max_size=4 "
        "tokens,amortized_forgetting max_size=4 condensed"
    )
    assert [r.split(",")[:3] for r in rows[4:7]] == [
        ["4", "4", "4"],
        ["5", "5", "3"],
        ["6", "6", "4"],
    ]
    assert rows[5].endswith(",1")


def test_a_request_in_the_history_makes_conversation_window_fire(make_log, cli) -> None:
    from tests.conftest import msg, request

    log = make_log([msg(0), msg(1), msg(2, source="agent"), request(3), msg(4, source="agent")])
    [run] = orjson.loads(
        cli("simulate", log, "-t", "conversation_window", "-f", "json").stdout_bytes
    )["runs"]
    assert run["fired_at"] == [4]


# --- the step-by-step simulation against its definition ------------------------------

CONDENSERS = [
    {"type": "observation_masking", "attention_window": 1},
    {"type": "observation_masking", "attention_window": 3},
    {"type": "browser_output", "attention_window": 1},
    {"type": "recent_events", "max_events": 4},
    {"type": "amortized", "max_size": 6, "keep_first": 1},
    {
        "type": "pipeline",
        "condensers": [
            {"type": "observation_masking", "attention_window": 2},
            {"type": "amortized", "max_size": 5, "keep_first": 1},
        ],
    },
]


def defined(history: list[Any], table: dict[str, Any], tokens: Any) -> Any:
    """What `simulate` must find, by its definition: a condenser built afresh at each
    step (it remembers nothing), each view's tokens summed, and the events the model
    read at the step before compared one by one with those it reads now."""
    from condense_cli.condensers.simulate import _same
    from condense_cli.config.loading import LLMTables, build_condenser
    from condense_cli.core.events import Condensation, apply_condensation

    view, sent = View([]), []
    busts = rewritten = 0
    series: list[tuple[int, int]] = []
    for item in history:
        if item is None:
            view = view.with_request()
            continue
        view = replace(view, events=[*view.events, item])
        result = build_condenser(table, LLMTables({})).condense(view)
        if isinstance(result, Condensation):
            view = apply_condensation(view, result)
        now = view.events if isinstance(result, Condensation) else result.events
        prefix = 0
        while prefix < min(len(sent), len(now)) and _same(sent[prefix], now[prefix]):
            prefix += 1
        if prefix < len(sent):
            busts, rewritten = busts + 1, rewritten + len(now) - prefix
        sent = list(now)
        series.append((len(now), sum(map(tokens, now))))
    return series, busts, rewritten


SCOPED = HealthCheck.function_scoped_fixture  # each example writes its own log
step = st.one_of(
    st.sampled_from(["message", "run", "browse", "request"]),
    st.tuples(st.just("output"), st.integers(1, 400)),
)


@given(st.lists(step, min_size=1, max_size=40), st.sampled_from(range(len(CONDENSERS))))
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_a_simulation_is_what_its_steps_define(
    tmp_path: Path, steps: list[Any], which: int
) -> None:
    """Every step's view (events and tokens), the cache busts and the events rewritten
    are those of the definition, on a history that reads its events back from the log
    (the simulation reuses what it counted and what the condenser masked)."""
    from condense_cli.condensers.offline import Meter
    from condense_cli.condensers.simulate import TokenCache, simulate
    from condense_cli.config.loading import LLMTables, build_condenser
    from condense_cli.dialects import read_log
    from condense_cli.dialects.counting import TextCounts

    lines: list[dict[str, Any]] = []
    for n, kind in enumerate(steps):
        if kind == "message":
            lines.append(msg(n, f"say {n}"))
        elif kind == "request":
            lines.append(request(n))
        elif kind == "browse":
            lines.append({"id": n, "source": "agent", "action": "browse", "args": {"url": f"u{n}"}})
            page = {"url": f"u{n}"}
            lines.append(
                {"id": n + 1000, "source": "environment", "observation": "browse", "cause": n}
                | {"content": f"page {n}", "extras": page}
            )
        elif kind == "run":
            lines.append(run_action(n))
        else:
            lines.append(run_obs(n, n - 1, content="x" * kind[1]))
    lines.sort(key=lambda e: e["id"])
    log = tmp_path / f"h{len(steps)}-{which}.jsonl"
    log.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in lines))
    table = CONDENSERS[which]
    with read_log(str(log)) as replay:
        history = list(replay.history())
        tokens = TokenCache(TextCounts(None), history, 0)
        condenser = build_condenser(table, LLMTables({}))
        run = simulate(history, "x", condenser, View([]), tokens, Meter(len))
        series, busts, rewritten = defined(history, table, tokens)
    assert list(zip(run.events, run.tokens, strict=True)) == series
    assert (run.cache_busts, run.rewritten) == (busts, rewritten)


class ForgetsTheNewest(Condenser):
    """Forgets the event with key 3 as it comes."""

    name = "forgets_the_newest"
    config_class = dict

    def condense(self, view: View) -> Result:
        return Condensation((3,)) if view.events[-1].key == 3 else view


def test_forgetting_only_what_has_just_come_busts_no_cache(make_log) -> None:
    """The model read events 1 and 2 at step 2; at step 3 it reads them again, and the
    third is forgotten as it comes: its prompt cache holds (the step before was taken
    for 1, 2 and 3)."""
    from condense_cli.condensers.offline import Meter
    from condense_cli.condensers.simulate import TokenCache, simulate
    from condense_cli.dialects import read_log
    from condense_cli.dialects.counting import TextCounts

    log = make_log([msg(1), run_action(2), run_obs(3, 2), msg(4)])
    with read_log(str(log)) as replay:
        history = list(replay.history())
        tokens = TokenCache(TextCounts(None), history, 0)
        run = simulate(history, "x", ForgetsTheNewest({}), View([]), tokens, Meter(len))
    assert run.events == [1, 2, 2, 3]
    assert run.fired == [3]
    assert (run.cache_busts, run.rewritten) == (0, 0)


def _fails(count: Any, prompts: Any) -> int:
    next(prompts)
    os._exit(3)


def test_prompts_priced_by_a_child_add_up_to_what_this_process_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The summariser's prompts counted by a forked child (`aside`) while the history
    is simulated: the same run, none of them counted here; a child that fails costs a
    second run, here, with the same result."""
    from condense_cli.condensers import offline
    from condense_cli.condensers.simulate import TokenCache, simulate
    from condense_cli.config.comparing import comparison_sides
    from condense_cli.dialects import read_log
    from condense_cli.dialects.counting import TextCounts

    monkeypatch.chdir(tmp_path)
    log = stories.write("openhands-v0", tmp_path / "s.jsonl")
    settings = ["max_size=4", "keep_first=0", "keep_task=false"]
    runs, counted_here = [], []
    with read_log(str(log)) as replay:
        history = list(replay.history())
        tokens = TokenCache(TextCounts(None), history, 0)
        start = View([], make_summary=replay.view().make_summary)
        for aside, total in ((False, offline._total), (True, offline._total), (True, _fails)):
            monkeypatch.setattr(offline, "_total", total)
            [side] = comparison_sides(None, "llm", settings, None, False, 20, [])
            here: list[str] = []
            count = side.meter.count
            side.meter.count = lambda text, count=count, here=here: here.append(text) or count(text)
            runs.append(
                simulate(
                    history, "llm", side.condenser, side.carrying(start), tokens, side.meter, aside
                )
            )
            counted_here.append(len(here))
    first, beside, again = (run.to_dict() for run in runs)
    assert first["summariser_tokens"] > 0 and first["fired_at"] == [5, 7]
    assert first == beside == again
    # two prompts; none here beside a child; two once it failed; and the placeholder
    # summary, counted here once a run (the tokens of the summariser's answers)
    assert counted_here == [2 + 1, 0 + 1, 2 + 1]


@pytest.mark.parametrize("dialect", stories.able("simulates"))
def test_simulate_prints_the_same_whether_a_child_prices_the_prompts(
    dialect: str, tmp_path: Path, proc
) -> None:
    """A real subprocess, every log split for two processes or none: the same run."""
    log = stories.write(dialect, tmp_path / "s.jsonl")
    args = ("simulate", log, "-t", "llm", "-s", "max_size=4", "-s", "keep_first=0", "-f", "json")
    printed = []
    for threshold in ("0", str(1 << 60)):
        done = proc(*args, env={**os.environ, "CONDENSE_STATS_SPLIT_MIN_BYTES": threshold})
        assert done.returncode == 0, done.stderr.decode()
        printed.append(done.stdout)
    assert printed[0] == printed[1]
    assert orjson.loads(printed[0])["runs"][0]["summariser_tokens"] > 0
