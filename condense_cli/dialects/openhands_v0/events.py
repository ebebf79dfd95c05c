"""OpenHands V0 events: what each line is to the replay (its id, kind, bytes and a few
accessors), the rules every event line must keep, and the lines `condense` appends.

Lines are parsed with orjson and validated here; nothing in this package ever
re-serialises an event it did not create.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson

from condense_cli.core.events import Condensation, Event, LastParsed, View, cleared_arguments
from condense_cli.core.intervals import describe_ids, runs
from condense_cli.core.jsonlines import LineProblem, as_dict, encode, json_type
from condense_cli.core.text import plural

if TYPE_CHECKING:
    from condense_cli.core.logfile import LogSource

# Events the agent never sees (OpenHands' controller filters them out of its history).
HIDDEN_ACTIONS = frozenset({"null", "change_agent_state"})
HIDDEN_OBSERVATIONS = frozenset({"null", "agent_state_changed"})

MAX_ID = 2**63 - 1


def is_summary_line(data: dict[str, Any]) -> bool:
    """A summary observation as `condense view --format jsonl` prints it (no id)."""
    return data.get("observation") == "condense" and "id" not in data and "action" not in data


def validate_event(data: dict[str, Any]) -> int | None:
    """Check the shape every event must have; return its id (None for a summary line)."""
    has_action = "action" in data
    has_observation = "observation" in data
    if has_action and has_observation:
        raise LineProblem('has both "action" and "observation"; an event is one or the other')
    if not has_action and not has_observation:
        raise LineProblem('has neither "action" nor "observation"')
    kind_key = "action" if has_action else "observation"
    if not isinstance(data[kind_key], str):
        raise LineProblem(f'"{kind_key}" must be a string, not {json_type(data[kind_key])}')
    if is_summary_line(data):
        return None
    if "id" not in data:
        raise LineProblem('has no "id"')
    return check_id(data["id"], '"id"')


def check_id(value: Any, what: str, negative: bool = False) -> int:
    """An event id: an integer that fits in 64 bits, non-negative unless `negative`."""
    if isinstance(value, float) and value.is_integer() and abs(value) > MAX_ID:
        # orjson reads integers beyond 64 bits as floats
        raise LineProblem(f"{what} does not fit in 64 bits")
    if isinstance(value, bool) or not isinstance(value, int):
        raise LineProblem(f"{what} must be an integer, not {json_type(value)}")
    if value < 0 and not negative:
        raise LineProblem(f"{what} must not be negative ({value})")
    if not -MAX_ID - 1 <= value <= MAX_ID:
        raise LineProblem(f"{what} does not fit in 64 bits")
    return value


def is_seen_by_agent(data: dict[str, Any]) -> bool:
    """False for the events OpenHands' controller leaves out of the agent's history.

    OpenHands keeps an event's `hidden` flag among its fields, so it is
    serialised inside `args` (actions) or `extras` (observations); a top-level
    `"hidden"` key is not OpenHands' and is ignored, as OpenHands ignores it.
    """
    action = data.get("action")
    if action is not None:
        if action in HIDDEN_ACTIONS:
            return False
        fields = data.get("args")
    else:
        if data.get("observation") in HIDDEN_OBSERVATIONS:
            return False
        fields = data.get("extras")
    return type(fields) is not dict or fields.get("hidden") is not True


@dataclass(frozen=True, slots=True)
class CondensationArgs:
    """The validated arguments of a `condensation` action."""

    forgotten_ids: tuple[int, ...] | None
    start_id: int | None
    end_id: int | None
    summary: str | None
    summary_offset: int | None

    def ranges(self) -> list[tuple[int, int]]:
        """The forgotten ids as sorted, merged inclusive ranges.

        Negative ids match no event (event ids are never negative), so they are
        left out: `[-1, 5]` forgets 5, and the range `-1..5` forgets `0..5`.
        """
        if self.forgotten_ids is None:
            assert self.start_id is not None and self.end_id is not None
            start = max(self.start_id, 0)
            return [(start, self.end_id)] if start <= self.end_id else []
        return runs(i for i in self.forgotten_ids if i >= 0)

    @property
    def max_forgotten(self) -> int | None:
        """The largest id this condensation forgets, if any."""
        if self.forgotten_ids is None:
            return self.end_id
        return max(self.forgotten_ids, default=None)

    @property
    def negative_ids(self) -> str | None:
        """The negative ids it names, described for a warning; None when there are none."""
        if self.forgotten_ids is None:
            assert self.start_id is not None and self.end_id is not None
            if self.start_id >= 0:
                return None
            return f"its range {self.start_id}..{self.end_id} starts below 0"
        negative = sorted({i for i in self.forgotten_ids if i < 0})
        if not negative:
            return None
        return "forgotten_event_ids holds " + ", ".join(map(str, negative))

    @property
    def has_summary(self) -> bool:
        return self.summary is not None and self.summary_offset is not None


def parse_condensation(data: dict[str, Any]) -> CondensationArgs:
    """Validate a condensation event's `args`, or raise LineProblem."""
    args = data.get("args")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise LineProblem(f'condensation "args" must be an object, not {json_type(args)}')
    ids = args.get("forgotten_event_ids")
    start = args.get("forgotten_events_start_id")
    end = args.get("forgotten_events_end_id")
    has_range = start is not None or end is not None
    if ids is not None and has_range:
        raise LineProblem(
            "condensation gives both forgotten_event_ids and a forgotten_events_start_id/"
            "end_id range; give exactly one form"
        )
    if ids is None and not has_range:
        raise LineProblem(
            "condensation gives neither forgotten_event_ids nor a "
            "forgotten_events_start_id/end_id range; give exactly one form"
        )
    forgotten: tuple[int, ...] | None = None
    if ids is not None:
        if not isinstance(ids, list):
            raise LineProblem(f"forgotten_event_ids must be an array, not {json_type(ids)}")
        # OpenHands writes -1 (its summary placeholder's id) among real ids
        forgotten = tuple(check_id(v, "an id in forgotten_event_ids", True) for v in ids)
    else:
        if start is None or end is None:
            missing = "forgotten_events_end_id" if end is None else "forgotten_events_start_id"
            raise LineProblem(f"condensation range has no {missing}")
        start = check_id(start, "forgotten_events_start_id", True)
        end = check_id(end, "forgotten_events_end_id", True)
        if start > end:
            raise LineProblem(f"forgotten range starts after it ends ({start} > {end})")
    summary = args.get("summary")
    offset = args.get("summary_offset")
    if summary is not None and not isinstance(summary, str):
        raise LineProblem(f"summary must be a string, not {json_type(summary)}")
    if (summary is None) != (offset is None):
        given, missing = (
            ("summary", "summary_offset") if offset is None else ("summary_offset", "summary")
        )
        raise LineProblem(f"condensation has a {given} but no {missing}; set both or neither")
    if offset is not None:
        offset = check_id(offset, "summary_offset")
    return CondensationArgs(forgotten, start, end, summary, offset)


class V0Event(Event):
    """An OpenHands V0 event: its id is its key, its facts are read from the dict."""

    __slots__ = ()

    def replaced(self, **changes: Any) -> V0Event:
        """A copy with some top-level keys changed; it keeps its id."""
        return V0Event({**self.data, **changes}, self.key, None)

    def masked(self, text: str) -> V0Event:
        return self.replaced(content=text)

    def inputs_cleared(self, note: str) -> V0Event:
        """A copy of a tool action whose arguments are a note: its `args` (its thought
        kept), and its own call's in the model response it holds a copy of (the
        response's other calls are other actions')."""
        thought = self.args.get("thought")
        args: dict[str, Any] = cleared_arguments(note)
        if thought:
            args = {"thought": thought, **args}
        changes: dict[str, Any] = {"args": args}
        meta = as_dict(self.data.get("tool_call_metadata"))
        response = as_dict(meta.get("model_response"))
        choices = response.get("choices")
        if meta and isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = as_dict(choices[0].get("message"))
            calls = message.get("tool_calls")
            own = self.tool_call_id
            cleared = encode(cleared_arguments(note)).decode()
            if isinstance(calls, list):
                calls = [
                    c | {"function": as_dict(c.get("function")) | {"arguments": cleared}}
                    if isinstance(c, dict) and c.get("id") == own
                    else c
                    for c in calls
                ]
                choice = choices[0] | {"message": message | {"tool_calls": calls}}
                response = response | {"choices": [choice, *choices[1:]]}
                changes["tool_call_metadata"] = meta | {"model_response": response}
        return self.replaced(**changes)

    @property
    def is_summary(self) -> bool:
        return self.key is None and self.data.get("observation") == "condense"

    @property
    def is_action(self) -> bool:
        return "action" in self.data

    @property
    def type(self) -> str:
        return str(self.data.get("action") or self.data.get("observation") or "")

    @property
    def source(self) -> str:
        return str(self.data.get("source") or "")

    @property
    def args(self) -> dict[str, Any]:
        args = self.data.get("args")
        return args if isinstance(args, dict) else {}

    @property
    def extras(self) -> dict[str, Any]:
        extras = self.data.get("extras")
        return extras if isinstance(extras, dict) else {}

    @property
    def cause(self) -> int | None:
        cause = self.data.get("cause")
        return cause if isinstance(cause, int) and not isinstance(cause, bool) else None

    @property
    def tool_call_id(self) -> str | None:
        meta = self.data.get("tool_call_metadata")
        call = meta.get("tool_call_id") if isinstance(meta, dict) else None
        if isinstance(call, str):
            return call
        return None

    @property
    def text(self) -> str:
        if not self.is_action:
            return _as_text(self.data.get("content"))
        args = self.args
        for key in ACTION_TEXT_KEYS.get(self.type, ()):
            value = args.get(key)
            if value:
                return _as_text(value)
        return _as_text(args.get("content") or self.data.get("message"))

    @property
    def thought(self) -> str:
        value = self.args.get("thought") if self.is_action and self.type != "think" else None
        return value if isinstance(value, str) else ""

    @property
    def url(self) -> str:
        if self.is_action or self.type != "browse":
            return ""
        return str(self.extras.get("url", ""))

    @property
    def exit_code(self) -> int | None:
        if self.is_action:
            return None
        metadata = self.extras.get("metadata")
        code = metadata.get("exit_code") if isinstance(metadata, dict) else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None

    @property
    def tool_call(self) -> tuple[str, dict[str, Any]] | None:
        if not self.is_action or self.type in NOT_TOOLS:
            return None
        return self.type, self.args

    @property
    def recall_query(self) -> str | None:
        if not (self.is_action and self.type == "recall"):
            return None
        query = self.args.get("query")
        return query if isinstance(query, str) else None


LAST_PARSED = LastParsed()  # the history event parsed last


class StoredV0Event(V0Event):
    """A history event that reads its line back from the log (`at`: the log, and the
    line's bytes from..to, without its line ending) when asked, while the log is
    open, and keeps no copy (`LAST_PARSED`): a long history holds no parsed line."""

    __slots__ = ("at",)

    def __init__(self, key: int, at: tuple[LogSource, int, int]) -> None:
        self.key = key
        self.at = at

    @property
    def raw(self) -> bytes:  # type: ignore[override]
        source, start, end = self.at
        return source.read_at(start, end)

    @property
    def data(self) -> dict[str, Any]:  # type: ignore[override]
        data: dict[str, Any] = LAST_PARSED.data_of(self, self._parse)
        return data

    def _parse(self) -> dict[str, Any]:
        parsed: dict[str, Any] = orjson.loads(self.raw)
        return parsed


def summary_event(text: str) -> V0Event:
    """The summary observation a V0 view shows in place of forgotten events."""
    data = {"source": "agent", "observation": "condense", "content": text, "extras": {}}
    return V0Event(data, None, None)


# Actions that call no tool (the others are tool calls: `run`, `edit`, `browse`, ...).
NOT_TOOLS = frozenset({"message", "system", "condensation", "condensation_request", "recall"})

# Which `args` field carries an action's text, per action type.
ACTION_TEXT_KEYS: dict[str, tuple[str, ...]] = {
    "message": ("content",),
    "system": ("content",),
    "run": ("command",),
    "run_ipython": ("code",),
    "read": ("path",),
    "write": ("path",),
    "edit": ("path",),
    "browse": ("url",),
    "browse_interactive": ("browser_actions",),
    "think": ("thought",),
    "finish": ("final_thought", "outputs"),
    "recall": ("query",),
    "reject": ("reason",),
    "delegate": ("task", "inputs"),
    "call_tool_mcp": ("name",),
}


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return encode(value).decode("utf-8")


# --- the lines `condense` appends ----------------------------------------------------


def condensation_args(condensation: Condensation, view: View) -> dict[str, Any]:
    """A condensation event's args: a range when it covers every id the view holds
    between its min and max, otherwise a list."""
    ids = sorted(condensation.forgotten)
    view_ids = view.keys
    low, high = ids[0], ids[-1]
    held = bisect_right(view_ids, high) - bisect_left(view_ids, low)
    as_range = held == len(ids)
    return {
        "forgotten_event_ids": None if as_range else ids,
        "forgotten_events_start_id": low if as_range else None,
        "forgotten_events_end_id": high if as_range else None,
        "summary": condensation.summary,
        "summary_offset": condensation.summary_offset,
    }


def condensation_event(event_id: int, condensation: Condensation, view: View) -> dict[str, Any]:
    """The condensation event to append, in OpenHands' serialisation."""
    args = condensation_args(condensation, view)
    count = len(condensation.forgotten)
    message = f"Forgot {plural(count, 'event')} ({describe_ids(condensation.forgotten)})"
    if condensation.summary is not None:
        message += " and summarised them"
    return {
        "id": event_id,
        "timestamp": datetime.now().isoformat(),
        "source": "agent",
        "message": message,
        "action": "condensation",
        "args": args,
    }


def request_event(event_id: int) -> dict[str, Any]:
    """A condensation request event."""
    return {
        "id": event_id,
        "timestamp": datetime.now().isoformat(),
        "source": "agent",
        "message": "Requesting a condensation of the conversation history",
        "action": "condensation_request",
        "args": {},
    }


# Types the fast path leaves to the full validator.
SPECIAL_ACTIONS = HIDDEN_ACTIONS | {"condensation", "condensation_request"}
SPECIAL_OBSERVATIONS = HIDDEN_OBSERVATIONS | {"condense"}
