"""The strategies measured since OpenHands V0's condensers: context editing's
`tool_result_clearing`, and `hybrid` (masking, and a summary only when the masked
view is still too long); against results worked out by hand."""

from __future__ import annotations

from typing import Any

import orjson

from condense_cli.condensers.offline import Meter, go_offline
from condense_cli.config.loading import LLMTables, build_condenser
from condense_cli.core.events import Condensation, View
from condense_cli.dialects.openhands_v0.replay import load_view
from tests.conftest import msg, request, run_action, run_obs

OUTPUT = "word " * 100  # 101 tokens as gpt-4o-mini's tokenizer counts them


def make(type: str, **config: Any):
    return build_condenser({"type": type, **config}, LLMTables({}))


def uses(first: int, count: int, tool: str = "run") -> list[dict[str, Any]]:
    """`count` tool uses from id `first`, each with an output of 101 tokens."""
    out: list[dict[str, Any]] = []
    for k in range(count):
        a = first + 2 * k
        action = run_action(a, f"call{a}")
        action["action"] = tool
        out += [action, run_obs(a + 1, a, f"call{a}", OUTPUT)]
    return out


def view_of(make_log, events: list[dict[str, Any]]) -> View:
    return load_view(str(make_log(events)))[0]


def outputs(view: View) -> dict[Any, str]:
    return {e.id: e.text[:11] for e in view if not e.is_action}


def test_past_the_trigger_every_result_but_the_newest_is_cleared(make_log) -> None:
    view = view_of(make_log, [msg(0, "fix it"), *uses(1, 4)])  # results 2, 4, 6, 8: 404 tokens
    cleared = "[tool resul"
    result = make("tool_result_clearing", trigger=300, keep=1).condense(view)
    assert isinstance(result, View)
    assert outputs(result) == {2: cleared, 4: cleared, 6: cleared, 8: "word word w"}
    assert [e.id for e in result] == list(range(9))  # each keeps its place and id
    # under the trigger, or freeing less than clear_at_least: the view as it is
    assert make("tool_result_clearing", trigger=500, keep=1).condense(view).events == view.events
    waits = make("tool_result_clearing", trigger=300, keep=1, clear_at_least=400)
    assert waits.condense(view).events == view.events


def test_an_excluded_tool_keeps_its_results(make_log) -> None:
    view = view_of(make_log, [msg(0), *uses(1, 2, "read"), *uses(5, 2)])
    result = make("tool_result_clearing", trigger=300, keep=1, exclude_tools=["read"])
    assert outputs(result.condense(view)) == {
        2: "word word w",
        4: "word word w",
        6: "[tool resul",
        8: "word word w",
    }


def test_a_cleared_result_stays_cleared_so_the_cache_is_lost_once_a_clearing(
    make_log, tmp_path, cli
) -> None:
    """Over a history that grows by one use a step, past the trigger each step would
    clear one more result; with clear_at_least, it clears in batches, and the prompt
    cache is lost once a batch."""
    log = make_log([msg(0, "fix it"), *uses(1, 12)])
    runs = []
    for at_least in (0, 300):
        args = ["trigger=500", "keep=2", f"clear_at_least={at_least}"]
        sets = [item for pair in (("-s", a) for a in args) for item in pair]
        done = cli("simulate", log, "-t", "tool_result_clearing", *sets, "-f", "json")
        [run] = orjson.loads(done.stdout_bytes)["runs"]
        runs.append(run)
    every, batches = runs
    assert every["cache_busts"] > batches["cache_busts"] >= 2
    assert every["view_tokens"]["final"] <= 500 + 2 * 101 + 60  # two uses kept, and notes


def test_hybrid_masks_and_summarises_only_past_the_limit_reading_the_outputs_whole(
    make_log,
) -> None:
    view = view_of(make_log, [msg(0, "fix it"), *uses(1, 8)])  # 17 events
    prompts: list[str] = []

    def words(text: str) -> int:  # (tokens counted as words; the prompts kept)
        prompts.append(text)
        return len(text.split())

    hybrid = make("hybrid", attention_window=4, max_tokens=1000, max_size=500, keep_first=1)
    go_offline(hybrid, "[summary]", Meter(words))
    masked = hybrid.condense(view)
    assert isinstance(masked, View)  # 2 outputs of 100 words in the window: within 1,000
    assert sum(e.text == "<MASKED>" for e in masked) == 6  # all but the 4 newest events'
    tight = make("hybrid", attention_window=4, max_tokens=150, max_size=500, keep_first=1)
    go_offline(tight, "[summary]", Meter(words))
    made = tight.condense(view)
    assert isinstance(made, Condensation)  # masked, still over 150: a summary
    assert made.summary == "[summary]"
    assert "word word" in prompts[-1] and "<MASKED>" not in prompts[-1]


def test_a_due_condensation_that_frees_too_little_is_a_hard_context_reset(make_log) -> None:
    """A request is pending and the newest events `max_size` keeps are the whole view:
    the usual cut frees nothing, so the summariser takes every event after the head
    (the task stays) but the newest; without `hard_context_reset`, nothing is
    condensed."""
    events = [msg(0, "fix the parser"), *uses(1, 3), request(7)]
    view = view_of(make_log, events)
    reset = make("llm", max_size=100)
    go_offline(reset, "[summary]", Meter(len))
    made = reset.condense(view)
    assert isinstance(made, Condensation)
    # all but the task, and the newest tool use (no condensation forgets the newest)
    assert sorted(made.forgotten) == [1, 2, 3, 4]
    waits = make("llm", max_size=100, hard_context_reset=False)
    go_offline(waits, "[summary]", Meter(len))
    assert isinstance(waits.condense(view), View)


def test_minimum_progress_is_a_share(make_log) -> None:
    import pytest

    from condense_cli.core.errors import ConfigError

    with pytest.raises(ConfigError, match="minimum_progress"):
        make("llm", minimum_progress=1.5)


def test_forgetting_condensers_fire_on_tokens_too(make_log) -> None:
    """Nine events, far within max_size, but more than max_tokens: the middle goes,
    and the newest events kept fit in half of max_tokens (the newest tool use here)."""
    view = view_of(make_log, [msg(0, "fix it"), *uses(1, 4)])  # 404 tokens of outputs
    within = make("amortized_forgetting", max_size=100, max_tokens=1000).condense(view)
    assert isinstance(within, View) and "within max_tokens 1,000" in (within.note or "")
    made = make("amortized_forgetting", max_size=100, max_tokens=300).condense(view)
    assert isinstance(made, Condensation)
    assert sorted(made.forgotten) == [1, 2, 3, 4, 5, 6]
    attention = make("llm_attention", max_size=100, max_tokens=300)
    go_offline(attention, "", Meter(len))  # (no model: it keeps the newest)
    ranked = attention.condense(view)
    assert isinstance(ranked, Condensation)
    assert sorted(ranked.forgotten) == [1, 2, 3, 4, 5, 6]


LOG_LINES = [f"line {n} of the build log" for n in range(60)]
LOG_LINES[20] = "checking the parser module"
LOG_LINES[30] = "Error: tokenizer exploded"
LOG_LINES[40] = "parser tests: 3 passed"


def test_task_pruning_keeps_the_lines_about_the_task(make_log) -> None:
    """A 60-line output: its 2 first and 2 last lines stay, the lines that name the
    task's words (the parser) and the error; each run cut is one marker."""
    events = [
        msg(0, "fix the parser"),
        run_action(1, "c1"),
        run_obs(2, 1, "c1", "\n".join(LOG_LINES)),
    ]
    events += [msg(3, "go on")]
    view = view_of(make_log, events)
    pruning = make("task_pruning", keep_head=2, keep_tail=2, attention_window=1, recent_turns=0)
    result = pruning.condense(view)
    assert isinstance(result, View)
    assert result[2].text.splitlines() == [
        "line 0 of the build log",
        "line 1 of the build log",
        "[... 18 lines cut: not about the task ...]",
        "checking the parser module",
        "[... 9 lines cut: not about the task ...]",
        "Error: tokenizer exploded",
        "[... 9 lines cut: not about the task ...]",
        "parser tests: 3 passed",
        "[... 17 lines cut: not about the task ...]",
        "line 58 of the build log",
        "line 59 of the build log",
    ]
    # within the attention window the output stays whole
    close = make("task_pruning", keep_head=2, keep_tail=2, attention_window=2, recent_turns=0)
    assert close.condense(view).events == view.events
    # a later step with other words keeps the cut it made (the cache holds)
    later = view_of(make_log, [*events, msg(4, "now about the build log lines")])
    assert pruning.condense(later)[2].text == result[2].text


def agent_session(tmp_path, model: str):
    """A Claude Code session on `model`: a task and 12 tool uses of about 900 tokens of
    output each (some 11,000 tokens in all), far within any max_size."""
    from tests.dialects.claude_code.test_replay import Builder

    b = Builder(model)
    b.user("Fix the parser.")
    for n in range(12):
        b.use(f"call{n}", f"m{n}")
        b.result(f"call{n}", "word " * 900)
    return b.write(tmp_path / f"{model}.jsonl")


def test_a_token_trigger_is_the_smaller_of_max_tokens_and_the_agent_models_window(
    tmp_path, cli
) -> None:
    """gpt-4 reads 8,192 tokens (LiteLLM's table): a session on it passes that, so a
    max_tokens of 50,000 is capped to it and the middle is forgotten; on a model the
    table does not know, the same settings leave it. A summariser takes the window
    without a max_tokens too, as the SDK's does; a rule condenser only as a cap."""
    amortized = ["-t", "amortized_forgetting", "-s", "max_tokens=50000", "--dry-run"]
    capped = cli("run", agent_session(tmp_path, "gpt-4"), *amortized)
    assert '"compact_boundary"' in capped.stdout and "forgot 16 events" in capped.stderr
    unknown = cli("run", agent_session(tmp_path, "a-model-nobody-knows"), *amortized)
    assert unknown.stdout == "" and "tokens, within max_tokens 50,000" in unknown.stderr
    plain = cli("run", agent_session(tmp_path, "gpt-4"), "-t", "amortized_forgetting", "--dry-run")
    assert plain.stdout == "" and "within max_size 100" in plain.stderr
    fired = []
    for model in ("gpt-4", "a-model-nobody-knows"):
        done = cli("simulate", agent_session(tmp_path, model), "-t", "llm", "-f", "json")
        [run] = orjson.loads(done.stdout_bytes)["runs"]
        fired.append(run["condensations"])
    assert fired[0] >= 1 and fired[1] == 0
