"""`hook install` and `mcp install` change files that belong to the clients: every
case of issue 55's attack run on them, each named for what it proves. The clients
themselves read what was written in `tests/clients/test_installs_read.py`, over the
same cases (`CODEX_CASES`, `CLAUDE_CASES`)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CONDENSE

Proc = Callable[..., subprocess.CompletedProcess[bytes]]

# Codex config.toml files as users write them; each holds a condense server of its
# own spelling (or none) and settings of the user's that must come through whole.
CODEX_CASES = {
    "a header with a trailing comment": (
        'model = "o3"\n[mcp_servers.condense] # mine\ncommand = "old"\n'
    ),
    "a header with spaces": 'model = "o3"\n[ mcp_servers.condense ]\ncommand = "old"\n',
    "a quoted header": 'model = "o3"\n[mcp_servers."condense"]\ncommand = "old"\n',
    "an inline table": (
        'model = "o3"\nmcp_servers = { condense = { command = "old" }, '
        'other = { command = "other" } }\n'
    ),
    "a parent table with an inline entry": (
        '[mcp_servers]\ncondense = { command = "old" }\nother = { command = "other" }\n'
    ),
    "dotted keys": 'mcp_servers.condense.command = "old"\nmodel = "o3"\n',
    "an env table of the user's": (
        '[mcp_servers.condense]\ncommand = "old"\n\n[mcp_servers.condense.env]\n'
        'TOKEN_FILE = "/home/u/.t"\n\n[profiles.fast]\nmodel = "o4-mini"\n'
    ),
    "a header inside a multi-line string": (
        'description = """\n[mcp_servers.condense]\ncommand = "not a table"\n"""\nmodel = "o3"\n'
    ),
    "an array line that starts with [": ('[tui]\nrows = [\n[1, 2],\n[3, 4],\n]\nmodel = "o3"\n'),
}


def codex_env(home: Path) -> dict[str, str]:
    return dict(os.environ, HOME=str(home), CODEX_HOME=str(home / ".codex"))


def codex_config(tmp_path: Path, text: str | bytes) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_bytes(text.encode() if isinstance(text, str) else text)
    return config, codex_env(home)


def without_condense(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings as they are with condense's server left out (an emptied
    `mcp_servers` counts as none)."""
    servers = {k: v for k, v in settings.get("mcp_servers", {}).items() if k != "condense"}
    rest = {k: v for k, v in settings.items() if k != "mcp_servers"}
    return rest | ({"mcp_servers": servers} if servers else {})


@pytest.mark.parametrize("case", sorted(CODEX_CASES))
def test_codex_install_and_uninstall_change_only_condenses_server(
    case: str, tmp_path: Path, proc: Proc
) -> None:
    """However the user's config.toml spells the table, install sets one condense
    server (keeping what the user added to it) and uninstall removes it whole; every
    other setting parses as it did."""
    config, env = codex_config(tmp_path, CODEX_CASES[case])
    before = tomllib.loads(config.read_text())
    done = proc("mcp", "install", "codex", env=env)
    assert done.returncode == 0, done.stderr
    installed = tomllib.loads(config.read_text())
    server = installed["mcp_servers"]["condense"]
    assert server["args"][-3:] == ["mcp", "--client", "codex"]
    assert server["startup_timeout_sec"] == 60
    old = before.get("mcp_servers", {}).get("condense", {})
    assert {k: v for k, v in server.items() if k in old and k != "command"} == {
        k: v for k, v in old.items() if k != "command"
    }  # the user's env (and anything else of theirs) kept
    assert without_condense(installed) == without_condense(before)
    again = proc("mcp", "install", "codex", env=env)
    assert again.stderr.endswith(b"nothing to change\n")
    done = proc("mcp", "uninstall", "codex", env=env)
    assert done.returncode == 0, done.stderr
    after = tomllib.loads(config.read_text())
    assert "condense" not in after.get("mcp_servers", {})
    assert without_condense(after) == without_condense(before)


def test_codex_install_keeps_the_users_comments_and_layout(tmp_path: Path, proc: Proc) -> None:
    mine = '# my settings\nmodel = "gpt-5"  # the default\n\n[mcp_servers.other]\ncommand = "x"\n'
    config, env = codex_config(tmp_path, mine)
    assert proc("mcp", "install", "codex", env=env).returncode == 0
    assert config.read_text().startswith(mine)
    assert proc("mcp", "uninstall", "codex", env=env).returncode == 0
    assert config.read_text().rstrip("\n") == mine.rstrip("\n")


@pytest.mark.parametrize(
    ("case", "text", "said"),
    [
        (
            "a duplicate table",
            b'[mcp_servers.condense]\ncommand = "a"\n[mcp_servers.condense]\nargs = []\n',
            b"is not valid TOML",
        ),
        ("a binary file", b"\x00\xff\xfe\x89PNG\r\n", b"is not UTF-8 text"),
        ("a server that is no table", b'[mcp_servers]\ncondense = "x"\n', b"to be a table"),
    ],
)
def test_a_config_toml_codex_would_refuse_is_left_as_it_is(
    case: str, text: bytes, said: bytes, tmp_path: Path, proc: Proc
) -> None:
    config, env = codex_config(tmp_path, text)
    for command in ("install", "uninstall"):
        done = proc("mcp", command, "codex", env=env)
        assert done.returncode == 2 and said in done.stderr, (case, done.stderr)
        assert b"Traceback" not in done.stderr and b"this is a bug" not in done.stderr
        assert config.read_bytes() == text


# --- Claude Code's JSON ------------------------------------------------------------------

# settings.json and ~/.claude.json as users have them: values condense must write back
# exactly as they were
CLAUDE_CASES = {
    "numbers as written": '{"cleanupPeriodDays": 1e400, "ratio": 1.10, "zero": -0, "n": 10}',
    "another tool's hooks": json.dumps(
        {
            "hooks": {
                "PreCompact": [
                    {"hooks": [{"type": "command", "command": "npx ccmemory hook pre-compact"}]}
                ]
            }
        }
    ),
    "text in many scripts": (
        '{"statusLine": {"type": "command", "command": "echo ✓ 完成 \\ud83d\\ude00"}}'
    ),
    "a lone surrogate": '{"note": "\\ud800 half a pair"}',
}


def claude_home(tmp_path: Path, file: str, text: str | bytes | None) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    path = home / file
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is not None:
        path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path, dict(os.environ, HOME=str(home))


@pytest.mark.parametrize("case", sorted(CLAUDE_CASES))
@pytest.mark.parametrize(
    ("file", "command"),
    [(".claude/settings.json", "hook"), (".claude.json", "mcp")],
)
def test_claude_code_settings_come_back_exactly_after_install_and_uninstall(
    case: str, file: str, command: str, tmp_path: Path, proc: Proc
) -> None:
    """Every value the user wrote is written back as written (`1e400` stayed
    `Infinity` before), and uninstall gives back the same settings."""
    text = CLAUDE_CASES[case]
    path, env = claude_home(tmp_path, file, text)
    done = proc(command, "install", "claude-code", env=env)
    assert done.returncode == 0, done.stderr
    written = path.read_text()
    for token in ("1e400", "1.10", "-0", "\\ud800"):
        assert (token in written) == (token in text)
    assert proc(command, "uninstall", "claude-code", env=env).returncode == 0
    assert json.loads(path.read_text()) == json.loads(text)


@pytest.mark.parametrize("command", ["hook", "mcp"])
def test_an_install_on_a_fresh_machine_makes_the_file(
    command: str, tmp_path: Path, proc: Proc
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), CODEX_HOME=str(home / ".codex"))
    for client in ("claude-code", "codex"):
        done = proc(command, "install", client, env=env)
        assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in home.rglob("*") if p.is_file()) == (
        ["hooks.json", "settings.json"] if command == "hook" else [".claude.json", "config.toml"]
    )


def test_claude_code_mcp_install_keeps_the_users_env_of_the_server(
    tmp_path: Path, proc: Proc
) -> None:
    mine = {"mcpServers": {"condense": {"command": "old", "env": {"CONDENSE_CONFIG": "/c.toml"}}}}
    path, env = claude_home(tmp_path, ".claude.json", json.dumps(mine))
    assert proc("mcp", "install", "claude-code", env=env).returncode == 0
    server = json.loads(path.read_text())["mcpServers"]["condense"]
    assert server["env"] == {"CONDENSE_CONFIG": "/c.toml"} and server["command"] != "old"


@pytest.mark.parametrize(
    ("case", "text", "said"),
    [
        ("not UTF-8", b'{"a": "\xff"}', b":1: is not UTF-8 text"),
        ("nested 5,000 deep", b"[" * 5000 + b"]" * 5000, b"nests deeper than condense reads"),
        ("not an object", b"[1, 2]", b"expected a JSON object"),
        ("hooks of an event not a list", b'{"hooks": {"PreCompact": "abc"}}', b"lists of hook"),
        ("hooks not an object", b'{"hooks": ["a"]}', b"lists of hook groups"),
        ("invalid JSON", b'{"a": 1,}', b":1: is not valid JSON"),
    ],
)
def test_settings_the_client_would_not_read_as_meant_are_left_as_they_are(
    case: str, text: bytes, said: bytes, tmp_path: Path, proc: Proc
) -> None:
    path, env = claude_home(tmp_path, ".claude/settings.json", text)
    for command in ("install", "uninstall"):
        done = proc("hook", command, "claude-code", env=env)
        assert done.returncode == 2 and said in done.stderr, (case, done.stderr)
        assert b"Traceback" not in done.stderr and b"this is a bug" not in done.stderr
        assert path.read_bytes() == text


def test_a_settings_path_that_is_no_file_is_refused(tmp_path: Path, proc: Proc) -> None:
    folder, env = claude_home(tmp_path, ".claude/settings.json", None)
    folder.mkdir()
    done = proc("hook", "install", "claude-code", env=env)
    assert done.returncode == 2 and b"is not a regular file (a folder)" in done.stderr
    fifo = tmp_path / "home" / ".claude.json"
    os.mkfifo(fifo)
    done = proc("mcp", "install", "claude-code", env=env, timeout=20)  # never blocks
    assert done.returncode == 2 and b"is not a regular file (a FIFO" in done.stderr
    blocked = tmp_path / "blocked" / "home"
    blocked.mkdir(parents=True)
    (blocked / ".claude").write_text("a file where the folder should be")
    done = proc("hook", "install", "claude-code", env=dict(env, HOME=str(blocked)))
    assert done.returncode in (1, 2) and b"Traceback" not in done.stderr
    assert b"this is a bug" not in done.stderr and b".claude" in done.stderr
    assert (blocked / ".claude").read_text() == "a file where the folder should be"


def test_the_files_mode_is_kept_and_a_read_only_file_is_not_replaced(
    tmp_path: Path, proc: Proc
) -> None:
    path, env = claude_home(tmp_path, ".claude/settings.json", "{}")
    path.chmod(0o644)
    assert proc("hook", "install", "claude-code", env=env).returncode == 0
    assert path.stat().st_mode & 0o777 == 0o644
    before = path.read_bytes()
    path.chmod(0o444)
    done = proc("hook", "uninstall", "claude-code", env=env)
    if os.geteuid() == 0:  # root may write anything: the mode is still the user's word
        assert done.returncode == 0
    else:
        assert done.returncode == 2 and b"is read-only" in done.stderr
        assert path.read_bytes() == before
    assert path.stat().st_mode & 0o777 == 0o444


def test_a_writer_that_takes_the_lock_loses_nothing(tmp_path: Path, proc: Proc) -> None:
    """Claude Code saves ~/.claude.json under the folder lock `~/.claude.json.lock`
    all the time; a writer that takes it, adding 300 keys while condense installs and
    uninstalls its server, loses none of them (6 were lost in 300 before)."""
    path, env = claude_home(tmp_path, ".claude.json", "{}")
    writer = subprocess.Popen([sys.executable, "-c", LOCKED_WRITER, str(path), "300"])
    try:
        rounds = 0
        while writer.poll() is None or rounds < 2:
            command = "install" if rounds % 2 == 0 else "uninstall"
            done = proc("mcp", command, "claude-code", env=env)
            assert done.returncode == 0, done.stderr
            rounds += 1
    finally:
        writer.wait(timeout=120)
    assert writer.returncode == 0
    data = json.loads(path.read_text())
    assert all(f"key{i}" in data for i in range(300))
    assert ("condense" in data.get("mcpServers", {})) == (rounds % 2 == 1)


LOCKED_WRITER = """
import json, os, sys, time
path, count = sys.argv[1], int(sys.argv[2])
lock = path + ".lock"
for i in range(count):
    while True:
        try:
            os.mkdir(lock)
            break
        except FileExistsError:
            time.sleep(0.001)
    try:
        with open(path) as f:
            data = json.load(f)
        data[f"key{i}"] = i
        with open(path + ".new", "w") as f:
            json.dump(data, f)
        os.replace(path + ".new", path)
    finally:
        os.rmdir(lock)
    time.sleep(0.002)
"""


def test_a_stale_lock_of_a_dead_writer_is_taken_over(tmp_path: Path, proc: Proc) -> None:
    path, env = claude_home(tmp_path, ".claude.json", "{}")
    lock = path.with_name(".claude.json.lock")
    lock.mkdir()
    os.utime(lock, (1, 1))  # left long ago by a process that died
    assert proc("mcp", "install", "claude-code", env=env).returncode == 0
    assert "condense" in json.loads(path.read_text())["mcpServers"] and not lock.exists()


def _file_size_limit(limit: int) -> Callable[[], None]:
    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limited


def test_a_write_the_system_refuses_is_one_message_and_the_files_stay(
    tmp_path: Path, make_log: Callable[..., Path]
) -> None:
    """A full disk (here: a file size the process may not pass, which fails the write
    the same way) in `hook install`, `mcp install`, `pin` and `report` was "this is a
    bug"; now it is what the system said and what to do, and no file is damaged."""
    from tests.conftest import msg

    path, env = claude_home(tmp_path, ".claude/settings.json", "{}")
    log = make_log([msg(1, "x" * 2000)])
    log_bytes = log.read_bytes()
    for args in (
        ("hook", "install", "claude-code"),
        ("mcp", "install", "claude-code"),
        ("pin", str(log), "keep the tests green " * 10),
        ("report", str(log), "-o", str(tmp_path / "page.html")),
    ):
        done = subprocess.run(
            [str(CONDENSE), *args],
            capture_output=True,
            env=env,
            timeout=120,
            preexec_fn=_file_size_limit(120),
        )
        said = done.stderr.decode()
        assert done.returncode in (1, 2), (args, said)
        assert "File too large" in said and "Hint: " in said, (args, said)
        assert "Traceback" not in said and "this is a bug" not in said
    assert path.read_text() == "{}" and log.read_bytes() == log_bytes
    assert not (tmp_path / "home" / ".claude.json").exists()
    assert not list(path.parent.glob("*.tmp")) and not (tmp_path / "page.html").exists()
