"""`condense cost` keeps each file's calls in condense's cache and reads again only
the files that changed: by their identity (device, inode, size, time) and the code
that read them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.analysis.test_cost import session
from tests.conftest import CORPUS, require_corpus


def dollars(proc: Any, tree: Path, cache: Path, *args: str) -> dict[str, float]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    done = proc("cost", tree, "--by", "session", "-f", "json", *args, env=env)
    assert done.returncode == 0, done.stderr
    return {Path(r["session"]).name: r["dollars"] for r in json.loads(done.stdout)["rows"]}


def test_a_file_the_same_as_when_read_is_not_read_again(proc, tmp_path: Path) -> None:
    """A call's input changed in place, the size and time of the file kept: the cache
    cannot see it (the proof that the file was not read), `--no-cache` can; once its
    time moves, the cache reads it again."""
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    log = session(tree)
    first = dollars(proc, tree, cache)
    assert (cache / "condense" / "usage.sqlite").is_file()
    stat = log.stat()
    body = log.read_bytes()
    assert body.count(b'"input_tokens":100,') == 2  # the first call, streamed as two lines
    log.write_bytes(body.replace(b'"input_tokens":100,', b'"input_tokens":900,'))
    os.utime(log, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert dollars(proc, tree, cache) == first
    fresh = dollars(proc, tree, cache, "--no-cache")
    assert fresh["s.jsonl"] > first["s.jsonl"]
    os.utime(log, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert dollars(proc, tree, cache) == fresh


def test_a_cache_that_is_not_a_database_is_no_cache(proc, tmp_path: Path) -> None:
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    session(tree)
    (cache / "condense").mkdir(parents=True)
    (cache / "condense" / "usage.sqlite").write_bytes(b"not a database" * 100)
    assert dollars(proc, tree, cache) == dollars(proc, tree, cache, "--no-cache")


def test_a_log_that_grew_is_read_again(cli, proc, tmp_path: Path) -> None:
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    log = session(tree)
    first = dollars(proc, tree, cache)
    lines = log.read_bytes().splitlines(keepends=True)
    line = json.loads(lines[2])  # the first call's first line: another call like it
    line["message"]["id"], line["requestId"], line["uuid"] = "m9", "r9", "u9"
    with log.open("ab") as out:
        out.write(json.dumps(line).encode() + b"\n")
    grown = dollars(proc, tree, cache)
    assert grown["s.jsonl"] > first["s.jsonl"]
    assert grown == dollars(proc, tree, cache, "--no-cache")


def test_a_file_that_is_gone_is_forgotten(proc, tmp_path: Path) -> None:
    import sqlite3

    tree, cache = tmp_path / "tree", tmp_path / "cache"
    (tree / "a").mkdir(parents=True)
    (tree / "b").mkdir()
    kept, gone = session(tree / "a"), session(tree / "b")
    dollars(proc, tree, cache)
    gone.unlink()
    dollars(proc, tree / "a", cache)
    with sqlite3.connect(cache / "condense" / "usage.sqlite") as db:
        paths = [row[0] for row in db.execute("SELECT path FROM calls")]
    assert paths == [os.path.realpath(kept)]


def test_a_tree_is_not_opened_again_for_what_the_cache_knows(proc, tmp_path: Path) -> None:
    """A file of a tree the cache read, the same as then, is taken as the log it was
    without being opened to detect its dialect: its first line made no log's, its
    size and time kept, it is still counted from the cache (and `--no-cache`, which
    opens it, passes it over). Once its time moves it is looked at again."""
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    log = session(tree)
    first = dollars(proc, tree, cache)
    stat = log.stat()
    body = log.read_bytes()
    head = body.index(b"\n")
    log.write_bytes(b"{" + b" " * (head - 2) + b"}" + body[head:])  # `{}`: no log's
    os.utime(log, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert dollars(proc, tree, cache) == first
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    fresh = proc("cost", tree, "--no-cache", env=env)
    assert fresh.returncode == 2 and b"not a session log" in fresh.stderr
    os.utime(log, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    moved = proc("cost", tree, env=env)
    assert moved.returncode == 2 and b"not a session log" in moved.stderr


def test_workers_hand_back_the_same_calls_as_this_process_reads(cli, proc, tmp_path: Path) -> None:
    """Over the corpus (every dialect), by session: read in this process, in two
    workers (which hand their calls back encoded), and from the cache the workers
    filled, the rows are the same."""
    require_corpus(CORPUS)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    args = ("cost", CORPUS.parent, "--by", "session", "-f", "json")
    one = cli(*args, "-j", "1", "--no-cache")
    two = proc(*args, "-j", "2", env=env)
    cached = proc(*args, "-j", "2", env=env)
    assert one.exit_code == 0 and two.returncode == 0 and cached.returncode == 0
    rows = json.loads(one.stdout)
    assert len(rows["rows"]) >= 20 and rows["totals"]["dollars"] > 0
    assert json.loads(two.stdout) == rows == json.loads(cached.stdout)
