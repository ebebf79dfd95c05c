"""Peers timed beside `condense`: other tools that read the same log.

ccusage summarises Claude Code sessions' token usage; `condense stats --no-tokens`
answers the same question of a session (its usage, with its counts and condensations),
so the two are timed side by side on the same file, in the same rounds.

ccusage is pinned to 18.0.11, the last release that is plain JavaScript and runs on
Node 20 (19 needs Node 22; 20 ships a native binary per platform). It installs from
the npm registry into the user's cache, once, and reads the session through
`CLAUDE_CONFIG_DIR`, a folder made for the benchmark that holds only a link to the
generated log, with `--offline` (its bundled prices: no network).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

CCUSAGE_VERSION = "18.0.11"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "condense" / "peers"
INSTALL_TIMEOUT = 600


@dataclass(frozen=True)
class Peer:
    """A peer's command on one log: what it is, what it runs, in what environment."""

    label: str  # what the report calls it
    argv: list[str]
    env: dict[str, str]


def ccusage_binary(cache: Path | None = None) -> Path | str:
    """ccusage's launcher, installed when missing; or why it cannot be had."""
    prefix = (cache or CACHE) / f"ccusage-{CCUSAGE_VERSION}"
    binary = prefix / "node_modules" / ".bin" / "ccusage"
    if binary.exists():
        return binary
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        return "node and npm are not on PATH"
    prefix.mkdir(parents=True, exist_ok=True)
    try:
        package = f"ccusage@{CCUSAGE_VERSION}"
        subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", package],
            check=True,
            capture_output=True,
            timeout=INSTALL_TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"npm install ccusage@{CCUSAGE_VERSION} failed: {exc}"
    return binary if binary.exists() else f"npm installed no {binary}"


def ccusage_on(log: Path, data: Path, binary: Path) -> Peer:
    """ccusage's per-session report of one Claude Code session, from a folder of its own
    that holds only a link to the log."""
    home = data / "peers" / f"ccusage-{log.stem}"
    project = home / "projects" / "bench"
    project.mkdir(parents=True, exist_ok=True)
    link = project / log.name
    if not link.is_symlink() or link.resolve() != log.resolve():
        link.unlink(missing_ok=True)
        link.symlink_to(log.resolve())
    env = dict(os.environ)
    env["CLAUDE_CONFIG_DIR"] = str(home)
    argv = [str(binary), "session", "--json", "--offline"]
    return Peer(f"ccusage {CCUSAGE_VERSION} session --json --offline", argv, env)
