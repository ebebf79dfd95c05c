"""What a client hands a hook, at its worst (issue 55, item 14): the hooks fail open at
once, fetch nothing, print nothing raw, and read a session the client is still
writing as it was before the line being written."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import corpus_copy


def hook(proc: Callable[..., Any], which: str, transcript: str, **more: Any) -> Any:
    data = {"session_id": "s", "transcript_path": transcript, "cwd": "/", **more}
    return proc("hook", which, input=json.dumps(data).encode(), timeout=30)


@pytest.mark.parametrize("which", ["pre-compact", "post-compact"])
def test_a_transcript_being_written_is_read_to_its_last_whole_line(
    which: str, tmp_path: Path, proc: Callable[..., Any]
) -> None:
    """A torn last line (the client mid-write) gave no briefing at all."""
    session = corpus_copy("claude-code", tmp_path)
    whole = hook(proc, which, str(session), trigger="manual")
    with session.open("ab") as out:
        out.write(b'{"type":"user","uuid":"u-being-writ')
    torn = hook(proc, which, str(session), trigger="manual")
    assert torn.returncode == whole.returncode == 0
    assert torn.stdout == whole.stdout and len(whole.stdout) > 200
    assert torn.stderr == whole.stderr and b"goes on" not in torn.stderr


def test_a_transcript_that_is_no_regular_file_is_never_opened(
    tmp_path: Path, proc: Callable[..., Any]
) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)  # opening it would block until the client's timeout
    done = hook(proc, "pre-compact", str(fifo), trigger="auto")
    assert done.returncode == 0 and done.stdout == b""
    assert b"is not a regular file; the compaction goes on" in done.stderr


def test_a_transcript_url_is_not_fetched(tmp_path: Path, proc: Callable[..., Any]) -> None:
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/session.jsonl"
        done = hook(proc, "post-compact", url)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0 and asked == []
    assert b"is not a file on this machine" in done.stderr


def test_escapes_in_a_transcript_path_never_reach_the_terminal(
    tmp_path: Path, proc: Callable[..., Any]
) -> None:
    session = corpus_copy("claude-code", tmp_path)
    odd = tmp_path / "\x1b]0;owned\x07\x1b[31mred.jsonl"
    shutil.copy(session, odd)
    for path in (odd, tmp_path / "\x1b[2Jmissing.jsonl"):
        done = hook(proc, "pre-compact", str(path), trigger="manual")
        assert done.returncode == 0 and b"\x1b" not in done.stderr + done.stdout
