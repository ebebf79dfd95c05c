"""A Gemini CLI session replayed the way the client loads it when it resumes.

The file is JSON lines: a header (`sessionId`, `projectHash`, `startTime`, …),
message records, `{"$set": {...}}` metadata and `{"$rewindTo": id}`. A record that
repeats a message's id replaces that message where it stood; `$set` of `messages`
replaces the whole list; `$rewindTo` drops that message and every later one (all
of them when the id is unknown). Every run of the client starts with a header and a
`$set` of its context alone; a run that resumes then writes the whole list again.

A `$set` of the list that leaves out messages the list held is a compression (the
client's, or a rewrite of the session): the messages it leaves out are forgotten,
the first new message of the user's words it puts in is its state snapshot (the
client puts it at the head, after its context, and follows it with an
acknowledgement of its own), and each message it keeps under a new id is its
original (matched by what the model reads of it), shown by the original's number.

A `$set` whose list is the end of the list before it, with nothing new, is a
checkpoint restored (`/chat resume`: the client writes the checkpoint's turns as new
messages, then sets the list to them): what it drops was taken back by the user, as
by a rewind, not forgotten. condense marks the `$set` it writes (`CONDENSED`).

`condense request` writes `{"$condenseRequest": {...}}`, a record the client's
loader passes over; it is pending until the next compression.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from condense_cli.core.errors import ConfigError, LogError
from condense_cli.core.events import Problem
from condense_cli.core.jsonlines import LineProblem, decode_line
from condense_cli.core.logfile import BOM, LogSource, line_body
from condense_cli.dialects.gemini_cli.events import GeminiEvent, is_context, is_sent, sent_key

REQUEST = "$condenseRequest"
CONDENSED = "$condense"  # beside the `$set` condense writes (the loader reads the `$set` only)
# In a message of `view --format jsonl`: the summary a compression put in (its mark
# is the `$set` that wrote it, which a view's lines do not hold); the client reads
# the message as any other
SNAPSHOT = "$snapshot"


@dataclass
class Compression:
    """A `$set` of the list that forgot messages: the view before it and after it."""

    line: int
    before: list[GeminiEvent]
    forgotten: list[GeminiEvent]
    after: list[GeminiEvent]
    snapshot: GeminiEvent | None
    prompt_tokens: int | None  # what the last response said its prompt held


@dataclass
class Session:
    """What a read of the file leaves: the client's list, every event met, the
    compressions, and what the header and the responses say."""

    header: dict[str, Any] = field(default_factory=dict)
    current: dict[str, GeminiEvent] = field(default_factory=dict)  # by message id, in order
    events: list[GeminiEvent] = field(default_factory=list)  # by number, from 1
    compressions: list[Compression] = field(default_factory=list)
    rewound: set[int] = field(default_factory=set)  # numbers a rewind dropped
    model: str | None = None
    prompt_tokens: int | None = None  # the last response's prompt, as it recorded it
    tokens_line: int | None = None
    request_pending: bool = False
    typed_line: int = 0  # the last line a message the user typed was written on
    document: bool = False  # one JSON document (2025 releases), not JSON lines
    lines: int = 0

    def listed(self) -> list[GeminiEvent]:
        """The client's list as it stands."""
        return list(self.current.values())


class Reader:
    """Reads a session's lines in order into a `Session`."""

    def __init__(self, path: str, collect: bool) -> None:
        self.path = path
        self.collect = collect
        self.problems: list[Problem] = []
        self.session = Session()
        self.by_id: dict[str, GeminiEvent] = {}
        # a `$set` of the context alone that a run writes first: the list it
        # replaced, until the run writes the list again (else it stands)
        self.held: tuple[int, list[GeminiEvent]] | None = None

    def problem(self, line: int | None, message: str, severity: str = "error") -> None:
        if severity == "error" and not self.collect:
            raise LogError(self.path, message, line)
        self.problems.append(Problem(line, message, severity))

    def read(self, source: LogSource, upto: str | None) -> Session:
        if is_document(source):
            return self.read_document(source, upto)
        limit = int(upto) if upto is not None and upto.isdigit() else None
        wanted = upto if upto is not None and limit is None else None
        found = wanted is None
        for number, raw in enumerate(source.raw_lines(), start=1):
            if limit is not None and number > limit:
                break
            self.session.lines = number
            body = line_body(raw, first=number == 1)
            if not body.strip():
                continue
            try:
                record = decode_line(body, quote=number > 1)
            except LineProblem as exc:
                if not raw.endswith(b"\n"):
                    self.problem(number, "the last line is cut off (torn write); it is not read")
                else:
                    self.problem(number, f"{exc}: the client skips this line", "warning")
                continue
            self.record(number, record, body)
            if wanted is not None and wanted in self.by_id:
                found = True
                break
        if not found:
            raise ConfigError(f"--upto {upto}: {self.path} has no message with this id")
        self.settle()
        if not self.session.header:
            self.problem(
                None,
                "no header: the client needs a line with sessionId and projectHash to "
                "resume a session",
            )
        return self.session

    def read_document(self, source: LogSource, upto: str | None) -> Session:
        """A session as one JSON document (`{"sessionId", …, "messages": [...]}`), as
        2025 releases wrote it and the client still resumes it: its list as it is."""
        self.session.document = True
        body = source.read_at(0, source.size).removeprefix(BOM)
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            self.problem(None, f"not a whole JSON document ({exc}); the client cannot resume it")
            return self.session
        if not isinstance(document, dict):
            self.problem(None, "the JSON document is not an object")
            return self.session
        if upto is not None:
            raise ConfigError(
                f"--upto {upto}: {self.path} is one JSON document, which records no order "
                "of writing to replay up to",
                hint="leave out --upto",
            )
        self.session.header = {k: v for k, v in document.items() if k != "messages"}
        self.session.lines = body.count(b"\n") + 1
        for message in document.get("messages") or []:
            if _is_message(message):
                self.message(1, message, None)
        return self.session

    def record(self, line: int, record: dict[str, Any], body: bytes) -> None:
        """One record, as the client's loader takes it."""
        if REQUEST in record:
            self.session.request_pending = True
        elif isinstance(record.get("$rewindTo"), str):
            self.settle()
            self.rewind(record["$rewindTo"])
        elif isinstance(record.get("id"), str):
            self.settle()
            self.message(line, record, body)
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            if isinstance(update.get("messages"), list):
                listed = [m for m in update["messages"] if _is_message(m)]
                self.replace(line, listed, CONDENSED in record)
            self.session.header |= {k: v for k, v in update.items() if k != "messages"}
        elif isinstance(record.get("sessionId"), str) and isinstance(
            record.get("projectHash"), str
        ):
            self.session.header |= {k: v for k, v in record.items() if k != "messages"}
            for message in record.get("messages") or []:
                if _is_message(message):
                    self.message(line, message, None)
        else:
            keys = ", ".join(list(record)[:5]) or "none"
            self.problem(line, f"a record the client does not read (keys: {keys})", "warning")

    def message(self, line: int, record: dict[str, Any], body: bytes | None) -> None:
        """A message record: new, or the same message again (it replaces it where it
        stood, or comes back at the end after a rewind)."""
        session = self.session
        known = self.by_id.get(record["id"])
        if known is None:
            event = self.new_event(line, record, body)
        else:
            event = known
            event.data, event.raw = record, body
        event.snapshot = event.snapshot or record.get(SNAPSHOT) is True
        session.current[record["id"]] = event
        session.rewound.discard(event.number)
        if body is not None and event.is_instruction:
            session.typed_line = line
        if record.get("type") == "gemini":
            if isinstance(record.get("model"), str):
                session.model = record["model"]
            tokens = record.get("tokens")
            if isinstance(tokens, dict) and isinstance(tokens.get("input"), int):
                session.prompt_tokens, session.tokens_line = tokens["input"], line

    def new_event(
        self, line: int, record: dict[str, Any], body: bytes | None, number: int | None = None
    ) -> GeminiEvent:
        events = self.session.events
        event = GeminiEvent(record, body, line, number if number is not None else len(events) + 1)
        if number is None:
            events.append(event)
        self.by_id[record["id"]] = event
        return event

    def rewind(self, message_id: str) -> None:
        current = self.session.current
        ids = list(current)
        cut = ids.index(message_id) if message_id in current else 0
        for gone in ids[cut:]:
            self.session.rewound.add(current.pop(gone).number)

    def replace(self, line: int, messages: list[dict[str, Any]], ours: bool = False) -> None:
        """A `$set` of the whole list (`ours`: one condense wrote)."""
        before = self.held[1] if self.held is not None else self.session.listed()
        if messages and all(is_context(m) for m in messages) and len(before) > len(messages):
            self.held = (line, before)  # a run's start: the list comes back next
            self.session.current = {}
            for message in messages:
                self.session.current[message["id"]] = self.same_or_new(line, message, {})
            return
        self.held = None
        originals: dict[bytes, list[GeminiEvent]] = {}
        listed_ids = {m["id"] for m in messages}
        for event in before:
            if event.message_id not in listed_ids:
                originals.setdefault(sent_key(event.data), []).append(event)
        after: dict[str, GeminiEvent] = {}
        for message in messages:
            after[message["id"]] = self.same_or_new(line, message, originals)
        self.session.current = after
        listed = list(after.values())
        kept = {e.number for e in listed}
        forgotten = [e for e in before if e.number not in kept and is_sent(e.data)]
        if forgotten and not ours and _restored(before, listed):
            # a checkpoint restored (`/chat resume`): the list is set to the messages
            # just written from it; what it dropped the user took back, as by a rewind
            self.session.rewound.update(e.number for e in forgotten)
        elif forgotten:
            self.compression(line, before, forgotten, listed)

    def same_or_new(
        self, line: int, message: dict[str, Any], originals: dict[bytes, list[GeminiEvent]]
    ) -> GeminiEvent:
        """The event of a listed message: its own (the same id), a copy of one the
        list left out (the same content under a new id), or a new one."""
        known = self.by_id.get(message["id"])
        if known is not None:
            known.data, known.raw = message, None
            return known
        copies = originals.get(sent_key(message))
        if copies:
            original = copies.pop(0)
            return self.new_event(line, message, None, original.number)
        return self.new_event(line, message, None)

    def compression(
        self,
        line: int,
        before: list[GeminiEvent],
        forgotten: list[GeminiEvent],
        after: list[GeminiEvent],
    ) -> None:
        known = {e.number for e in before}
        fresh = [e for e in after if e.number not in known and e.message_type == "user"]
        snapshot = next((e for e in fresh if not e.responses and not is_context(e.data)), None)
        if snapshot is not None:
            snapshot.snapshot = True
        self.session.request_pending = False
        tokens = self.session.prompt_tokens
        self.session.compressions.append(
            Compression(line, before, forgotten, after, snapshot, tokens)
        )

    def settle(self) -> None:
        """A run's first `$set` of its context stands when no list came after it."""
        if self.held is not None:
            line, before = self.held
            self.held = None
            after = self.session.listed()
            kept = {e.number for e in after}
            forgotten = [e for e in before if e.number not in kept and is_sent(e.data)]
            if forgotten:
                self.compression(line, before, forgotten, after)


def _restored(before: list[GeminiEvent], listed: list[GeminiEvent]) -> bool:
    """Whether a list is the end of the one before it, nothing new: what the client
    writes when it restores a checkpoint (its turns written as new messages, then the
    list set to them). A compression brings its snapshot; condense marks its own."""
    tail = before[len(before) - len(listed) :] if listed else []
    return bool(listed) and [e.number for e in tail] == [e.number for e in listed]


def is_document(source: LogSource) -> bool:
    """Whether the file is one JSON document (its first line `{` alone)."""
    first = next(iter(source.raw_lines()), b"")
    return first.removeprefix(BOM).strip() == b"{"


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str)


def read_session(
    source: LogSource, upto: str | None, collect: bool
) -> tuple[Session, list[Problem]]:
    """Validate and replay a session file."""
    reader = Reader(source.path, collect)
    session = reader.read(source, upto)
    return session, reader.problems
