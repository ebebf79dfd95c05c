"""`condense search`: every session of every dialect in one index, queries whose
answers are known on the corpus, kept fresh as sessions change."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import CONDENSE, CORPUS, require_corpus

SHARED = CORPUS.parent
POSTHOG = SHARED / "claude-code" / "posthog-impact-dashboard.claude-session.jsonl"


def search(proc: Any, cache: Path, *args: Any) -> dict[str, Any]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    done = proc("search", *args, "-f", "json", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_forgotten_command_is_found_with_the_condensation_that_forgot_it(
    proc, tmp_path: Path
) -> None:
    """Over the whole corpus (every dialect), the posthog session's gh calls for the
    CODEOWNERS file, which its one compaction forgot."""
    require_corpus(SHARED / "openhands-v1")
    hits = search(proc, tmp_path, "CODEOWNERS", SHARED, "--forgotten", "--who", "agent")["hits"]
    assert hits and all(h["log"] == str(POSTHOG.resolve()) for h in hits)
    assert all(h["forgotten_by"] == "1" and not h["in_view"] for h in hits)
    assert {"455", "386"} <= {h["id"] for h in hits}
    assert all(h["who"] == "agent" and h["dialect"] == "claude-code" for h in hits)
    # a V1 conversation's task, in view, by the user
    task = search(proc, tmp_path, "pylint README", SHARED / "openhands-v1", "--who", "user")
    assert task["hits"] and all(h["who"] == "user" for h in task["hits"])
    assert all(h["dialect"] == "openhands-v1" for h in task["hits"])


def test_the_index_follows_the_sessions_as_they_change(proc, tmp_path: Path) -> None:
    require_corpus(POSTHOG.parent)
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    session = tree / "s.jsonl"
    shutil.copyfile(POSTHOG, session)
    shutil.copyfile(POSTHOG.with_name("FundWise.claude-session.jsonl"), tree / "t.jsonl")
    assert search(proc, cache, "zanzibarian", tree)["hits"] == []
    lines = session.read_text().splitlines()
    line = json.loads(next(x for x in lines if '"type":"user"' in x.replace(" ", "")))
    line["uuid"] = "00000000-0000-4000-8000-00000000abcd"
    line["parentUuid"] = json.loads(lines[-1]).get("uuid")
    line["message"] = {"role": "user", "content": "Now port it to the zanzibarian API."}
    with session.open("a") as out:
        out.write(json.dumps(line) + "\n")
    [hit] = search(proc, cache, "zanzibarian", tree)["hits"]
    assert hit["who"] == "user" and hit["in_view"]
    session.unlink()  # a session that is gone is forgotten
    assert search(proc, cache, "zanzibarian", tree)["hits"] == []
    with sqlite3.connect(cache / "condense" / "search.sqlite") as db:
        [(held,)] = db.execute("SELECT COUNT(*) FROM logs").fetchall()
    assert held == 1


def test_a_secret_is_masked_before_it_is_stored(proc, tmp_path: Path) -> None:
    require_corpus(POSTHOG.parent)
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    session = tree / "s.jsonl"
    secret = "sk-ant-api03-" + "Q" * 40
    session.write_text(POSTHOG.read_text().replace("CODEOWNERS", f"CODEOWNERS {secret}", 1))
    hits = search(proc, cache, "CODEOWNERS", tree)["hits"]
    assert hits and not any(secret in h["snippet"] for h in hits)
    with sqlite3.connect(cache / "condense" / "search.sqlite") as db:
        bodies = [b for (b,) in db.execute("SELECT body FROM events")]
    assert bodies and not any(secret in b for b in bodies)


def test_two_searches_at_once_share_a_new_index(tmp_path: Path) -> None:
    require_corpus(SHARED / "codex")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    command = [str(CONDENSE), "search", "cargo", str(SHARED / "codex"), "-f", "json"]
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE) for _ in range(2)]
    outs = [json.loads(run.communicate(timeout=120)[0]) for run in runs]
    assert all(run.returncode == 0 for run in runs)
    assert outs[0] == outs[1] and outs[0]["hits"]


def test_a_bad_day_is_refused(cli, tmp_path: Path) -> None:
    result = cli("search", "x", str(tmp_path), "--since", "26-04-2026")
    assert result.exit_code == 2 and "a day is written YYYY-MM-DD" in result.stderr


def test_a_session_that_grew_keeps_its_rows_and_has_their_state_brought_up_to_date(
    proc, tmp_path: Path
) -> None:
    """A Claude Code session indexed, then condensed by `condense run` (which appends):
    the rows the index held are not stored again (a word put into one stays), and the
    events the condensation forgot are found as forgotten by it."""
    require_corpus(POSTHOG.parent)
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    session = tree / "s.jsonl"
    shutil.copyfile(POSTHOG.with_name("FundWise.claude-session.jsonl"), session)
    first = search(proc, cache, "roadmap", tree, "--limit", "50")["hits"]
    assert first and all(h["in_view"] for h in first)
    index = cache / "condense" / "search.sqlite"
    with sqlite3.connect(index) as db:
        (row,) = db.execute("SELECT MIN(rowid) FROM events").fetchone()
        db.execute("UPDATE events SET body = body || ' quetzalword' WHERE rowid = ?", (row,))
    done = proc("run", session, "-t", "amortized", "-s", "max_size=40", "-s", "keep_first=1")
    assert done.returncode == 0, done.stderr
    assert search(proc, cache, "quetzalword", tree)["hits"]  # not indexed again
    after = search(proc, cache, "roadmap", tree, "--limit", "50", "--forgotten")["hits"]
    assert after and all(h["forgotten_by"] == "1" for h in after)


def test_a_session_being_written_is_read_to_its_last_whole_line(proc, tmp_path: Path) -> None:
    """The user's running session: its client is in the middle of a line. The line is
    left out until it is whole, then found."""
    require_corpus(POSTHOG.parent)
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    session = tree / "s.jsonl"
    shutil.copyfile(POSTHOG.with_name("FundWise.claude-session.jsonl"), session)
    from tests.analysis.test_search_index import _said

    body = _said(session, "Now the okapiword feature.").encode()
    with session.open("ab") as out:
        out.write(body[:40])  # half a line, as the client writes it
    assert search(proc, cache, "okapiword", tree)["hits"] == []
    with session.open("ab") as out:
        out.write(body[40:])
    [hit] = search(proc, cache, "okapiword", tree)["hits"]
    assert hit["who"] == "user" and hit["in_view"]


def test_a_tree_is_not_opened_again_for_what_the_index_holds(proc, tmp_path: Path) -> None:
    """A session the index holds, the same as then, is taken as the log it was
    without being opened to detect its dialect (its first line made no log's, its
    size and time kept: the index still answers); `--rebuild` looks at every file."""
    from tests.analysis.test_cost import session

    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    log = session(tree)
    [hit] = search(proc, cache, "parser", tree)["hits"]
    stat = log.stat()
    body = log.read_bytes()
    head = body.index(b"\n")
    log.write_bytes(b"{" + b" " * (head - 2) + b"}" + body[head:])  # `{}`: no log's
    os.utime(log, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert search(proc, cache, "parser", tree)["hits"] == [hit]
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    rebuilt = proc("search", "parser", tree, "--rebuild", env=env)
    assert rebuilt.returncode == 2 and b"not a session log" in rebuilt.stderr


def test_an_index_build_cut_short_by_ctrl_c_is_finished_by_the_next_search(
    tmp_path: Path,
) -> None:
    """Ctrl-C once the first sessions of 120 are committed (several to a
    transaction): those stay, the rest are indexed by the next search, and the index
    then holds what one built without a break holds, each session once."""
    import signal
    import time

    require_corpus(POSTHOG.parent)
    tree = tmp_path / "tree"
    for project in range(120):
        folder = tree / f"-home-dev-p{project:03}"
        folder.mkdir(parents=True)
        os.link(POSTHOG, folder / "s.jsonl")
    cut, whole = tmp_path / "cut", tmp_path / "whole"
    command = [str(CONDENSE), "search", "CODEOWNERS", str(tree), "-f", "json", "-j", "1"]
    run = subprocess.Popen(
        command, env={**os.environ, "XDG_CACHE_HOME": str(cut)}, stderr=subprocess.PIPE
    )
    index = cut / "condense" / "search.sqlite"
    while run.poll() is None and _held(index) == 0:
        time.sleep(0.05)
    run.send_signal(signal.SIGINT)
    assert run.wait(timeout=60) == 130
    assert 0 < _held(index) < 120  # (cut short, after a commit)
    again = search(_run, cut, "CODEOWNERS", tree)
    fresh = search(_run, whole, "CODEOWNERS", tree)
    assert [h["snippet"] for h in again["hits"]] == [h["snippet"] for h in fresh["hits"]]
    held = []
    for cache in (cut, whole):
        with sqlite3.connect(cache / "condense" / "search.sqlite") as db:
            held.append(db.execute("SELECT COUNT(*), SUM(held) FROM logs").fetchone())
            held.append(db.execute("SELECT COUNT(*) FROM events").fetchone())
    assert held[0] == held[2] and held[1] == held[3] and held[0][0] == 120


def _held(index: Path) -> int:
    """The sessions an index holds (0 before there is one, or while it is locked)."""
    try:
        with sqlite3.connect(f"file:{index}?mode=ro", uri=True, timeout=0.1) as db:
            return int(db.execute("SELECT COUNT(*) FROM logs").fetchone()[0])
    except sqlite3.Error:
        return 0


def _run(*args: Any, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(CONDENSE), *map(str, args)], env=env, capture_output=True)


def test_rebuild_starts_the_index_from_nothing(proc, tmp_path: Path) -> None:
    """`--rebuild` forgets every session held, even one of another tree, and indexes
    what it is given; the index then answers as one built from nothing does."""
    from tests.analysis.test_cost import session

    first, second, cache = tmp_path / "a", tmp_path / "b", tmp_path / "cache"
    first.mkdir()
    second.mkdir()
    session(first)
    session(second)
    (second / "s.jsonl").rename(second / "t.jsonl")
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    assert proc("search", "parser", first, env=env).returncode == 0
    rebuilt = proc("search", "parser", second, "--rebuild", "-f", "json", env=env)
    assert rebuilt.returncode == 0 and b"index: 1 session," in rebuilt.stderr
    [hit] = json.loads(rebuilt.stdout)["hits"]
    assert hit["log"] == str((second / "t.jsonl").resolve())
    fresh = search(proc, tmp_path / "fresh", "parser", second)
    assert fresh["hits"] == [hit]


def test_the_text_head_counts_the_sessions_hit_among_those_searched(proc, tmp_path: Path) -> None:
    """Hits in one of two sessions are said to be in one of the two searched (not "in
    2 sessions"); no hit is said as such."""
    from tests.analysis.test_cost import session

    tree, cache = tmp_path / "tree", tmp_path / "cache"
    (tree / "a").mkdir(parents=True)
    (tree / "b").mkdir()
    session(tree / "a")
    log = session(tree / "b")
    log.write_text(log.read_text().replace("Fix the parser.", "Fix the lexer."))
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    found = proc("search", "parser", tree, env=env)
    assert found.returncode == 0
    assert found.stdout.decode().splitlines()[0] == (
        "1 hit for 'parser' in 1 session of the 2 sessions searched (2 sessions indexed now)"
    )
    none = proc("search", "zanzibarian", tree, env=env).stdout.decode().splitlines()[0]
    assert none == "no hit for 'zanzibarian' in the 2 sessions searched"


def test_a_search_of_sessions_that_did_not_change_answers_as_the_one_that_indexed_them(
    proc, tmp_path: Path
) -> None:
    """The second search ranks in a thread while it finds the sessions unchanged, and
    takes that ranking: the same hits as the search that indexed them, with filters
    too, and a search of one session of the two its own."""
    require_corpus(POSTHOG.parent)
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    shutil.copyfile(POSTHOG, tree / "s.jsonl")
    shutil.copyfile(POSTHOG.with_name("FundWise.claude-session.jsonl"), tree / "t.jsonl")
    for args in (("gh api roadmap",), ("test", "--who", "tool", "-n", "7")):
        first = search(proc, cache, *args, tree)
        assert first["hits"] and search(proc, cache, *args, tree) == first
    one = search(proc, cache, "gh api roadmap", tree / "t.jsonl")["hits"]
    assert one and all(h["log"] == str((tree / "t.jsonl").resolve()) for h in one)


def test_a_v1_conversations_project_is_the_workspace_its_state_records(
    proc, tmp_path: Path
) -> None:
    """The SDK records the workspace in base_state.json (from October 2025): that
    folder is the conversation's project, as a Codex rollout's `cwd` is; a
    conversation from before, which records none, keeps the folder it is in."""
    conversation = SHARED / "openhands-v1" / "dfcc6416d15d471d8fc1c28f819f07f4"
    require_corpus(conversation)
    tree, cache = tmp_path / "conversations", tmp_path / "cache"
    shutil.copytree(conversation, tree / "new")
    shutil.copytree(conversation, tree / "old")
    state = tree / "new" / "event_service" / "base_state.json"
    data = json.loads(state.read_text())
    data["workspace"] = {"kind": "LocalWorkspace", "working_dir": "/home/dev/astropy"}
    state.write_text(json.dumps(data))
    hits = search(proc, cache, "separability_matrix", tree, "--who", "user")["hits"]
    assert {(Path(h["log"]).name, h["project"]) for h in hits} == {
        ("new", "/home/dev/astropy"),
        ("old", "conversations"),
    }
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    done = proc("search", "separability_matrix", tree, "--project", "astropy", env=env)
    assert done.returncode == 0 and b"in the 1 session searched" in done.stdout


def test_a_codex_hit_has_its_lines_time_and_the_days_filter_it(proc, tmp_path: Path) -> None:
    """A Codex item has no time of its own; its line has. The edgerunner rollout ran
    on 10 and 11 July 2026: its hits say when, and days after it find none."""
    require_corpus(SHARED / "codex")
    rollout = SHARED / "codex" / "edgerunner.codex-session.jsonl"
    hits = search(proc, tmp_path, "cargo test", rollout, "-n", "50")["hits"]
    assert hits and all(h["when"][:10] in ("2026-07-10", "2026-07-11") for h in hits)
    later = search(proc, tmp_path, "cargo test", rollout, "-n", "50", "--since", "2026-07-11")
    assert later["hits"] and all(h["when"][:10] == "2026-07-11" for h in later["hits"])
    assert search(proc, tmp_path, "cargo test", rollout, "--since", "2026-08-01")["hits"] == []
