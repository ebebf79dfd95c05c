"""Resume a Claude Code session, a Codex rollout or a Gemini CLI session with the real
client, offline.

Each run gets its own HOME (and CODEX_HOME) under a temporary folder, the
session file copied where the client looks for it, a scripted server on
127.0.0.1, and an environment built from scratch: the model endpoint points at
the server, and HTTP(S)_PROXY points at it too, so any other request the client
tries is recorded there (as a CONNECT) and refused instead of leaving the
machine. Every run has a time-out.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.clients.servers import AnthropicServer, GeminiServer, OpenAIServer, ScriptedServer

RUN_TIMEOUT = 60


@dataclass
class Run:
    """What one client run did: its exit, output, and the session file it resumed."""

    returncode: int
    stdout: str
    stderr: str
    session: Path


def _base_env(home: Path, server: ScriptedServer) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "HTTP_PROXY": server.url,
        "HTTPS_PROXY": server.url,
        "http_proxy": server.url,
        "https_proxy": server.url,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }


def _run(command: list[str], env: dict[str, str], cwd: Path, session: Path) -> Run:
    done = subprocess.run(
        command,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr, session)


# --- Claude Code -------------------------------------------------------------------


def claude_project_dir(cwd: Path) -> str:
    """The folder name under `~/.claude/projects/` that Claude Code uses for `cwd`.

    Every character that is not an ASCII letter or digit becomes `-`
    (`/tmp/a/my.proj_x` -> `-tmp-a-my-proj-x`), checked against 2.1.330.
    """
    name = re.sub(r"[^A-Za-z0-9]", "-", str(cwd))
    if len(name) > 200:
        raise ValueError(f"working directory too long for the simple project name: {cwd}")
    return name


def claude_session_id(session: Path) -> str:
    with session.open(encoding="utf-8") as lines:
        for line in lines:
            value = json.loads(line).get("sessionId")
            if value:
                return value
    raise ValueError(f"{session}: no line has a sessionId")


def resume_claude(
    claude: Path,
    session: Path,
    tmp: Path,
    server: AnthropicServer,
    prompt: str = "continue",
    extra: tuple[str, ...] = (),
) -> Run:
    """Copy `session` into a fresh HOME and run `claude -p --resume <id> <prompt>`."""
    home, cwd = tmp / "home", tmp / "work"
    cwd.mkdir(parents=True, exist_ok=True)
    session_id = claude_session_id(session)
    target = home / ".claude" / "projects" / claude_project_dir(cwd) / f"{session_id}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(session, target)
    command = [str(claude), "-p", *extra, "--resume", session_id, prompt]
    return _run(command, _claude_env(home, server), cwd, target)


def _claude_env(home: Path, server: AnthropicServer) -> dict[str, str]:
    return _base_env(home, server) | {
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "fake",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }


def claude_sessions(tmp: Path) -> list[Path]:
    """The session files in the HOME under `tmp` (not a subagent's transcript, which
    the client keeps in a folder of its session's)."""
    return sorted((tmp / "home" / ".claude" / "projects").glob("*/*.jsonl"))


def new_claude_session(
    claude: Path,
    tmp: Path,
    server: AnthropicServer,
    prompts: list[str],
    tools: str = "Bash",
    resume: Path | None = None,
) -> Path:
    """Make a fresh session with the real client: `claude -p` with the first prompt,
    then `claude -p --resume` with each next one (a prompt may be `/compact`), all
    in one HOME under `tmp`, the `tools` allowed without asking. The server's
    script decides what the model answers (texts, tool calls). With `resume`, a
    session made so before, every prompt resumes it."""
    home, cwd = tmp / "home", tmp / "work"
    cwd.mkdir(parents=True, exist_ok=True)
    env = _claude_env(home, server)
    session: Path | None = resume
    for prompt in prompts:
        resume = ["--resume", session.stem] if session is not None else []
        command = [str(claude), "-p", f"--allowedTools={tools}", *resume, "--", prompt]
        run = _run(command, env, cwd, session or cwd)
        if run.returncode != 0:
            raise RuntimeError(f"claude -p failed ({run.returncode}):\n{run.stderr[-3000:]}")
        session = session or claude_sessions(tmp)[0]
    if session is None:
        raise ValueError("no prompt was given")
    return session


def killed_claude_session(
    claude: Path,
    tmp: Path,
    server: AnthropicServer,
    prompt: str,
    call_id: str,
    resume: Path | None = None,
) -> Path:
    """A session that ended while a tool ran: `claude -p` (resuming `resume`, a
    session under `tmp`, when given) is killed (SIGKILL, the whole process group)
    once the call `call_id` it runs is in the session file."""
    home, cwd = tmp / "home", tmp / "work"
    cwd.mkdir(parents=True, exist_ok=True)
    again = ["--resume", resume.stem] if resume is not None else []
    command = [str(claude), "-p", "--allowedTools=Bash", *again, "--", prompt]
    with subprocess.Popen(
        command,
        env=_claude_env(home, server),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    ) as client:
        deadline = time.monotonic() + RUN_TIMEOUT
        try:
            while time.monotonic() < deadline and client.poll() is None:
                found = claude_sessions(tmp)
                if found and call_id in found[0].read_text(encoding="utf-8"):
                    time.sleep(1.0)  # the tool starts
                    break
                time.sleep(0.1)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(client.pid, signal.SIGKILL)
    found = claude_sessions(tmp)
    if not found or call_id not in found[0].read_text(encoding="utf-8"):
        raise RuntimeError(f"claude never recorded the call {call_id}")
    return found[0]


# --- Codex -------------------------------------------------------------------------

CODEX_CONFIG = """\
openai_base_url = "{url}/v1"
check_for_update_on_startup = false
model_auto_compact_token_limit = {compact_limit}

[features]
plugins = false
apps = false
remote_plugin = false
tool_suggest = false
shell_snapshot = false
{features}

[analytics]
enabled = false

[otel]
exporter = "none"
"""


def codex_session_meta(rollout: Path) -> dict[str, str]:
    with rollout.open(encoding="utf-8") as lines:
        first = json.loads(lines.readline())
    if first.get("type") != "session_meta":
        raise ValueError(f"{rollout}:1: not a session_meta line")
    return first["payload"]


def resume_codex(
    codex: Path,
    rollout: Path,
    tmp: Path,
    server: OpenAIServer,
    prompt: str = "continue",
    compact_limit: int = 1_000_000_000,
    extra: tuple[str, ...] = (),
    config_extra: str = "",
    features: str = "",
) -> Run:
    """Copy `rollout` into a fresh CODEX_HOME and run `codex exec resume <id> <prompt>`
    (`config_extra`: more of its `config.toml`).

    The built-in `openai` provider is kept (a rollout recorded with it cannot be
    resumed under another provider) and pointed at the server with
    `openai_base_url`; it tries a WebSocket first, which the server refuses with
    426 so it falls back to HTTP at once.
    """
    home, cwd = tmp / "home", tmp / "work"
    codex_home = home / ".codex"
    cwd.mkdir(parents=True, exist_ok=True)
    meta = codex_session_meta(rollout)
    session_id = meta["id"]
    stamp = meta["timestamp"][:19].replace(":", "-")
    day = codex_home / "sessions" / stamp[:4] / stamp[5:7] / stamp[8:10]
    day.mkdir(parents=True, exist_ok=True)
    target = day / f"rollout-{stamp}-{session_id}.jsonl"
    shutil.copyfile(rollout, target)
    config = CODEX_CONFIG.format(url=server.url, compact_limit=compact_limit, features=features)
    (codex_home / "config.toml").write_text(config + config_extra)
    env = _base_env(home, server) | {"CODEX_HOME": str(codex_home), "OPENAI_API_KEY": "fake"}
    command = [str(codex), "exec", "--skip-git-repo-check", *extra, "resume", session_id, prompt]
    return _run(command, env, cwd, target)


def codex_exec(
    codex: Path,
    tmp: Path,
    server: OpenAIServer,
    args: list[str],
    compact_limit: int,
    features: str = "",
) -> Run:
    """Run `codex exec <args>` in the CODEX_HOME under `tmp` (made on first use), with
    `features` (lines of its `[features]` table) turned on."""
    home, cwd = tmp / "home", tmp / "work"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    config = CODEX_CONFIG.format(url=server.url, compact_limit=compact_limit, features=features)
    (codex_home / "config.toml").write_text(config)
    env = _base_env(home, server) | {"CODEX_HOME": str(codex_home), "OPENAI_API_KEY": "fake"}
    run = _run([str(codex), "exec", "--skip-git-repo-check", *args], env, cwd, codex_home)
    if run.returncode != 0:
        raise RuntimeError(f"codex exec {args[0]} failed ({run.returncode}):\n{run.stderr[-3000:]}")
    return run


def codex_rollouts(tmp: Path) -> list[Path]:
    """The rollouts in the CODEX_HOME under `tmp`, oldest first."""
    return sorted((tmp / "home" / ".codex" / "sessions").rglob("rollout-*.jsonl"))


def new_codex_session(
    codex: Path,
    tmp: Path,
    server: OpenAIServer,
    prompts: list[str],
    compact_limit: int = 1_000_000_000,
    features: str = "",
) -> Path:
    """Make a fresh rollout with the real client: `codex exec` with the first prompt,
    then `codex exec resume` with each next one, all in one CODEX_HOME under `tmp`.

    The server's script decides what the model answers (texts, tool calls); a
    high `server.input_tokens` with a low `compact_limit` makes Codex compact.
    Returns the rollout Codex wrote.
    """
    before = set(codex_rollouts(tmp))
    codex_exec(codex, tmp, server, [prompts[0]], compact_limit, features)
    (rollout,) = set(codex_rollouts(tmp)) - before
    session_id = codex_session_meta(rollout)["id"]
    for prompt in prompts[1:]:
        codex_exec(codex, tmp, server, ["resume", session_id, prompt], compact_limit, features)
    return rollout


# --- Gemini CLI --------------------------------------------------------------------

# The API key auth, chosen in the settings: with GOOGLE_GEMINI_BASE_URL set and no
# choice made, 0.61.0 picks a "gateway" auth it then refuses ("Invalid auth method").
GEMINI_SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}}}


def gemini_sessions(tmp: Path) -> list[Path]:
    """The main sessions Gemini CLI wrote in the HOME under `tmp`, oldest first."""
    return sorted((tmp / "home" / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"))


def gemini_run(
    gemini: Path,
    tmp: Path,
    server: GeminiServer,
    prompt: str,
    resume: bool = False,
    extra: tuple[str, ...] = (),
) -> Run:
    """Run `gemini -p <prompt>` (with `--resume latest`: the last session of the
    project) in the HOME and project under `tmp`, against `server`; the session it
    wrote last is the run's `session`.

    A run that resumes first starts a session of its own, as every run does (a header
    and its context, in `session-<the minute>-<id8>.jsonl` of the same session id),
    then writes the resumed conversation to the file it resumed: in another minute
    that leaves a file of two lines beside the session; in the same minute both go to
    the one file (0.61.0)."""
    home, cwd = tmp / "home", tmp / "work"
    cwd.mkdir(parents=True, exist_ok=True)
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    chosen = json.loads(settings.read_text()) if settings.exists() else {}
    settings.write_text(json.dumps(chosen | GEMINI_SETTINGS))  # hooks installed kept
    env = _base_env(home, server) | {
        "GEMINI_API_KEY": "fake",
        "GOOGLE_GEMINI_BASE_URL": server.url,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "NO_COLOR": "1",
    }
    node = shutil.which("node") or "node"
    again = ("--resume", "latest") if resume else ()
    command = [node, str(gemini), *again, *extra, "-p", prompt]
    run = _run(command, env, cwd, Path())
    found = sorted(gemini_sessions(tmp), key=lambda p: p.stat().st_mtime_ns)
    return Run(run.returncode, run.stdout, run.stderr, found[-1] if found else Path())
