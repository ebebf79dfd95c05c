"""The instruction-level audit: a user's message clause by clause, constraints with
their object and their negation."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from condense_cli.analysis.clauses import carried, clauses, content, is_constraint, sentences_of
from tests.dialects.claude_code.test_replay import Builder, no_config

__all__ = ["no_config"]  # a fixture used here

ASKED = "Fix the crash in src/parser/lexer.py and keep the API stable"
KEPT_TOO_LITTLE = "USER_CONTEXT: fix a crash. Edited /workspace/src/parser/lexer.py."


def is_carried(clause: str, summary: str) -> bool:
    return carried(clause.casefold(), content(summary), lambda: sentences_of(summary))


def test_a_message_is_cut_into_its_clauses() -> None:
    assert list(clauses(ASKED)) == ["Fix the crash in src/parser/lexer.py", "keep the API stable"]
    # a piece of fewer than two content words stays with its neighbour
    assert list(clauses("Update the tests and docs, then run the linter.")) == [
        "Update the tests and docs",
        "run the linter.",
    ]
    # headings give no clause; i.e. does not end a sentence
    assert list(clauses("Phase 2.\nInstall it (i.e. all dependencies) first")) == [
        "Install it (i.e. all dependencies) first"
    ]
    # what the user pasted is material, not instruction
    pasted = "Fix the parser bug.\n<issue>It must never crash.</issue>\n```\nrm -rf /x\n```"
    assert list(clauses(pasted)) == ["Fix the parser bug."]


@pytest.mark.parametrize(
    ("clause", "constraint"),
    [
        ("keep the API stable", True),
        ("do not modify str.py", True),
        ("never push to main", True),
        ("use uv instead of pip", True),
        ("Fix the crash in src/parser/lexer.py", False),
        ("不要直接寫程式", True),
        ("請先分析問題", False),
    ],
)
def test_constraints_are_told_by_their_markers(clause: str, constraint: bool) -> None:
    assert is_constraint(clause) is constraint


@pytest.mark.parametrize(
    ("clause", "summary", "kept"),
    [
        # the instruction in other words: its content words are there
        ("Fix the crash in src/parser/lexer.py", KEPT_TOO_LITTLE, True),
        # a constraint needs its object, not just its verb
        ("keep the API stable", KEPT_TOO_LITTLE, False),
        ("keep the API stable", "The user wants the public API kept stable.", True),
        # a negative constraint needs its negation where its object is
        ("do not modify str.py", "Modified str.py to accept bytes.", False),
        ("do not modify str.py", "The user said str.py must not be modified.", True),
        ("never push to main", "Pushing to main is forbidden.", True),
        ("never push to main", "Pushed the fix to main.", False),
        # other scripts count by their characters
        ("不要直接寫程式", "使用者說不要直接寫程式。", True),
        ("不要直接寫程式", "已經直接寫程式了。", False),
        ("請先分析並且拋出一些想法", "Analysed the repository.", False),
    ],
)
def test_what_a_summary_carries(clause: str, summary: str, kept: bool) -> None:
    assert is_carried(clause, summary) is kept


def test_audit_lists_the_lost_constraint_first_with_its_message(tmp_path: Path, cli) -> None:
    b = Builder()
    asked = b.user(ASKED)  # line 2
    b.assistant([{"type": "text", "text": "Fixing it."}], "m1")
    b.use("c1", "m2")
    b.result("c1", "edited /workspace/src/parser/lexer.py")
    b.boundary()
    b.user(KEPT_TOO_LITTLE, isCompactSummary=True)
    b.user("Now run the tests.")
    log = b.write(tmp_path / "s.jsonl")
    assert asked == "u1"
    data = orjson.loads(cli("audit", log, "-f", "json").stdout_bytes)
    [condensation] = data["condensations"]
    assert condensation["lost"][0] == {
        "kind": "constraints",
        "fact": "keep the API stable",
        "from": 2,
    }
    assert condensation["kinds"]["instructions"]["in_summary"] == 1
    text = cli("audit", log).stdout
    assert "  lost (" in text and "    constraints: keep the API stable (#2)\n" in text


def test_a_summarys_sentences_are_read_only_for_a_negative_constraint() -> None:
    summary = "Kept the API stable. Do not touch the lexer tests."
    asked: list[str] = []

    def sentences() -> list[set[str]]:
        asked.append(summary)
        return sentences_of(summary)

    assert carried("keep the api stable", content(summary), sentences)
    assert asked == []
    assert carried("never touch the lexer tests", content(summary), sentences)
    assert asked == [summary]
