"""Many logs: trees searched for logs of every dialect, and one table across them."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import orjson
import pytest

from condense_cli.dialects.discovery import find_logs
from tests.conftest import CORPUS, require_corpus

SHARED = CORPUS.parent  # ../shared/corpus


def rows_of(text: str) -> list[dict[str, str]]:
    """The rows of a CSV table (the totals last)."""
    return list(csv.DictReader(io.StringIO(text)))


def corpus_tree(tmp_path: Path) -> Path:
    """A tree of one log of each dialect (copied from the corpus), nested, with files
    that are no logs and links in and out of it."""
    corpus = require_corpus(SHARED)
    root = tmp_path / "runs"
    (root / "claude" / "project").mkdir(parents=True)
    (root / "codex" / "2026" / "11").mkdir(parents=True)
    shutil.copy(
        corpus / "claude-code" / "FundWise.claude-session.jsonl", root / "claude" / "project"
    )
    shutil.copy(corpus / "codex" / "FundWise.codex-session.jsonl", root / "codex" / "2026" / "11")
    shutil.copy(corpus / "openhands" / "ponylang-ponyc-4588.jsonl", root / "v0.jsonl")
    conversation = corpus / "openhands-v1" / "0535c419f44a4e248c72e40c77a06a32"
    shutil.copytree(conversation, root / "eval" / conversation.name)
    (root / "README.md").write_text("# notes\n")
    (root / "data.jsonl").write_text('{"unrelated": true}\n')
    outside = tmp_path / "outside.jsonl"
    shutil.copy(root / "v0.jsonl", outside)
    (root / "escape.jsonl").symlink_to(outside)
    (root / "again.jsonl").symlink_to(root / "v0.jsonl")
    return root


def test_a_tree_is_searched_for_logs_of_every_dialect(tmp_path: Path) -> None:
    root = corpus_tree(tmp_path)
    found = find_logs([str(root)])
    assert [Path(p).relative_to(root).as_posix() for p in found.logs] == [
        "claude/project/FundWise.claude-session.jsonl",
        "codex/2026/11/FundWise.codex-session.jsonl",
        "eval/0535c419f44a4e248c72e40c77a06a32",
        "v0.jsonl",
    ]
    assert found.says() == [
        "1 file skipped: a link inside the tree",
        "1 file skipped: a link out of the tree",
        "2 files skipped: not a session log",
    ]
    codex = find_logs([str(root)], "codex").logs
    assert codex == [str(root / "codex" / "2026" / "11" / "FundWise.codex-session.jsonl")]
    # a file or a conversation folder is a log as given, a missing name too (reading says)
    single = [str(root / "v0.jsonl"), str(root / "eval" / "0535c419f44a4e248c72e40c77a06a32")]
    assert find_logs(single).logs == single
    assert find_logs(["nope.jsonl"]).logs == ["nope.jsonl"]


def test_check_and_audit_take_a_tree(tmp_path: Path, cli, proc) -> None:
    root = corpus_tree(tmp_path)
    checked = proc("check", root)
    assert checked.returncode == 0, checked.stderr
    said = checked.stderr.decode()
    assert "4 logs ok (claude-code, codex, openhands-v0, openhands-v1" in said
    assert "2 files skipped: not a session log" in said
    audit = json.loads(cli("audit", root, "-f", "json").stdout)
    assert len(audit["logs"]) == 4 and audit["overall"]["all"]["facts"] > 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert proc("check", empty).returncode == 1


def test_a_notice_every_conversation_gets_is_said_once(cli) -> None:
    corpus = require_corpus(SHARED)
    said = cli("check", corpus / "openhands-v1").stderr
    assert said.count("replayed as the") == 1
    assert "28 logs replayed as the last-summary SDK (Sep 2025) showed them" in said


def test_stats_gives_a_row_per_log_and_the_totals(tmp_path: Path, cli, proc) -> None:
    root = corpus_tree(tmp_path)
    rows = rows_of(cli("stats", root, "--no-tokens", "-f", "csv").stdout)
    assert [r["dialect"] for r in rows] == [
        "claude-code",
        "codex",
        "openhands-v1",
        "openhands-v0",
        "",
    ]
    total = rows[-1]
    assert total["log"] == "4 logs"
    assert int(total["events"]) == sum(int(r["events"]) for r in rows[:-1])
    assert int(total["forgotten"]) == 296 and int(total["condensations"]) == 7
    data = orjson.loads(cli("stats", root, "--no-tokens", "-f", "json").stdout_bytes)
    assert [r["log"] for r in data["logs"]] == [r["log"] for r in rows[:-1]]
    assert data["total"]["saved"] == sum(r["saved"] for r in data["logs"])
    lines = cli("stats", root, "--no-tokens", "-f", "jsonl").stdout.splitlines()
    assert len(lines) == 5 and json.loads(lines[-1])["total"]["log"] == "4 logs"
    text = proc("stats", root, "--no-tokens").stdout.decode().splitlines()
    assert text[0].split()[:4] == ["log", "dialect", "model", "events"]
    assert text[-1].startswith("4 logs") and set(text[-2]) <= {"-", " "}
    # one log: its own tables, as before
    assert "by type" in cli("stats", root / "v0.jsonl", "--no-tokens").stdout


def test_a_log_that_cannot_be_read_fails_the_table_not_the_others(tmp_path: Path, cli) -> None:
    root = corpus_tree(tmp_path)
    (root / "broken.jsonl").write_text('{"id": 1, "action": "message"}\nnot json\n')
    done = cli("stats", root, "--no-tokens", "-f", "csv")
    assert done.exit_code == 1
    assert "broken.jsonl:2" in done.stderr and "1 of 5 logs could not be read" in done.stderr
    assert len(rows_of(done.stdout)) == 5  # 4 rows and the total


def test_audit_gives_a_row_per_conversation(cli) -> None:
    corpus = require_corpus(SHARED)
    done = cli("audit", corpus / "openhands-v1", "-f", "csv")
    rows = rows_of(done.stdout)
    assert len(rows) == 29 and rows[-1]["log"] == "28 logs"
    assert (rows[-1]["facts"], rows[-1]["lost"]) == ("698", "257")  # the README's table
    assert sum(int(r["condensations"]) for r in rows[:-1]) == 45
    lines = cli("audit", corpus / "openhands-v1", "-f", "jsonl").stdout.splitlines()
    assert json.loads(lines[0])["commands_lost"] == int(rows[0]["commands_lost"])


def test_rows_grouped_by_dialect_add_up(cli) -> None:
    corpus = require_corpus(SHARED)
    rows = rows_of(cli("stats", corpus, "--no-tokens", "-f", "csv", "--group-by", "dialect").stdout)
    assert [r["log"] for r in rows] == [
        "claude-code (2 logs)",
        "codex (2 logs)",
        "openhands-v1 (28 logs)",
        "openhands-v0 (7 logs)",
        "39 logs",
    ]
    assert int(rows[-1]["events"]) == sum(int(r["events"]) for r in rows[:-1])
    audit = rows_of(cli("audit", corpus, "--group-by", "dialect", "-f", "csv").stdout)
    assert audit[2]["log"] == "openhands-v1 (28 logs)" and audit[2]["lost"] == "257"
    projects = cli("stats", corpus / "codex", "--no-tokens", "-f", "csv", "--group-by", "project")
    assert "/Users/akash/Desktop/new (1 log)" in projects.stdout  # the rollout's own cwd


def test_every_number_of_jobs_gives_the_same_output(tmp_path: Path, proc) -> None:
    """Logs are worked on by a pool of processes; results come out in the logs'
    order, so the output does not depend on --jobs."""
    root = corpus_tree(tmp_path)
    (root / "broken.jsonl").write_text('{"id": 1, "action": "message"}\nnot json\n')
    for command in (
        ("check", root),
        ("stats", root, "--no-tokens", "-f", "csv"),
        ("audit", root / "eval", root / "claude", "-f", "csv"),
    ):
        one, two = proc(*command, "--jobs", "1"), proc(*command, "-j", "2")
        assert (one.returncode, one.stdout, one.stderr) == (two.returncode, two.stdout, two.stderr)
        assert one.stdout and b"Traceback" not in one.stderr
    audit = proc("audit", root, "-j", "2")  # the broken log fails the audit, as with one job
    assert audit.returncode == 1 and b"broken.jsonl:2" in audit.stderr


def test_ctrl_c_stops_the_workers_cleanly(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import time

    from tests.conftest import CONDENSE
    from tests.dialects.claude_code.test_replay import POSTHOG

    require_corpus(POSTHOG.parent)
    tree = tmp_path / "tree"
    tree.mkdir()
    for n in range(400):  # (hard links where they can be: the same bytes, no copies)
        try:
            os.link(POSTHOG, tree / f"s{n}.jsonl")
        except OSError:
            (tree / f"s{n}.jsonl").write_bytes(POSTHOG.read_bytes())
    command = [str(CONDENSE), "stats", str(tree), "-j", "2", "-f", "csv"]
    run = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    assert run.stdout is not None
    run.stdout.readline()  # the header,
    run.stdout.readline()  # then the first log's row: the pool is at work, 399 to go
    os.killpg(run.pid, signal.SIGINT)  # as a terminal's Ctrl-C reaches the whole group
    _, err = run.communicate(timeout=30)  # no worker holds the output open
    assert run.returncode == 130 and b"Traceback" not in err and b"ForkPoolWorker" not in err
    time.sleep(0.3)
    with pytest.raises(ProcessLookupError):
        os.killpg(run.pid, 0)  # nothing of the group is left


def test_view_gives_each_logs_view_named_by_its_log(tmp_path: Path, cli, proc) -> None:
    root = corpus_tree(tmp_path)
    logs = find_logs([str(root)]).logs
    one_by_one = {log: cli("view", log, "-f", "jsonl").stdout_bytes.splitlines() for log in logs}
    lines = proc("view", root, "-f", "jsonl", "-j", "2").stdout.splitlines()
    assert sum(map(len, one_by_one.values())) == len(lines) > 100
    at = 0
    for log in logs:  # in the logs' order, each event as its own view line, byte for byte
        for expected in one_by_one[log]:
            assert lines[at] == b'{"log":' + orjson.dumps(log) + b',"event":' + expected + b"}"
            at += 1
    document = orjson.loads(proc("view", root, "-f", "json").stdout)
    assert [v["log"] for v in document["logs"]] == logs
    for view in document["logs"]:
        alone = orjson.loads(cli("view", view["log"], "-f", "json").stdout_bytes)
        assert view == {"log": view["log"]} | alone
    text = cli("view", root)
    assert text.exit_code == 2
    assert text.stderr.splitlines() == [
        "Error: several logs are viewed as json or jsonl, not text",
        "Hint: see condense view --help",
    ]


def test_view_of_many_logs_stays_one_document_when_a_log_fails(tmp_path: Path, proc) -> None:
    root = corpus_tree(tmp_path)
    (root / "broken.jsonl").write_text('{"id": 1, "action": "message"}\nnot json\n')
    done = proc("view", root, "-f", "json")
    assert done.returncode == 1
    assert len(orjson.loads(done.stdout)["logs"]) == 4  # the others, in one valid document
    assert b"broken.jsonl:2" in done.stderr and b"1 of 5 logs could not be read" in done.stderr


def test_rows_grouped_by_model(cli) -> None:
    corpus = require_corpus(SHARED)
    rows = rows_of(cli("stats", corpus, "--no-tokens", "-f", "csv", "--group-by", "model").stdout)
    by_model = {r["log"]: r for r in rows}
    v1 = by_model["litellm_proxy/anthropic/claude-sonnet-4-20250514 (28 logs)"]
    assert v1["dialect"] == "openhands-v1" and v1["model"] == v1["log"].split(" (")[0]
    assert by_model["claude-opus-4-7 (2 logs)"]["dialect"] == "claude-code"
    assert {"gpt-5.5 (1 log)", "gpt-5.6-luna (1 log)"} <= set(by_model)
    # V0 names its model in each agent step's llm_metrics; the runtime tests record none
    assert by_model["openai/openrouter-llama-4-maverick (3 logs)"]["dialect"] == "openhands-v0"
    assert by_model["no model recorded (4 logs)"]["dialect"] == "openhands-v0"
    assert rows[-1]["log"] == "39 logs"


def test_a_table_writes_jsonl_and_csv_rows_as_they_come() -> None:
    from condense_cli.terminal.many import Table

    columns = (("log", "log"), ("dialect", "dialect"), ("events", "events"))
    for format in ("csv", "jsonl"):
        written: list[str] = []
        table = Table(columns, format, written.append)
        table.add({"log": "a", "dialect": "codex", "events": 3})
        assert len(written) == (2 if format == "csv" else 1)  # out before the next row
        table.add({"log": "b", "dialect": "codex", "events": None})
        table.close()
        assert written[-1] == (
            "2 logs,,3\n"
            if format == "csv"
            else '{"total":{"log":"2 logs","dialect":"","model":"","events":3}}\n'
        )
    kept: list[str] = []
    text = Table(columns, "text", kept.append)
    text.add({"log": "a", "dialect": "codex", "events": 3})
    assert kept == []  # aligned columns need every row
    text.close()
    assert kept[0].splitlines()[-1].split() == ["1", "log", "3"]


def test_a_terminal_shows_a_bar_of_the_logs_and_bytes_done(tmp_path: Path) -> None:
    import os
    import pty
    import subprocess

    from tests.conftest import CONDENSE

    root = corpus_tree(tmp_path)
    main, secondary = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    done = subprocess.run(
        [str(CONDENSE), "check", str(root), "-j", "2"],
        stdout=subprocess.PIPE,
        stderr=secondary,
        env=env,
        timeout=60,
    )
    os.close(secondary)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    assert done.returncode == 0
    import re

    assert b"checking" in shown and b"0/4 logs" in shown and b"4/4 logs" in shown
    assert re.search(rb"4/4 logs \S* ?[0-9.]+/[0-9.]+ [kM]B", shown)  # and the bytes read
    assert b"logs" not in done.stdout  # the bar is on stderr only


def test_audit_of_many_logs_goes_on_past_one_that_cannot_be_read(tmp_path: Path, proc) -> None:
    root = corpus_tree(tmp_path)
    (root / "broken.jsonl").write_text('{"id": 1, "action": "message"}\nnot json\n')
    for format in ("csv", "text", "json"):
        done = proc("audit", root, "-f", format)
        assert done.returncode == 1
        said = done.stderr.decode().splitlines()
        assert said[0].startswith(f"Error: {root / 'broken.jsonl'}:2: ")
        assert said[-1] == "1 of 5 logs could not be read"
        assert str(root / "eval").encode() in done.stdout  # the others are audited
    rows = rows_of(proc("audit", root, "-f", "csv").stdout.decode())
    assert len(rows) == 5 and rows[-1]["log"] == "4 logs"
    alone = proc("audit", root / "broken.jsonl")  # one log: its error and its exit code
    assert alone.returncode == 1 and alone.stdout == b""


def test_jobs_past_the_cores_start_no_more_workers_than_cores(tmp_path: Path, proc) -> None:
    """`--jobs 10000` over many logs started a process per log (issue 55, item 3)."""
    from condense_cli.core.pool import default_jobs

    root = corpus_tree(tmp_path)
    many = proc("stats", root, "--no-tokens", "-f", "csv", "-j", "10000")
    cores = default_jobs()
    assert many.returncode == 0, many.stderr
    assert many.stderr.decode().startswith(
        f"Note: --jobs 10,000 is more than the {cores} cores here: {cores} workers run\n"
    )
    assert many.stdout == proc("stats", root, "--no-tokens", "-f", "csv", "-j", "1").stdout


def test_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    """A `kill -9` of the command (or the OOM killer) leaves no worker behind."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import os, time\n"
        "from condense_cli.core.pool import ordered_map\n"
        "def work(x):\n"
        "    time.sleep(60)\n"
        "    return x\n"
        "with ordered_map(work, list(range(4)), 2) as results:\n"
        "    print(os.getpid(), flush=True)\n"
        "    next(results)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    children: list[int] = []
    for _ in range(50):  # the pool starts its workers
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        children = [int(c) for c in found]
        if len(children) >= 2:
            break
        time.sleep(0.1)
    assert len(children) >= 2
    os.kill(pid, signal.SIGKILL)
    parent.wait(timeout=10)
    deadline = time.monotonic() + 10
    alive = children
    while alive and time.monotonic() < deadline:
        alive = [c for c in alive if _running(c)]
        time.sleep(0.1)
    assert alive == []


def _running(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_fifo_in_a_tree_is_counted_never_opened(tmp_path: Path, proc) -> None:
    """A FIFO named `*.jsonl` hung `check` and `stats` forever (issue 55, item 5): it
    is not a regular file, so it is counted and never opened."""
    import os

    from tests.dialects.claude_code.test_replay import POSTHOG

    require_corpus(POSTHOG.parent)
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copyfile(POSTHOG, tree / "a.jsonl")
    os.mkfifo(tree / "pipe.jsonl")
    for command in (("check", tree), ("stats", tree, "--no-tokens", "-f", "csv")):
        done = proc(*command)  # (a hang fails at its time-out)
        assert done.returncode == 0, done.stderr
        assert b"1 file skipped: not a regular file (a FIFO, a socket or a device)" in done.stderr
