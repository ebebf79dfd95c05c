"""Start-up imports what the command needs and nothing more (SPEC section 8).

Each case runs condense's entry point in a fresh interpreter and lists the
modules loaded when the process ends. How long start-up takes is measured in
bench/, never here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests import stories
from tests.conftest import ROOT, run_obs

# The entry point as `condense` runs it, except that the modules loaded are written
# to the file named first, just before the process ends (condense ends with os._exit).
LIST_MODULES = """
import os, sys

listing = sys.argv.pop(1)
sys.argv[0] = "condense"
end = os._exit


def list_modules_and_end(code):
    with open(listing, "w") as out:
        out.write("\\n".join(sorted(sys.modules)))
    end(code)


os._exit = list_modules_and_end
from condense_cli.entry import main

main()
"""

MODULES = {dialect: stories.package(dialect) for dialect in stories.DIALECTS}
NEVER = ("litellm", "tiktoken", "condense_cli.condensers", "condense_cli.llm.client")
# and what only `stats` counts with
COUNTING = ("condense_cli.dialects.counting", "condense_cli.llm.tokens")
ENVIRON = {k: v for k, v in os.environ.items() if k != "CONDENSE_CONFIG"}


def condense(
    tmp_path: Path, *args: str | Path, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[bytes], set[str]]:
    """Run condense with `args` (stdout piped, not a terminal), and the modules it loaded."""
    listing = tmp_path / "modules.txt"
    done = subprocess.run(
        [sys.executable, "-c", LIST_MODULES, str(listing), *[str(a) for a in args]],
        capture_output=True,
        cwd=tmp_path,  # no config.toml here: the defaults
        env={**ENVIRON, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=120,
    )
    return done, set(listing.read_text().split())


def under(modules: set[str], *packages: str) -> set[str]:
    """The loaded modules that are any of `packages` or inside one."""
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)}


def other_dialects(modules: set[str], dialect: str) -> set[str]:
    """Loaded modules of the dialects other than `dialect`, their detection rules aside."""
    others = [f"condense_cli.dialects.{m}." for d, m in MODULES.items() if d != dialect]
    return {
        m
        for m in modules
        if any(m.startswith(prefix) for prefix in others) and not m.endswith(".detect")
    }


@pytest.mark.parametrize("format", ["jsonl", "text"])
@pytest.mark.parametrize("dialect", stories.DIALECTS)
def test_a_piped_view_loads_its_dialect_only_and_no_rich(
    dialect: str, format: str, tmp_path: Path, proc
) -> None:
    log = stories.write(dialect, tmp_path / "session.jsonl")
    done, modules = condense(tmp_path, "view", log, "--format", format)
    assert done.returncode == 0, done.stderr
    assert done.stdout == proc("view", log, "--format", format).stdout
    assert done.stderr == b""
    assert f"condense_cli.dialects.{MODULES[dialect]}.dialect" in modules
    assert other_dialects(modules, dialect) == set()
    assert under(modules, "rich", *NEVER, *COUNTING) == set()


def test_the_v0_fast_path_is_loaded_only_for_a_log_of_its_size(tmp_path: Path) -> None:
    log = stories.write("openhands-v0", tmp_path / "session.jsonl")
    size = log.stat().st_size
    fast = ("condense_cli.dialects.openhands_v0.fast", "simdjson", "msgspec")
    outputs = []
    for threshold, loaded in ((size + 1, False), (size, True)):
        env = {"CONDENSE_FAST_MIN_BYTES": str(threshold)}
        done, modules = condense(tmp_path, "view", log, "--format", "jsonl", env=env)
        assert done.returncode == 0, done.stderr
        assert (set(fast) <= modules) if loaded else not under(modules, *fast)
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] != b""


def test_a_piped_command_on_a_big_log_imports_no_progress_bar(tmp_path: Path) -> None:
    """A log big enough for a progress bar, read with stderr not a terminal: rich is
    not imported, unless FORCE_COLOR asks rich to draw anyway."""
    from condense_cli.terminal.progress import THRESHOLD

    line = orjson.dumps(run_obs(0, 0, content="x" * 8000))
    log = tmp_path / "big.jsonl"
    with log.open("wb") as out:
        for i in range(THRESHOLD // len(line) + 2):
            out.write(line.replace(b'"id":0', b'"id":%d' % (i + 1), 1) + b"\n")
    assert log.stat().st_size > THRESHOLD
    for env, drawn in (({}, False), ({"FORCE_COLOR": "1"}, True)):
        done, modules = condense(tmp_path, "check", log, env=env)
        assert done.returncode == 0, done.stderr
        assert ("rich.progress" in modules) is drawn


def test_version_loads_no_code_that_reads_logs(tmp_path: Path) -> None:
    done, modules = condense(tmp_path, "--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"condense 0.1.0\n", b"")
    assert "typer" in modules
    assert (
        under(
            modules,
            "rich",
            "condense_cli.dialects",
            "condense_cli.core.logfile",
            "condense_cli.core.events",
            "condense_cli.dialects.openhands_v0.scan",
            "condense_cli.terminal.render",
            *NEVER,
        )
        == set()
    )


COMMAND_MODULES = {
    f"condense_cli.cli.{m}"
    for m in ("view", "check", "run", "request", "pin", "config", "stats", "audit", "diff")
} | {f"condense_cli.cli.{m}" for m in ("simulate", "report", "hook", "mcp")}


def test_help_lists_the_commands_without_loading_one(tmp_path: Path) -> None:
    done, modules = condense(tmp_path, "--help")
    assert done.returncode == 0 and b"simulate  Replay the log's history" in done.stdout
    assert not modules & COMMAND_MODULES
    assert not under(modules, "rich", "condense_cli.dialects", *NEVER)


def test_a_command_loads_its_own_module_and_no_other_commands(tmp_path: Path) -> None:
    log = stories.write("codex", tmp_path / "codex.jsonl")
    done, modules = condense(tmp_path, "view", log, "-f", "jsonl")
    assert done.returncode == 0, done.stderr
    assert modules & COMMAND_MODULES == {"condense_cli.cli.view"}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("check",), b"1 log ok (openhands-v0)\n"),
        (("stats", "--format", "json"), b""),
        (("stats",), b""),
    ],
)
def test_check_and_stats_never_load_litellm(
    args: tuple[str, ...], says: bytes, tmp_path: Path, proc
) -> None:
    """Tokens are counted with tiktoken and litellm's bundled encodings, without litellm."""
    log = stories.write("openhands-v0", tmp_path / "session.jsonl")
    done, modules = condense(tmp_path, *args, log)
    assert (done.returncode, done.stderr) == (0, says)
    assert done.stdout == proc(*args, log, cwd=tmp_path, env=ENVIRON).stdout
    assert "condense_cli.dialects.openhands_v0.dialect" in modules
    assert under(modules, "litellm", "condense_cli.condensers", "condense_cli.llm.client") == set()
    if "json" in args or "check" in args:  # nothing is drawn: no rich
        assert under(modules, "rich") == set()


def test_run_without_a_key_stops_before_litellm_is_imported(tmp_path: Path) -> None:
    """A call that needs a key and has none is refused before the 3 s import of litellm."""
    from tests.conftest import lines_of, msg, run_action

    events = [msg(0, "fix the bug")]
    for n in range(1, 60, 2):
        events += [run_action(n, f"c{n}"), run_obs(n + 1, n, f"c{n}", "ok")]
    log = tmp_path / "session.jsonl"
    log.write_bytes(lines_of(events))
    config = tmp_path / "config.toml"
    config.write_text('[llm]\nmodel = "openai/test-model"\nbase_url = "http://127.0.0.1:9/v1"\n')
    args = ("run", log, "-c", config, "-t", "llm", "-s", "max_size=20")
    done, modules = condense(tmp_path, *args, env={"OPENAI_API_KEY": ""})  # none set
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "Error: no API key is set for model openai/test-model (OPENAI_API_KEY is not set)",
        "Hint: set api_key, or api_key_env naming the variable that holds the key, in the "
        "[llm] table the condenser uses, or export OPENAI_API_KEY",
    ]
    assert under(modules, "litellm") == set()
    assert "condense_cli.condensers.summarizing" in modules  # it got as far as the call
