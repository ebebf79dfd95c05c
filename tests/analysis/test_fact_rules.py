"""The rules that keep `audit`'s lost facts the ones that matter: one fact per file,
folders carried by their files, commands by their core, no error from `grep`'s
exit 1 or pip's footer, Claude Code's tasks, announced URLs."""

from __future__ import annotations

from condense_cli.analysis.facts import Memory, core_command, extract, unique_names
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
