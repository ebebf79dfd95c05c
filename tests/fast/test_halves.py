"""`stats` in two processes: the same numbers as one process, or an error, never a mix."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.cli import stats as stats_module
from condense_cli.core.errors import LogError
from condense_cli.core.logfile import LogSource
from condense_cli.dialects import counting, read_log
from condense_cli.dialects.base import Replay
from condense_cli.dialects.claude_code.dialect import ClaudeReplay
from condense_cli.dialects.codex.dialect import CodexReplay
from condense_cli.dialects.counting import Places, TextCounts
from condense_cli.dialects.openhands_v0 import stats as openhands_v0_stats
from condense_cli.dialects.openhands_v0.replay import scan_log
from condense_cli.dialects.openhands_v0.stats import collect_stats
from condense_cli.dialects.openhands_v1.dialect import V1Replay
from condense_cli.dialects.openhands_v1.events import V1Event
from condense_cli.fast.halves import (
    FEED_PIPE_BYTES,
    SPLIT_ENV,
    SPLIT_MIN_BYTES,
    Feeder,
    in_halves,
    in_two,
    lines_between,
    split_point,
)
from condense_cli.llm.messages import Conversion, MessageSums, fingerprint
from condense_cli.llm.tokens import Tokenizer, tokenizer_for
from tests.conftest import condensation, hidden_setup_run, lines_of, msg, run_action, run_obs

ONE = str(10**15)  # a threshold no test log reaches: one process
TWO = "0"  # every log of two lines or more is split


@pytest.fixture(autouse=True)
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONDENSE_CONFIG", raising=False)
    monkeypatch.delenv(SPLIT_ENV, raising=False)


def tie(i: int, action: str, text: str) -> dict[str, Any]:
    return {"id": i, "source": "agent", "action": action, "args": {"content": text}}


def busy_events(pairs: int = 150) -> list[dict[str, Any]]:
    """Every kind of line whose counting could go wrong across the two halves: a
    summary line without id, hidden events, condensations whose forgotten ranges
    straddle the middle, non-ASCII text, and two types with the same bytes, one
    only in each half (their order in `by_type` is their first appearance)."""
    events: list[dict[str, Any]] = [
        msg(0, "fix the parser — ünïcode ✓ 日本語"),
        {"source": "agent", "observation": "condense", "content": "an older summary", "extras": {}},
        tie(1, "aaaa", "s" * 11),
    ]
    i = 2
    for n in range(pairs):
        events.append(run_action(i))
        events.append(run_obs(i + 1, i, content=f"line {n}: " + "word " * (n % 13) + "é" * (n % 3)))
        i += 2
        if n == pairs // 3:
            events += hidden_setup_run(i)
            i += 2
        if n == pairs // 2:
            events.append(condensation(i, start=10, end=i - 20, summary="first summary", offset=1))
            i += 1
        if n == 2 * pairs // 3:
            events.append(condensation(i, ids=[i - 30, i - 29, i - 7], summary="second", offset=1))
            i += 1
    events.append(tie(i, "zzzz", "s" * (12 - len(str(i)))))  # as many bytes as "aaaa"
    events.append(msg(i + 1, "done"))
    return events


def busy_log(make_log) -> Path:
    log = make_log(busy_events())
    lines = log.read_bytes().splitlines(keepends=True)
    first, last = lines[2], lines[-2]
    assert b'"aaaa"' in first and b'"zzzz"' in last and len(first) == len(last)
    return log


def stats_json(
    cli, log: Path, monkeypatch: pytest.MonkeyPatch, threshold: str, *more: str
) -> bytes:
    monkeypatch.setenv(SPLIT_ENV, threshold)
    result = cli("stats", log, "--format", "json", *more)
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


def test_split_at_a_line_start_near_the_middle(make_log, monkeypatch) -> None:
    log = busy_log(make_log)
    data = log.read_bytes()
    with LogSource.open(str(log)) as source:
        assert split_point(source, len(data)) is None  # far below SPLIT_MIN_BYTES
        monkeypatch.setenv(SPLIT_ENV, TWO)
        middle = split_point(source, len(data))
    assert middle is not None
    assert data[middle - 1 : middle] == b"\n"
    assert len(data) // 2 <= middle < len(data) // 2 + max(map(len, data.splitlines()))


def test_two_processes_walk_one_half_each(make_log, monkeypatch) -> None:
    log = busy_log(make_log)
    size = len(log.read_bytes())
    monkeypatch.setenv(SPLIT_ENV, TWO)
    with LogSource.open(str(log)) as source:
        middle = split_point(source, size)

        def walk(start: int, end: int, report: Any) -> list[tuple[int, int, int, bytes]]:
            text = b"".join(lines_between(source, start, end))
            return [(os.getpid(), start, end, text)]

        halves = in_halves(source, size, walk, lambda a, b: a + b)
    (parent, start1, end1, text1), (child, start2, end2, text2) = halves
    assert (start1, end1, start2, end2) == (0, middle, middle, size)
    assert parent == os.getpid() and child != parent
    assert text1 + text2 == log.read_bytes()


def test_two_processes_give_the_same_json_as_one(cli, proc, make_log, monkeypatch) -> None:
    log = busy_log(make_log)
    one = stats_json(cli, log, monkeypatch, ONE)
    two = stats_json(cli, log, monkeypatch, TWO)
    assert two == one
    env = {**os.environ, SPLIT_ENV: TWO}
    assert proc("stats", log, "--format", "json", env=env).stdout == one
    piped = proc("stats", "-", "--format", "json", input=log.read_bytes(), env=env).stdout
    assert piped == one.replace(str(log).encode(), b"<stdin>")
    data = orjson.loads(one)
    assert data["tokens"]["log"] > data["tokens"]["view"] > 0
    types = list(data["by_type"])
    assert types.index("action:aaaa") == types.index("action:zzzz") - 1  # a tie, in order


def test_a_log_above_the_threshold_is_split_by_default(cli, make_log, monkeypatch) -> None:
    pairs = SPLIT_MIN_BYTES // 150 + 1
    log = make_log(busy_events(pairs))
    size = len(log.read_bytes())
    assert size >= SPLIT_MIN_BYTES
    with LogSource.open(str(log)) as source:
        assert split_point(source, size) is not None
    default = cli("stats", log, "--format", "json").stdout_bytes
    assert default == stats_json(cli, log, monkeypatch, ONE)


@pytest.mark.parametrize("failure", ["killed", "raises"])
def test_a_failed_child_is_replaced_by_this_process(
    cli, make_log, monkeypatch, failure: str
) -> None:
    log = busy_log(make_log)
    one = stats_json(cli, log, monkeypatch, ONE)
    parent = os.getpid()
    walked: list[tuple[int, int]] = []

    def failing(source: LogSource, start: int, end: int, report: Any = None) -> Any:
        if os.getpid() != parent:
            if failure == "killed":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError("the child fails")
        walked.append((start, end))
        return lines_between(source, start, end, report)

    monkeypatch.setattr(openhands_v0_stats, "lines_between", failing)
    assert stats_json(cli, log, monkeypatch, TWO) == one
    size = len(log.read_bytes())
    with LogSource.open(str(log)) as source:
        middle = split_point(source, size)
    assert walked == [(0, middle), (middle, size)]  # the second half, walked here


@pytest.mark.parametrize("threshold", [ONE, TWO])
def test_a_log_that_shrank_after_the_scan_is_an_error(make_log, monkeypatch, threshold) -> None:
    log = busy_log(make_log)
    size = len(log.read_bytes())
    monkeypatch.setenv(SPLIT_ENV, threshold)
    tokenizer = tokenizer_for("gpt-4o-mini")
    with LogSource.open(str(log)) as source:
        index = scan_log(source)
        os.truncate(log, size * 3 // 4)  # in the second half: the child's
        with pytest.raises(LogError) as caught:
            collect_stats(source, index, tokenizer)
    assert str(caught.value) == (
        f"{log}: is shorter than when it was read ({size:,} bytes, now {size * 3 // 4:,}): "
        "it changed while it was being counted"
    )


@pytest.mark.parametrize("threshold", [ONE, TWO])
@pytest.mark.parametrize(
    "edit",
    [
        lambda line: b"[" + line[1:],  # not JSON
        lambda line: b"[" + b" " * (len(line) - 3) + b"]\n",  # JSON, not an object
    ],
    ids=["not-json", "not-an-object"],
)
def test_a_line_that_changed_after_the_scan_is_an_error(
    make_log, monkeypatch, threshold, edit
) -> None:
    log = busy_log(make_log)
    data = bytearray(log.read_bytes())
    monkeypatch.setenv(SPLIT_ENV, threshold)
    with LogSource.open(str(log)) as source:
        index = scan_log(source)
        last = data.rindex(b"\n", 0, len(data) - 1) + 1
        data[last:] = edit(bytes(data[last:]))  # the same size
        log.write_bytes(bytes(data))
        with pytest.raises(LogError) as caught:
            collect_stats(source, index, None)
    assert str(caught.value) == (
        f"{log}: changed while it was being counted: a line that held an event no longer does"
    )


@pytest.mark.parametrize("preadv", [True, False])
def test_lines_between_joins_lines_longer_than_a_block(make_log, monkeypatch, preadv) -> None:
    monkeypatch.setattr("condense_cli.fast.halves.BLOCK", 7)
    if not preadv:  # as where os.preadv does not exist
        monkeypatch.delattr(os, "preadv")
    content = b'{"a": 1}\n' + b'{"long": "' + b"x" * 40 + b'"}\r\n' + b"\n" + b'{"end": 2}'
    log = make_log(content)
    with LogSource.open(str(log)) as source:
        lines = list(lines_between(source, 0, len(content)))
        middle = content.index(b"\n") + 1
        tail = list(lines_between(source, middle, len(content)))
    assert lines == content.splitlines(keepends=True)
    assert tail == lines[1:]


def test_progress_of_two_processes_covers_the_whole_log(make_log, monkeypatch) -> None:
    monkeypatch.setattr(LogSource, "PROGRESS_STEP", 1000)
    monkeypatch.setenv(SPLIT_ENV, TWO)
    log = make_log(lines_of(busy_events()))
    size = len(log.read_bytes())
    seen: list[int] = []
    with LogSource.open(str(log)) as source:
        index = scan_log(source)
        source.on_progress = seen.append
        collect_stats(source, index, None)
    assert seen == sorted(seen)
    assert size * 0.9 < seen[-1] <= size


def test_in_two_runs_the_second_part_in_a_child() -> None:
    assert in_two(os.getpid, os.getpid)[0] == os.getpid()
    assert in_two(os.getpid, os.getpid)[1] != os.getpid()
    assert in_two(lambda: None, lambda: None) == (None, None)  # None is an answer too


def test_a_child_that_cannot_send_its_answer_is_replaced() -> None:
    parent = os.getpid()
    answer = in_two(lambda: 1, lambda: os.getpid() if os.getpid() == parent else (lambda: 0))
    assert answer == (1, parent)  # a lambda does not pickle: counted here


@pytest.mark.parametrize(
    "name",
    [
        "claude-code/posthog-impact-dashboard.claude-session.jsonl",
        "codex/edgerunner.codex-session.jsonl",
        "openhands-v1/0535c419f44a4e248c72e40c77a06a32",
    ],
)
@pytest.mark.parametrize("tokens", [(), ("--no-tokens",)])
def test_other_dialects_count_the_same_in_two_processes(
    cli, corpus: Path, monkeypatch: pytest.MonkeyPatch, name: str, tokens: tuple[str, ...]
) -> None:
    log = corpus.parent / name
    two = stats_json(cli, log, monkeypatch, TWO, *tokens)
    assert two == stats_json(cli, log, monkeypatch, ONE, *tokens)


CONVERTING = [
    ("claude-code/posthog-impact-dashboard.claude-session.jsonl", ClaudeReplay),
    ("codex/edgerunner.codex-session.jsonl", CodexReplay),
]
V1_CONVERSATION = "openhands-v1/0535c419f44a4e248c72e40c77a06a32"


@pytest.mark.parametrize(("name", "replay_class"), CONVERTING)
@pytest.mark.parametrize("child_fails", [False, True])
def test_a_long_view_is_converted_by_a_child_while_the_log_is_walked(
    cli,
    corpus: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    replay_class: type[Replay],
    child_fails: bool,
) -> None:
    """Without tokens, a forked child converts the view to messages while this process
    walks the log: this process converts nothing, unless the child failed, and the
    report is one process's. With tokens, a view that cannot be cut in two
    (`conversion_cut`) is converted here, after the walk."""
    log = corpus.parent / name
    alone = stats_json(cli, log, monkeypatch, ONE, "--no-tokens")
    parent, converted_here = os.getpid(), []
    each_message = replay_class.each_message
    monkeypatch.setattr(replay_class, "conversion_cut", lambda self, view: None)

    def watched(self: Replay, view: Any, out: Conversion) -> Any:
        if os.getpid() != parent and child_fails:
            os._exit(3)
        converted_here.append(os.getpid())  # the child's own list, when it is the child
        return each_message(self, view, out)

    monkeypatch.setattr(replay_class, "each_message", watched)
    assert stats_json(cli, log, monkeypatch, TWO, "--no-tokens") == alone
    assert converted_here == ([parent] if child_fails else [])
    converted_here.clear()
    assert stats_json(cli, log, monkeypatch, TWO) == stats_json(cli, log, monkeypatch, ONE)
    assert converted_here == [parent, parent]  # tokens counted: after the walk, here


def test_a_short_view_is_converted_here(cli, corpus: Path, monkeypatch) -> None:
    """A fork costs what converting a short view does: a big log whose view is
    short converts it in this process."""
    log = corpus.parent / CONVERTING[0][0]
    converted_here: list[int] = []
    each_message = ClaudeReplay.each_message

    def watched(self: Replay, view: Any, out: Conversion) -> Any:
        converted_here.append(len(view))
        return each_message(self, view, out)

    monkeypatch.setattr(ClaudeReplay, "each_message", watched)
    stats_json(cli, log, monkeypatch, "1", "--no-tokens")  # a big log, by this threshold
    assert converted_here and converted_here[0] < stats_module.CONVERT_APART_MIN_EVENTS
    monkeypatch.setattr(stats_module, "CONVERT_APART_MIN_EVENTS", converted_here[0])
    converted_here.clear()
    stats_json(cli, log, monkeypatch, "1", "--no-tokens")
    assert converted_here == []  # as long as the shortest converted apart: in a child


@pytest.mark.parametrize(
    ("name", "replay_class", "tokens"),
    [
        (CONVERTING[1][0], CodexReplay, ()),  # without tokens: beside the walk, above
        (V1_CONVERSATION, V1Replay, ()),
        (V1_CONVERSATION, V1Replay, ("--no-tokens",)),  # the read counted: no walk
    ],
)
def test_a_long_view_is_converted_in_two_processes(
    cli,
    corpus: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    replay_class: type[Replay],
    tokens: tuple[str, ...],
) -> None:
    """This process converts the view up to its cut (`Replay.conversion_cut`), a
    forked child the rest; the report is one process's."""
    log = corpus.parent / name
    alone = stats_json(cli, log, monkeypatch, ONE, *tokens)
    converted_here: list[int] = []
    each_message = replay_class.each_message

    def watched(self: Replay, view: Any, out: Conversion) -> Any:
        converted_here.append(len(view))  # the child's own list, when it is the child
        return each_message(self, view, out)

    monkeypatch.setattr(replay_class, "each_message", watched)
    assert stats_json(cli, log, monkeypatch, TWO, *tokens) == alone
    with read_log(str(log)) as replay:
        view = replay.view()
        assert converted_here == [replay.conversion_cut(view)]
        assert 0 < converted_here[0] < len(view)


@pytest.mark.parametrize(
    "name",
    [
        "claude-code/posthog-impact-dashboard.claude-session.jsonl",
        "codex/edgerunner.codex-session.jsonl",
        "openhands-v1/0535c419f44a4e248c72e40c77a06a32",
    ],
)
def test_the_messages_are_not_tokenized_again_for_a_child_having_counted_them(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """The view's texts a forked child counted come back with its counts: the
    messages then tokenize what one process would, no more."""
    real = tokenizer_for("gpt-4o-mini")

    def asked_for_messages(threshold: str) -> list[str]:
        monkeypatch.setenv(SPLIT_ENV, threshold)
        asked: list[str] = []
        tokenizer = Tokenizer(real.name, lambda text: asked.append(text) or real.count(text))
        with read_log(str(corpus.parent / name)) as replay:
            replay.stats(tokenizer)
            asked.clear()  # (this process's; the child's are its own)
            conversion = Conversion()
            messages = replay.each_message(replay.view(), conversion)
            MessageSums().add(messages, tokenizer, replay.token_counts)
        return asked

    alone = asked_for_messages(ONE)
    assert asked_for_messages(TWO) == alone


def test_text_counts_leave_the_second_half_of_the_log_to_a_child(monkeypatch) -> None:
    monkeypatch.setenv(SPLIT_ENV, TWO)
    real = tokenizer_for("gpt-4o-mini")
    asked: list[str] = []  # what this process tokenizes (the child notes in its own copy)

    def count(text: str) -> int:
        asked.append(text)
        return real.count(text)

    texts = [f"text {i} ünï " * (i % 5 + 1) for i in range(100)]
    counts = TextCounts(Tokenizer(real.name, count))
    counted = counts.walk_log(texts, str, sum(map(len, texts)))
    assert asked == texts[:50]
    full = counted.full
    assert (full.chars, full.tokens) == (sum(map(len, texts)), sum(real.count_batch(texts)))
    assert (list(counted.chars), list(counted.tokens)) == (
        [*map(len, texts)],
        real.count_batch(texts),
    )
    # the child's hashes are this process's (a fork keeps the seed): the view's keys
    assert list(counted.hashes) == [hash(t) for t in texts]


def said(text: str) -> V1Event:
    """An event that is only a text: a user's message."""
    message = {"role": "user", "content": text}
    return V1Event({"kind": "MessageEvent", "id": "m", "llm_message": message}, None, None)


def test_a_view_of_the_logs_own_texts_takes_their_counts_by_place() -> None:
    """A view made of the log's events adds up the counts the log's tally made, by
    place, and gives them by fingerprint to the message conversion; only what is at
    no place of it (a summary) is counted again."""
    real = tokenizer_for("gpt-4o-mini")
    asked: list[str] = []

    def count(text: str) -> int:
        asked.append(text)
        return real.count(text)

    texts = [f"text {i} ünï " * (i % 5 + 1) for i in range(30)]
    counts = TextCounts(Tokenizer(real.name, count))
    counted = counts.walk_log(texts, str, sum(map(len, texts)))
    places = Places(counts, [2 * i + 1 for i in range(30)], counted)  # the odd lines
    asked.clear()
    at = {text: 2 * i + 1 for i, text in enumerate(texts)}
    view = [said(t) for t in [*texts[5:9], "a summary", texts[20]]]
    known: dict[int, int] = {}
    seen = places.tally(view, lambda e: at.get(e.text, 0), known)  # the summary: line 0
    assert asked == ["a summary"]
    wanted = [*texts[5:9], "a summary", texts[20]]
    assert (seen.chars, seen.tokens) == (sum(map(len, wanted)), sum(real.count_batch(wanted)))
    assert known == {fingerprint(t): real.count(t) for t in wanted}  # for the messages
    beyond = places.tally(view[:1], lambda e: 99)  # past every place: counted now
    assert (beyond.chars, beyond.tokens) == (len(texts[5]), real.count(texts[5]))
    uncounted = TextCounts(None)
    Places(uncounted, [1], uncounted.walk(["x"])).tally(view, lambda e: 1, known := {})
    assert known == {}  # no tokens, nothing to give


def test_text_counts_tokenize_a_long_text_the_log_repeats_once(monkeypatch) -> None:
    """A long text met again (a file read twice) takes the count it was given; what is
    remembered is its fingerprint and count, never the text, and at most
    `REMEMBER_MAX` of them. A short text costs less to tokenize again."""
    real = tokenizer_for("gpt-4o-mini")
    asked: list[str] = []

    def count(text: str) -> int:
        asked.append(text)
        return real.count(text)

    long = [f"line {i}: " + "lorem ipsum ünï " * 100 for i in range(4)]
    short = ["ok", "a short output"]
    assert min(map(len, long)) >= counting.REMEMBER_MIN_CHARS > max(map(len, short))
    texts = [*long, *short, *long, *short]
    counts = TextCounts(Tokenizer(real.name, count))
    full = counts.walk(texts).full
    assert asked == [*long, *short, *short]
    assert full.tokens == sum(real.count_batch(texts))
    assert counts.remembered == {fingerprint(t): real.count(t) for t in long}
    assert all(type(key) is int for key in counts.remembered)

    monkeypatch.setattr(counting, "REMEMBER_MAX", 2)
    asked.clear()
    bounded = TextCounts(Tokenizer(real.name, count))
    assert bounded.walk(texts).full.tokens == full.tokens
    assert len(bounded.remembered) == 2
    assert asked == [*long, *short, *long[2:], *short]  # the first two only
    assert len({fingerprint(t) for t in texts}) == len(set(texts))


def _pids_and_texts(texts: Any) -> tuple[int, list[str]]:
    return os.getpid(), list(texts)


def test_a_feeder_child_takes_every_text_as_it_comes() -> None:
    """Texts of any characters (a lone surrogate, as JSON may escape one), empty ones
    too, reach the child in order, whole; one that does not fit in the pipe is not
    sent, for the parent to do itself."""
    texts = ["a", "", "héllo ✓ 日本 \ud800", "x" * (2 * FEED_PIPE_BYTES), "end"]
    feeder = Feeder.start(_pids_and_texts)
    assert feeder is not None
    sent = [feeder.feed(text) for text in texts]
    pid, taken = feeder.result()
    assert pid != os.getpid()
    assert sent == [True, True, True, False, True]
    assert taken == [t for t, fed in zip(texts, sent, strict=True) if fed]


def test_a_feeder_never_waits_for_its_child() -> None:
    """A child slower than the parent gets what fits in the pipe; the rest is left
    to the parent."""
    feeder = Feeder.start(_slow_count)
    assert feeder is not None
    sent = sum(feeder.feed("z" * 10_000) for _ in range(1_000))  # 10 MB, at once
    assert 0 < sent < 1_000
    assert feeder.result() == sent


def _slow_count(texts: Any) -> int:
    import time

    count = 0
    for _ in texts:
        time.sleep(0.005)  # far slower than the parent feeds
        count += 1
    return count


def _fails_after_one(texts: Any) -> int:
    next(texts)
    os._exit(3)


@pytest.mark.parametrize("fed", [1, 5_000])
def test_a_feeder_child_that_fails_gives_no_result(fed: int) -> None:
    """Whether it ends before the parent is done feeding (a broken pipe) or after."""
    feeder = Feeder.start(_fails_after_one)
    assert feeder is not None
    for _ in range(fed):
        feeder.feed("y" * 1000)
    assert feeder.result() is None
