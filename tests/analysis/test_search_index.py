"""The search index (`analysis.search`) and its query ranked ahead in a thread
(`analysis.search_query`), on real sessions of the corpus."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from condense_cli.analysis.search import SearchIndex, index_log
from condense_cli.analysis.search_query import HELD, Filters, fts_query, rank_ahead, ranking
from tests.conftest import CORPUS, require_corpus

CLAUDE = CORPUS.parent / "claude-code"


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    require_corpus(CLAUDE)
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("FundWise", "posthog-impact-dashboard"):
        shutil.copyfile(CLAUDE / f"{name}.claude-session.jsonl", tree / f"{name}.jsonl")
    return tree / "FundWise.jsonl", tree / "posthog-impact-dashboard.jsonl"


def _index(index: SearchIndex, logs: list[str]) -> None:
    stale = index.stale(logs)
    assert not list(index.refresh(stale, (index_log(log, None, kept) for log, kept in stale)))


def _said(log: Path, text: str) -> str:
    """A line of the user's, after the session's last, saying `text`."""
    last = [json.loads(x) for x in log.read_text().splitlines() if '"uuid"' in x][-1]
    line = {
        "type": "user",
        "uuid": "00000000-0000-4000-8000-00000000beef",
        "parentUuid": last["uuid"],
        "sessionId": last.get("sessionId"),
        "timestamp": last.get("timestamp"),
        "message": {"role": "user", "content": text},
    }
    return json.dumps(line) + "\n"


def test_a_line_written_while_a_session_is_read_is_found_by_the_next_search(
    tmp_path: Path,
) -> None:
    """The client writes a turn after the index read the session and before it stored
    what it read: the index keeps the session as it was when it was looked at, so the
    next search finds it changed and indexes the turn."""
    fundwise, posthog = _tree(tmp_path)
    index = SearchIndex(tmp_path / "cache")
    logs = [str(fundwise), str(posthog)]
    stale = index.stale(logs)
    read = [index_log(log, None, kept) for log, kept in stale]
    with fundwise.open("a") as out:
        out.write(_said(fundwise, "Now the okapiword feature."))
    assert not list(index.refresh(stale, read))
    assert [log for log, _ in index.stale(logs)] == [str(fundwise)]
    _index(index, logs)
    [hit] = index.search("okapiword", logs, 5)
    assert hit.row.who == "user" and hit.row.forgotten == ""
    index.close()


def test_a_ranking_ahead_is_taken_for_the_index_it_ranked_and_no_other(tmp_path: Path) -> None:
    fundwise, posthog = _tree(tmp_path)
    folder = tmp_path / "cache"
    assert rank_ahead(folder, "roadmap", Filters(), 5) is None  # (no index yet)
    index = SearchIndex(folder)
    logs = [str(fundwise), str(posthog)]
    _index(index, logs)
    match = fts_query("roadmap CODEOWNERS")
    assert match is not None
    where, values = Filters().clauses(match)
    plain = [rowid for (rowid,) in index.db.execute(ranking(where), (*values, 5))]
    held = index.db.execute(HELD).fetchone()[0]
    ahead = rank_ahead(folder, "roadmap CODEOWNERS", Filters(), 5)
    assert ahead is not None
    assert ahead.take((match, Filters(), 5), held) == plain and len(plain) == 5
    assert ahead.take((match, Filters(who="user"), 5), held) is None  # another question
    assert ahead.take((match, Filters(), 6), held) is None
    # another search stores a changed session: the ranking is of the index before
    with fundwise.open("a") as out:
        out.write(_said(fundwise, "Put CODEOWNERS CODEOWNERS CODEOWNERS on the roadmap."))
    writer = SearchIndex(folder)
    _index(writer, logs)
    writer.close()
    now = index.db.execute(HELD).fetchone()[0]
    assert now != held and ahead.take((match, Filters(), 5), now) is None
    hits = list(index.search("roadmap CODEOWNERS", logs, 5, ahead=ahead))
    assert hits[0].row.text == "Put CODEOWNERS CODEOWNERS CODEOWNERS on the roadmap."
    ahead.stop()
    index.close()


def test_a_ranking_ahead_is_not_taken_for_some_of_the_sessions(tmp_path: Path) -> None:
    """A search of one of the sessions the index holds ranks that one's events alone."""
    fundwise, posthog = _tree(tmp_path)
    folder = tmp_path / "cache"
    index = SearchIndex(folder)
    _index(index, [str(fundwise), str(posthog)])
    ahead = rank_ahead(folder, "CODEOWNERS roadmap", Filters(), 5)
    hits = list(index.search("CODEOWNERS roadmap", [str(fundwise)], 5, ahead=ahead))
    assert hits and all(hit.log == str(fundwise.resolve()) for hit in hits)
    # (over the whole index it ranked the other session's CODEOWNERS first)
    held = index.db.execute(HELD).fetchone()[0]
    assert ahead is not None
    ranked = ahead.take((fts_query("CODEOWNERS roadmap") or "", Filters(), 5), held)
    [(log,)] = index.db.execute("SELECT path FROM events WHERE rowid = ?", (ranked or [0])[:1])
    assert log == str(posthog.resolve())
    index.close()
