"""The Ray engine on a real local cluster: a head and one worker node on 127.0.0.1,
started by the test. Its output is byte for byte the local pool's."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CONDENSE, CORPUS, lines_of, msg, require_corpus, run_action, run_obs
from tests.engines.ray_cluster import LOOPBACK

pytestmark = pytest.mark.slow
SHARED = CORPUS.parent


def require_ray() -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("Ray is not installed, and CI is set: the engine tests must run")
        pytest.skip("Ray does not install here (pip install 'condense-cli[ray]')")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A Ray cluster of two nodes on 127.0.0.1 (`ray_cluster.py`); its address."""
    require_ray()
    helper = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("ray_cluster.py"))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, **LOOPBACK},
        start_new_session=True,  # its nodes with it, should it have to be killed
    )
    try:
        assert helper.stdout is not None
        ready, _, _ = select.select([helper.stdout], [], [], 180)  # never wait forever
        assert ready, "the Ray cluster did not start within 3 minutes"
        started = json.loads(helper.stdout.readline() or b"{}")
        assert started.get("nodes") == ["127.0.0.1", "127.0.0.1"], started  # two, on loopback
        yield started["address"]
    finally:
        try:
            helper.communicate(timeout=120)  # stdin closed: the cluster shuts down
        except subprocess.TimeoutExpired:
            os.killpg(helper.pid, signal.SIGKILL)
            helper.communicate()


def v0_session(steps: int) -> bytes:
    events = [msg(0, f"task with {steps} steps")]
    for k in range(steps):
        events += [run_action(1 + 2 * k, f"make test-{k}"), run_obs(2 + 2 * k, 1 + 2 * k, "ok")]
    return lines_of(events)


def generated_tree(root: Path) -> Path:
    """About 300 logs of every dialect in the folders their clients use."""
    corpus = require_corpus(SHARED)
    for n in range(240):  # an evaluation run: a V0 log per task, of varied length
        folder = root / "eval" / f"batch-{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"task-{n:03}.jsonl").write_bytes(v0_session(1 + n % 40))
    for n in range(20):
        project = root / "claude" / f"project-{n % 3}"
        project.mkdir(parents=True, exist_ok=True)
        shutil.copy(
            corpus / "claude-code" / "FundWise.claude-session.jsonl", project / f"s{n}.jsonl"
        )
        day = root / "codex" / "2026" / "11" / f"{1 + n % 5:02}"
        day.mkdir(parents=True, exist_ok=True)
        shutil.copy(corpus / "codex" / "FundWise.codex-session.jsonl", day / f"rollout-{n}.jsonl")
    for conversation in sorted((corpus / "openhands-v1").iterdir())[:12]:
        shutil.copytree(conversation, root / "v1" / conversation.name)
    (root / "eval" / "batch-0" / "broken.jsonl").write_text('{"id": 0, "action": "message"}\nx\n')
    return root


def condense(*args: object, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    command = [str(CONDENSE), *map(str, args)]
    return subprocess.run(command, capture_output=True, timeout=300, env=env)


def test_the_ray_engine_gives_the_local_pools_output(cluster: str, tmp_path: Path) -> None:
    tree = generated_tree(tmp_path / "runs")
    env = {**os.environ, **LOOPBACK}
    for command in (
        ("check", tree),
        ("stats", tree, "--no-tokens", "-f", "csv"),
        ("audit", tree / "v1", tree / "claude", tree / "codex", "-f", "jsonl"),
        ("view", tree / "eval", "-f", "jsonl"),
    ):
        local = condense(*command, "-j", "2", env=env)
        on_ray = condense(*command, "--engine", "ray", "--address", cluster, env=env)
        assert on_ray.returncode == local.returncode, on_ray.stderr
        assert on_ray.stdout == local.stdout and on_ray.stderr == local.stderr
        assert local.stdout.count(b"\n") > 100 or command[0] == "audit"
    assert b"broken.jsonl:2" in local.stderr or b"broken.jsonl:2" in local.stdout


def test_the_ray_engine_says_what_is_wrong_with_the_cluster(tmp_path: Path) -> None:
    require_ray()
    log = tmp_path / "log.jsonl"
    log.write_bytes(v0_session(2))
    env = {**os.environ, **LOOPBACK}
    done = condense("check", log, log, "--engine", "ray", "--address", "127.0.0.1:9", env=env)
    assert done.returncode == 2
    assert done.stderr.decode().startswith(
        "Error: --engine ray: cannot join the Ray cluster at 127.0.0.1:9: Connection refused"
    )
    assert b"Traceback" not in done.stderr
    wrong = condense("check", log, "--address", "127.0.0.1:9", env=env)
    assert wrong.returncode == 2 and wrong.stderr.decode().splitlines() == [
        "Error: --address is for --engine ray",
        "Hint: see condense check --help",
    ]
