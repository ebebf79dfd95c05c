"""Logs on an object store: a real S3-compatible server (moto's) on 127.0.0.1, read
through fsspec and s3fs, as a user's bucket of evaluation runs would be."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CONDENSE, CORPUS, require_corpus

pytestmark = pytest.mark.slow
SHARED = CORPUS.parent
BUCKET = "agent-runs"


def require(module: str) -> None:
    try:
        __import__(module)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"{module} is not installed, and CI is set: the store tests must run")
        pytest.skip(f"{module} is not installed (pip install -e '.[test]')")


@pytest.fixture(scope="module")
def store() -> Iterator[dict[str, str]]:
    """An S3 server on 127.0.0.1 with an empty bucket; the environment that reaches it."""
    require("moto")
    require("s3fs")
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    try:
        client(env).create_bucket(Bucket=BUCKET)
        yield env
    finally:
        server.stop()


def client(env: dict[str, str]) -> Any:
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )


def upload(env: dict[str, str], folder: Path, prefix: str) -> None:
    s3 = client(env)
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            s3.upload_file(str(path), BUCKET, f"{prefix}/{path.relative_to(folder).as_posix()}")


def condense(env: dict[str, str], *args: object) -> subprocess.CompletedProcess[bytes]:
    command = [str(CONDENSE), *map(str, args)]
    return subprocess.run(command, capture_output=True, timeout=120, env={**os.environ, **env})


def test_a_bucket_is_read_as_a_tree_is(store: dict[str, str], tmp_path: Path) -> None:
    corpus = require_corpus(SHARED)
    tree = tmp_path / "run"
    (tree / "claude").mkdir(parents=True)
    shutil.copy(corpus / "claude-code" / "FundWise.claude-session.jsonl", tree / "claude")
    shutil.copy(corpus / "codex" / "FundWise.codex-session.jsonl", tree)
    shutil.copy(corpus / "openhands" / "ponylang-ponyc-4588.jsonl", tree)
    for name in sorted(os.listdir(corpus / "openhands-v1"))[:3]:
        shutil.copytree(corpus / "openhands-v1" / name, tree / "v1" / name)
    (tree / "notes.md").write_text("# not a log\n")
    upload(store, tree, "run-1")
    url = f"s3://{BUCKET}/run-1"
    for command in (
        ("check",),
        ("stats", "--no-tokens", "-f", "csv"),
        ("audit", "-f", "jsonl"),
        ("view", "-f", "jsonl"),
    ):
        remote = condense(store, command[0], url, *command[1:])
        local = condense(store, command[0], tree, *command[1:])
        assert remote.returncode == local.returncode == 0, remote.stderr
        # the same output, each log named by its URL instead of its path
        assert remote.stdout == local.stdout.replace(str(tree).encode(), url.encode())
        assert remote.stderr == local.stderr.replace(str(tree).encode(), url.encode())
    assert b"1 file skipped: not a session log" in remote.stderr
    one = condense(store, "view", f"{url}/codex-session.jsonl")
    assert one.returncode == 1 and one.stderr.decode().startswith(
        f"Error: {url}/codex-session.jsonl: no such object"
    )
    named = condense(store, "view", f"{url}/FundWise.codex-session.jsonl", "-f", "jsonl")
    assert (
        named.stdout
        == condense(store, "view", tree / "FundWise.codex-session.jsonl", "-f", "jsonl").stdout
    )
    refused = condense(store, "request", f"{url}/FundWise.codex-session.jsonl")
    assert refused.returncode == 1
    assert b"a log on a store is read-only here" in refused.stderr


def test_search_over_a_bucket_finds_what_it_finds_in_the_tree(
    store: dict[str, str], tmp_path: Path
) -> None:
    """`search` over a bucket of sessions: the hits of the same tree, each session named
    by its URL; the next search answers from the index."""
    corpus = require_corpus(SHARED)
    tree = tmp_path / "run"
    tree.mkdir()
    shutil.copy(corpus / "codex" / "FundWise.codex-session.jsonl", tree)
    shutil.copy(corpus / "claude-code" / "FundWise.claude-session.jsonl", tree)
    upload(store, tree, "run-search")
    url = f"s3://{BUCKET}/run-search"
    env = {**store, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    remote = condense(env, "search", "zerion agent", url, "-f", "json")
    local = condense(
        {**env, "XDG_CACHE_HOME": str(tmp_path / "local")},
        "search",
        "zerion agent",
        tree,
        "-f",
        "json",
    )
    assert remote.returncode == local.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout.replace(str(tree.resolve()).encode(), url.encode())
    again = condense(env, "search", "zerion agent", url, "-f", "json")
    assert again.stdout == remote.stdout and again.stderr == remote.stderr
