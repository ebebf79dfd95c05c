"""The LLM condensers against a real model: SmolLM2-135M behind llama.cpp's server.

Every LLM condenser condenses a real corpus session of every dialect; the condensation
it appends replays and `check` accepts it; no prompt exceeds the window, whether the
window is the default (llama-cpp-python's server does not report it) or set as small
as 2k; a model call that fails leaves the log byte-identical. The model summarises
poorly: these tests prove every path works end to end, not that the summary is good.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.conftest import CONDENSE, ROOT, require_corpus
from tests.real_model import ModelServer, start

pytestmark = [pytest.mark.slow, pytest.mark.real_model]

SHARED = ROOT.parent / "shared" / "corpus"
# One real session of each dialect, small enough for a 135M model on two cores.
SESSIONS = {
    "openhands-v0": "openhands/ponylang-ponyc-4593.jsonl",
    "openhands-v1": "openhands-v1/b2688296b4844863aaede6f60a88b9da",
    "claude-code": "claude-code/FundWise.claude-session.jsonl",
    "codex": "codex/FundWise.codex-session.jsonl",
}
PREFIX = 40  # lines of each session: one or two calls of a 135M model on two cores
LARGEST = re.compile(r"the largest prompt ([\d,]+)")
PROMPT = re.compile(r"([\d,]+) prompt \+")


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModelServer]:
    yield from start(tmp_path_factory.mktemp("model"))


def session_copy(dialect: str, tmp_path: Path, lines: int = PREFIX) -> Path:
    """A writable copy of the first `lines` lines (or event files) of the dialect's
    corpus session: the real beginning of a real session, short enough for the model."""
    source = require_corpus(SHARED) / SESSIONS[dialect]
    target = tmp_path / source.name
    if source.is_dir():
        shutil.copytree(source, target)
        for path in [target, *target.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        for extra in sorted(target.rglob("event-*.json"))[lines:]:
            extra.unlink()
    else:
        kept = [x for x in source.read_bytes().splitlines(keepends=True) if x.strip()][:lines]
        target.write_bytes(b"".join(kept))
    return target


def condense(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CONDENSE), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=1200
    )


def write_config(folder: Path, model: ModelServer, condenser: str, **llm: object) -> Path:
    path = folder / "config.toml"
    path.write_text(model.config(**llm) + condenser)
    return path


def largest_prompt(stderr: str) -> int:
    """The largest prompt the server counted, from `run`'s report."""
    found = LARGEST.search(stderr) or PROMPT.search(stderr)
    assert found, stderr
    return int(found.group(1).replace(",", ""))


def view(log: Path, cwd: Path) -> dict[str, object]:
    done = condense("view", log, "--format", "json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    data: dict[str, object] = orjson.loads(done.stdout)
    return data


CONDENSERS = {
    "llm": '[condenser]\ntype = "llm"\nmax_size = 10\nkeep_first = 1\nmax_event_length = 200\n',
    "structured_summary": (
        '[condenser]\ntype = "structured_summary"\nmax_size = 10\nmax_event_length = 200\n'
    ),
    "llm_attention": '[condenser]\ntype = "llm_attention"\nmax_size = 10\n',
    "pipeline": (
        '[condenser]\ntype = "pipeline"\n'
        '[[condenser.condensers]]\ntype = "observation_masking"\nattention_window = 4\n'
        '[[condenser.condensers]]\ntype = "llm"\nmax_size = 10\nmax_event_length = 200\n'
    ),
}


@pytest.mark.parametrize("dialect", list(SESSIONS))
@pytest.mark.parametrize("condenser", list(CONDENSERS))
def test_every_llm_condenser_condenses_a_real_session_of_every_dialect(
    dialect: str, condenser: str, model: ModelServer, tmp_path: Path
) -> None:
    log = session_copy(dialect, tmp_path)
    config = write_config(tmp_path, model, CONDENSERS[condenser])
    before = view(log, tmp_path)
    done = condense("run", log, "-c", config, "--force", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "appended to" in done.stderr, done.stderr
    # the default window (the server does not report one): 4,096 tokens
    assert largest_prompt(done.stderr) <= 4096 - 128
    after = view(log, tmp_path)
    assert after["forgotten"] > before["forgotten"]  # type: ignore[operator]
    if condenser != "llm_attention":
        assert after["summary"] and after["summary"] != before["summary"]
    check = condense("check", log, cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_2k_window_is_never_exceeded(model: ModelServer, tmp_path: Path) -> None:
    log = session_copy("openhands-v0", tmp_path, lines=80)
    config = write_config(tmp_path, model, CONDENSERS["llm"], max_input_tokens=2048)
    done = condense("run", log, "-c", config, "--force", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    calls = re.search(r"(\d+) calls", done.stderr)
    assert calls and int(calls.group(1)) > 1, done.stderr
    assert "a window of 2,048 tokens (max_input_tokens)" in done.stderr
    assert largest_prompt(done.stderr) <= 2048 - 128
    assert condense("check", log, cwd=tmp_path).returncode == 0


def test_a_failed_model_call_leaves_the_log_byte_identical(
    model: ModelServer, tmp_path: Path
) -> None:
    log = session_copy("openhands-v0", tmp_path)
    before = log.read_bytes()
    config = write_config(tmp_path, model, CONDENSERS["llm"], timeout="0.01")
    done = condense("run", log, "-c", config, "--force", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert log.read_bytes() == before
