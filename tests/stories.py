"""One small session told in every dialect, for `audit`, `simulate` and `diff` tests.

Each dialect's test package tells it in its `story.py` (`lines(condensed)` and
`BEFORE`, the `--upto` of the view just before the condensation; `CONDENSES =
False` for a dialect whose logs record no condensation, whose story then has none);
the dialect registry says which dialects there are, and `able` which of them a test
applies to: one that only reads its logs passes the cases that ask nothing more.

The user asks for a fix; the agent runs the tests (a failing test and an
assertion error), edits a file, gets a second instruction, and fetches a page.
Then a condensation forgets all of that (events 1..8) for SUMMARY, and the agent
says DONE. Whatever the dialect, the facts and what the summary kept are the same.
"""

from __future__ import annotations

import functools
import importlib
import tempfile
from pathlib import Path
from types import ModuleType

import orjson

from condense_cli.dialects import DIALECTS as REGISTRY
from condense_cli.dialects import read_log
from condense_cli.dialects.base import CAPABILITIES

FIRST = "Fix the bug in src/app.py"
COMMAND = "cd /repo && pytest tests/test_app.py"
OUTPUT = "FAILED tests/test_app.py::test_add\nAssertionError: 1 != 2"
EDITED = "/repo/src/app.py"
SECOND = "Also keep the API stable"
URL = "https://docs.python.org/3/"
SUMMARY = "User asked to keep the API stable. Edited src/app.py."
DONE = "All tests in tests/test_app.py pass"
# Every registered dialect: a new one needs its story before the suite passes.
DIALECTS = tuple(REGISTRY)


def package(dialect: str) -> str:
    """The dialect's package name, from where the registry finds its code."""
    module = REGISTRY[dialect].where.partition(":")[0]
    return module.removeprefix("condense_cli.dialects.").partition(".")[0]


def story(dialect: str) -> ModuleType:
    """The dialect's story module: `tests/dialects/<package>/story.py`."""
    return importlib.import_module(f"tests.dialects.{package(dialect)}.story")


def write(dialect: str, path: Path, *, condensed: bool = True) -> Path:
    """The session in `dialect` at `path` (with or without its condensation)."""
    lines = story(dialect).lines(condensed)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


def condenses(dialect: str) -> bool:
    """Whether the dialect's story has a condensation (its logs record them)."""
    return bool(getattr(story(dialect), "CONDENSES", True))


@functools.cache
def capabilities(dialect: str) -> frozenset[str]:
    """What the dialect's replay of its story can do (`dialects.base.CAPABILITIES`)."""
    with tempfile.TemporaryDirectory() as folder:
        log = write(dialect, Path(folder) / "story.jsonl")
        with read_log(str(log)) as replay:
            return frozenset(flag for flag in CAPABILITIES if getattr(replay, flag))


def able(*flags: str, condensed: bool = False) -> tuple[str, ...]:
    """The registered dialects that can do each of `flags` (and, with `condensed`,
    whose story has a condensation): the ones a test of those applies to."""
    unknown = set(flags) - set(CAPABILITIES)
    assert not unknown, f"no such capability: {sorted(unknown)}"
    return tuple(
        d for d in DIALECTS if set(flags) <= capabilities(d) and (condenses(d) or not condensed)
    )
