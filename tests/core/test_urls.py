"""Names of logs that are URLs: `file://` is a path on this machine, a web server's
folder is read as a tree is, and a scheme condense does not read is refused before
anything reaches out (issue 55, items 10, 11 and 17)."""

from __future__ import annotations

import functools
import shutil
import threading
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import corpus_copy


def test_a_file_uri_is_the_path_it_names(tmp_path: Path, proc: Callable[..., Any]) -> None:
    log = corpus_copy("codex", tmp_path / "my logs")
    by_path = proc("view", log, "-f", "jsonl")
    by_uri = proc("view", log.as_uri(), "-f", "jsonl")  # spaces escaped as %20
    assert by_uri.returncode == 0 and by_uri.stdout == by_path.stdout
    listed = proc("stats", "--no-tokens", "-f", "csv", (tmp_path / "my logs").as_uri())
    assert listed.returncode == 0 and b"\n1 log," in listed.stdout  # and "1 log", not "1 logs"
    other = proc("view", "file://example.org/x.jsonl")
    assert other.returncode == 2 and b"names a file on this machine" in other.stderr


@pytest.mark.parametrize(
    "url", ["ftp://127.0.0.1:9/x.jsonl", "github://org:repo@/x.jsonl", "reference://x"]
)
def test_a_scheme_condense_does_not_read_is_refused_at_once(
    url: str, proc: Callable[..., Any]
) -> None:
    done = proc("check", url, timeout=30)
    assert done.returncode == 2, done.stderr
    scheme = url.partition("://")[0]
    assert f"condense does not read {scheme}:// URLs" in done.stderr.decode()
    assert b"this is a bug" not in done.stderr


@pytest.fixture
def web(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A web server on 127.0.0.1 serving a folder with its listings, as
    `python -m http.server` does."""
    root = tmp_path / "site"
    root.mkdir()
    handler = functools.partial(QuietHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_folder_on_a_web_server_is_read_as_a_tree_is(
    web: tuple[str, Path], tmp_path: Path, proc: Callable[..., Any]
) -> None:
    address, root = web
    tree = root / "run"
    tree.mkdir()
    corpus_copy("codex", tree)
    v1 = corpus_copy("openhands-v1", tmp_path / "v1")
    shutil.copytree(v1, tree / "v1" / v1.name)
    url = f"{address}/run/"
    for command in (("check",), ("stats", "--no-tokens", "-f", "csv")):
        remote = proc(command[0], url, *command[1:])
        local = proc(command[0], tree, *command[1:])
        assert remote.returncode == local.returncode == 0, remote.stderr
        said = remote.stdout + remote.stderr
        assert b"http://http://" not in said and b"cannot read" not in said
        assert remote.stdout == local.stdout.replace(str(tree).encode(), url.rstrip("/").encode())
