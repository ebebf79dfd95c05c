"""Reading a rollout: each line validated, and the history rebuilt line by line the way
Codex rebuilds it on resume (compactions, rollbacks, pending requests). A line Codex
cannot decode (`items.undecodable`, a `compacted` line without a string message) it
skips, and so does the reader, with a warning.

Two history modes: a `legacy` rollout has plain lines; a `paginated` one
(`session_meta.payload.history_mode`, Codex 0.155 on) numbers every line with a
top-level `ordinal`, from 0 (a fork: from where its base ends). Codex 0.171.0
refuses to resume a paginated rollout whose final line has no ordinal (or a null
one), so `check` fails that. It reads past every other odd ordinal (a gap, a
repeat, a step back, one missing or not a count, mid-file): it resumes, forks and
pages the whole history, and numbers on from the last line, so `check` only notes
the first such line, with how many there are. A
fork (`session_meta.payload.history_base`) starts with the history of another
rollout of the same sessions tree up to an ordinal (and byte offset); that
prefix is replayed first, its items shown with ids `base:LINE`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import orjson

from condense_cli.core.errors import LogError
from condense_cli.core.events import Problem
from condense_cli.core.jsonlines import LineProblem, as_dict, decode_line, encode, json_type
from condense_cli.core.logfile import BOM, LogSource, line_body
from condense_cli.core.text import plural
from condense_cli.core.usage import Usage
from condense_cli.dialects.codex.detect import LINE_TYPES, REQUEST
from condense_cli.dialects.codex.items import (
    ITEM_TYPES,
    CodexEvent,
    is_sent,
    summary_item,
    undecodable,
)
from condense_cli.dialects.codex.usage import Calls


@dataclass
class Compaction:
    """What one `compacted` line did, and what the log says about it."""

    line: int
    before: int  # view size before it
    after: int  # view size right after it
    summary_chars: int | None
    says: dict[str, Any] = field(default_factory=dict)
    origin: str = ""  # "base…" when it is in a fork's base rollout
    forgot: int = 0  # the items of the view before it that the view after it has not

    @property
    def id(self) -> object:
        return f"{self.origin}:{self.line}" if self.origin else self.line


@dataclass
class History:
    """The history as Codex rebuilds it, line by line."""

    history: list[CodexEvent] = field(default_factory=list)
    summary: CodexEvent | None = None
    request_pending: bool = False
    requests: int = 0
    compactions: list[Compaction] = field(default_factory=list)
    tokens_seen: int | None = None  # the context size the last token_count reported
    token_info: dict[str, Any] | None = None  # that token_count's `info`, and its line
    token_line: int | None = None
    rate_limits: Any = None  # that token_count's `rate_limits`, as written
    model: str | None = None  # of the last turn_context
    # the lines of this rollout that say something of its model calls (a turn context's
    # model, a token count or record, a compaction), for `calls` to read when asked:
    # where each is in the log, or what `usage.Calls` reads of it where it is in none
    call_lines: list[tuple[int, tuple[int, int] | dict[str, Any]]] = field(default_factory=list)
    compacted_raw: dict[int, bytes] = field(default_factory=dict)  # line -> its bytes
    paginated: bool = False  # history_mode "paginated": every line has an ordinal
    next_ordinal: int | None = None  # what the next line appended must carry
    unnumbered: int | None = None  # the last line, when it has no ordinal (paginated)
    odd_ordinals: int = 0  # lines whose ordinal is out of sequence or not a count
    base: str | None = None  # the rollout a fork's history starts in

    def calls(self, source: LogSource) -> list[Usage]:
        """The model calls of this rollout's lines, in its order (`usage.Calls`); the
        lines are read again from `source`, the log, open."""
        calls = Calls()
        for number, line in self.call_lines:
            if isinstance(line, tuple):
                line = as_dict(orjson.loads(source.read_at(*line)))
            calls.take(number, line)
        return calls.done()


def numbered_as_originals(copies: list[CodexEvent], previous: list[CodexEvent]) -> None:
    """Number each item of a replacement history that is an item of the history
    before it, as written, by that item's number (the newest such). Only the items
    of a type and call id some copy has are parsed, each once."""
    wanted = {(c.item_type, c.tool_call_id) for c in copies if not c.marks_summary}
    written: dict[bytes, CodexEvent] = {}
    for event in previous:
        if (event.item_type, event.tool_call_id) in wanted:
            written[encode(event.data)] = event  # the newest wins
    for copy in copies:
        found = None if copy.marks_summary else written.get(encode(copy.data))
        if found is not None:
            copy.number = found.id


def history_length(raw: bytes) -> int:
    history = orjson.loads(raw)["payload"]["replacement_history"]
    return len(history)


# --- reading -------------------------------------------------------------------------

# the lines that say something of the model calls besides a turn context's model: a
# token usage record, a compaction, and an event_msg that is a token count or the
# thread's settings (its service tier) (`usage.Calls`)
CALL_LINES = frozenset({"token_usage_record", "compacted"})
CALL_EVENTS = frozenset({"token_count", "thread_settings_applied"})


class Reader:
    """Validates lines and rebuilds the history; problems are collected or raised."""

    def __init__(
        self, path: str, collect: bool, keep_steps: bool = False, keep_sent: bool = False
    ) -> None:
        self.path = path
        self.collect = collect
        self.problems: list[Problem] = []
        self.state = History()
        self.lines = 0  # lines read
        self.origin = ""  # "base", "base2", …: the lines read are a fork's base
        self.depth = 0  # how many bases deep the lines read are
        # Waiting to be taken (`feed_lines`): with `keep_steps`, each compaction (line,
        # history and summary before, after); with `keep_sent`, each item sent, in
        # file order (a request as None), for `history`: one the rollout holds reads
        # its line back when asked.
        self.keep_steps = keep_steps
        self.keep_sent = keep_sent
        self.steps: list[tuple[int, list[CodexEvent], Any, list[CodexEvent], Any]] = []
        self.sent: list[CodexEvent | None] = []

    def problem(self, line: int | None, message: str, severity: str = "error") -> None:
        if self.origin:
            message, line = f"{self.origin} rollout, line {line}: {message}", None
        if severity == "error" and not self.collect:
            raise LogError(self.path, message, line)
        self.problems.append(Problem(line, message, severity))

    def flaw(self, line: int | None, message: str) -> None:
        """An error for `check` that does not stop reading the history (Codex itself
        reads past it, or only refuses to write after it)."""
        if self.collect:
            self.problems.append(Problem(line, message, "error"))

    def skipped(self, line: int, why: str) -> None:
        """A line Codex cannot decode, and so skips: a warning, and the line is not read."""
        self.problem(line, f"Codex cannot decode this line and skips it: {why}", "warning")

    def note(self, line: int | None, message: str) -> None:
        """A note for `check`: something worth knowing that Codex itself reads past."""
        if self.collect:
            self.problems.append(Problem(line, message, "note"))

    def read_line(
        self, number: int, body: bytes, at: tuple[LogSource, int, int] | None = None
    ) -> dict[str, Any] | None:
        """Read line `number` (`at`: the log and the body's bytes from..to in it, for
        an item to read its line back instead of keeping it; None: it keeps it)."""
        try:
            data = decode_line(body, quote=number > 1)
        except LineProblem as exc:
            self.problem(number, str(exc))
            return None
        kind = data.get("type")
        if not isinstance(kind, str):
            self.problem(number, f'"type" must be a string, not {json_type(kind)}')
            return None
        payload = data.get("payload")
        if kind in LINE_TYPES and kind != REQUEST and not isinstance(payload, dict):
            self.problem(
                number, f'a {kind} line needs an object "payload", not {json_type(payload)}'
            )
            return None
        if number == 1 and kind == "session_meta":
            self.session_meta(as_dict(payload))
        if self.state.paginated and not self.origin:
            self.ordinal(number, data.get("ordinal"))
        if not self.origin and (
            kind in CALL_LINES
            or (kind == "event_msg" and as_dict(payload).get("type") in CALL_EVENTS)
        ):
            self.state.call_lines.append((number, at[1:] if at is not None else Calls.fields(data)))
        if kind == "response_item":
            self.item(number, as_dict(payload), body, at)
        elif kind == "compacted":
            self.compacted(number, as_dict(payload), body)
        elif kind == REQUEST:
            self.state.request_pending = True
            self.state.requests += 1
            if self.keep_sent:
                self.sent.append(None)
        elif kind == "event_msg":
            self.event(as_dict(payload), number)
        elif kind == "turn_context" and isinstance(model := as_dict(payload).get("model"), str):
            self.turn_model(model)
        elif kind not in LINE_TYPES:
            self.problem(number, f"unknown line type {kind!r}; Codex skips it", "warning")
        return data

    def turn_model(self, model: str) -> None:
        """A turn context's model: the history's, and its calls' (not a base's)."""
        self.state.model = model
        if not self.origin:
            self.state.call_lines.append((0, {"type": "turn_context", "payload": {"model": model}}))

    def session_meta(self, payload: dict[str, Any]) -> None:
        """The history mode, and a fork's base replayed first."""
        paginated = payload.get("history_mode") == "paginated"
        base = payload.get("history_base")
        if self.origin:
            if isinstance(base, dict):
                self.read_base(base)
            return
        self.state.paginated = paginated
        if paginated:
            self.state.next_ordinal = 0
        if isinstance(base, dict):
            self.read_base(base)
            end = base.get("end_ordinal_exclusive")
            if paginated and isinstance(end, int):
                self.state.next_ordinal = end

    def ordinal(self, number: int, value: object) -> None:
        """A paginated line's ordinal (None when it has none): one more than the line
        before's, as Codex numbers on. The first line that is not is noted (Codex
        0.171.0 reads past it); a final line without one is an error (`rollout`)."""
        state = self.state
        state.unnumbered = number if value is None else None
        expected = state.next_ordinal
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            odd = f"has no ordinal ({json_type(value)})"
        elif expected is not None and value != expected:
            odd = f"has ordinal {value} where {expected} comes next"
            state.next_ordinal = value + 1
        else:
            state.next_ordinal = value + 1
            return
        state.odd_ordinals += 1
        if state.odd_ordinals == 1:
            self.note(
                number,
                f"this paginated rollout line {odd}; Codex 0.171.0 reads past it (it "
                "resumes, forks and pages the whole history, and numbers on from the "
                "last line), but Codex's paged history has been seen to stop at such a "
                "line (openai/codex#35746)",
            )

    def read_base(self, base: dict[str, Any]) -> None:
        """Replay the base rollout of a fork up to where the fork starts."""
        thread = base.get("thread_id")
        end = base.get("end_ordinal_exclusive")
        end_byte = base.get("end_byte_offset")
        if not isinstance(thread, str) or not isinstance(end, int):
            self.problem(1, "history_base needs a string thread_id and an end_ordinal_exclusive")
            return
        if self.depth >= MAX_FORK_DEPTH:
            self.problem(1, f"forks nest deeper than {MAX_FORK_DEPTH} rollouts; is there a cycle?")
            return
        found = find_rollout(self.path, thread)
        if found is None:
            raise LogError(
                self.path,
                f"this rollout is a fork of thread {thread}: its history starts in that "
                f"thread's first {end} lines, in rollout-…-{thread}.jsonl, which is neither "
                "beside it nor in its sessions tree",
                1,
                hint="copy that rollout next to this one (or keep the ~/.codex/sessions tree)",
            )
        if not self.origin:
            self.state.base = str(found)
        outer = self.origin
        self.depth += 1
        self.origin = "base" if self.depth == 1 else f"base{self.depth}"
        try:
            with LogSource.open(str(found)) as source:
                read_prefix(self, source, end, end_byte)
        finally:
            self.depth -= 1
            self.origin = outer

    def item(
        self,
        number: int,
        payload: dict[str, Any],
        body: bytes,
        at: tuple[LogSource, int, int] | None = None,
    ) -> None:
        kind = payload.get("type")
        if isinstance(kind, str) and kind not in ITEM_TYPES:
            self.problem(
                number, f"unknown response item type {kind!r}; Codex does not send it", "warning"
            )
            return
        why = undecodable(payload)
        if why is not None:
            self.skipped(number, f"this response item is {why}")
            return
        if is_sent(payload):
            if at is not None and self.keep_sent:
                event = CodexEvent(None, None, number)  # a history's: read back when asked
                event.fast_type, call = kind, payload.get("call_id")
                event.fast_call = call if isinstance(call, str) else None
            else:
                event = CodexEvent(payload, body if at is None else None, number)
            event.at = at
            event.origin = self.origin
            self.state.history.append(event)
            if self.keep_sent:
                self.sent.append(event)

    def compacted(self, number: int, payload: dict[str, Any], body: bytes) -> None:
        state = self.state
        message = payload.get("message")
        history = payload.get("replacement_history")
        before = len(state.history)
        previous, previous_summary = list(state.history), state.summary
        if not isinstance(message, str):
            self.skipped(number, "it has no string message")
            return
        if history is not None:
            if not isinstance(history, list) or not all(isinstance(i, dict) for i in history):
                self.skipped(number, "its replacement_history is not an array of objects")
                return
            why = next(filter(None, map(undecodable, history)), None)
            if why is not None:
                self.skipped(number, f"its replacement_history holds {why}")
                return
            events = [CodexEvent(item, None, number, i) for i, item in enumerate(history, 1)]
            events = [e for e in events if is_sent(e.data)]
            for event in events:
                event.origin = self.origin
            numbered_as_originals(events, previous)
            state.compacted_raw[number] = body
            summaries = [e for e in events if e.marks_summary]
        else:
            users = [e for e in state.history if e.is_user_turn]
            summary = CodexEvent(summary_item(message), None, number, 1)
            events = [*users, summary]
            summaries = [summary]
        state.history = events
        state.summary = summaries[-1] if summaries else None
        if state.summary is not None:
            state.summary.summary = True
        state.request_pending = False
        summary_chars = len(state.summary.text) if state.summary is not None else None
        says: dict[str, Any] = {"items": len(events)}
        if history is None:
            says["legacy"] = True
        for key in ("window_number",):
            if isinstance(payload.get(key), int):
                says[key] = payload[key]
        if any(e.item_type in ("compaction", "compaction_summary") for e in events):
            says["summary"] = "encrypted (remote compaction)"
        if state.tokens_seen is not None:
            says["tokens_before"] = state.tokens_seen
        if self.origin:
            says["in"] = f"{self.origin} rollout"
        if payload.get("condense") is True:
            says["by"] = "condense run"
        elif asked_reset(previous):
            says["by"] = f"the model's {RESET_TOOL} call (a new context window)"
            self.reset_note(number, previous, events)
        kept = {e.id for e in events}  # (a copy has its original's number)
        forgot = sum(1 for e in previous if e.id not in kept)
        state.compactions.append(
            Compaction(number, before, len(events), summary_chars, says, self.origin, forgot)
        )
        if self.keep_steps:
            self.steps.append((number, previous, previous_summary, list(events), state.summary))

    def reset_note(self, number: int, previous: list[CodexEvent], after: list[CodexEvent]) -> None:
        """Note a context reset that leaves none of the user's messages in the view."""
        if not self.collect or any(e.is_user_turn for e in after):
            return
        typed = [e for e in previous if e.is_user_turn]
        if typed:
            self.note(
                number,
                f"the model started a new context window ({RESET_TOOL}): what Codex sends "
                f"next holds none of the user's {plural(len(typed), 'message')} (the first, "
                f"the task, is #{typed[0].id}), only its own context; it keeps them in this "
                "line's retained_context, which it does not send",
            )

    def event(self, payload: dict[str, Any], number: int) -> None:
        kind = payload.get("type")
        if kind == "thread_rolled_back":
            turns = payload.get("num_turns")
            if isinstance(turns, int) and turns > 0:
                self.roll_back(turns)
        elif kind == "token_count":
            info = payload.get("info")
            last = info.get("last_token_usage") if isinstance(info, dict) else None
            total = last.get("total_tokens") if isinstance(last, dict) else None
            if isinstance(total, int):
                self.state.tokens_seen = total
                self.state.token_info = cast(dict[str, Any], info)
                self.state.token_line = number if not self.origin else None
                self.state.rate_limits = payload.get("rate_limits")

    def roll_back(self, turns: int) -> None:
        """Drop the newest `turns` user turns, as Codex's thread rollback does."""
        history = self.state.history
        starts = [i for i, e in enumerate(history) if e.is_user_turn]
        if not starts:
            return
        cut = starts[0] if turns >= len(starts) else starts[-turns]
        self.state.history = history[:cut]
        if self.state.summary is not None and self.state.summary not in self.state.history:
            self.state.summary = None

    def check_pairs(self) -> None:
        """Calls without outputs and outputs without calls, in the view."""
        calls: dict[str, CodexEvent] = {}
        answered: set[str] = set()
        for event in self.state.history:
            call = event.tool_call_id
            if call is None:
                continue
            if event.is_action:
                calls[call] = event
            elif call not in calls:
                self.problem(
                    event.line,
                    f"{event.item_type} for call {call!r} has no call before it in the view; "
                    "the model would see an answer to nothing",
                )
            else:
                answered.add(call)
        for call, event in calls.items():
            if call not in answered:
                self.problem(
                    event.line,
                    f"{event.item_type} {call!r} has no output in the view; Codex answers it "
                    '"aborted" when the session is resumed',
                    "warning",
                )


MAX_FORK_DEPTH = 16


def find_rollout(near: str, thread: str) -> Path | None:
    """The rollout of `thread`: beside `near`, else anywhere in the `sessions` (or
    `archived_sessions`) tree `near` is in."""
    pattern = f"rollout-*{thread}.jsonl"
    here = Path(near).absolute().parent
    found = sorted(here.glob(pattern))
    if found:
        return found[0]
    for folder in (here, *here.parents):
        if folder.name == "sessions":
            for tree in (folder, folder.parent / "archived_sessions"):
                found = sorted(p for p in tree.rglob(pattern) if not p.is_symlink())
                if found:
                    return found[0]
            return None
    return None


RESET_TOOL = "new_context"  # Codex's tool for a new context window (`features.token_budget`)


def asked_reset(history: list[CodexEvent]) -> bool:
    """Whether `history` ends in the model's call for a new context window (and its
    output): the `compacted` line after it is that reset (tried with Codex 0.171.0)."""
    for event in reversed(history[-4:]):
        if event.item_type == "function_call":  # (its line is parsed only if it names it)
            raw = event.raw
            return (raw is None or RESET_TOOL.encode() in raw) and event.data.get(
                "name"
            ) == RESET_TOOL
        if event.item_type not in ("function_call_output", "reasoning"):
            return False
    return False


def read_prefix(reader: Reader, source: LogSource, end: int, end_byte: object) -> None:
    """Feed a base rollout's lines to `reader` while their ordinals are below `end`
    (and, when given, they start before byte `end_byte`)."""
    offset = 0
    limit = end_byte if isinstance(end_byte, int) else None
    for number, raw in enumerate(source.raw_lines(), start=1):
        if limit is not None and offset >= limit:
            break
        offset += len(raw)
        body = line_body(raw, first=number == 1)
        if not body.strip():
            continue
        try:
            ordinal = orjson.loads(body).get("ordinal")
        except (orjson.JSONDecodeError, AttributeError):
            ordinal = None
        if isinstance(ordinal, int) and ordinal >= end:
            break
        reader.read_line(number, body)


def line_at(
    source: LogSource, number: int, raw: bytes, start: int
) -> tuple[bytes, tuple[LogSource, int, int]]:
    """Line `number` (as read, from offset `start`) without its line ending and byte
    order mark, and where those bytes are in the log."""
    body = line_body(raw, first=number == 1)
    start += len(BOM) if number == 1 and raw.startswith(BOM) else 0
    return body, (source, start, start + len(body))
