"""`condense search`'s query ranked from the process's first instant
(`cli.search_ahead`): what it reads of the arguments, against what the command reads."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
import typer
import typer.main

from condense_cli.analysis.search_query import Filters
from condense_cli.cli import search_ahead
from condense_cli.cli.search import search
from tests.conftest import CORPUS, require_corpus

CLAUDE = CORPUS.parent / "claude-code"


@pytest.mark.parametrize(
    ("args", "asked"),
    [
        (["error test"], ("error test", Filters(), 20)),
        (["q", "a", "b", "-n", "5"], ("q", Filters(), 5)),
        (["--who", "tool", "--limit=3", "q"], ("q", Filters(who="tool"), 3)),
        (
            ["-f", "json", "q", "--forgotten", "--since", "2026-01-02", "--until", "x"],
            ("q", Filters(forgotten=True, since="2026-01-02", until="x"), 20),
        ),
        (["--project", "-n", "q"], ("q", Filters(), 20)),  # (-n is --project's value)
        (["-n", "2", "--", "-q"], ("-q", Filters(), 2)),
        (["q", "--rebuild"], None),
        (["q", "--help"], None),
        (["q", "-n5"], None),  # (click reads it; read here, it is not plain)
        (["q", "--frobnicate"], None),
        (["q", "--who", "robot"], None),
        (["q", "-n", "0"], None),
        (["-j", "2"], None),  # (no query)
    ],
)
def test_the_arguments_are_read_as_far_as_the_ranking_needs(
    args: list[str], asked: tuple[str, Filters, int] | None
) -> None:
    assert search_ahead.asked_by(args) == asked


def test_the_options_read_ahead_are_the_commands() -> None:
    app = typer.Typer()
    app.command()(search)
    declared = {
        name: bool(param.is_flag)
        for param in typer.main.get_command(app).params
        if isinstance(param, typer.core.TyperOption)
        for name in param.opts
        if "completion" not in name
    }
    assert {n for n, flag in declared.items() if flag} == search_ahead.FLAGS - {"--debug", "--help"}
    assert {n for n, flag in declared.items() if not flag} == search_ahead.VALUED


def test_the_ranking_started_first_is_the_one_the_command_takes(cli, tmp_path: Path) -> None:
    """Started before the command, taken by it: the hits come in the order it ranked."""
    require_corpus(CLAUDE)
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("FundWise", "posthog-impact-dashboard"):
        shutil.copyfile(CLAUDE / f"{name}.claude-session.jsonl", tree / f"{name}.jsonl")
    args = ["gh api roadmap", str(tree), "-n", "4", "--who", "agent", "-f", "json"]
    assert cli("search", *args).exit_code == 0  # (the index built)
    for _ in range(20):  # (a ranking never waits: one that met the index busy ranks again)
        search_ahead.start(args)
        [ahead] = search_ahead._started
        ahead._thread.join()
        if ahead.ranked:
            break
        search_ahead._started.clear()
        time.sleep(0.05)
    result = cli("search", *args)
    assert result.exit_code == 0 and search_ahead._started == []
    hits = [(h["log"], h["id"]) for h in json.loads(result.stdout)["hits"]]
    index = Path(os.environ["XDG_CACHE_HOME"]) / "condense" / "search.sqlite"
    with sqlite3.connect(index) as db:
        ranked = [
            db.execute("SELECT path, id FROM events WHERE rowid = ?", (rowid,)).fetchone()
            for rowid in ahead.ranked or []
        ]
    assert len(hits) == 4 and ranked == hits


def test_a_relative_cache_folder_ranks_ahead_without_a_word_on_stderr(proc, tmp_path: Path) -> None:
    """$XDG_CACHE_HOME given relative: the index is found from the working folder,
    and the thread that ranks ahead says nothing (it once printed a traceback)."""
    from tests.analysis.test_cost import session

    session(tmp_path)
    env = {**os.environ, "XDG_CACHE_HOME": "cache"}
    runs = [proc("search", "parser", "s.jsonl", "-f", "json", env=env, cwd=tmp_path) for _ in "ab"]
    assert [r.returncode for r in runs] == [0, 0]
    assert runs[0].stdout == runs[1].stdout and json.loads(runs[1].stdout)["hits"]
    assert [r.stderr.decode() for r in runs] == ["index: 1 session, 5 events\n"] * 2
