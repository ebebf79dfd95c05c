"""`condense stats`: figures checked on small hand-made logs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.llm.tokens import Tokenizer, tokenizer_for
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
    from condense_cli.llm.client import litellm_module

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
    from condense_cli.llm.client import litellm_module

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


def test_the_tokenizer_lets_go_of_tiktokens_python_merge_table() -> None:
    """Counting reads tiktoken's Rust copy of the merge table: the Python one (25 MB
    for o200k_base) is let go, the counts stay litellm's (above), and the encoding
    still pickles (by its name)."""
    import pickle

    import tiktoken

    tokenizer = tokenizer_for("gpt-4o-mini")
    encoding = tiktoken.get_encoding("o200k_base")
    assert encoding._mergeable_ranks == {}
    assert (
        tokenizer.count("hello world, ünïcode ✓")
        == len(encoding.encode_ordinary("hello world, ünïcode ✓"))
        > 3
    )
    assert pickle.loads(pickle.dumps(encoding)).encode_ordinary(
        "hello"
    ) == encoding.encode_ordinary("hello")


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


def test_stats_text_is_plain_when_piped(cli, proc, make_log, monkeypatch) -> None:
    path, _ = small_log(make_log)
    monkeypatch.chdir(path.parent)  # a short name: a long one would wrap the header
    log = Path(path.name)
    size = len(log.read_bytes())
    reads = "the model reads 3 messages (32 characters; tool schemas not counted)"
    expected = f"""{log}
            full log  view  view / log
events             4     3       75.0%
characters        31    28       90.3%

7 records and {size:,} bytes in the log; 2 events forgotten; 1 condensation; 1 request (one pending)

{reads}; the conversion approximated 1 message

by type
type                             records  bytes
action:condensation                    1    189
action:message                         2    147
observation:run                        1    136
action:run                             1    110
observation:agent_state_changed        1     70
action:condensation_request            1     68

condensations
id  line  forgot  ids   summary chars  view after
 5     6       2  1..2             13           3

threshold: not known from the log (give the agent's settings with --client-config)
"""
    result = cli("stats", log, "--no-tokens")
    assert result.stdout == expected
    assert proc("stats", log, "--no-tokens", cwd=path.parent).stdout.decode() == expected


def test_stats_text_draws_tables_on_a_terminal(make_log) -> None:
    import io

    from rich.console import Console

    from condense_cli.core.logfile import LogSource
    from condense_cli.dialects.openhands_v0.replay import scan_log
    from condense_cli.dialects.openhands_v0.stats import collect_stats
    from condense_cli.terminal.render import print_stats

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


# Counted by the code before issue 15 (which tokenized in batches and the view's texts
# twice): (chars log, view), (tokens log, view), tokens of the messages.
CORPUS_NUMBERS = [
    ("openhands/ponylang-ponyc-4588.jsonl", (72652, 72652), (20465, 20465), 23262),
    ("openhands/ponylang-ponyc-4593.jsonl", (56591, 56591), (14859, 14859), 15540),
    ("openhands/ponylang-ponyc-4595.jsonl", (93941, 93941), (29984, 29984), 29806),
    ("openhands/runtime-basic.jsonl", (4865, 4865), (1271, 1271), 2154),
    ("openhands/runtime-basic_gui_mode.jsonl", (8310, 8310), (1942, 1942), 3643),
    ("openhands/runtime-basic_interactions.jsonl", (421, 421), (107, 107), 125),
    ("openhands/runtime-wrong_initial_state.jsonl", (798, 798), (189, 189), 354),
    ("claude-code/FundWise.claude-session.jsonl", (214163, 214163), (54035, 54035), 56415),
    (
        "claude-code/posthog-impact-dashboard.claude-session.jsonl",
        (208071, 66450),
        (68130, 22700),
        24082,
    ),
    ("codex/FundWise.codex-session.jsonl", (64204, 64204), (16383, 16383), 16532),
    ("codex/edgerunner.codex-session.jsonl", (958448, 958448), (262189, 262189), 266725),
    ("openhands-v1/0535c419f44a4e248c72e40c77a06a32", (367028, 88482), (96321, 22816), 23931),
    ("openhands-v1/1e770021562640afb1d35be64cc26e2e", (91064, 91064), (25908, 25908), 27173),
    ("openhands-v1/3749ed60c63e4def840a46f15f4ee18c", (201413, 84351), (52978, 20681), 21958),
]


@pytest.mark.parametrize(("name", "chars", "tokens", "messages"), CORPUS_NUMBERS)
def test_corpus_numbers_are_unchanged(
    cli, corpus: Path, monkeypatch: pytest.MonkeyPatch, name: str, chars, tokens, messages
) -> None:
    monkeypatch.setenv("CONDENSE_STATS_SPLIT_MIN_BYTES", "0")  # V0 logs: two processes
    data = orjson.loads(cli("stats", corpus.parent / name, "-f", "json").stdout)
    assert (data["chars"]["log"], data["chars"]["view"]) == chars
    assert (data["tokens"]["log"], data["tokens"]["view"]) == tokens
    assert data["messages"]["tokens"] == messages
    if name.startswith("claude-code/posthog"):
        compaction = data["condensations"][0]
        assert (compaction["tokens_before"], compaction["tokens_after"]) == (45430, 3146)


def counting_tokenizer() -> tuple[Tokenizer, list[str]]:
    """The real tokenizer, noting every text it is asked to count."""
    real = tokenizer_for("gpt-4o-mini")
    asked: list[str] = []

    def count(text: str) -> int:
        asked.append(text)
        return real.count(text)

    return Tokenizer(real.name, count), asked


def test_v0_tokenizes_each_text_once(make_log) -> None:
    from condense_cli.core.logfile import LogSource
    from condense_cli.dialects.openhands_v0.replay import scan_log
    from condense_cli.dialects.openhands_v0.stats import collect_stats

    log, _ = small_log(make_log)
    tokenizer, asked = counting_tokenizer()
    with LogSource.open(str(log)) as source:
        numbers = collect_stats(source, scan_log(source), tokenizer)
    # the log's 4 texts (2 of them also in the view), then the summary
    assert asked == ["hello there", "cmd1", "twelve chars", "four", "short summary"]
    view = tokenizer_for("gpt-4o-mini").count_batch(["hello there", "short summary", "four"])
    assert numbers.tokens is not None and numbers.tokens.view == sum(view)


@pytest.mark.parametrize(
    "name",
    [
        "claude-code/posthog-impact-dashboard.claude-session.jsonl",
        "codex/FundWise.codex-session.jsonl",
        "openhands-v1/0535c419f44a4e248c72e40c77a06a32",
    ],
)
def test_other_dialects_take_the_views_counts_from_the_walk(
    corpus: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The view's texts are not tokenized for the view: each is tokenized as often as
    the log's walk met it (once for a long text, which is remembered), or once if the
    walk did not meet it (a summary); the empty text never."""
    from collections import Counter

    from condense_cli.core.events import model_text
    from condense_cli.dialects import read_log
    from condense_cli.dialects.counting import REMEMBER_MIN_CHARS, TextCounts

    walked: Counter[str] = Counter()
    note = TextCounts.note

    def noted(self: TextCounts, counted: Any, text: str) -> None:
        walked[text] += 1
        note(self, counted, text)

    monkeypatch.setattr(TextCounts, "note", noted)
    tokenizer, asked = counting_tokenizer()
    with read_log(str(corpus.parent / name)) as replay:
        replay.stats(tokenizer)
        view = {model_text(e) for e in replay.view().events}
    times = Counter(asked)
    assert any(len(text) >= REMEMBER_MIN_CHARS and walked[text] for text in view)
    assert any(len(text) < REMEMBER_MIN_CHARS and walked[text] > 1 for text in view)
    for text in view:
        met = walked[text] or 1
        assert times[text] == (0 if not text else 1 if len(text) >= REMEMBER_MIN_CHARS else met)
