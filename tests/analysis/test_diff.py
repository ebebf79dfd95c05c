"""`condense diff`: what left and entered the view between two moments or two configs."""

from __future__ import annotations

import difflib
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from condense_cli.analysis.diff import opcodes
from condense_cli.llm.tokens import tokenizer_for
from tests import stories

COUNT = tokenizer_for("gpt-4o-mini").count_batch


def tokens(*texts: str) -> int:
    return sum(COUNT(list(texts)))


@pytest.mark.parametrize("dialect", stories.able(condensed=True))
def test_a_condensation_seen_as_a_diff(dialect: str, tmp_path: Path, cli) -> None:
    log = stories.write(dialect, tmp_path / "s.jsonl")
    before = stories.story(dialect).BEFORE
    result = cli("diff", log, "--upto", before, "-f", "json")
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout_bytes)
    assert data["dialect"] == dialect
    assert (data["a"]["label"], data["b"]["label"]) == (f"up to {before}", "now")
    assert (data["a"]["events"], data["b"]["events"]) == (8, 2)
    assert [e["kind"] for e in data["left"]] == [
        *("action", "action", "observation", "action", "observation"),
        *("action", "action", "observation"),
    ]
    assert len(data["left"]) == 8
    assert [e["preview"] for e in data["entered"]] == [stories.DONE]
    assert data["rewritten"] == []
    assert data["summaries"] == {"removed": [], "added": [stories.SUMMARY]}
    assert data["b"]["tokens"] == tokens(stories.SUMMARY, stories.DONE)
    assert data["tokens_delta"] == data["b"]["tokens"] - data["a"]["tokens"]


def test_diff_text_of_two_moments(tmp_path: Path, cli) -> None:
    log = stories.write("openhands-v0", tmp_path / "s.jsonl")
    result = cli("diff", log, "--upto", "5", "--upto", "10")
    first, command = tokens(stories.FIRST), tokens(stories.COMMAND)
    output, edited, done = tokens(stories.OUTPUT), tokens(stories.EDITED), tokens(stories.DONE)
    left = first + command + output + edited + tokens("edited")
    after = tokens(stories.SUMMARY) + done
    assert result.stdout == (
        f"diff of {log} (openhands-v0): up to 5 -> up to 10\n"
        f"  events: 5 -> 2; tokens: {left:,} -> {after:,} ({after - left:+,})\n"
        f"left the view (5 events, {left} tokens):\n"
        f"  - 1 user action:message ({first} tokens): {stories.FIRST}\n"
        f"  - 2 agent action:run ({command} tokens): {stories.COMMAND}\n"
        f"  - 3 agent observation:run ({output} tokens): FAILED tests/test_app.py::test_add "
        "AssertionError: 1 != 2\n"
        f"  - 4 agent action:edit ({edited} tokens): {stories.EDITED}\n"
        f"  - 5 agent observation:edit ({tokens('edited')} tokens): edited\n"
        f"entered (1 event, {done} tokens):\n"
        f"  + 10 agent action:message ({done} tokens): {stories.DONE}\n"
        "summary: added (53 chars)\n"
    )


def test_two_configs_at_one_moment(tmp_path: Path, proc) -> None:
    log = stories.write("openhands-v0", tmp_path / "s.jsonl", condensed=False)
    mask = tmp_path / "mask.toml"
    mask.write_text('[condenser]\ntype = "observation_masking"\nattention_window = 2\n')
    forget = tmp_path / "forget.toml"
    forget.write_text('[condenser]\ntype = "amortized"\nmax_size = 4\n')
    done = proc("diff", log, "--upto", "6", "-c", mask, "-c", forget, "-f", "json")
    assert done.returncode == 0, done.stderr
    data = orjson.loads(done.stdout)
    assert (data["a"]["label"], data["b"]["label"]) == ("mask.toml", "forget.toml")
    # masking rewrote results 3 and 5 (ids kept); forgetting keeps the head and 6
    assert [e["id"] for e in data["left"]] == [2, 3, 4, 5]
    assert data["entered"] == []
    one = proc("diff", log, "--upto", "6", "-c", mask, "-f", "json")
    rewritten = orjson.loads(one.stdout)["rewritten"]
    # results more than attention_window events from the end of 6: only 3
    assert [(e["id"], e["preview"]) for e in rewritten] == [(3, "<MASKED>")]
    assert rewritten[0]["tokens_before"] == tokens(stories.OUTPUT)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "Error: give --upto A (and --upto B), or --config a.toml --config b.toml\n"),
        (
            ("-t", "amortized", *("--variant", "max_size=4") * 3),
            "Error: diff compares two views, and these options make 3\n",
        ),
    ],
)
def test_diff_needs_two_views(args: tuple[str, ...], message: str, tmp_path: Path, cli) -> None:
    log = stories.write("openhands-v0", tmp_path / "s.jsonl")
    result = cli("diff", log, *args)
    assert result.exit_code == 2
    assert result.stderr == message + "Hint: see condense diff --help\n"


def test_two_moments_of_standard_input_are_refused_with_a_reason(tmp_path: Path, proc) -> None:
    """Two moments read the log twice; standard input can be read once."""
    log = stories.write("openhands-v0", tmp_path / "s.jsonl")
    done = proc("diff", "-", "--upto", "3", input=log.read_bytes())
    assert done.returncode == 2
    assert done.stderr.decode().startswith(
        "Error: diff reads - twice (up to 3, and whole), and a stream can be read once: "
        "save it to a file first\n"
    )
    both = proc("diff", "-", "--upto", "2", "--upto", "3", input=log.read_bytes())
    assert both.returncode == 2
    assert both.stderr.decode().startswith("Error: diff reads - twice (up to 2 and up to 3)")
    again = proc("diff", "-", "-t", "amortized", input=log.read_bytes())  # read once
    assert again.returncode == 0, again.stderr


@given(
    first=st.lists(st.integers(0, 3), max_size=30),
    second=st.lists(st.integers(0, 3), max_size=30),
    grow=st.integers(0, 2),
)
def test_opcodes_are_difflibs(first: list[int], second: list[int], grow: int) -> None:
    """`opcodes` is difflib's answer, also when one list starts the other (which it
    finds without difflib's search)."""
    a, b = [first, first, first + second][grow], [first + second, first, first][grow]
    expected = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    assert opcodes(a, b) == expected
    assert (
        opcodes(first, second)
        == difflib.SequenceMatcher(None, first, second, autojunk=False).get_opcodes()
    )
