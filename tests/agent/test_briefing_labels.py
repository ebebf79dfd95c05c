"""The briefing's items against a labelled set (`tests/labels/briefing_items.json`):
every item it gives as the user's constraint or request on a corpus log is labelled,
and at least 90% of them are whole sentences a person would call one."""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from condense_cli.agent.briefing import LIMITS, keep
from condense_cli.dialects import read_log
from tests.conftest import CORPUS, require_corpus

LABELS = Path(__file__).parents[1] / "labels" / "briefing_items.json"
SHARED = CORPUS.parent
TEMPLATE = re.compile(r"/tmp/tmp\w+/\w+")  # the V1 runs' working folders


def given(log: Path) -> list[str]:
    with read_log(str(log)) as replay:
        briefing = keep(replay)
    return [
        f.text
        for kind in ("constraints", "instructions")
        for f in (briefing.facts.get(kind) or [])[: LIMITS[kind]]
    ]


def test_the_labelled_set_is_what_the_briefing_gives_and_90_percent_are_whole() -> None:
    require_corpus(SHARED / "openhands-v1")
    labels = orjson.loads(LABELS.read_bytes())["items"]
    logs = sorted({row["log"] for row in labels})
    seen: set[str] = set()
    items = []
    for log in logs:
        for text in given(SHARED / log):
            template = TEMPLATE.sub("/tmp/T", text)
            if template not in seen:
                seen.add(template)
                items.append(text)
    labelled = {row["item"]: row["label"] for row in labels}
    assert [text for text in items if text not in labelled] == []  # each is labelled
    good = sum(labelled[text] == "good" for text in items)
    assert good / len(items) >= 0.9, (good, len(items))
