"""Install the pinned Claude Code, Codex and Gemini CLIs from the npm registry into `.clients/`,
and ccusage (the usage reporter `condense cost` is compared with).

Idempotent: when the pinned versions are already there, nothing runs. The
clients ship their native binaries inside platform packages on npm
(`@anthropic-ai/claude-code-<platform>`, `@openai/codex-<platform>`), so nothing
is downloaded from anywhere but the registry, and the binaries run without node;
Gemini CLI is one bundled script, run by node.

    python tests/clients/install.py     # install if missing, print the binaries

With `CONDENSE_CLIENTS=latest` in the environment, the newest releases on npm are
used instead, in `.clients-latest/` (`make clients-latest` refreshes them and runs
the client tests against them): the tests then say whether condense still agrees
with the clients people install today.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PINNED = {
    "@anthropic-ai/claude-code": "2.1.332",
    "@openai/codex": "0.171.0",
    "@google/gemini-cli": "0.61.0",
}
# Tools the tests compare with, pinned even with the newest clients (ccusage 20.0.26,
# the newest today, has no native binary for linux-x64 on npm)
TOOLS = {"ccusage": "20.0.24"}
LATEST = os.environ.get("CONDENSE_CLIENTS") == "latest"
PREFIX = ROOT / (".clients-latest" if LATEST else ".clients")
PINS = (dict.fromkeys(PINNED, "latest") if LATEST else PINNED) | TOOLS
INSTALL_TIMEOUT = 600


class ClientsUnavailable(RuntimeError):
    """The clients cannot be installed or found; the message says why."""


@dataclass(frozen=True)
class Clients:
    """Paths of the native client binaries, and of Gemini CLI's script (run by node)."""

    claude: Path
    codex: Path
    gemini: Path
    ccusage: Path


def installed_version(package: str, prefix: Path = PREFIX) -> str | None:
    manifest = prefix / "node_modules" / package / "package.json"
    try:
        return json.loads(manifest.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def _one(pattern: str, prefix: Path) -> Path | None:
    found = sorted(p for p in (prefix / "node_modules").glob(pattern) if p.is_file())
    return found[0] if found else None


def find_clients(prefix: Path = PREFIX) -> Clients | None:
    """The native binaries of the pinned versions, or None when not installed."""
    for package, version in PINS.items():
        installed = installed_version(package, prefix)
        if installed is None or (version != "latest" and installed != version):
            return None
    claude = _one("@anthropic-ai/claude-code-*/claude", prefix)
    codex = _one("@openai/codex-*/vendor/*/bin/codex", prefix)
    gemini = _one("@google/gemini-cli/bundle/gemini.js", prefix)
    ccusage = _one("@ccusage/ccusage-*/bin/ccusage", prefix)
    if claude is None or codex is None or gemini is None or ccusage is None:
        return None
    if not os.access(ccusage, os.X_OK):  # (npm leaves it as packed; its wrapper chmods it)
        ccusage.chmod(0o755)
    return Clients(claude=claude, codex=codex, gemini=gemini, ccusage=ccusage)


def ensure_clients(prefix: Path = PREFIX) -> Clients:
    """Install the pinned clients when missing (under a lock), then return them."""
    found = find_clients(prefix)
    if found:
        return found
    npm = shutil.which("npm")
    if npm is None:
        raise ClientsUnavailable("npm is not on PATH: install node and npm to run the clients")
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = find_clients(prefix)
        if found:
            return found
        specs = [f"{pkg}@{version}" for pkg, version in PINS.items()]
        command = [npm, "install", "--prefix", str(prefix), "--save-exact", "--prefer-offline"]
        command += ["--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=error", *specs]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise ClientsUnavailable(f"npm install took over {INSTALL_TIMEOUT}s") from exc
        if done.returncode != 0:
            raise ClientsUnavailable(f"npm install failed:\n{done.stderr.strip()}")
    found = find_clients(prefix)
    if found is None:
        raise ClientsUnavailable(
            f"npm installed {', '.join(specs)} but no native binary for this platform was found "
            f"under {prefix / 'node_modules'}"
        )
    return found


def main() -> int:
    try:
        clients = ensure_clients()
    except ClientsUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"claude {installed_version('@anthropic-ai/claude-code')}: {clients.claude}")
    print(f"codex {installed_version('@openai/codex')}: {clients.codex}")
    print(f"gemini {installed_version('@google/gemini-cli')}: {clients.gemini}")
    print(f"ccusage {installed_version('ccusage')}: {clients.ccusage}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
