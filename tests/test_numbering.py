"""One event number per dialect (SPEC section 15): what `run` appends keeps the numbers
of what it copies, so every event of the view after a run is named as it was before,
and a forgotten event is named in `audit` and MCP by the number `view` gave it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from condense_cli.dialects import read_log
from tests.conftest import ONE_OF_EACH, corpus_copy


def numbered(log: Path) -> dict[object, str]:
    """The view's events by the number they are shown by: id -> text."""
    with read_log(str(log)) as replay:
        return {e.id: e.text for e in replay.view() if not e.is_summary}


@pytest.mark.parametrize("dialect", list(ONE_OF_EACH))
def test_a_run_keeps_the_numbers_of_what_it_keeps(dialect: str, tmp_path: Path, cli: Any) -> None:
    log = corpus_copy(dialect, tmp_path)
    before = numbered(log)
    done = cli("run", log, "-t", "amortized", "-s", "max_size=20")
    assert done.exit_code == 0, done.stderr
    after = numbered(log)
    assert len(after) < len(before)
    for number, text in after.items():  # each kept event, by the number it had
        assert before.get(number) == text, (dialect, number)
    # the text view names them so too
    shown = cli("view", log, "--no-pager").stdout
    assert all(f"#{number} " in shown for number in after)


@pytest.mark.parametrize("dialect", list(ONE_OF_EACH))
def test_the_text_view_marks_what_was_forgotten_in_every_dialect(
    dialect: str, tmp_path: Path, cli: Any
) -> None:
    log = corpus_copy(dialect, tmp_path)
    assert cli("run", log, "-t", "amortized", "-s", "max_size=20").exit_code == 0
    with read_log(str(log)) as replay:
        shown = {e.id for e in replay.view() if not e.is_summary}
        gone = [e.id for e in replay.history() if e is not None and e.id not in shown]
    text = cli("view", log, "--no-pager").stdout
    markers = [line for line in text.splitlines() if line.startswith("⋯ ")]
    assert markers, text[:500]
    counted = sum(int(m.split()[1].replace(",", "")) for m in markers)
    assert counted == len(gone)
    assert f"ids {gone[0]}.." in markers[0] or f"id {gone[0]})" in markers[0]


def test_report_and_view_count_the_view_alike(tmp_path: Path, proc: Any) -> None:
    """A V1 view with a summary: `report` said 64 where `view` said 65."""
    log = corpus_copy("openhands-v1", tmp_path)
    header = proc("view", log, "--no-pager").stdout.decode().splitlines()[0]
    in_view = int(header.split("): ")[1].split(" events in view")[0].replace(",", ""))
    page = tmp_path / "page.html"
    assert proc("report", log, "-o", page, "--no-tokens").returncode == 0
    assert f"in view now</dt><dd>{in_view:,} (1 summary among them)</dd>" in page.read_text()


@pytest.mark.parametrize("dialect", list(ONE_OF_EACH))
def test_mcp_counts_forgotten_what_view_counts(dialect: str, tmp_path: Path, cli: Any) -> None:
    from condense_cli.agent.memory import ForgottenIndex

    log = corpus_copy(dialect, tmp_path)
    assert cli("run", log, "-t", "amortized", "-s", "max_size=20").exit_code == 0
    with read_log(str(log)) as replay:
        shown = {e.id for e in replay.view()}
        gone = [e.id for e in replay.history() if e is not None and e.id not in shown]
        memory = ForgottenIndex(replay)
    assert [e.id for e in memory.events] == [str(n) for n in gone]
