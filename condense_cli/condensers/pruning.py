"""`task_pruning`: long tool outputs cut to the lines about the task.

An output of more than `max_lines` lines, once `attention_window` newer events have
come after it, keeps its first `keep_head` and last `keep_tail` lines, every line that
names an error, and every line that shares a word with the user's task or the newest
`recent_turns` messages of the user and the agent (their content words, as the audit
reads them); each run of lines cut becomes one marker that says how many went. An
output is cut once, with the words of that moment, and stays so: the prompt cache is
lost once an output, not at every step. A condenser of its own that composes in a
pipeline (before a summariser, it makes the view shorter to summarise).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from condense_cli.analysis.clauses import content
from condense_cli.condensers.base import Condenser, Result, require, task_position
from condense_cli.core.events import Event, View
from condense_cli.core.text import plural

ERROR_LINE = re.compile(r"error|exception|traceback|fail|panic|fatal", re.I)  # always kept


@dataclass(frozen=True)
class TaskPruningConfig:
    max_lines: int = 40  # an output longer than this is pruned
    keep_head: int = 5
    keep_tail: int = 10
    attention_window: int = 4  # the newest events left whole
    recent_turns: int = 3  # the newest messages whose words count beside the task's

    def validate(self) -> None:
        require(self.max_lines >= 1, "max_lines", "must be at least 1")
        require(self.keep_head >= 0, "keep_head", "must be 0 or more")
        require(self.keep_tail >= 0, "keep_tail", "must be 0 or more")
        require(self.attention_window >= 0, "attention_window", "must be 0 or more")
        require(self.recent_turns >= 0, "recent_turns", "must be 0 or more")


class TaskPruningCondenser(Condenser):
    """Cuts long tool outputs to the lines about the task (see the module)."""

    name = "task_pruning"
    config_class = TaskPruningConfig

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.pruned: dict[object, Event] = {}  # an output's key -> its pruned copy
        self.seen: set[object] = set()  # the outputs already looked at (long or not)

    def condense(self, view: View) -> Result:
        events = view.events
        settled = events[: max(0, len(events) - self.config.attention_window)]
        new = [e for e in settled if e.key is not None and e.key not in self.seen and _output(e)]
        if new:
            terms = self._terms(view)
            for event in new:
                self.seen.add(event.key)
                cut = prune(event.text, terms, self.config)
                if cut is not None:
                    self.pruned[event.key] = event.masked(cut)
        if not self.pruned:
            return view.with_note(f"no output of more than {self.config.max_lines} lines to cut")
        pruned = self.pruned
        return view.with_events([pruned.get(e.key, e) if e.key is not None else e for e in events])

    def _terms(self, view: View) -> set[str]:
        """The content words of the user's task and of the newest turns: the user's
        messages and the agent's actions (what it said, the commands it ran)."""
        words: set[str] = set()
        task = task_position(view)
        if task is not None:
            words |= content(view.events[task].text)
        turns = [
            e for e in view.events if e.is_instruction or (e.is_action and e.source == "agent")
        ]
        for event in turns[max(0, len(turns) - self.config.recent_turns) :]:
            words |= content(event.text)
        return words


def _output(event: Event) -> bool:
    """A tool's output: an observation that answers a tool call or an action."""
    return (
        not event.is_action
        and not event.is_summary
        and (event.tool_call_id is not None or event.cause is not None)
    )


def _acts(event: Event) -> bool:
    return event.is_action and event.source == "agent"


def prune(text: str, terms: set[str], config: TaskPruningConfig) -> str | None:
    """`text` cut to its head, its tail, its error lines and the lines that share a
    word with `terms`, each run of lines cut marked; None when it is short enough or
    nothing would go."""
    lines = text.splitlines()
    if len(lines) <= config.max_lines:
        return None
    last = len(lines) - config.keep_tail
    kept = [
        i < config.keep_head
        or i >= last
        or bool(ERROR_LINE.search(line))
        or bool(terms and content(line) & terms)
        for i, line in enumerate(lines)
    ]
    for start, end in _runs(kept):  # a short run is not worth its marker
        if end - start < MIN_RUN:
            kept[start:end] = [True] * (end - start)
    if all(kept):
        return None
    out: list[str] = []
    cut = 0
    for line, keep in zip(lines, kept, strict=True):
        if keep:
            if cut:
                out.append(_marker(cut))
                cut = 0
            out.append(line)
        else:
            cut += 1
    if cut:
        out.append(_marker(cut))
    pruned = "\n".join(out)
    return pruned if len(pruned) <= WORTH * len(text) else None


MIN_RUN = 3  # fewer lines in a row are kept: the marker would be as long
WORTH = 0.8  # an output is cut only when it loses a fifth of its characters or more


def _marker(lines: int) -> str:
    return f"[... {plural(lines, 'line')} cut: not about the task ...]"


def _runs(kept: list[bool]) -> list[tuple[int, int]]:
    """Where each run of lines to cut starts and ends."""
    found, start = [], None
    for index, keep in enumerate([*kept, True]):
        if not keep and start is None:
            start = index
        elif keep and start is not None:
            found.append((start, index))
            start = None
    return found
