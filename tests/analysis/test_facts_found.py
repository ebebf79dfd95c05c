"""Every fact the audit extracts from a history is found again in that history: a
fact is the user's or the tool's own words (an abbreviation's dots, a quoted line's
text, a path through a dot folder), never a form that no text holds, which the audit
would call lost though nothing forgot it."""

from __future__ import annotations

import pytest

from condense_cli.analysis.audit import check_facts, total
from condense_cli.analysis.facts import extract
from condense_cli.dialects import read_log
from tests.conftest import CORPUS, require_corpus

LOGS = [
    "claude-code/FundWise.claude-session.jsonl",
    "claude-code/posthog-impact-dashboard.claude-session.jsonl",
    "codex/FundWise.codex-session.jsonl",
    "codex/edgerunner.codex-session.jsonl",
    "openhands-v1/0535c419f44a4e248c72e40c77a06a32",
    "openhands-v1/81f92eeb84c0468dbc1837c63c4f72ec",
    "openhands/ponylang-ponyc-4588.jsonl",
]


@pytest.mark.parametrize("name", LOGS)
def test_each_fact_of_a_history_is_found_in_it(name: str) -> None:
    log = CORPUS.parent / name
    require_corpus(log.parent)
    with read_log(str(log)) as replay:
        history = [e for e in replay.history() if e is not None]
        facts = extract(history)
        kinds = check_facts(facts, [], history)
    lost = [(kind, fact.text) for kind, tally in kinds.items() for fact in tally.lost]
    assert lost == []
    assert total(kinds).facts == len(facts) > 5


def test_a_quoted_line_and_an_abbreviation_are_read_as_written() -> None:
    from condense_cli.analysis.clauses import sentences
    from condense_cli.analysis.facts import paths_in, squash

    said = list(sentences("Keep the API (i.e. its routes) stable. Then ship the fix, tests etc."))
    assert said == ["Keep the API (i.e. its routes) stable.", "Then ship the fix, tests etc."]
    assert squash("a\n> quoted line") == squash("a quoted line")
    assert list(paths_in("read ~/.config/app/settings.toml first")) == [
        "~/.config/app/settings.toml"
    ]
