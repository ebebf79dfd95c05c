"""A client's interactive screen driven in tmux: keys sent, the screen read back
(for what only its UI does, such as Gemini CLI's `/rewind`)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def need_tmux() -> None:
    """Skip without tmux (`make test` installs it), except under CI, where it fails."""
    if shutil.which("tmux") is None:
        if os.environ.get("CI"):
            pytest.fail("tmux is missing, and CI is set: run `make browser`", pytrace=False)
        pytest.skip("tmux is needed to drive a client's screen (`make browser` installs it)")


class Screen:
    """One tmux session running one command."""

    def __init__(self, name: str) -> None:
        self.name = name

    def text(self) -> str:
        done = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True
        )
        return done.stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)
        time.sleep(0.3)

    def type(self, line: str) -> None:
        """Type `line`, then Enter."""
        self.keys("-l", line)
        self.keys("Enter")

    def wait(self, text: str, timeout: float = 60) -> None:
        """Until `text` is on the screen; fails with the screen otherwise."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text in self.text():
                return
            time.sleep(0.3)
        pytest.fail(f"{text!r} never came on the screen:\n{self.text()}", pytrace=False)

    def wait_gone(self, text: str, timeout: float = 60) -> None:
        """Until `text` has left the screen."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text not in self.text():
                return
            time.sleep(0.3)
        pytest.fail(f"{text!r} never left the screen:\n{self.text()}", pytrace=False)


@contextmanager
def screen(command: list[str], env: dict[str, str], cwd: Path) -> Iterator[Screen]:
    """`command` running in a fresh tmux session, 150 by 45, ended on the way out."""
    need_tmux()
    name = f"condense-{uuid.uuid4().hex[:8]}"
    line = " ".join(["env", "-i", *(f"{k}={shlex.quote(v)}" for k, v in env.items())])
    line += " " + " ".join(map(shlex.quote, command))
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "150", "-y", "45", "-c", str(cwd), line],
        check=True,
    )
    try:
        yield Screen(name)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
