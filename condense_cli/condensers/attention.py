"""A condenser that asks the model which events matter and forgets the rest."""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import zip_longest
from typing import TYPE_CHECKING, Any

import orjson

from condense_cli.condensers.base import (
    EventTokens,
    ModelCondenser,
    Result,
    check_window,
    close_over_pairs,
    fitting_tail,
    forget_ids,
    kept_head,
    require,
    size_trigger,
    token_trigger,
)
from condense_cli.condensers.prompting import format_event
from condense_cli.core.errors import CondenserError
from condense_cli.core.events import Condensation, View
from condense_cli.core.text import plural

if TYPE_CHECKING:
    from condense_cli.llm.client import Answer

EVENT_LENGTH = 2_000  # characters of each event shown to the model

RANKING_PROMPT = """\
Below are the events of an AI coding agent's session, each tagged with its id. Rank
the ids by how much the agent needs each event to take its next step, most important
first. Answer with JSON of the form {"ids": [...]}, listing only ids shown below.
"""

MODES = ("json_schema", "json_object", "text")
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


MODE_OPTIONS: dict[str, dict[str, Any]] = {
    "json_schema": {"response_format": RESPONSE_FORMAT},
    "json_object": {"response_format": {"type": "json_object"}},
    "text": {},
}


@dataclass(frozen=True)
class LLMAttentionConfig:
    max_size: int = 100
    keep_first: int = 1
    llm_config: str | dict[str, Any] | None = None
    keep_task: bool = True
    max_tokens: int | None = None  # also condense once the view holds more tokens

    def validate(self) -> None:
        check_window(self.max_size, self.keep_first)
        if self.max_tokens is not None:
            require(self.max_tokens >= 100, "max_tokens", "must be at least 100")


class LLMAttentionCondenser(ModelCondenser):
    """Keeps the head and the events the model ranks highest."""

    name = "llm_attention"
    config_class = LLMAttentionConfig
    _counts: EventTokens | None = None  # each event's tokens, once max_tokens asks

    def skip_reason(self, view: View) -> str | None:
        reason = size_trigger(view, self.config.max_size)
        limit = self.token_limit()
        if reason is None or limit is None:
            return reason
        by_tokens = token_trigger(self.counted(view.events), limit)
        return None if by_tokens is None else f"{reason}; {by_tokens}"

    def counted(self, events: list[Any]) -> list[int]:
        """Each event's tokens, with the condenser's model's tokenizer."""
        if self._counts is None:
            self._counts = EventTokens(self.llm.model)
        return self._counts.of(events)

    def get_condensation(self, view: View) -> Result:
        keep_first = self.config.keep_first
        wanted = self.config.max_size // 2 - keep_first
        limit = self.token_limit()
        if limit is not None:
            wanted = fitting_tail(self.counted(view.events), keep_first, limit[0] // 2, wanted)
        events = list(view)
        head_length = kept_head(view, keep_first, self.config.keep_task)
        head = forget_ids(view, events[:head_length])
        candidates = [e for e in events[head_length:] if e.key is not None]
        if len(candidates) <= wanted:
            return view.with_note(
                f"nothing to forget: {plural(len(candidates), 'event')} after the head, "
                f"and {wanted:,} are kept"
            )
        ranked, usage = self.rank(candidates)
        known = {e.key for e in candidates}
        keep: list[int] = []
        for event_id in ranked:
            if event_id in known and event_id not in keep and len(keep) < wanted:
                keep.append(event_id)
        for event in reversed(candidates):  # too few: fill from the newest
            if len(keep) >= wanted:
                break
            if event.key is not None and event.key not in keep:
                keep.append(event.key)
        kept = head | set(keep)
        forget = close_over_pairs(view, forget_ids(view, events) - kept, kept)
        if not forget:
            return view.with_note("nothing to forget: the model's choice keeps every event")
        return Condensation(tuple(sorted(forget)), usage=usage)

    def rank(self, candidates: list[Any]) -> tuple[list[int], dict[str, Any]]:
        """The candidates' ids, most needed first: ranked a window at a time when they do
        not fit one prompt, the windows' rankings interleaved."""
        from condense_cli.condensers.folding import Usage, next_chunk, room_for_texts

        window = self.window()
        texts = [format_event(e, EVENT_LENGTH) for e in candidates]
        budget = room_for_texts(window, RANKING_PROMPT)
        rankings: list[list[int]] = []
        usage, notes = Usage(), list[str]()
        while texts:
            chunk, texts = next_chunk(texts, budget, window.count)
            ids, answer = self.rank_window("\n".join(chunk), window.answer, notes)
            usage.add(answer)
            rankings.append(ids)
        merged = [i for place in zip_longest(*rankings) for i in place if i is not None]
        summary = usage.to_dict()
        if notes:
            summary["notes"] = list(dict.fromkeys(notes))
        return merged, summary

    def rank_window(
        self, events: str, answer_tokens: int, notes: list[str]
    ) -> tuple[list[int], Answer]:
        """One window's ranking, down the ladder of `MODES` from this model's."""
        from condense_cli.condensers.folding import LEARNED_MODES
        from condense_cli.condensers.summarizing import steps_down, why
        from condense_cli.llm.client import ask

        key = (self.llm.model, self.llm.base_url, "ranking")
        mode = LEARNED_MODES.setdefault(key, _known_mode(self.llm.model))
        while True:
            messages = [
                {"role": "user", "content": RANKING_PROMPT},
                {"role": "user", "content": events},
            ]
            last = mode == MODES[-1]
            try:
                return ask(
                    self.llm,
                    messages,
                    lambda reply, mode=mode: ids_or_none(reply.content, mode, notes),  # type: ignore[misc]
                    "ranking",
                    tries=None if last else 1,
                    max_tokens=answer_tokens,
                    **MODE_OPTIONS[mode],
                )
            except CondenserError as exc:
                if last or not steps_down(exc):
                    raise
                following = MODES[MODES.index(mode) + 1]
                notes.append(f"ranking as {following} ({mode}: {why(exc)})")
                mode = LEARNED_MODES[key] = following


def _known_mode(model: str) -> str:
    """`json_schema` unless litellm knows the model cannot follow one."""
    from condense_cli.llm.client import litellm_module

    litellm = litellm_module()
    try:
        litellm.get_model_info(model)
    except Exception:
        return "json_schema"
    return "json_schema" if litellm.supports_response_schema(model=model) else "json_object"


def ids_or_none(content: str | None, mode: str, notes: list[str]) -> list[int]:
    """`read_ids`; on the last rung, an answer that names no ids ranks nothing (the
    newest events are kept), and the run says so rather than failing after minutes."""
    if mode == MODES[-1] and content and content.strip():
        try:
            return read_ids(content, mode)
        except ValueError:
            notes.append("the model named no ids: the newest events are kept")
            return []
    return read_ids(content, mode)


def read_ids(content: str | None, mode: str = "json_schema") -> list[int]:
    """The `ids` of a `{"ids": [int]}` answer; in `text` mode, the integers in order."""
    if mode == "text":
        named = [int(n) for n in re.findall(r"(?<![\w.])\d+(?![\w.])", content or "")]
        if not named:
            raise ValueError("the answer names no ids")
        return named
    try:
        data = orjson.loads(content or "")
    except orjson.JSONDecodeError:
        raise ValueError("the answer is not JSON") from None
    ids = data.get("ids") if isinstance(data, dict) else None
    if not isinstance(ids, list):
        raise ValueError('the answer has no "ids" array')
    return [i for i in ids if isinstance(i, int) and not isinstance(i, bool)]
