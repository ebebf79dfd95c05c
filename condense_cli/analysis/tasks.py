"""The agent's task list as it stands: which of the tasks it wrote are not done."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from condense_cli.analysis.facts import TASK_LISTS, Fact, task_facts
from condense_cli.core.events import Event

# A task in one of these states is no longer on the agent's plate (Claude Code, Codex
# and Gemini CLI say `completed`, OpenHands `done`; Gemini CLI also `cancelled`, and
# Claude Code's TaskUpdate `deleted`).
TASKS_DONE = frozenset({"completed", "done", "cancelled", "canceled", "deleted"})


def open_tasks(events: Iterable[Event]) -> list[Fact]:
    """The tasks the agent's task list holds not done after `events`, in its order,
    each seen in the call that last wrote it. A call with a whole list (`TASK_LISTS`)
    replaces the list; Claude Code's TaskCreate adds one task, numbered 1, 2, ... as
    the client numbers them, and its TaskUpdate sets a task's status by that number."""
    tasks: dict[str, tuple[Fact, str]] = {}  # a task's number -> (the task, its status)
    created = 0
    for event in events:
        call = event.tool_call if event.is_action else None
        if call is None:
            continue
        name, arguments = call
        listed = next(
            (arguments[k] for k in TASK_LISTS if isinstance(arguments.get(k), list)), None
        )
        if listed is not None:
            tasks = {}
            for number, task in enumerate(listed, 1):
                for fact in task_facts([task]):
                    tasks[str(number)] = (replace(fact, seen=event.id), str(task.get("status", "")))
        elif name == "TaskCreate":
            created += 1
            for fact in task_facts([arguments]):
                tasks[str(created)] = (replace(fact, seen=event.id), "pending")
        elif name == "TaskUpdate":
            task, status = str(arguments.get("taskId")), arguments.get("status")
            if task in tasks and isinstance(status, str):
                tasks[task] = (tasks[task][0], status)
    return [fact for fact, status in tasks.values() if status.lower() not in TASKS_DONE]
