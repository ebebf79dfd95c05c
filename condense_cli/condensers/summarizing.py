"""Condensers that replace the forgotten middle of the view with a model-written summary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from condense_cli.condensers.base import (
    ModelCondenser,
    Result,
    check_window,
    close_over_pairs,
    forget_ids,
    require,
    size_trigger,
)
from condense_cli.condensers.prompting import format_events
from condense_cli.core.events import Condensation, Event, View
from condense_cli.core.jsonlines import encode
from condense_cli.core.text import plural

MIN_SHARE = 0.10  # forgetting less than this share of the view is not worth a model call

SUMMARY_PROMPT = """\
You keep the working memory of an AI coding agent. The events below are about to be
removed from the agent's context. Write a summary that replaces them: merge the
previous summary (if any) with what the events add, so the agent can carry on without
them. Be concrete: name files, functions, commands, test names, error messages and
decisions. Drop what no longer matters. Stay under 800 words.

Use these sections, each on its own line, in this order:
USER_CONTEXT: what the user asked for and any constraints they gave
TASK_TRACKING: the tasks identified so far, each with its status
COMPLETED: what has been done, with results
PENDING: what is left to do
CURRENT_STATE: where the work stands right now

When the work is about code, add:
CODE_STATE: files, functions and data structures that matter
TESTS: tests run, passing and failing, with their errors
CHANGES: edits made and why
DEPS: dependencies and imports touched
VERSION_CONTROL_STATUS: branch, commits, pull request
"""


@dataclass(frozen=True)
class LLMSummarizingConfig:
    max_size: int = 100
    keep_first: int = 1
    max_event_length: int = 10_000
    max_tokens: int | None = None
    llm_config: str | dict[str, Any] | None = None
    verify: bool = False
    max_fact_loss: float = 0.1

    def validate(self) -> None:
        check_window(self.max_size, self.keep_first, reserved=1)
        require(self.max_event_length >= 100, "max_event_length", "must be at least 100")
        require(
            0 <= self.max_fact_loss <= 1,
            "max_fact_loss",
            f"must be a share from 0 to 1 (got {self.max_fact_loss})",
        )
        if self.max_tokens is not None:
            require(self.max_tokens >= 100, "max_tokens", "must be at least 100")


class LLMSummarizingCondenser(ModelCondenser):
    """Rolling summary: head, the model's summary of the middle, and the newest events."""

    name = "llm"
    config_class = LLMSummarizingConfig

    # --- should I condense ---------------------------------------------------------

    def skip_reason(self, view: View) -> str | None:
        reason = size_trigger(view, self.config.max_size)
        if reason is None or self.config.max_tokens is None:
            return reason
        tokens = sum(self._tokens(view.events))
        if tokens > self.config.max_tokens:
            return None
        return f"{reason}; {tokens:,} tokens, within max_tokens {self.config.max_tokens:,}"

    # --- what do I forget ----------------------------------------------------------

    def get_condensation(self, view: View) -> Result:
        keep_first = self.config.keep_first
        events = list(view)
        tail = self._tail_length(events)
        middle = events[keep_first : max(keep_first, len(events) - tail)]
        forget = close_over_pairs(
            view, forget_ids(view, middle), forget_ids(view, events[:keep_first])
        )
        if not forget:
            return view.with_note(f"nothing to forget in a view of {plural(len(view), 'event')}")
        if len(forget) < MIN_SHARE * len(view):
            return view.with_note(
                f"only {len(forget):,} of {plural(len(view), 'event')} could be forgotten, "
                f"less than {MIN_SHARE:.0%}; not worth a summary"
            )
        previous = view.summary
        if previous is None and keep_first < len(events) and events[keep_first].is_summary:
            previous = events[keep_first]  # a summary line kept from a piped view
        if previous is not None and previous.key is not None:
            previous = None  # a summary that can be forgotten is summarised as an event
        forgotten = [e for e in events if e.key in forget]
        if self.config.verify:
            kept = [e for e in events if e.key not in forget and e is not previous]
            summary, usage = self.summarize_verified(previous, forgotten, kept)
        else:
            summary, usage = self.summarize(previous, forgotten)
        return Condensation(tuple(sorted(forget)), summary, summary_offset(view, forget), usage)

    def _tail_length(self, events: list[Event]) -> int:
        """Newest events to keep: by `max_size`, and by `max_tokens` when it is set."""
        tail: int = self.config.max_size // 2 - self.config.keep_first - 1
        if self.config.max_tokens is None:
            return tail
        counts = self._tokens(events)
        budget: int = self.config.max_tokens // 2 - sum(counts[: self.config.keep_first])
        fitting = 0
        for count in reversed(counts[self.config.keep_first :]):
            if budget - count < 0:
                break
            budget -= count
            fitting += 1
        return max(1, min(tail, fitting))

    def _tokens(self, events: list[Event]) -> list[int]:
        from condense_cli.llm.client import count_tokens

        return count_tokens(self.llm, [e.text for e in events])

    # --- the model call ------------------------------------------------------------

    def prompt(self, previous: Event | None, forgotten: list[Event], extra: str = "") -> str:
        text = previous.text if previous is not None else "(none yet)"
        return (
            f"{SUMMARY_PROMPT}\n<previous_summary>\n{text}\n</previous_summary>\n\n"
            f"<events>\n{format_events(forgotten, self.config.max_event_length)}\n</events>\n\n"
            f"{extra}Write the new summary now."
        )

    def summarize(
        self, previous: Event | None, forgotten: list[Event], extra: str = ""
    ) -> tuple[str, dict[str, Any]]:
        """Ask the model; `extra` is added to the prompt (the facts to carry)."""
        from condense_cli.llm.client import ask

        messages = [{"role": "user", "content": self.prompt(previous, forgotten, extra)}]
        options = self.request_options()
        summary, answer = ask(self.llm, messages, self.read_summary, "summary", **options)
        return summary, answer.usage()

    def summarize_verified(
        self, previous: Event | None, forgotten: list[Event], kept: list[Event]
    ) -> tuple[str, dict[str, Any]]:
        """Ask with the facts the summary must carry named; audit the answer against
        them (in the summary or the kept events), and when it lost more than
        `max_fact_loss` of them, ask once more naming the ones it lost."""
        from condense_cli.analysis.audit import check_facts, total
        from condense_cli.analysis.facts import extract

        facts = extract(forgotten)
        extra = facts_section(facts, "The summary must carry these facts of the events")
        summary, usage = self.summarize(previous, forgotten, extra)
        lost = total(check_facts(facts, [summary], kept)).lost
        asked_again = 0
        if facts and len(lost) > self.config.max_fact_loss * len(facts):
            missing = [f for f in facts if f.text in set(lost)]
            named = facts_section(missing, "A first summary lost these facts; carry each one")
            retry, more = self.summarize(previous, forgotten, extra + named)
            retry_lost = total(check_facts(facts, [retry], kept)).lost
            usage = add_usage(usage, more)
            asked_again = len(missing)
            if len(retry_lost) <= len(lost):
                summary, lost = retry, retry_lost
        usage["facts"] = {
            "total": len(facts),
            "kept": len(facts) - len(lost),
            "lost": lost,
            "asked_again_naming": asked_again,
        }
        return summary, usage

    def request_options(self) -> dict[str, Any]:
        return {}

    def read_summary(self, answer: Any) -> str:
        text = (answer.content or "").strip()
        if not text:
            raise ValueError("the answer was empty")
        return text


STATE_FIELDS: dict[str, str] = {
    "user_context": "What the user asked for and their constraints",
    "completed_tasks": "Tasks finished so far",
    "pending_tasks": "Tasks still to do",
    "current_state": "Where the work stands now",
    "files_modified": "Files created or changed",
    "function_changes": "Functions added or changed",
    "data_structures": "Data structures that matter",
    "tests_written": "Tests written",
    "tests_passing": "Tests passing",
    "failing_tests": "Tests failing",
    "error_messages": "Error messages seen",
    "branch_created": "Whether a branch was created",
    "branch_name": "The branch's name",
    "commits_made": "Commits made",
    "pr_created": "Whether a pull request was opened",
    "pr_status": "The pull request's status",
    "dependencies": "Dependencies added or changed",
    "other_relevant_context": "Anything else the agent needs",
}

STATE_TOOL = {
    "type": "function",
    "function": {
        "name": "create_state_summary",
        "description": "Record the state of the agent's work so far, one field per aspect.",
        "parameters": {
            "type": "object",
            "properties": {
                name: {"type": "string", "description": text} for name, text in STATE_FIELDS.items()
            },
            "required": list(STATE_FIELDS),
        },
    },
}


class StructuredSummaryCondenser(LLMSummarizingCondenser):
    """As `llm`, but the model fills the fields of a forced `create_state_summary` call."""

    name = "structured_summary"

    def prompt(self, previous: Event | None, forgotten: list[Event], extra: str = "") -> str:
        text = previous.text if previous is not None else "(none yet)"
        return (
            "You keep the working memory of an AI coding agent. The events below are about to "
            "be removed from its context. Call create_state_summary with the state of the work, "
            "merging the previous summary with what the events add. Be concrete (files, "
            "functions, commands, errors); write an empty string for a field with nothing to say."
            f"\n\n<previous_summary>\n{text}\n</previous_summary>\n\n"
            f"<events>\n{format_events(forgotten, self.config.max_event_length)}\n</events>"
            + (f"\n\n{extra.rstrip()}" if extra else "")
        )

    def request_options(self) -> dict[str, Any]:
        return {
            "tools": [STATE_TOOL],
            "tool_choice": {"type": "function", "function": {"name": "create_state_summary"}},
        }

    def read_summary(self, answer: Any) -> str:
        calls = [c for c in answer.tool_calls if c["name"] == "create_state_summary"]
        if not calls:
            raise ValueError("the answer did not call create_state_summary")
        try:
            fields = orjson.loads(calls[0]["arguments"] or "")
        except orjson.JSONDecodeError:
            raise ValueError("the create_state_summary arguments are not valid JSON") from None
        if not isinstance(fields, dict):
            raise ValueError("the create_state_summary arguments are not an object")
        return render_state(fields)


MAX_NAMED_FACTS = 200  # facts named in one prompt


def facts_section(facts: list[Any], title: str) -> str:
    """`<facts>` for a prompt: one `- kind: fact` line each, instructions first."""
    if not facts:
        return ""
    from condense_cli.analysis.facts import KINDS

    ordered = sorted(facts, key=lambda f: KINDS.index(f.kind))[:MAX_NAMED_FACTS]
    lines = "\n".join(f"- {f.kind}: {f.text}" for f in ordered)
    return (
        f"<facts>\n{title} (paths, commands, test ids and errors as written):\n"
        f"{lines}\n</facts>\n\n"
    )


def add_usage(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """The usage of two model calls together."""
    costs = [u.get("cost") for u in (first, second)]
    return {
        "model": second.get("model") or first.get("model"),
        "prompt_tokens": first.get("prompt_tokens", 0) + second.get("prompt_tokens", 0),
        "completion_tokens": first.get("completion_tokens", 0) + second.get("completion_tokens", 0),
        "cost": sum(c for c in costs if c) if any(costs) else None,
    }


def render_state(fields: dict[str, Any]) -> str:
    """The structured summary as readable sections, one per non-empty field."""
    sections = []
    for name in STATE_FIELDS:
        value = fields.get(name)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            value = encode(value).decode()
        sections.append(f"{name.upper()}:\n{value.strip()}")
    if not sections:
        raise ValueError("every create_state_summary field was empty")
    return "\n\n".join(sections)


def summary_offset(view: View, forget: set[int]) -> int:
    """Where a new summary goes: after the events kept before the first forgotten one.

    That is `keep_first`, unless the head ends with an action whose observation the
    pair rule kept: then the summary follows the observation instead of splitting
    the pair. A summary this one replaces does not count.
    """
    offset = 0
    for event in view:
        if event.key is not None and event.key in forget:
            break
        if not (event.is_summary and event.key is None):
            offset += 1
    return offset
