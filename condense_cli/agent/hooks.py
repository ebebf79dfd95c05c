"""The clients' hooks around their own compaction (read off Claude Code 2.1.330 and
Codex 0.169.0, proven with the real clients in `tests/clients/test_*_hooks.py`, now
against 2.1.332 and 0.171.0).

Claude Code:
- `PreCompact` gets `{session_id, transcript_path, cwd, trigger, custom_instructions}`
  on stdin. What a hook prints on stdout (exit 0) is added to the instructions of the
  client's summariser; a hook that exits 2 blocks the compaction, its stderr the
  reason (the client then goes on uncompacted, or compacts anyway when the request
  could not go out otherwise).
- `SessionStart` with the matcher `compact` runs right after a compaction; what a
  hook gives as `hookSpecificOutput.additionalContext` is put in the context of the
  next turn. The compaction is not in the session file yet (the client writes it
  after its hooks), so what is given back is what still holds, read from the session
  as the summariser saw it.
- `PostCompact` runs after that with the new summary (`compact_summary`); what a hook
  prints is shown to the user, not to the model: condense says there what the summary
  left out.

Codex (hooks from `$CODEX_HOME/hooks.json` or `.codex/hooks.json`): `SessionStart`
with the source `compact` adds `additionalContext` to the next request, as Claude
Code's does. Its `PreCompact` can neither add to the summariser's instructions nor
block the compaction, and its `PostCompact` is not given the summary, so only the
`SessionStart` hook is installed for Codex.

Gemini CLI (hooks in `~/.gemini/settings.json` or `./.gemini/settings.json`, timeouts
in milliseconds; read off 0.61.0): its `PreCompress` fires before every request, a
compression or not, and what it prints is not read, so it can neither add to the
snapshot's instructions nor block; nothing runs after a compression. `BeforeAgent`
runs before each prompt, with the session as it was before the prompt is written, and
its `hookSpecificOutput.additionalContext` joins the prompt (as `<hook_context>`). So
`post-compact` is installed there: when a compression came after the last message
the user typed (`Replay.unheard_compaction`), it gives back what the snapshot left
out; otherwise it prints nothing.

Hooks fail open: an error in `condense` prints nothing on stdout and exits 0, so the
client's turn goes on as if the hook were not there. They read the session, never
write it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PRE_COMPACT = "pre-compact"
POST_COMPACT = "post-compact"
# client -> event -> (matcher, our command's last words)
HOOKS = {
    "claude-code": {
        "PreCompact": ("", f"hook {PRE_COMPACT}"),
        "SessionStart": ("compact", f"hook {POST_COMPACT}"),
        "PostCompact": ("", f"hook {POST_COMPACT}"),
    },
    "codex": {"SessionStart": ("compact", f"hook {POST_COMPACT}")},
    "gemini-cli": {"BeforeAgent": ("", f"hook {POST_COMPACT}")},
}
TIMEOUT = 60  # seconds the client gives each of our hooks
TIMEOUT_UNITS = {"gemini-cli": 1000}  # a client that counts them in milliseconds
BLOCK = 2  # the exit that blocks a compaction


@dataclass(frozen=True)
class Answer:
    """What a hook prints and how it exits."""

    stdout: str = ""
    stderr: str = ""
    code: int = 0


def hook_input(raw: bytes) -> dict[str, Any]:
    """The hook's JSON from stdin; ValueError when it is not an object with a
    transcript path that is a regular file on this machine (never a URL to fetch, a
    FIFO to block on, or standard input)."""
    import stat

    from condense_cli.core.remote import is_url

    data = json.loads(raw.decode("utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("transcript_path"), str):
        raise ValueError("the hook's input has no transcript_path")
    path = data["transcript_path"]
    if is_url(path) or path == "-":
        raise ValueError(f"transcript_path {path!r} is not a file on this machine")
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError as exc:
        raise ValueError(f"transcript_path {path!r}: {exc.strerror}") from None
    if not regular:
        raise ValueError(f"transcript_path {path!r} is not a regular file")
    return data


def session_context(text: str, event: str = "SessionStart") -> str:
    """The answer of a `SessionStart` hook (or Gemini CLI's `BeforeAgent`) that puts
    `text` in the next turn."""
    output = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    return json.dumps(output, ensure_ascii=False)


# --- settings.json ---------------------------------------------------------------------


def settings_path(client: str, project: bool, home: Path, cwd: Path) -> Path:
    """Where `client` reads hooks: the user's (`~/.claude/settings.json`, Codex's
    `hooks.json` in its home, `~/.gemini/settings.json`) or the project's (`./.claude`,
    `./.codex`, `./.gemini`)."""
    from condense_cli.agent.sessions import codex_home

    if client == "gemini-cli":
        return (cwd if project else home) / ".gemini" / "settings.json"
    if client == "codex":
        return (cwd / ".codex" if project else codex_home(home)) / "hooks.json"
    return (cwd if project else home) / ".claude" / "settings.json"


def ours(hook: Any) -> bool:
    """Whether a hook entry is one `condense hook install` wrote: a command that runs
    condense (a `condense` program, or `python -m condense_cli`) with `hook pre-compact`
    (and `--guard`) or `hook post-compact` as all its arguments. Another tool's hook
    that ends in the same words is not ours."""
    import shlex

    command = hook.get("command") if isinstance(hook, dict) else None
    if not isinstance(command, str):
        return False
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    if argv[:1] and Path(argv[0]).name == "condense":
        rest = argv[1:]
    elif len(argv) >= 3 and argv[1:3] == ["-m", "condense_cli"]:
        rest = argv[3:]
    else:
        return False
    return rest in (
        ["hook", PRE_COMPACT],
        ["hook", PRE_COMPACT, "--guard"],
        ["hook", POST_COMPACT],
    )


def with_hooks(
    path: Path, settings: dict[str, Any], client: str, condense: str, guard: bool
) -> dict[str, Any]:
    """`settings` with our hooks in (any earlier ones of ours replaced), the rest as
    it was; `condense` is how to run it (`install.condense_command`)."""
    merged = without_hooks(path, settings)
    hooks = dict(merged.get("hooks") or {})
    for event, (matcher, words) in HOOKS[client].items():
        command = f"{condense} {words}"
        if guard and words.endswith(PRE_COMPACT):
            command += " --guard"
        timeout = TIMEOUT * TIMEOUT_UNITS.get(client, 1)
        entry = {"type": "command", "command": command, "timeout": timeout}
        hooks[event] = [*(hooks.get(event) or []), {"matcher": matcher, "hooks": [entry]}]
    return merged | {"hooks": hooks}


def without_hooks(path: Path, settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` without the hooks of ours (and a group or event left empty by
    that); everything else as it was. ConfigError when `hooks` is not shaped as the
    clients read it (an object of lists of groups), so nothing is guessed."""
    from condense_cli.core.errors import ConfigError

    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict) or not all(
        isinstance(groups, list) and all(isinstance(g, dict) for g in groups)
        for groups in hooks.values()
    ):
        raise ConfigError(
            f"{path}: expected 'hooks' to be an object of lists of hook groups",
            hint="fix the file by hand first: condense will not guess what it meant",
        )
    kept: dict[str, Any] = {}
    for event, groups in hooks.items():
        left = []
        for group in groups:
            entries = group.get("hooks")
            if not isinstance(entries, list) or not any(ours(h) for h in entries):
                left.append(group)
            elif others := [h for h in entries if not ours(h)]:
                left.append(group | {"hooks": others})
        if left:
            kept[event] = left
    result = dict(settings)
    if kept:
        result["hooks"] = kept
    else:
        result.pop("hooks", None)
    return result
