"""The audit's verdicts on facts measured on a labelled set of real compactions.

`tests/labels/lost_facts.json` holds every fact (but the user's clauses, measured in
`test_labelled_clauses.py`) that `condense audit` reported lost, before the rules of
issue 25, by the first compaction of each of the 23 OpenHands V1 conversations that
condensed and by the posthog Claude Code compaction. A person read each against the
summary and labelled it lost, kept (in other words) or wrong (no fact of its kind),
with the reason. The audit of today is compared with the labels: precision is the
share of what it reports lost that is lost; recall the share of the labelled-lost
facts it still reports. The figures are docs/analysis.md's.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from condense_cli.analysis.audit import audit_log
from condense_cli.analysis.facts import KINDS
from condense_cli.dialects import read_log
from tests.conftest import ROOT, require_corpus

LABELS = ROOT / "tests" / "labels" / "lost_facts.json"
SHARED = ROOT.parent / "shared" / "corpus"
CLAUSES = ("constraints", "instructions", "pins")
# kind -> (facts labelled, reported lost now, precision of "lost", recall of "lost")
FIGURES = {
    "contradictions": (1, 1, 1.0, 1.0),
    "tasks": (8, 1, 1.0, 1.0),
    "errors": (80, 32, 0.94, 0.88),
    "commands": (111, 98, 0.96, 1.0),
    "paths": (64, 63, 1.0, 1.0),
    "urls": (5, 5, 1.0, 1.0),
}
# The later compactions of the same conversations, labelled after the rules were set.
HELD_OUT = {
    "errors": (17, 16, 0.69, 1.0),
    "commands": (37, 37, 0.95, 1.0),
    "paths": (51, 51, 0.94, 1.0),
}


def labelled(part: str = "facts") -> list[dict[str, object]]:
    """The labelled facts: `facts` (the rules were set on them) or `held_out`."""
    return list(json.loads(LABELS.read_text(encoding="utf-8"))[part])


def reported(part: str = "facts") -> dict[tuple[str, int], set[tuple[str, str]]]:
    """(log, condensation) -> the (kind, fact) the audit reports lost, for the
    condensations the labelled set samples."""
    wanted = {(str(f["log"]), int(str(f["condensation"]))) for f in labelled(part)}
    found: dict[tuple[str, int], set[tuple[str, str]]] = {}
    for log in sorted({log for log, _ in wanted}):
        with read_log(str(SHARED / log)) as replay:
            audit = audit_log(replay)
        for number, condensation in enumerate(audit.condensations, start=1):
            if (log, number) in wanted:
                lost = [fact for fact in condensation.lost() if fact.kind not in CLAUSES]
                found[(log, number)] = {(fact.kind, fact.text) for fact in lost}
    return found


def figures(part: str) -> dict[str, tuple[int, int, float, float]]:
    """kind -> (labelled, reported lost, precision of "lost", recall of "lost")."""
    now = reported(part)
    counts: Counter[tuple[str, bool, str]] = Counter()
    for fact in labelled(part):
        where = (str(fact["log"]), int(str(fact["condensation"])))
        said = (str(fact["kind"]), str(fact["fact"])) in now.get(where, set())
        counts[(str(fact["kind"]), said, str(fact["label"]))] += 1
    measured = {}
    for kind in sorted({k for k, _, _ in counts}, key=KINDS.index):
        total = sum(v for (k, _, _), v in counts.items() if k == kind)
        right = counts[(kind, True, "lost")]
        said = right + counts[(kind, True, "kept")] + counts[(kind, True, "wrong")]
        lost = right + counts[(kind, False, "lost")]
        precision = round(right / said, 2) if said else 1.0
        measured[kind] = (total, said, precision, round(right / lost, 2) if lost else 1.0)
    return measured


def test_the_labelled_set_gives_the_published_figures() -> None:
    require_corpus(SHARED / "openhands-v1")
    readme = (ROOT / "docs" / "analysis.md").read_text(encoding="utf-8")
    for part, expected in (("facts", FIGURES), ("held_out", HELD_OUT)):
        measured = figures(part)
        assert measured == expected, part
        for kind, (total, said, precision, recall) in expected.items():
            row = f"| {kind} | {total} | {said} | {precision:.2f} | {recall:.2f} |"
            assert row in readme, row
    assert all(precision >= 0.9 for _, _, precision, _ in FIGURES.values())


def test_every_fact_reported_lost_in_the_sample_is_labelled() -> None:
    """The sets stay whole: a fact the audit newly reports lost in a sampled
    compaction must be labelled too."""
    require_corpus(SHARED / "openhands-v1")
    for part in ("facts", "held_out"):
        known: dict[tuple[str, int], set[tuple[str, str]]] = {}
        for fact in labelled(part):
            where = (str(fact["log"]), int(str(fact["condensation"])))
            known.setdefault(where, set()).add((str(fact["kind"]), str(fact["fact"])))
        for where, facts in reported(part).items():
            assert facts <= known[where], (part, where, facts - known[where])


def test_every_label_gives_its_reason() -> None:
    for fact in labelled() + labelled("held_out"):
        assert fact["label"] in ("lost", "kept", "wrong"), fact
        assert len(str(fact["reason"])) > 10, fact
        assert (SHARED / str(fact["log"])).name == Path(str(fact["log"])).name
