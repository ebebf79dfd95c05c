"""The condenser interface and the rules every condenser keeps.

A condenser is a pure function of (view, config, model answer): it returns
either a rewritten `View` (nothing is written) or a `Condensation` to append.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from condense_cli.core.errors import ConfigError
from condense_cli.core.events import Condensation, Event, View, same_start
from condense_cli.core.text import plural

if TYPE_CHECKING:
    from condense_cli.llm.settings import LLMSettings
    from condense_cli.llm.window import Window


Result = View | Condensation
# Builds the condenser of a nested table; its second argument says where the table is.
Builder = Callable[[Any, str], "Condenser"]


class Condenser(ABC):
    """Takes a view and returns a view or a condensation."""

    name: ClassVar[str]
    config_class: ClassVar[type]

    # The input limit of the model the agent ran on (its window, as LiteLLM's table has
    # it) where the log names it (`set_agent_window`): a condenser's token trigger is
    # the smaller of it and its `max_tokens`. The summarisers (`window_always`) take it
    # without a `max_tokens` too, as the SDK's does; the others only as a cap on one.
    agent_window: int | None = None
    agent_model = ""  # (the model the window is of, for what a condenser says)
    window_always: ClassVar[bool] = False

    def __init__(self, config: Any) -> None:
        self.config = config

    def token_limit(self) -> tuple[int, str] | None:
        """The tokens past which the view is condensed, and their name: the smaller of
        `max_tokens` and the agent model's window; None when neither applies."""
        limits = []
        max_tokens = getattr(self.config, "max_tokens", None)
        if max_tokens is not None:
            limits.append((max_tokens, f"max_tokens {max_tokens:,}"))
        window = self.agent_window
        if window is not None and (max_tokens is not None or self.window_always):
            named = f"{self.agent_model}'s window in LiteLLM's table, {window:,}"
            limits.append((window, named))
        return min(limits) if limits else None

    @classmethod
    def from_config(cls, config: Any, llms: Any, build: Builder) -> Condenser:
        """Build from a validated config; `llms` resolves model settings by name and
        `build` makes a condenser of a nested table (a pipeline's stages)."""
        return cls(config)

    @abstractmethod
    def condense(self, view: View) -> Result:
        """Rewrite the view for this step, or decide what to forget."""

    def describe(self) -> dict[str, Any]:
        """The condenser's table for `condense config`, defaults filled in."""
        from condense_cli.core.tables import settings_table

        return {"type": self.name, **settings_table(self.config)}


class RollingCondenser(Condenser):
    """A condenser split into "should I condense" and "what do I forget"."""

    def condense(self, view: View) -> Result:
        reason = self.skip_reason(view)
        if reason is not None:
            return view.with_note(reason)
        return self.get_condensation(view)

    @abstractmethod
    def skip_reason(self, view: View) -> str | None:
        """Why this view is left alone, or None when it should be condensed."""

    @abstractmethod
    def get_condensation(self, view: View) -> Result:
        """What to forget; a view with a note when there is nothing to forget."""


class ModelCondenser(RollingCondenser):
    """A rolling condenser that asks a model; its config names the model by `llm_config`."""

    def __init__(self, config: Any, llm: LLMSettings) -> None:
        super().__init__(config)
        self.llm = llm
        self._window: Window | None = None

    def window(self) -> Window:
        """The model's window, learned once per run (it may ask the server), just
        before the first call: a call that would go out without a model named or
        without a key stops here, before litellm is imported to learn the window."""
        if self._window is None:
            from condense_cli.llm.client import require_key, require_model
            from condense_cli.llm.window import window_of

            require_model(self.llm)
            require_key(self.llm)
            self._window = window_of(self.llm)
        return self._window

    @classmethod
    def from_config(cls, config: Any, llms: Any, build: Builder) -> Condenser:
        return cls(config, llms.resolve(config.llm_config, "condenser"))


def model_stages(condenser: Condenser) -> list[ModelCondenser]:
    """The condensers in `condenser` (itself, or a pipeline's stages) that call a model."""
    if isinstance(condenser, ModelCondenser):
        return [condenser]
    stages: list[Condenser] = getattr(condenser, "stages", [])
    return [found for stage in stages for found in model_stages(stage)]


def size_trigger(view: View, max_size: int) -> str | None:
    """The usual trigger: a view longer than `max_size`, or a pending request."""
    if view.unhandled_request or len(view) > max_size:
        return None
    return (
        f"the view has {plural(len(view), 'event')}, within max_size {max_size}, "
        "and no request is pending"
    )


def pair_groups(view: View) -> dict[int, int]:
    """Map each event key to a group key; an action and its observations share one.

    Pairs are linked by `tool_call_id` and by `cause`; larger units (a model
    response's parallel tool calls) by `unit`.
    """
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    by_call: dict[str, int] = {}
    for event in view:
        if event.key is None:
            continue
        parent.setdefault(event.key, event.key)
        partners = []
        if event.cause is not None and event.cause in parent:
            partners.append(event.cause)
        if event.unit is not None and event.unit in parent:
            partners.append(event.unit)
        call = event.tool_call_id
        if call is not None:
            if call in by_call:
                partners.append(by_call[call])
            else:
                by_call[call] = event.key
        for other in partners:
            parent[find(event.key)] = find(other)
    return {key: find(key) for key in parent}


def close_over_pairs(view: View, forget: set[int], protect: Iterable[int] = ()) -> set[int]:
    """Make `forget` respect action/observation pairs (SPEC section 3).

    Protected events (those given: the head, ranked ids, ... and always the
    newest event of the view) are never forgotten, and a pair with a protected
    member is kept whole; any other pair the boundary splits is forgotten whole.
    So a condensation never empties the view of events other than a summary.
    """
    groups = pair_groups(view)
    members: dict[int, list[int]] = {}
    for key, group in groups.items():
        members.setdefault(group, []).append(key)
    protected = set(protect)
    newest = next((e.key for e in reversed(view.events) if e.key is not None), None)
    if newest is not None:
        protected.add(newest)
    protected_groups = {groups[i] for i in protected if i in groups}
    result = set(forget) - protected
    for group, ids in members.items():
        if group in protected_groups:
            result.difference_update(ids)
        elif len(ids) > 1 and 0 < sum(1 for i in ids if i in result) < len(ids):
            result.update(ids)
    return result


def kept_head(view: View, keep_first: int, keep_task: bool = False) -> int:
    """How many leading events a condensation keeps.

    The first `keep_first`, and, when the view holds a summary, every event up
    to and including it: replay puts the old summary back at its offset, so the
    events before it must stay, or it would land inside the kept tail, between
    an action and its observation (SPEC section 3). With `keep_task`, every event
    up to and including the user's first task message too (`task_position`), so the
    client's preamble and the task stay in front, as the SDK's `keep_first = 2` does.
    """
    task = task_position(view) if keep_task else None
    head = keep_first if task is None else max(keep_first, task + 1)
    if view.summary is None or view.summary.key is not None:
        return head  # no summary, or one that sits among the keys and stays in place
    for position, event in enumerate(view.events):
        if event is view.summary:
            return max(head, position + 1)
    # an earlier stage of a pipeline left the summary out: keep what precedes its offset
    return max(head, min(view.summary_offset or 0, len(view.events)))


TASK_REACH = 20  # the task is looked for among the view's first events only


def task_position(view: View) -> int | None:
    """Where the user's first task message is in `view`: the first message the user
    typed, among its first `TASK_REACH` events and before any summary (a summary
    that comes first has already replaced the task); None when there is none."""
    for position, event in enumerate(view.events[:TASK_REACH]):
        if event.is_summary:
            return None
        if event.is_instruction and event.text.strip():
            return position
    return None


def forget_ids(view: View, events: Iterable[Any]) -> set[int]:
    """The keys of `events` (a summary has none, so it is never forgotten)."""
    return {e.key for e in events if e.key is not None}


def require(condition: bool, key: str, message: str) -> None:
    """Raise a ConfigError naming `key` unless `condition` holds."""
    if not condition:
        raise ConfigError(f"{key} {message}")


def check_window(max_size: int, keep_first: int, reserved: int = 0) -> None:
    """The shared rules for `max_size` and `keep_first` (SPEC section 3).

    `reserved` is the number of slots the condenser adds itself (1 for a summary).
    """
    require(max_size >= 2, "max_size", f"must be at least 2 (got {max_size})")
    require(keep_first >= 0, "keep_first", f"must not be negative (got {keep_first})")
    limit = max_size // 2 - reserved
    what = "max_size // 2 - 1" if reserved else "max_size // 2"
    require(
        keep_first < limit,
        "keep_first",
        f"({keep_first}) must be less than {what} ({limit}) so at least one recent event "
        f"is kept; raise max_size (now {max_size}) or lower keep_first",
    )


T = TypeVar("T")


class PerEvent(Generic[T]):
    """What `work` makes of each event of a list, remembered for the next list: the
    events it starts with that the last list held at the same places are not worked
    out again. A condenser run after every step of a history (`simulate`) is asked
    about the same events, plus one, at each step; without this, an event that reads
    its record back from the log would parse it at every step."""

    def __init__(self, work: Callable[[Event], T]) -> None:
        self.work = work
        self.events: list[Event] = []
        self.made: list[T] = []  # of `events`

    def of(self, events: list[Event]) -> list[T]:
        same = same_start(self.events, events)
        made = self.made[:same] + [self.work(e) for e in events[same:]]
        self.events, self.made = list(events), made  # (a copy: the caller's list may grow)
        return made


def text_bytes(event: Event) -> int:
    """The bytes of an event's text: no fewer than its tokens (a token is a byte or
    more), so a view within a limit in bytes needs no counting."""
    return len(event.text.encode())


class EventTokens:
    """Each event's tokens with the [llm] model's tokenizer (or the counting model's
    where it names none), counted once; the tokenizer is made when first asked."""

    def __init__(self, model: str | None) -> None:
        self.model = model
        self._counted: PerEvent[int] | None = None
        self._count: Callable[[str], int] | None = None

    def of(self, events: list[Event]) -> list[int]:
        if self._counted is None:
            self._counted = PerEvent(self.one)
        return self._counted.of(events)

    def one(self, event: Event) -> int:
        """The tokens of one event (not remembered)."""
        if self._count is None:
            from condense_cli.llm.tokens import COUNTING_MODEL, tokenizer_for

            self._count = tokenizer_for(self.model or COUNTING_MODEL).count
        return self._count(event.text)


def fitting_tail(counts: list[int], head: int, budget: int, most: int) -> int:
    """How many of the newest events (at most `most`, at least one) fit in `budget`
    tokens beside the first `head` ones (`counts`: each event's tokens)."""
    left = budget - sum(counts[:head])
    fitting = 0
    for count in reversed(counts[head:]):
        if left - count < 0:
            break
        left -= count
        fitting += 1
    return max(1, min(most, fitting))


def token_trigger(counts: list[int], limit: tuple[int, str]) -> str | None:
    """Why a view of events of `counts` tokens may wait: within `limit`
    (`Condenser.token_limit`; None when it holds more)."""
    total = sum(counts)
    return None if total > limit[0] else f"{total:,} tokens, within {limit[1]}"


def set_agent_window(condenser: Condenser, model: str | None) -> None:
    """Give `condenser` and every condenser in it the input limit of the agent's
    `model` (`Condenser.agent_window`), where LiteLLM's table knows it."""
    from condense_cli.analysis.cost import input_limit

    window = input_limit(model) if model else None
    for each in all_stages(condenser):
        each.agent_window, each.agent_model = window, model or ""


def all_stages(condenser: Condenser) -> list[Condenser]:
    """`condenser` and every condenser in it (a pipeline's stages, and theirs)."""
    stages: list[Condenser] = getattr(condenser, "stages", [])
    return [condenser, *(found for stage in stages for found in all_stages(stage))]
