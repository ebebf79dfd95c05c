"""The suite runs anywhere: corpus tests skip with a reason when the corpus is absent,
and fail rather than skip under CI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

CORPUS_TESTS = """
from pathlib import Path

import pytest

from tests.conftest import corpus_logs


@pytest.mark.parametrize("log", corpus_logs(), ids=lambda p: p.name)
def test_each_log(log: Path, corpus: Path) -> None:
    assert log.read_bytes()


def test_one_file(corpus: Path) -> None:
    assert (corpus / "runtime-basic.jsonl").is_file()
"""


def run_pytest_without_corpus(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    """The project's conftest in a clone whose `../shared/corpus` does not exist."""
    clone = tmp_path / "clone"
    (clone / "tests").mkdir(parents=True)
    for name in ("conftest.py", "fake_llm.py"):
        shutil.copyfile(ROOT / "tests" / name, clone / "tests" / name)
    (clone / "tests" / "__init__.py").write_text("")
    (clone / "tests" / "test_uses_corpus.py").write_text(CORPUS_TESTS)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rsfE", "-p", "no:cacheprovider", "tests"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_corpus_tests_skip_with_a_reason_when_the_corpus_is_absent(tmp_path: Path) -> None:
    done = run_pytest_without_corpus(tmp_path, ci=None)
    assert done.returncode == 0, done.stdout
    assert "2 skipped" in done.stdout
    missing = tmp_path / "shared" / "corpus" / "openhands"
    reason = f"the shared corpus of real logs is not at {missing} (a clone outside"
    assert done.stdout.count(reason) == 2


def test_corpus_tests_fail_instead_of_skipping_under_ci(tmp_path: Path) -> None:
    done = run_pytest_without_corpus(tmp_path, ci="true")
    assert done.returncode == 1, done.stdout
    assert "2 errors" in done.stdout  # a failing fixture is an error of the test
    assert "skipped" not in done.stdout
    assert (
        "ERROR tests/test_uses_corpus.py::test_one_file - Failed: the shared corpus" in done.stdout
    )
    assert "and CI is set, so corpus tests must run" in done.stdout
