"""A condenser that asks the model which events matter and forgets the rest."""

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
    kept_head,
    size_trigger,
)
from condense_cli.condensers.prompting import format_events
from condense_cli.core.events import Condensation, View
from condense_cli.core.text import plural

EVENT_LENGTH = 2_000  # characters of each event shown to the model

RANKING_PROMPT = """\
Below are the events of an AI coding agent's session, each tagged with its id. Rank
the ids by how much the agent needs each event to take its next step, most important
first. Answer with JSON of the form {"ids": [...]}, listing only ids shown below.
"""

RESPONSE_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "ImportantEventSelection",
        "schema": {
            "type": "object",
            "properties": {"ids": {"type": "array", "items": {"type": "integer"}}},
            "required": ["ids"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}


@dataclass(frozen=True)
class LLMAttentionConfig:
    max_size: int = 100
    keep_first: int = 1
    llm_config: str | dict[str, Any] | None = None

    def validate(self) -> None:
        check_window(self.max_size, self.keep_first)


class LLMAttentionCondenser(ModelCondenser):
    """Keeps the head and the events the model ranks highest."""

    name = "llm_attention"
    config_class = LLMAttentionConfig

    def skip_reason(self, view: View) -> str | None:
        return size_trigger(view, self.config.max_size)

    def get_condensation(self, view: View) -> Result:
        from condense_cli.llm.client import require_response_schema

        keep_first = self.config.keep_first
        wanted = self.config.max_size // 2 - keep_first
        events = list(view)
        head_length = kept_head(view, keep_first)
        head = forget_ids(view, events[:head_length])
        candidates = [e for e in events[head_length:] if e.key is not None]
        if len(candidates) <= wanted:
            return view.with_note(
                f"nothing to forget: {plural(len(candidates), 'event')} after the head, "
                f"and {wanted:,} are kept"
            )
        require_response_schema(self.llm)
        ranked, usage = self.rank(candidates)
        known = {e.key for e in candidates}
        keep: list[int] = []
        for event_id in ranked:
            if event_id in known and event_id not in keep and len(keep) < wanted:
                keep.append(event_id)
        for event in reversed(candidates):  # too few: fill from the newest
            if len(keep) >= wanted:
                break
            if event.key not in keep:
                keep.append(event.key)  # type: ignore[arg-type]
        kept = head | set(keep)
        forget = close_over_pairs(view, forget_ids(view, events) - kept, kept)
        if not forget:
            return view.with_note("nothing to forget: the model's choice keeps every event")
        return Condensation(tuple(sorted(forget)), usage=usage)

    def rank(self, candidates: list[Any]) -> tuple[list[int], dict[str, Any]]:
        from condense_cli.llm.client import ask

        messages = [
            {"role": "user", "content": RANKING_PROMPT},
            {"role": "user", "content": format_events(candidates, EVENT_LENGTH)},
        ]
        ids, answer = ask(
            self.llm,
            messages,
            lambda reply: read_ids(reply.content),
            "ranking",
            response_format=RESPONSE_FORMAT,
        )
        return ids, answer.usage()


def read_ids(content: str | None) -> list[int]:
    """The `ids` of a `{"ids": [int]}` answer."""
    try:
        data = orjson.loads(content or "")
    except orjson.JSONDecodeError:
        raise ValueError("the answer is not JSON") from None
    ids = data.get("ids") if isinstance(data, dict) else None
    if not isinstance(ids, list):
        raise ValueError('the answer has no "ids" array')
    return [i for i in ids if isinstance(i, int) and not isinstance(i, bool)]
