"""The rules that keep `audit`'s lost facts the ones that matter: one fact per file,
folders carried by their files, commands by their core, no error from `grep`'s
exit 1 or pip's footer, Claude Code's tasks, announced URLs."""

from __future__ import annotations

from typing import Any

from condense_cli.analysis.carrying import Memory, unique_names
from condense_cli.analysis.commands import core_command
from condense_cli.analysis.facts import Fact, extract
from tests.analysis.test_audit import Call


def kinds(events: list[Call], kind: str) -> list[str]:
    return [f.text for f in extract(events) if f.kind == kind]


def test_a_command_is_its_core_and_its_paths_are_resolved_against_its_cd() -> None:
    assert core_command(
        "cd /repo && source .venv/bin/activate && pytest -x tests/ 2>&1 | tail -20"
    ) == (
        "/repo",
        "pytest -x tests/",
    )
    events = [Call(1, "bash", {"command": "cd /repo && python src/app.py | head -5"})]
    assert kinds(events, "commands") == ["python src/app.py"]
    assert kinds(events, "paths") == ["/repo/src/app.py"]


def test_a_file_written_two_ways_is_one_fact_and_its_bare_name_carries_it() -> None:
    events = [
        Call(1, "edit", {"path": "/workspace/src/lexer.py"}),
        Call(2, "bash", {"command": "python -m pytest src/lexer.py"}),
    ]
    facts = [f for f in extract(events) if f.kind == "paths"]
    assert [f.text for f in facts] == ["/workspace/src/lexer.py"]
    summary = Memory.of(["Edited lexer.py to skip tabs."], loose=True)
    assert summary.carries(facts[0], unique_names(facts))


def test_a_folder_is_carried_by_a_file_under_it() -> None:
    [folder] = [f for f in extract([Call(1, "view", {"path": "/tmp/x/pylint/lint"})])]
    assert Memory.of(["Found pylint/lint/expand_modules.py"]).carries(folder)
    assert not Memory.of(["Found pylint/checkers/base.py"]).carries(folder)


def test_exit_1_from_a_search_is_no_error_nor_is_a_footer_a_key() -> None:
    searched = [
        Call(1, "bash", {"command": "cd /repo && grep -rn needle src | head"}),
        Call(2, None, {}, "", exit_code=1, cause=1),
    ]
    assert kinds(searched, "errors") == []
    installed = [
        Call(1, "bash", {"command": "pip install nothing-such"}),
        Call(
            2,
            None,
            {},
            "ERROR: No matching distribution found for nothing-such\n"
            "[notice] A new release of pip is available\n"
            "note: This error originates from a subprocess",
            exit_code=1,
            cause=1,
        ),
    ]
    [error] = [f for f in extract(installed) if f.kind == "errors"]
    assert error.key == "error: no matching distribution found for nothing-such"


def test_claude_code_task_tools_give_tasks() -> None:
    events = [
        Call(1, "TaskCreate", {"subject": "Fix the lexer", "description": "tabs"}),
        Call(2, "TaskUpdate", {"taskId": "3", "status": "completed"}),
    ]
    assert kinds(events, "tasks") == ["Fix the lexer", "3"]


def test_urls_an_output_announces_and_not_a_readme_badge() -> None:
    output = (
        "  Local:   http://localhost:8501\n"
        "[![build](https://img.shields.io/badge.svg)](https://ci.example/run)\n"
        "Deployed to https://app.example.com/preview\n"
    )
    events = [Call(1, "bash", {"command": "npm run dev"}), Call(2, None, {}, output, cause=1)]
    assert kinds(events, "urls") == [
        "http://localhost:8501",
        "https://app.example.com/preview",
    ]


def test_a_path_is_split_from_the_text_around_it_in_another_script() -> None:
    [read] = extract([Call(1, "Read", {"file_path": "/Users/me/weave/doc.md"})])
    assert Memory.of(["請閱讀/Users/me/weave/doc.md, 這是我的 project"]).carries(read)


def test_exploration_commands_count_only_when_asked_for() -> None:
    events = [
        Call(1, "bash", {"command": "cd /repo && ls -la src"}),
        Call(2, "bash", {"command": "git status"}),
        Call(3, "bash", {"command": "python -c 'import numpy; print(numpy.__version__)'"}),
        Call(4, "bash", {"command": "python -m pytest tests/test_lexer.py"}),
    ]
    assert kinds(events, "commands") == ["python -m pytest tests/test_lexer.py"]
    assert len([f for f in extract(events, everything=True) if f.kind == "commands"]) == 4


def test_a_summary_that_contradicts_its_events_is_found() -> None:
    from condense_cli.analysis.audit import contradictions

    events = [
        Call(1, "edit", {"command": "str_replace", "path": "/repo/src/lexer.py"}),
        Call(2, "edit", {"command": "str_replace", "path": "/repo/reproduce_issue.py"}),
        Call(3, "bash", {"command": "cd /repo && python -m pytest tests"}),
        Call(4, None, {}, "===== 3 passed in 0.2s =====", exit_code=0, cause=3),
    ]
    found = contradictions("TESTS: No test execution yet\nCHANGES: None yet", events)
    assert [f.text for f in found] == [
        "the summary says 'CHANGES: None', but 1 call it replaced changed /repo/src/lexer.py",
        "the summary says 'No test execution', but the events it replaced ran tests that "
        "reported results",
    ]
    assert [f.source for f in found] == [1, 3]
    assert contradictions("CHANGES: fixed the lexer", events) == []
    # a repro script is not a change to the code; a run that reported nothing is no run
    assert contradictions("CHANGES: None", events[1:2]) == []
    assert (
        contradictions("No tests run", [events[2], Call(4, None, {}, "ImportError", cause=3)]) == []
    )


# --- what the labelled corpus set taught (tests/labels/lost_facts.json) ---------------


def fact(events: list[Call], kind: str) -> Fact:
    [found] = [f for f in extract(events) if f.kind == kind]
    return found


def summary(text: str) -> Memory:
    return Memory.of([text], loose=True)


def test_no_command_from_an_inline_script_or_a_key_press() -> None:
    events = [
        Call(1, "bash", {"command": 'python -c "\nimport sys\nprint(sys.path)\n"'}),
        Call(2, "bash", {"command": 'cp a.json b.json && python3 -c "\nprint(1)\n"'}),
        Call(3, "bash", {"command": "cat > t.py << 'EOF'\nprint(1)\nEOF"}),
        Call(4, "bash", {"command": "C-c"}),
        Call(5, None, {}, "^C", exit_code=130, cause=4),
    ]
    assert kinds(events, "commands") == ["cp a.json b.json"]
    assert kinds(events, "errors") == []


def test_exit_1_from_a_search_at_the_end_of_a_pipeline_is_no_error() -> None:
    command = 'git log --oneline -- src/app.py | grep -i "discover\\|ignore"'
    events = [Call(1, "bash", {"command": command}), Call(2, None, {}, "", exit_code=1, cause=1)]
    assert kinds(events, "errors") == []
    checked = "sort f | python check.py"
    failed = [Call(1, "bash", {"command": checked}), Call(2, None, {}, "", 1, cause=1)]
    assert kinds(failed, "errors") == [f"exit 1 from {checked}"]


def test_an_install_a_script_and_a_command_carried_in_a_summarys_words() -> None:
    installs = [Call(1, "bash", {"command": "pip install --quiet scipy && echo ok"})]
    install = fact(installs, "commands")
    assert summary("scipy was missing: installed it with pip.").carries(install)
    assert not summary("scipy is used for pagerank.").carries(install)
    pinned = fact([Call(1, "bash", {"command": 'pip install "numpy<2"'})], "commands")
    assert not summary("Installation failed: NumPy version conflicts.").carries(pinned)
    script = fact([Call(1, "bash", {"command": "python -u src/fetch.py"})], "commands")
    assert summary("The fetcher (weave/src/fetch.py) is running.").carries(script)
    other = fact([Call(1, "bash", {"command": "/opt/micromamba/bin/python t.py"})], "commands")
    assert not summary("Test script: t.py").carries(other)  # the interpreter matters
    helped = fact([Call(1, "bash", {"command": "python -m pylint --help"})], "commands")
    assert summary("Pylint can be run via: python -m pylint").carries(helped)
    assert not summary("git add data/x.json").carries(
        fact([Call(1, "bash", {"command": "git add -A"})], "commands")
    )


def test_an_error_carried_by_what_it_quotes_or_by_a_sentence_on_setting_up() -> None:
    def error(output: str, command: str = "python app.py", code: int | None = None) -> Fact:
        events = [Call(1, "bash", {"command": command}), Call(2, None, {}, output, code, cause=1)]
        return fact(events, "errors")

    mapping = error("ImportError: cannot import name 'Mapping' from 'collections' (/x.py)")
    assert summary("Fixed collections.Mapping import in sessions.py").carries(mapping)
    assert not summary("Fixed the sessions module").carries(mapping)
    setup = error("ModuleNotFoundError: No module named 'setuptools.dep_util'")
    assert summary("DEPS: setuptools compatibility issues blocking the build").carries(setup)
    assert summary("dep_util was removed from newer setuptools").carries(setup)
    assert not summary("Build issues encountered with astropy").carries(setup)  # no package
    assert not summary("Create a test case to reproduce the issue").carries(setup)
    built = error("error: see above", command="pip install -e .", code=1)
    assert summary("Installation attempted but failed").carries(built)
    tests = error("2 failed", command="python -m pytest tests/ -v", code=1)
    assert summary("TESTS: build issues preventing test execution").carries(tests)
    assert not summary("Create a test case to reproduce the issue").carries(tests)


def test_a_task_carried_in_other_words_and_a_module_is_no_file() -> None:
    events = [Call(1, "TaskCreate", {"subject": "Compute Steer pillar (with weak-signal flag)"})]
    task = fact(events, "tasks")
    assert summary("Steer pillar marked 'weak signal'; flag shown in the panel").carries(task)
    assert not summary("Ship and Lift are done").carries(task)
    modules = [Call(1, "bash", {"command": "cd /repo && python -c 'import astropy.io.ascii.rst'"})]
    assert kinds(modules, "paths") == []


def test_within_a_kind_what_matters_more_comes_first() -> None:
    from condense_cli.analysis.audit import Audit, check_facts

    events = [
        Call(1, "view", {"path": "/repo/README.md"}),
        Call(2, "str_replace_based_edit_tool", {"command": "str_replace", "path": "/repo/app.py"}),
        Call(3, "bash", {"command": "python -m pylint --list-msgs"}),
        Call(4, "bash", {"command": "pip install scipy"}),
        Call(5, "bash", {"command": "make build"}),
        Call(6, None, {}, "ImportError: no module named x", exit_code=2, cause=5),
        Call(7, "bash", {"command": "python check.py"}),
        Call(8, None, {}, "ValueError: bad input", exit_code=1, cause=7),
        Call(9, "bash", {"command": "make build"}),
        Call(10, None, {}, "built", exit_code=0, cause=9),
    ]
    kinds = check_facts(extract(events), [], [])
    lost = Audit("c", 1, 1, len(events), None, kinds).lost()
    assert [f.text for f in lost if f.kind == "paths"][:2] == ["/repo/app.py", "/repo/README.md"]
    commands = [f.text for f in lost if f.kind == "commands"]
    assert commands.index("pip install scipy") < commands.index("python -m pylint --list-msgs")
    errors = [f.text for f in lost if f.kind == "errors"]
    assert errors == ["ValueError: bad input", "ImportError: no module named x"]  # resolved last


def test_each_event_is_asked_for_its_tool_call_once() -> None:
    """A dialect may parse an event's call on every ask (OpenHands V1 parses its
    arguments' JSON): extraction asks each event once, for its facts and its command."""
    asked: list[int] = []

    class Asked(Call):
        @property
        def tool_call(self) -> tuple[str, dict[str, Any]] | None:
            asked.append(self.key)
            return super().tool_call

    events = [
        Asked(1, "str_replace_editor", {"command": "str_replace", "path": "/w/a.py"}),
        Asked(2, "bash", {"command": "cd /w && pytest -q tests/test_a.py"}),
        Asked(3, None, {}, "FAILED tests/test_a.py::test_x - ValueError: bad", 1, cause=2),
        Asked(4, "bash", {"command": "pytest -q tests/test_a.py"}),
        Asked(5, None, {}, "1 passed", 0, cause=4),
    ]
    facts = extract(events)
    assert sorted(asked) == [1, 2, 3, 4, 5]
    assert [(f.kind, f.text, f.rank, f.seen) for f in facts] == [
        ("paths", "/w/a.py", 0, 1),
        ("commands", "pytest -q tests/test_a.py", 0, 2),
        ("paths", "/w/tests/test_a.py", 1, 2),
        ("errors", "failing test tests/test_a.py::test_x", 1, 3),
    ]
