"""An SDK event as an event of the view: its text, tool call, and what `condense`
shows of it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from condense_cli.core.events import Event, LastParsed, cleared_arguments
from condense_cli.core.jsonlines import as_dict, encode
from condense_cli.dialects.openhands_v1.detect import ACTION, OBSERVATION_KINDS, SUMMARY_KIND
from condense_cli.dialects.openhands_v1.facts import Entry, Facts, call_id, facts, texts_of
from condense_cli.dialects.openhands_v1.properties.batch_atomicity import response_batches
from condense_cli.dialects.openhands_v1.properties.tool_loop_atomicity import tool_loops

if TYPE_CHECKING:
    from condense_cli.dialects.openhands_v1.storage import StoredEvent

LAST_PARSED = LastParsed()  # the event parsed last, and its facts
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


class V1Event(Event):
    """A V1 event in neutral terms. Its key is its position (the file index), its id
    the SDK's string id. A summary in a view is `{"kind": "CondensationSummaryEvent",
    "id": "<condensation id>-summary", "summary": ...}`, keyed by its condensation's
    position when the SDK can forget it (multi-summary), else without a key."""

    __slots__ = ("_data", "_facts_kept", "_keeps_facts", "_raw", "_unit", "stored")

    def __init__(
        self, data: dict[str, Any], key: int | None, raw: bytes | None, unit: int | None = None
    ) -> None:
        self.stored: StoredEvent | None = None
        super().__init__(data, key, raw)
        self._facts_kept: Facts | None = facts(data) if data is not None else None
        self._keeps_facts = False
        self._unit = unit

    @classmethod
    def read(cls, stored: StoredEvent) -> V1Event:
        """A stored event as an event, keyed by its position, its file read now and
        kept (a history's events are used again and again)."""
        data, raw = stored.parsed()
        return cls(data, stored.position, raw)

    @classmethod
    def of(cls, stored: StoredEvent, unit: int | None = None) -> V1Event:
        """A stored event as an event of a view, keyed by its position: it reads its
        file (or line) when asked and keeps no copy, so a view holds one event's
        data at a time (`LAST_PARSED`), however long."""
        event = cls(None, stored.position, None, unit)  # type: ignore[arg-type]
        event.stored = stored
        return event

    @property
    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = LAST_PARSED.kept_or_parsed(self, self._data, self._parse)
        return data

    @data.setter
    def data(self, value: dict[str, Any] | None) -> None:
        self._data = value

    def _parse(self) -> dict[str, Any]:
        return self.stored.parsed()[0]  # type: ignore[union-attr]

    @property
    def raw(self) -> bytes | None:
        stored = self.stored
        return self._raw if stored is None else stored.raw

    @raw.setter
    def raw(self, value: bytes | None) -> None:
        self._raw = value

    @property
    def _facts(self) -> Facts:
        """What the event says, made once with its data (kept with it, or with the
        last data parsed)."""
        kept = self._facts_kept
        if kept is not None:
            return kept
        made: Facts = LAST_PARSED.made_of(self, self._parse, facts)
        if self._keeps_facts:
            self._facts_kept = made
        return made

    def keep_facts(self, keep: bool) -> None:
        """Keep this event's facts once made (a walk will ask for them again after
        other events'), or let them go. An event made from its data keeps them anyway."""
        if self.stored is not None:
            self._keeps_facts = keep
            if not keep:
                self._facts_kept = None

    @property
    def id(self) -> str:
        stored = self.stored
        return stored.id if stored is not None else str(self.data["id"])

    @property
    def v1_kind(self) -> str:
        """The SDK's event class, e.g. `ActionEvent`."""
        stored = self.stored
        return stored.kind if stored is not None else str(self.data["kind"])

    @property
    def source(self) -> str:
        return self._facts.source

    @property
    def is_action(self) -> bool:
        return self.v1_kind not in OBSERVATION_KINDS

    @property
    def type(self) -> str:
        return self._facts.type

    @property
    def text(self) -> str:
        return self._facts.text

    @property
    def thought(self) -> str:
        return self._facts.thought

    @property
    def tool_call_id(self) -> str | None:
        stored = self.stored  # read with its file: the pairing needs no parse
        return call_id(stored.call) if stored is not None else self._facts.tool_call_id

    @property
    def is_summary(self) -> bool:
        return self.v1_kind == SUMMARY_KIND

    @property
    def tool_call(self) -> tuple[str, dict[str, Any]] | None:
        if self.v1_kind != ACTION:
            return None
        return self.type, _arguments(self.text)

    @property
    def unit(self) -> int | None:
        return self._unit

    @property
    def url(self) -> str:
        return self._facts.url

    @property
    def exit_code(self) -> int | None:
        return self._facts.exit_code

    def _observation(self) -> dict[str, Any] | None:
        observation = self.data.get("observation")
        if self.v1_kind != "ObservationEvent" or not isinstance(observation, dict):
            return None
        return observation

    def masked(self, text: str) -> V1Event:
        """A copy whose tool result reads `text`, stored where and as V1 stores it."""
        data = dict(self.data)
        kind = self.v1_kind
        if kind == "AgentErrorEvent":
            data["error"] = text
        elif kind == "UserRejectObservation":
            data["rejection_reason"] = text
        elif kind == "ObservationEvent":
            observation = dict(self._observation() or {})
            field = _text_field(observation)
            shaped = isinstance(observation.get(field), str)
            observation[field] = text if shaped else [{"type": "text", "text": text}]
            data["observation"] = observation
        else:
            raise ValueError(f"a {kind} has no tool result to rewrite")
        return V1Event(data, self.key, None, self._unit)

    def inputs_cleared(self, note: str) -> V1Event:
        """A copy of an action whose tool call's arguments are a note, where V1 keeps
        them (`tool_call.arguments`, or litellm's `tool_call.function.arguments`)."""
        call = as_dict(self.data.get("tool_call"))
        if self.v1_kind != ACTION or not call:
            raise ValueError(f"a {self.v1_kind} has no tool call to clear")
        arguments = encode(cleared_arguments(note)).decode()
        function = call.get("function")
        if "arguments" not in call and isinstance(function, dict):
            call = call | {"function": function | {"arguments": arguments}}
        else:
            call = call | {"arguments": arguments}
        return V1Event({**self.data, "tool_call": call}, self.key, None, self._unit)


def _arguments(text: str) -> dict[str, Any]:
    """A tool call's arguments as an object (empty when they are not one)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _text_field(observation: dict[str, Any]) -> str:
    """The field that holds a tool result's text: the one `facts` reads, else the
    first one present, else `content` (the current SDK's field)."""
    fields = ("content", "output", "message")
    for field_ in fields:
        if texts_of(observation.get(field_)):
            return field_
    return next((f for f in fields if isinstance(observation.get(f), str | list)), "content")


def unit_heads(view: Sequence[Entry]) -> dict[str, str]:
    """Event id -> the id of the first event of its unit: a thinking-led tool loop,
    else the parallel tool calls of one model response. Events alone are left out."""
    order = {e.id: i for i, e in enumerate(view)}
    heads: dict[str, str] = {}
    for response, ids in response_batches(view).items():
        if response is not None and len(ids) > 1:
            head = min(ids, key=order.__getitem__)
            heads.update(dict.fromkeys(ids, head))
    for loop in tool_loops(view):
        head = min(loop, key=order.__getitem__)
        heads.update(dict.fromkeys(loop, head))
    return heads


def month_name(date: str) -> str:
    return f"{MONTHS[int(date[5:7]) - 1]} {date[:4]}"
