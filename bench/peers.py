"""Peers timed beside `condense`: other tools that read the same log.

ccusage reports what Claude Code and Codex sessions cost, from the usage they record;
`condense cost` answers the same question, so the two are timed side by side on the
same file, in the same rounds: `cost --by session` (reading the log, `--no-cache`, and
from condense's cache) beside `ccusage claude session` or `ccusage codex session`.

ccusage is its native binary, of the version the tests pin (`tests/clients/install.py`,
which installs it from the npm registry with the clients). It reads the session from a
folder made for the benchmark that holds a hard link to the generated log (it follows
no symbolic link), through `CLAUDE_CONFIG_DIR` or `CODEX_HOME`, with `--offline` (its
bundled prices: no network).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make `tests` importable
    sys.path.insert(0, str(ROOT))

from tests.clients.install import TOOLS, ClientsUnavailable, ensure_clients  # noqa: E402

CCUSAGE_VERSION = TOOLS["ccusage"]
AGENTS = {"claude-code": "claude", "codex": "codex"}  # the dialects ccusage reads


@dataclass(frozen=True)
class Peer:
    """A peer's command on one log: what it is, what it runs, in what environment."""

    label: str  # what the report calls it
    argv: list[str]
    env: dict[str, str]


def ccusage_binary() -> Path | str:
    """ccusage's native binary, installed with the clients when missing; or why it
    cannot be had."""
    try:
        return ensure_clients().ccusage
    except ClientsUnavailable as exc:
        return str(exc)


def ccusage_on(log: Path, dialect: str, data: Path, binary: Path) -> Peer:
    """ccusage's per-session report of one session of `dialect`, from a folder of its
    own that holds only a hard link to the log (a copy across file systems)."""
    agent = AGENTS[dialect]
    home = data / "peers" / f"ccusage-{log.stem}"
    if agent == "claude":
        folder, variable = home / "projects" / "bench", "CLAUDE_CONFIG_DIR"
        name = log.name
    else:  # Codex keeps its rollouts by day, each named for its start
        folder, variable = home / "sessions" / "2026" / "11" / "28", "CODEX_HOME"
        name = f"rollout-2026-11-28T00-00-00-{log.stem}.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    if not target.exists() or not os.path.samefile(target, log):
        target.unlink(missing_ok=True)
        try:
            os.link(log, target)
        except OSError:
            shutil.copyfile(log, target)
    env = dict(os.environ)
    env[variable] = str(home)
    env["TZ"] = "UTC"
    argv = [str(binary), agent, "session", "--json", "--offline"]
    return Peer(f"ccusage {CCUSAGE_VERSION} {agent} session --json --offline", argv, env)
