"""Shared fixtures: log builders, the corpus, and ways to run the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from condense_cli.cli.app import app
from tests.fake_llm import FakeLLM

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_sessions"
CORPUS = ROOT.parent / "shared" / "corpus" / "openhands"
CONDENSE = Path(sys.executable).parent / "condense"


@pytest.fixture(autouse=True, scope="session")
def _cache_of_the_run(tmp_path_factory: pytest.TempPathFactory) -> None:
    """condense's cache (`core.files.cache_dir`) in a folder of this test run, for the
    tests and the commands they start: never the user's."""
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))


# One real session of each dialect, under ../shared/corpus.
ONE_OF_EACH = {
    "openhands-v0": "openhands/ponylang-ponyc-4593.jsonl",
    "openhands-v1": "openhands-v1/3880c06039224ff586eff2db1186474e",
    "claude-code": "claude-code/FundWise.claude-session.jsonl",
    "codex": "codex/edgerunner.codex-session.jsonl",
}


def corpus_copy(dialect: str, tmp: Path) -> Path:
    """A copy in `tmp` of the corpus session of `dialect` (`ONE_OF_EACH`), a file or a
    conversation folder, to run commands that append on."""
    import shutil

    source = CORPUS.parent / ONE_OF_EACH[dialect]
    require_corpus(source.parent)
    target = tmp / source.name
    tmp.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copyfile(source, target)
    return target


def require_corpus(folder: Path = CORPUS) -> Path:
    """A folder of the shared corpus of real logs (OpenHands' by default), or skip the
    calling test when it is absent.

    A clone on another machine has no `../shared/corpus`: its tests skip and say
    why. Under CI (`$CI` set) the corpus is required, so its absence fails the test.
    """
    if folder.is_dir():
        return folder
    reason = f"the shared corpus of real logs is not at {folder}"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}, and CI is set, so corpus tests must run", pytrace=False)
    pytest.skip(f"{reason} (a clone outside the project's machine)")


def corpus_logs() -> list[Any]:
    """The real OpenHands logs, as test parameters; one placeholder when absent,
    so that each test still runs and its `corpus` fixture skips (or fails under CI)."""
    logs = sorted(CORPUS.glob("*.jsonl"))
    return logs or [pytest.param(CORPUS / "absent.jsonl", id="corpus-absent")]


@pytest.fixture
def corpus() -> Path:
    """The OpenHands corpus folder; every test that reads the corpus takes this fixture."""
    return require_corpus()


def msg(i: int, text: str = "", source: str = "user") -> dict[str, Any]:
    return {"id": i, "source": source, "action": "message", "args": {"content": text or f"m{i}"}}


def run_action(i: int, tc: str | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": i,
        "source": "agent",
        "action": "run",
        "args": {"command": f"cmd{i}"},
    }
    if tc:
        event["tool_call_metadata"] = {"tool_call_id": tc}
    return event


def run_obs(i: int, cause: int, tc: str | None = None, content: str = "") -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": i,
        "source": "agent",
        "observation": "run",
        "content": content or f"out{i}",
        "cause": cause,
        "extras": {},
    }
    if tc:
        event["tool_call_metadata"] = {"tool_call_id": tc}
    return event


def hidden_setup_run(i: int) -> list[dict[str, Any]]:
    """The setup-script run OpenHands hides from the agent: `hidden` inside
    `args` (the action) and `extras` (its observation), as `event_to_dict` writes it."""
    command = "chmod +x .openhands/setup.sh && source .openhands/setup.sh"
    return [
        {
            "id": i,
            "source": "environment",
            "action": "run",
            "args": {"command": command, "is_static": True, "hidden": True},
        },
        {
            "id": i + 1,
            "source": "environment",
            "observation": "run",
            "content": "setup done",
            "cause": i,
            "extras": {"command": command, "exit_code": 0, "hidden": True},
        },
    ]


def condensation(
    i: int,
    *,
    ids: list[int] | None = None,
    start: int | None = None,
    end: int | None = None,
    summary: str | None = None,
    offset: int | None = None,
) -> dict[str, Any]:
    return {
        "id": i,
        "source": "agent",
        "action": "condensation",
        "args": {
            "forgotten_event_ids": ids,
            "forgotten_events_start_id": start,
            "forgotten_events_end_id": end,
            "summary": summary,
            "summary_offset": offset,
        },
    }


def request(i: int) -> dict[str, Any]:
    return {"id": i, "source": "agent", "action": "condensation_request", "args": {}}


def lines_of(events: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in events)


@pytest.fixture
def make_log(tmp_path: Path) -> Callable[..., Path]:
    """Write events (dicts) or raw bytes to a fresh log file and return its path."""
    counter = iter(range(10**6))

    def _make(content: Iterable[dict[str, Any]] | bytes, name: str | None = None) -> Path:
        path = tmp_path / (name or f"log{next(counter)}.jsonl")
        path.write_bytes(content if isinstance(content, bytes) else lines_of(content))
        return path

    return _make


API_KEY = "sk-test-secret-0123456789"


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    from condense_cli.condensers.folding import LEARNED_MODES

    LEARNED_MODES.clear()  # what a model could do is learned per run (per process)
    server = FakeLLM()
    yield server
    server.close()


@pytest.fixture
def config(tmp_path: Path, fake: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CONDENSE_CONFIG", raising=False)
    path = tmp_path / "config.toml"
    path.write_text(
        f'[llm]\nmodel = "openai/test-model"\nbase_url = "{fake.base_url}"\n'
        f'api_key = "{API_KEY}"\ntimeout = 2\nnum_retries = 1\n'
        "retry_min_wait = 0.01\nretry_max_wait = 0.02\n"
    )
    return path


@pytest.fixture
def cli() -> Callable[..., Any]:
    """Invoke the typer app in-process; returns click's Result."""
    runner = CliRunner()

    def _invoke(*args: str, input: bytes | str | None = None) -> Any:
        return runner.invoke(app, [str(a) for a in args], input=input, catch_exceptions=False)

    return _invoke


@pytest.fixture
def proc() -> Callable[..., subprocess.CompletedProcess[bytes]]:
    """Run the installed `condense` console script as a real subprocess."""

    def _run(
        *args: str, input: bytes | None = None, **kw: Any
    ) -> subprocess.CompletedProcess[bytes]:
        kw.setdefault("timeout", 120)
        return subprocess.run(
            [str(CONDENSE), *[str(a) for a in args]], input=input, capture_output=True, **kw
        )

    return _run


def start_condense_writers(target: Path) -> list[subprocess.Popen[bytes]]:
    """Four `request` and four `run --force` processes on `target`, all at once."""
    return [
        subprocess.Popen(
            [str(CONDENSE), *args, str(target)]
            + (["-t", "amortized", "-s", "max_size=20", "--force"] if args == ["run"] else []),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for args in (["request"], ["run"]) * 4
    ]
