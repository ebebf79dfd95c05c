"""`condense audit`: the facts a condensation forgot, and where each was kept."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.analysis.audit import audit_log
from condense_cli.analysis.carrying import Memory, unique_names
from condense_cli.analysis.facts import Fact, extract
from condense_cli.analysis.tasks import open_tasks
from condense_cli.core.events import Event
from condense_cli.dialects import read_log
from tests import stories
from tests.dialects.openhands_v1.test_replay import conversations
from tests.dialects.openhands_v1.test_replay import corpus as v1_corpus

TABLE = """\
  kind            facts  kept  in summary  in view  lost  kept %
  contradictions      0     0           0        0     0       -
  pins                0     0           0        0     0       -
  constraints         1     1           1        0     0   100.0
  tasks               0     0           0        0     0       -
  instructions        1     0           0        0     1     0.0
  errors              2     0           0        0     2     0.0
  commands            1     0           0        0     1     0.0
  paths               2     1           1        0     1    50.0
  urls                1     0           0        0     1     0.0
  all                 8     2           2        0     6    25.0
"""
CURRENT_TABLE = """\
  kind            facts  kept  in summary  in view  lost  kept %
  contradictions      0     0           0        0     0       -
  pins                0     0           0        0     0       -
  constraints         1     1           1        0     0   100.0
  tasks               0     0           0        0     0       -
  instructions        1     0           0        0     1     0.0
  errors              2     0           0        0     2     0.0
  commands            1     0           0        0     1     0.0
  paths               2     2           1        1     0   100.0
  urls                1     0           0        0     1     0.0
  all                 8     3           2        1     5    37.5
"""
LOST = [  # ranked: what the user said, what failed, how it ran, what it touched
    {"kind": "instructions", "fact": "Fix the bug in src/app.py"},
    {"kind": "errors", "fact": "failing test tests/test_app.py::test_add"},
    {"kind": "errors", "fact": "AssertionError: 1 != 2"},
    {"kind": "commands", "fact": "pytest tests/test_app.py"},
    {"kind": "paths", "fact": "/repo/tests/test_app.py"},  # the command's, after its cd
    {"kind": "urls", "fact": "https://docs.python.org/3"},
]


def without_from(lost: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in lost.items() if k != "from"}


def test_audit_text_lists_each_kind_and_the_lost_facts_instructions_first(
    tmp_path: Path, cli
) -> None:
    log = stories.write("openhands-v0", tmp_path / "s.jsonl")
    result = cli("audit", log)
    assert result.exit_code == 0, result.output
    # a user's clause names the event it is from (here #1)
    said = {"instructions": " (#1)"}
    lost = "".join(f"    {x['kind']}: {x['fact']}{said.get(x['kind'], '')}\n" for x in LOST)
    current_lost = "".join(
        f"    {x['kind']}: {x['fact']}{said.get(x['kind'], '')}\n"
        for x in LOST
        if x["kind"] != "paths"
    )
    assert result.stdout == (
        f"audit of {log} (openhands-v0): 1 condensation\n\n"
        "condensation 1 (id 9): forgot 8 events, summary of 53 chars\n"
        f"{TABLE}  lost (6):\n{lost}\n"
        "current view: 8 events forgotten in all, summaries of 53 chars; every forgotten "
        f"fact looked up in it\n{CURRENT_TABLE}  lost (5):\n{current_lost}\n"
        f"overall (1 condensation):\n{TABLE}"
    )


@pytest.mark.parametrize("dialect", stories.able("audits", condensed=True))
def test_every_dialect_gives_the_same_audit(dialect: str, tmp_path: Path, cli) -> None:
    log = stories.write(dialect, tmp_path / "s.jsonl")
    result = cli("audit", log, "--format", "json")
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout_bytes)
    assert data["dialect"] == dialect
    [condensation] = data["condensations"]
    assert condensation["forgotten_events"] == 8
    assert condensation["summary_chars"] == len(stories.SUMMARY)
    assert [without_from(x) for x in condensation["lost"]] == LOST
    assert condensation["lost"][0]["from"] is not None  # the user's message
    assert condensation["kinds"]["paths"] == {
        "facts": 2,
        "kept": 1,
        "in_summary": 1,
        "in_view": 0,
        "lost": 1,
        "kept_percent": 50.0,
    }
    assert condensation["all"] == {
        "facts": 8,
        "kept": 2,
        "in_summary": 2,
        "in_view": 0,
        "lost": 6,
        "kept_percent": 25.0,
    }
    current = data["current_view"]
    assert current["kinds"]["paths"]["in_view"] == 1  # DONE names tests/test_app.py
    assert [without_from(x) for x in current["lost"]] == [x for x in LOST if x["kind"] != "paths"]
    assert data["overall"]["all"] == condensation["all"]


@pytest.mark.parametrize("dialect", stories.able("audits", condensed=True))
def test_the_step_views_agree_with_replay(dialect: str, tmp_path: Path) -> None:
    log = stories.write(dialect, tmp_path / "s.jsonl")
    with read_log(str(log), upto=None) as replay:  # a step's views are read while it is open
        [step] = list(replay.condensation_steps())
        texts = [e.text for e in replay.view()]
        assert step.before[0].text == stories.FIRST
        assert len(step.before) == 8
        assert [e.text for e in step.after] == [stories.SUMMARY]
        assert step.summary == stories.SUMMARY
    assert texts == [stories.SUMMARY, stories.DONE]


def test_fail_under_exits_1_and_says_what_fell_short(tmp_path: Path, proc) -> None:
    log = stories.write("openhands-v0", tmp_path / "s.jsonl")
    done = proc("audit", log, "--fail-under", "20", "--fail-under", "paths=80")
    assert done.returncode == 1
    assert done.stderr.decode() == "fail-under: paths: 50.0% of 2 facts kept, under 80%\n"
    assert done.stdout.decode().startswith(f"audit of {log} (openhands-v0): 1 condensation\n")
    assert proc("audit", log, "--fail-under", "25", "--fail-under", "tasks=100").returncode == 0


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "files=80",
            "Error: --fail-under 'files=80': 'files' is not a kind of fact\n"
            "Hint: give a percentage, or KIND=PERCENT with KIND one of: contradictions, pins, "
            "constraints, tasks, instructions, errors, commands, paths, urls\n",
        ),
        (
            "paths=120",
            "Error: --fail-under 'paths=120': the percentage must be a number from 0 to 100\n",
        ),
    ],
)
def test_a_bad_threshold_is_a_usage_error(value: str, message: str, tmp_path: Path, cli) -> None:
    log = stories.write("openhands-v0", tmp_path / "s.jsonl")
    result = cli("audit", log, "--fail-under", value)
    assert result.exit_code == 2
    assert result.stderr == message
    assert result.stdout == ""


def test_a_log_without_condensations_has_nothing_to_lose(tmp_path: Path, cli) -> None:
    log = stories.write("codex", tmp_path / "s.jsonl", condensed=False)
    result = cli("audit", log, "--fail-under", "100")
    assert result.exit_code == 0
    assert result.stdout == (  # one line, not a table of noughts
        f"audit of {log} (codex): 0 condensations\n\n"
        "nothing forgotten: every event is in the view, so no fact was lost\n"
    )


def test_several_logs_add_up(tmp_path: Path, cli) -> None:
    logs = [stories.write(d, tmp_path / f"{d}.jsonl") for d in ("openhands-v0", "claude-code")]
    result = cli("audit", *logs, "-f", "json")
    data = orjson.loads(result.stdout_bytes)
    assert [log["dialect"] for log in data["logs"]] == ["openhands-v0", "claude-code"]
    assert data["overall"]["all"]["facts"] == 16
    text = cli("audit", *logs).stdout
    assert text.endswith("all 2 logs (2 condensations):\n" + _doubled(TABLE))


def _doubled(table: str) -> str:
    """TABLE with every count doubled (two logs of the same story), the shares kept."""
    head, *rows = table.splitlines()
    out = [head]
    for row in rows:
        kind, *numbers, share = row.split()
        counts = [f"{2 * int(n.replace(',', '')):,}" for n in numbers]
        widths = [len(part) for part in re.findall(r"\s+\S+", row[len(f"  {kind}") :])]
        cells = [f"{c:>{w}}" for c, w in zip([*counts, share], widths, strict=True)]
        out.append(f"  {kind}" + "".join(cells))
    return "\n".join(out) + "\n"


# --- facts --------------------------------------------------------------------------------


class Bare(Event):
    """An event that answers "none" to every fact; the tests' events say what they need."""

    source = ""  # type: ignore[assignment]
    is_action = True  # type: ignore[assignment]
    type = ""  # type: ignore[assignment]
    text = ""  # type: ignore[assignment]
    tool_call_id = None  # type: ignore[assignment]
    is_summary = False  # type: ignore[assignment]
    tool_call = None  # type: ignore[assignment]

    def masked(self, text: str) -> Event:
        return self


class Call(Bare):
    """A tool call (or its result) with just the facts extraction reads."""

    def __init__(
        self,
        key: int,
        tool: str | None,
        arguments: dict[str, Any],
        text: str = "",
        exit_code: int | None = None,
        cause: int | None = None,
    ) -> None:
        super().__init__({}, key, None)
        self._tool, self._arguments, self._text = tool, arguments, text
        self._exit, self._cause = exit_code, cause

    @property
    def is_action(self) -> bool:
        return self._tool is not None

    @property
    def tool_call(self) -> tuple[str, dict[str, Any]] | None:
        return (self._tool, self._arguments) if self._tool is not None else None

    @property
    def text(self) -> str:
        return self._text

    @property
    def exit_code(self) -> int | None:
        return self._exit

    @property
    def cause(self) -> int | None:
        return self._cause


def shown(facts: list[Fact]) -> list[tuple[str, str]]:
    return [(f.kind, f.text) for f in facts]


def test_task_lists_of_every_tracker_are_tasks() -> None:
    facts = extract(
        [
            Call(1, "task_tracker", {"task_list": [{"title": "Write tests", "status": "todo"}]}),
            Call(2, "TodoWrite", {"todos": [{"content": "Ship it", "status": "pending"}]}),
            Call(3, "update_plan", {"plan": [{"step": "Refactor", "status": "done"}]}),
            Call(4, "task_tracking", {"task_list": [{"id": "T-7", "title": "x"}]}),
        ]
    )
    assert shown(facts) == [
        ("tasks", "Write tests"),
        ("tasks", "Ship it"),
        ("tasks", "Refactor"),
        ("tasks", "x"),  # by its title, which a summary would name, not its id
    ]


def test_the_tasks_not_done_are_those_the_newest_list_leaves_open() -> None:
    todos = [
        {"content": "Port the parser", "status": "completed"},
        {"content": "Delete the Python sources", "status": "in_progress"},
    ]
    gemini = [{"description": "Write the changelog", "status": "cancelled"}]
    assert shown(
        open_tasks(
            [
                Call(
                    1, "TodoWrite", {"todos": [{"content": "Port the parser", "status": "pending"}]}
                ),
                Call(2, "TodoWrite", {"todos": todos}),  # the whole list, again
            ]
        )
    ) == [("tasks", "Delete the Python sources")]
    assert open_tasks([Call(1, "write_todos", {"todos": gemini})]) == []
    assert (
        open_tasks([Call(1, "update_plan", {"plan": [{"step": "Ship", "status": "completed"}]})])
        == []
    )
    tracker = {
        "task_list": [
            {"title": "Phase 1", "status": "done"},
            {"title": "Phase 2", "status": "todo"},
        ]
    }
    assert shown(open_tasks([Call(3, "task_tracker", tracker)])) == [("tasks", "Phase 2")]
    # Claude Code's task tools: created one by one, numbered from 1, updated by number
    created = open_tasks(
        [
            Call(1, "TaskCreate", {"subject": "Set up the project", "description": "uv init"}),
            Call(2, "TaskCreate", {"subject": "Fetch the data", "description": "90 days"}),
            Call(3, "TaskUpdate", {"taskId": "1", "status": "completed"}),
            Call(4, "TaskUpdate", {"taskId": "9", "status": "completed"}),  # none such
        ]
    )
    assert shown(created) == [("tasks", "Fetch the data")]
    assert created[0].seen == 2


def test_errors_failing_tests_of_several_runners_and_non_zero_exits() -> None:
    output = (
        "FAIL: test_sum (tests.test_math.MathTest)\n--- FAIL: TestParse\n"
        "test parser::tests::empty ... FAILED\n"
    )
    facts = extract(
        [
            Call(1, "bash", {"command": "make check\nmore"}),
            Call(2, None, {}, output, exit_code=2, cause=1),
            Call(3, "bash", {"command": "grep x y.txt"}),
            Call(4, None, {}, "\nno such file\n\n", exit_code=2, cause=3),
        ],
        everything=True,  # grep is exploration, counted only when asked for
    )
    assert shown(facts) == [
        ("commands", "make check"),
        ("errors", "failing test test_sum (tests.test_math.MathTest)"),
        ("errors", "failing test TestParse"),
        ("errors", "failing test parser::tests::empty"),
        ("commands", "grep x y.txt"),
        ("paths", "y.txt"),
        ("errors", "exit 2 from grep x y.txt: no such file"),
    ]
    assert facts[1].keys == ("test_sum (tests.test_math.mathtest)", "test_sum")
    assert facts[-1].keys == ("no such file", "grep x y.txt")


def test_paths_are_compared_as_paths() -> None:
    facts = [
        Fact("paths", ("/w/src/app.py",), ""),
        Fact("paths", ("/w/lib/util.py",), ""),
        Fact("paths", ("/w/a/__init__.py",), ""),
        Fact("paths", ("/w/b/__init__.py",), ""),
    ]
    names = unique_names(facts)
    memory = Memory.of(["Edited `src/app.py:12`, util.py and ./x/__init__.py."])
    assert [memory.carries(f, names) for f in facts] == [True, True, False, False]
    assert not Memory.of(["app.py"]).carries(facts[0], names - {"app.py"})


def test_an_instruction_in_other_words_counts_only_in_a_summary() -> None:
    fact = extract([_user("Please rename the parser module quickly")])[0]
    summary = Memory.of(["The user wants the parser module renamed, please."], loose=True)
    view = Memory.of(["The user wants the parser module renamed, please."])
    assert summary.carries(fact) and not view.carries(fact)


def _user(text: str) -> Event:
    class User(Bare):
        source = "user"  # type: ignore[assignment]
        type = "message"  # type: ignore[assignment]

        @property
        def text(self) -> str:
            return text

    return User({}, 1, None)


# --- the corpus: what OpenHands' own summariser kept ----------------------------------------

# The README's table (`condense audit ../shared/corpus/openhands-v1/*/`).
CORPUS_OVERALL = {
    "contradictions": (1, 0, 0),
    "pins": (0, 0, 0),
    "constraints": (0, 0, 0),
    "instructions": (0, 0, 0),
    "paths": (327, 184, 46),
    "commands": (170, 40, 21),
    "errors": (136, 76, 12),
    "urls": (2, 0, 0),
    "tasks": (62, 14, 48),
}


def test_the_v1_corpus_audit_is_the_readme_table() -> None:
    v1_corpus("")  # skips (fails under CI) without the corpus
    found = {kind: [0, 0, 0] for kind in CORPUS_OVERALL}
    condensations = 0
    for folder in conversations():
        with read_log(str(folder)) as replay:
            audit = audit_log(replay)
        condensations += len(audit.condensations)
        for kind, tally in audit.overall.items():
            found[kind][0] += tally.facts
            found[kind][1] += tally.in_summary
            found[kind][2] += tally.in_view
    assert condensations == 45
    assert {k: tuple(v) for k, v in found.items()} == CORPUS_OVERALL
