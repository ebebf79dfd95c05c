"""Every link between the repository's Markdown pages leads somewhere: the file exists
and, when the link names a heading, the page has it (as GitHub makes its anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

TOP = ("README.md", "ARCHITECTURE.md", "CHANGELOG.md")
PAGES = sorted(
    [
        *(ROOT / name for name in TOP),
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "bench").rglob("*.md"),
    ]
)
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of `page`."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_leads_to_a_file_and_heading_that_exist(page: Path) -> None:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists() or (
            anchor and where.suffix == ".md" and anchor not in anchors(where)
        ):
            broken.append(target)
    assert broken == []
