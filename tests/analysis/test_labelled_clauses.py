"""The instruction-level audit measured on a labelled set of real clauses.

`tests/labels/instruction_clauses.json` holds clauses of real user messages in the
corpus, each labelled, with its reason, carried or lost by the first summary of its
log: the seven constraints of the task prompt in each of the 23 OpenHands V1
conversations that condensed (against the SDK's own summaries), and every clause
the posthog Claude Code compaction forgot (against Claude Code's summary). The
audit's verdicts are compared with the labels; the figures are docs/analysis.md's.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from condense_cli.analysis.carrying import Memory
from condense_cli.analysis.clauses import clauses, is_constraint
from condense_cli.analysis.facts import Fact, squash
from condense_cli.dialects import read_log
from tests.conftest import ROOT, require_corpus

LABELS = ROOT / "tests" / "labels" / "instruction_clauses.json"
SHARED = ROOT.parent / "shared" / "corpus"
# kind -> (clauses, precision of "lost", recall of "lost"), as docs/analysis.md states them
FIGURES = {
    "constraints": (171, 0.95, 1.0),
    "instructions": (32, 0.6, 1.0),
    "all": (203, 0.91, 1.0),
}


def verdicts() -> Counter[tuple[str, bool, bool]]:
    """(kind, said lost, labelled lost) -> how many clauses."""
    labelled = json.loads(LABELS.read_text(encoding="utf-8"))["clauses"]
    memories: dict[tuple[str, int], Memory] = {}
    said: dict[str, set[str]] = {}
    counts: Counter[tuple[str, bool, bool]] = Counter()
    for entry in labelled:
        log = str(SHARED / entry["log"])
        key = (log, entry["condensation"])
        if key not in memories:
            with read_log(log) as replay:
                steps = list(replay.condensation_steps())
                messages = [e.text for e in replay.history() if e is not None and e.is_instruction]
            memories[key] = Memory.of([steps[entry["condensation"] - 1].summary or ""], loose=True)
            said[log] = {c for text in messages for c in clauses(text)}
        clause = entry["clause"]
        assert clause in said[log], f"not a clause of {entry['log']}: {clause!r}"
        kind = "constraints" if is_constraint(clause) else "instructions"
        lost = not memories[key].carries(Fact(kind, (squash(clause),), clause))
        counts[(kind, lost, entry["label"] == "lost")] += 1
    return counts


def figures(counts: Counter[tuple[str, bool, bool]], kind: str) -> tuple[int, float, float]:
    def n(lost: bool | None, truth: bool | None) -> int:
        return sum(
            v
            for (k, said, label), v in counts.items()
            if kind in ("all", k) and lost in (None, said) and truth in (None, label)
        )

    found, wrong, missed = n(True, True), n(True, False), n(False, True)
    return n(None, None), round(found / (found + wrong), 2), round(found / (found + missed), 2)


def test_the_labelled_set_gives_the_published_figures() -> None:
    require_corpus(SHARED / "openhands-v1")
    counts = verdicts()
    measured = {kind: figures(counts, kind) for kind in FIGURES}
    assert measured == FIGURES
    _, precision, recall = measured["all"]
    assert precision >= 0.9 and recall >= 0.9
    readme = (ROOT / "docs" / "analysis.md").read_text(encoding="utf-8")
    for kind, (total, precision, recall) in FIGURES.items():
        assert f"| {kind} | {total} | {precision:.2f} | {recall:.2f} |" in readme, kind


def test_every_label_gives_its_reason() -> None:
    labelled = json.loads(LABELS.read_text(encoding="utf-8"))["clauses"]
    assert {e["label"] for e in labelled} == {"carried", "lost"}
    assert all(len(e["reason"]) > 10 for e in labelled)
    assert Path(LABELS).stat().st_size > 0
