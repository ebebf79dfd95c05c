"""A Codex view as chat messages: the Responses API items the client sends,
mapped item by item to the OpenAI chat format.

The mapping (the same one the real-client tests apply to what the client sends):
- a `message` keeps its role (`developer` becomes `system`); its text parts
  (`input_text`, `output_text`, empty ones left out) become its content, a string
  for one part and a list of text parts for several; `input_image` parts become
  `image_url` parts;
- calls (`function_call`, `custom_tool_call`, `local_shell_call`,
  `tool_search_call`) become `tool_calls` of one assistant message: they join the
  assistant message right before them, else start one; the arguments are the
  call's `arguments` (a custom tool's raw `input`, other calls' fields as JSON);
- outputs become `tool` messages (text parts joined by a newline, `name` the
  call's name). A call that has no output in the view gets the output "aborted"
  right after its message, as Codex sends it (reported as synthesized); an output
  whose call is not in the view is dropped (reported);
- `reasoning` items are left out (chat messages have no place for them, and their
  content is encrypted); so are encrypted `compaction` summaries and the other
  items with no text (`web_search_call`, `image_generation_call`, and the
  `additional_tools` item, whose tool schemas are not counted), each reported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from condense_cli.core.jsonlines import encode
from condense_cli.dialects.codex.items import CALLS, OUTPUTS, CodexEvent
from condense_cli.llm.messages import (
    NO_CHAT_FORM,
    ORPHAN,
    SYNTHESIZED,
    Change,
    Conversion,
    content_of,
    tool_call,
    tool_result,
)

TEXT_PARTS = frozenset({"input_text", "output_text", "text"})
ABORTED = "aborted"  # the output Codex sends for a call that has none
CALL_FIELDS = frozenset({"type", "id", "call_id", "status", "name"})


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, dict):
            continue
        if part.get("type") in TEXT_PARTS and isinstance(part.get("text"), str):
            if part["text"]:
                parts.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "input_image":
            parts.append({"type": "image_url", "image_url": {"url": str(part.get("image_url"))}})
    return parts


def _call(item: dict[str, Any]) -> dict[str, Any]:
    kind = item.get("type")
    if kind == "function_call" and isinstance(item.get("arguments"), str):
        arguments = item["arguments"]
    elif kind == "custom_tool_call" and isinstance(item.get("input"), str):
        arguments = item["input"]
    else:
        fields = {k: v for k, v in item.items() if k not in CALL_FIELDS}
        arguments = encode(fields).decode()
    given = item.get("name")
    name = given if isinstance(given, str) else str(kind).removesuffix("_call")
    return tool_call(_call_id(item), name, arguments)


def _call_id(call: dict[str, Any]) -> str:
    """The id a call's `tool_calls` entry has, which its output names."""
    return str(call.get("call_id", ""))


Place = tuple[object, int | None]  # an item's event id and line, for the report
NOWHERE: Place = (None, None)  # an item with no event of its own


def each_message(
    items: Iterable[tuple[dict[str, Any], Place]],
    pairs: Iterable[tuple[object, str]],
    out: Conversion,
    build: bool = True,
) -> Iterator[dict[str, Any]]:
    """The chat messages of the view's items, one at a time (see the module doc); each
    item comes with its place. `pairs` are the same items' types and `str(call_id)`s,
    read first, to know which calls have no output; what is put in or dropped goes to
    `out` as it is found, the "aborted" outputs first. A message is given once no later
    call can join it: memory holds one message and one item, however long the view.
    Without `build`, only what is put in or dropped is found: no message is made."""
    kinds = list(pairs)
    answered = {call for kind, call in kinds if kind in OUTPUTS}
    aborted = [call for kind, call in kinds if kind in CALLS and call not in answered]
    says = f'has no output: Codex sends "{ABORTED}" for it'
    out.inserted += [Change(SYNTHESIZED, None, None, f"call {call} {says}") for call in aborted]
    names: dict[str, str] = {}
    last: dict[str, Any] | None = None  # the newest message, which calls may still join
    for item, place in _with_outputs(items, answered):
        kind = item.get("type")
        message: dict[str, Any]
        if kind in CALLS:
            if not build:  # an output finds its call by the id alone
                names[_call_id(item)] = ""
                continue
            call = _call(item)
            names[call["id"]] = call["function"]["name"]
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
                continue
            message = {"role": "assistant", "content": "", "tool_calls": [call]}
        elif kind in OUTPUTS:
            call_id = str(item.get("call_id"))
            if call_id not in names:
                reason = f"output for call {call_id}: the call is not in the view"
                out.dropped.append(Change(ORPHAN, *place, reason))
                continue
            if not build:
                continue
            text = "\n".join(p["text"] for p in _parts(item.get("output")) if "text" in p)
            message = tool_result(call_id, names[call_id], text)
        elif kind == "message":
            if not build:
                continue
            role = str(item.get("role") or "user")
            role = "system" if role == "developer" else role
            message = {"role": role, "content": content_of(_parts(item.get("content")))}
        else:
            reason = (
                "an encrypted summary: it has no text a chat message can carry"
                if kind in ("compaction", "compaction_summary")
                else f"a {kind} item has no text a chat message can carry"
            )
            out.dropped.append(Change(NO_CHAT_FORM, *place, reason))
            continue
        if last is not None:
            yield last
        last = message
    if last is not None:
        yield last


def _with_outputs(
    items: Iterable[tuple[dict[str, Any], Place]], answered: set[str]
) -> Iterator[tuple[dict[str, Any], Place]]:
    """The items with the output "aborted" right after each call that has none, as
    Codex sends them."""
    for item, place in items:
        yield item, place
        call_id = str(item.get("call_id"))
        if item.get("type") in CALLS and call_id not in answered:
            kind = "custom_tool_call_output" if item["type"] == "custom_tool_call" else None
            answer = {"type": kind or "function_call_output", "call_id": call_id}
            yield answer | {"output": ABORTED}, NOWHERE


def convert(
    items: list[dict[str, Any]],
    where: Callable[[dict[str, Any]], Place] | None = None,
) -> Conversion:
    """Response items as chat messages (see the module doc). `where(item)` gives the
    id and line of an item of the view, for the report."""
    out = Conversion()
    located = [(item, where(item) if where else NOWHERE) for item in items]
    pairs = [(item.get("type"), str(item.get("call_id"))) for item in items]
    out.messages = list(each_message(located, pairs, out))
    return out


def view_messages(events: Sequence[CodexEvent], out: Conversion) -> Iterator[dict[str, Any]]:
    """`each_message` of a view's events, each item parsed only when its turn comes."""
    pairs = (_pair_of(e) for e in events)
    return each_message(((e.data, (e.id, e.line)) for e in events), pairs, out)


def view_changes(events: Sequence[CodexEvent]) -> Conversion:
    """What `view_messages` drops and puts in, without parsing the items the fast path
    read or making a message: which items are dropped or answered depends only on each
    one's type and call id (`_pairing`)."""
    out = Conversion()
    pairs = [_pair_of(e) for e in events]
    items = ((_pairing(e), (e.id, e.line)) for e in events)
    for _message in each_message(items, pairs, out, build=False):
        pass
    return out


def conversion_cuts(events: Sequence[CodexEvent]) -> Iterator[int]:
    """The `message` items past the middle that no call id spans (`_call_free`): a
    message starts a message of its own, which no call before it joins, and with no
    call id on both sides, each part names its outputs, drops its orphans and answers
    its calls without an output as the view does (`each_message`). From the fast
    path's fields: no item is parsed for this."""
    pairs = [_pair_of(e) for e in events]
    calls = [call if kind in CALLS or kind in OUTPUTS else None for kind, call in pairs]
    middle = len(events) // 2
    places = (i for i in range(middle, len(events)) if pairs[i][0] == "message")
    return _call_free(calls, places)


def _call_free(calls: Sequence[str | None], places: Iterable[int]) -> Iterator[int]:
    """The places of `places` (in increasing order) that no call id spans: no id of
    `calls` (each item's call id, a call's or an output's; None for any other item)
    is held both before the place and at or after it."""
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for index, call in enumerate(calls):
        if call is not None:
            first.setdefault(call, index)
            last[call] = index
    # How many ids span each place: +1 just after an id's first item, -1 after its last
    spanning = [0] * (len(calls) + 1)
    for call, start in first.items():
        end = last[call]
        if end > start:
            spanning[start + 1] += 1
            spanning[end + 1] -= 1
    open_spans = 0
    counted_to = 0
    for place in places:
        while counted_to <= place:
            open_spans += spanning[counted_to]
            counted_to += 1
        if open_spans == 0:
            yield place


def _pairing(event: CodexEvent) -> dict[str, Any]:
    """The item as far as the conversion's changes go: its type and call id, from the
    fast path's fields when it has them all, else the item itself."""
    kind, call = event.fast_type, event.fast_call
    if kind is None or ((kind in CALLS or kind in OUTPUTS) and call is None):
        return event.data
    return {"type": kind, "call_id": call} if call is not None else {"type": kind}


def _pair_of(event: CodexEvent) -> tuple[str, str]:
    """An event's item type and, for a call or an output, its `str(call_id)` (from the
    fast path's fields when it has them)."""
    kind = event.item_type
    if kind not in CALLS and kind not in OUTPUTS:
        return kind, ""
    if event.fast_type is not None and event.fast_call is not None:
        return kind, event.fast_call
    return kind, str(event.data.get("call_id"))
