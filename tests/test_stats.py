"""`condense stats`: figures checked on small hand-made logs."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from condense_cli.tokens import tokenizer_for
from tests.conftest import condensation, hidden_setup_run, lines_of, msg, run_action, run_obs


@pytest.fixture(autouse=True)
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONDENSE_CONFIG", raising=False)


def small_log(make_log):
    events = [
        msg(0, "hello there"),  # 11 chars
        run_action(1, "c1"),  # "cmd1": 4 chars
        run_obs(2, 1, "c1", "twelve chars"),  # 12 chars
        {"id": 3, "observation": "agent_state_changed", "content": "", "extras": {}},
        msg(4, "four"),  # 4 chars
        condensation(5, start=1, end=2, summary="short summary", offset=1),  # 13 chars
        {"id": 6, "source": "agent", "action": "condensation_request", "args": {}},
    ]
    return make_log(events), events


def test_stats_json_figures(cli, make_log) -> None:
    log, _ = small_log(make_log)
    result = cli("stats", log, "--format", "json")
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout)
    lines = log.read_bytes().splitlines(keepends=True)
    assert data["bytes"] == len(log.read_bytes())
    assert data["events"] == 7
    assert data["visible_events"] == 4  # not the hidden one, nor condensation and request
    assert data["by_type"]["action:message"] == {
        "events": 2,
        "bytes": len(lines[0]) + len(lines[4]),
    }
    assert data["by_type"]["observation:agent_state_changed"] == {
        "events": 1,
        "bytes": len(lines[3]),
    }
    assert data["condensations"] == [
        {
            "id": 5,
            "line": 6,
            "forgotten_events": 2,
            "forgotten_ranges": [[1, 2]],
            "summary_chars": 13,
            "view_size_after": 3,
        }
    ]
    assert data["requests"] == 1
    assert data["unhandled_request"] is True
    assert data["view"] == {"events": 3, "forgotten_events": 2}
    assert data["chars"] == {
        "log": 11 + 4 + 12 + 4,
        "view": 11 + 13 + 4,
        "ratio": round(28 / 31, 4),
    }


def test_stats_tokens_match_litellm(cli, make_log) -> None:
    from condense_cli.llm import litellm_module

    litellm = litellm_module()
    log, _ = small_log(make_log)
    data = orjson.loads(cli("stats", log, "-f", "json").stdout)
    count = lambda text: litellm.token_counter(model="gpt-4o-mini", text=text)  # noqa: E731
    full = sum(count(t) for t in ("hello there", "cmd1", "twelve chars", "four"))
    view = sum(count(t) for t in ("hello there", "short summary", "four"))
    assert data["tokens"] == {
        "log": full,
        "view": view,
        "ratio": round(view / full, 4),
        "tokenizer": "tiktoken o200k_base (as litellm counts for gpt-4o-mini)",
    }


@pytest.mark.parametrize(
    "model",
    [
        "gpt-4o-mini",
        "gpt-4o",
        "gpt-4",
        "gpt-3.5-turbo",
        "o1",
        "gpt-4.1",
        "openai/local-model",
        "anthropic/claude-3-5-haiku-20241022",
        "claude-3-5-sonnet-20241022",
        "gemini/gemini-1.5-pro",
    ],
)
def test_light_tokenizer_counts_as_litellm_does(model: str) -> None:
    from condense_cli.llm import litellm_module

    litellm = litellm_module()
    texts = [
        "def f(x):\n    return x * 2  # ünïcode ✓",
        "pytest -q\n2 failed, 10 passed",
        "a" * 500,
    ]
    tokenizer = tokenizer_for(model)
    assert tokenizer.name.startswith("tiktoken ")
    assert tokenizer.count_batch(texts) == [
        litellm.token_counter(model=model, text=t) for t in texts
    ]


def test_tokens_follow_the_configured_model(cli, make_log, tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[llm]\nmodel = "gpt-4"\n')
    log, _ = small_log(make_log)
    data = orjson.loads(cli("stats", log, "-f", "json").stdout)
    assert data["tokens"]["tokenizer"] == "tiktoken cl100k_base (as litellm counts for gpt-4)"


def test_no_tokens(cli, make_log) -> None:
    log, _ = small_log(make_log)
    data = orjson.loads(cli("stats", log, "-f", "json", "--no-tokens").stdout)
    assert data["tokens"] is None
    assert data["chars"]["log"] == 31


def test_stats_text_is_plain_when_piped(cli, proc, make_log) -> None:
    log, _ = small_log(make_log)
    size = len(log.read_bytes())
    reads = "the model reads 3 messages (32 characters; tool schemas not counted)"
    expected = f"""{log}
            full log  view  view / log
events             4     3       75.0%
characters        31    28       90.3%

7 events and {size:,} bytes in the log; 2 events forgotten; 1 condensation; 1 request (one pending)

{reads}; the conversion approximated 1 message

by type
type                             events  bytes
action:condensation                   1    189
action:message                        2    147
observation:run                       1    136
action:run                            1    110
observation:agent_state_changed       1     70
action:condensation_request           1     68

condensations
id  line  forgot  ids   summary chars  view after
 5     6       2  1..2             13           3
"""
    result = cli("stats", log, "--no-tokens")
    assert result.stdout == expected
    assert proc("stats", log, "--no-tokens").stdout.decode() == expected


def test_stats_text_draws_tables_on_a_terminal(make_log) -> None:
    import io

    from rich.console import Console

    from condense_cli.dialects.openhands_v0 import collect_stats, scan_log
    from condense_cli.log import LogSource
    from condense_cli.render import print_stats

    log, _ = small_log(make_log)
    with LogSource.open(str(log)) as source:
        numbers = collect_stats(source, scan_log(source), None)
    buffer = io.StringIO()
    print_stats(numbers, Console(file=buffer, force_terminal=True, width=120, color_system=None))
    out = buffer.getvalue()
    assert "┃            ┃ full log ┃ view ┃ view / log ┃" in out
    assert "│ events     │        4 │    3 │      75.0% │" in out


def test_stats_on_a_log_without_condensations(cli, make_log) -> None:
    log = make_log([msg(0, "a"), msg(1, "b")])
    data = orjson.loads(cli("stats", log, "-f", "json", "--no-tokens").stdout)
    assert data["condensations"] == []
    assert data["chars"] == {"log": 2, "view": 2, "ratio": 1.0}


def test_stats_refuses_an_invalid_log(cli, make_log) -> None:
    log = make_log(lines_of([msg(1)]) + lines_of([msg(0)]))
    result = cli("stats", log)
    assert result.exit_code == 1
    assert "decreasing id 0" in result.stderr


def test_stats_count_hidden_events_but_not_their_text(cli, make_log) -> None:
    log = make_log([msg(0, "hello"), *hidden_setup_run(1), msg(3, "bye")])
    data = orjson.loads(cli("stats", log, "-f", "json", "--no-tokens").stdout)
    assert data["events"] == 4
    assert data["visible_events"] == 2
    assert data["by_type"]["action:run"]["events"] == 1
    assert data["by_type"]["observation:run"]["events"] == 1
    assert data["chars"] == {"log": 8, "view": 8, "ratio": 1.0}
    assert data["view"] == {"events": 2, "forgotten_events": 0}
