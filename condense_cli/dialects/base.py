"""The seam between log formats and the rest of `condense`.

A dialect reads one format: it recognises it (by the rules of its `_detect`
module), validates and replays it (its own inner loop, for speed), and writes the
records `run` and `request` append. Every command talks to a dialect only through
`Dialect` and the `Replay` it returns.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from condense_cli.core.errors import ConfigError
from condense_cli.core.events import (
    Condensation,
    CondensationRecord,
    Event,
    Problem,
    View,
    model_text,
)
from condense_cli.core.logfile import LockedLog, LogSource, locked_log, log_bytes
from condense_cli.dialects.reports import CondensationRow, Sizes, StatsReport, Threshold
from condense_cli.llm.messages import NONE_KNOWN, Conversion, Known

if TYPE_CHECKING:
    from condense_cli.core.clientconfig import ClientConfig
    from condense_cli.core.usage import Spending, Usage
    from condense_cli.dialects.counting import TextCounts
    from condense_cli.llm.tokens import Tokenizer


@dataclass(frozen=True)
class Gap:
    """Events forgotten between two kept ones, all by one condensation.

    `after` is how many kept log lines come before the gap in the view (the
    summary replay inserts is not counted), so a renderer can place it.
    """

    after: int
    count: int
    first_id: object
    last_id: object
    by: object  # the id of the condensation that forgot them (None: unknown)


@dataclass(frozen=True)
class Record:
    """A record to append: its bytes (no newline) and its id, for messages."""

    body: bytes
    id: str


@dataclass(frozen=True)
class CondensationStep:
    """One condensation of a log as it happened: the view just before it, the
    events of that view it forgot, the summary it wrote, and the view right after."""

    id: object  # the condensation's id as the log writes it
    line: int  # its line (or file index) in the log
    before: View
    forgotten: Sequence[Event]
    summary: str | None
    after: View


# Wraps the reading of a big log, e.g. in a progress bar (the CLI's `progress`).
Reading = Callable[[LogSource], AbstractContextManager[None]]


def quiet_reading(source: LogSource) -> AbstractContextManager[None]:
    """Read without showing anything."""
    return contextlib.nullcontext()


# What a replay may do beyond showing its view, what the commands call it, and the
# methods a replay that declares it must define.
Capability = Literal["converts_messages", "audits", "simulates", "appends", "pins_in_log"]
CAPABILITIES: dict[Capability, tuple[str, tuple[str, ...]]] = {
    "converts_messages": ("showing the view as chat messages", ("each_message",)),
    "audits": ("auditing condensations", ("condensation_steps",)),
    "simulates": ("simulating a condenser over the history", ("history",)),
    "appends": ("appending", ("condensation_record", "request_record", "append")),
    "pins_in_log": ("keeping pins in the log", ("log_pins", "pin_record")),
}


class Unsupported(ConfigError):
    """A command asked a dialect for something it does not do (exit 2, with why)."""


class Replay(ABC):
    """A log read, validated and replayed by its dialect.

    What every dialect must do is abstract. What it may do is declared by the class
    flags below (`CAPABILITIES`): the commands check a flag before they call, so a
    dialect without it gets a clear refusal, and a class that declares a flag without
    its methods fails when it is defined.
    """

    dialect: ClassVar[str]
    path: str
    problems: list[Problem]
    # The tokens of the view's texts, once `stats` has counted them (replaced, never
    # changed in place), so that the view's messages are not tokenized again.
    token_counts: Known = NONE_KNOWN

    converts_messages: ClassVar[bool] = False
    # `each_message` may drop what the model would see (`Conversion.lost`). `check`
    # converts the whole view only to learn what it drops, so a dialect whose
    # conversion never drops anything says so here and is not converted.
    conversion_drops: ClassVar[bool] = True
    audits: ClassVar[bool] = False
    simulates: ClassVar[bool] = False
    appends: ClassVar[bool] = False
    pins_in_log: ClassVar[bool] = False  # the client skips a record it does not know
    # `thresholds` reads what a walk of `condensation_steps` keeps, so `audit` asks for
    # them after its walk; otherwise before (their own walk, then let go, keeps the
    # audit's peak down)
    thresholds_after_steps: ClassVar[bool] = False
    # `condensation_steps_from` starts where it is asked to, without walking the steps
    # before (so `audit` gives each of its two processes one half of the log to walk)
    steps_start_anywhere: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for flag, (_doing, methods) in CAPABILITIES.items():
            missing = [
                m for m in methods if getattr(cls, flag) and getattr(cls, m) is getattr(Replay, m)
            ]
            if missing:
                raise TypeError(
                    f"{cls.__name__} declares {flag} but does not define {', '.join(missing)}"
                )

    def forked(self) -> None:
        """In a forked child, before it reads the log again: see `LogSource.detach`
        (a replay that reads its log line by line after replaying it says so here)."""
        return None

    def require(self, flag: Capability) -> None:
        """Refuse, with a clear message, what this dialect does not do."""
        if not getattr(self, flag):
            raise self.unsupported(flag)

    def unsupported(self, flag: Capability) -> Unsupported:
        doing = CAPABILITIES[flag][0]
        return Unsupported(f"{self.path}: {doing} is not supported for {self.dialect} logs")

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def generation(self) -> str | None:
        """Which writer of the format the replay followed, when that matters."""
        return None

    @property
    def generation_reason(self) -> str | None:
        """Why the replay took that generation (the evidence in the log)."""
        return None

    @property
    @abstractmethod
    def forgotten_events(self) -> int:
        """Events the agent saw that condensations have forgotten."""

    @property
    @abstractmethod
    def condensations(self) -> list[CondensationRecord]:
        """What each condensation in the log did, in order."""

    @abstractmethod
    def view(self) -> View:
        """The replayed view, every event parsed."""

    @property
    def model(self) -> str | None:
        """The model the agent used last, as the log records it (None where it does not)."""
        return None

    # The provider (litellm's name) the agent's client sends the session to, where the
    # client has one: a summariser may go there when no model is named.
    provider: str | None = None

    def gaps(self) -> list[Gap]:
        """Where forgotten events were in the view, for the text view's markers: by
        default, each run of the history's events the view does not show (by their
        numbers), placed after the view's events shown before it (a dialect that
        knows which condensation forgot each says so; none: no markers)."""
        if not self.simulates:
            return []
        shown = {e.id for e in self.view() if not e.is_summary}
        gaps: list[Gap] = []
        kept, run = 0, []
        for event in self.history():
            if event is None or event.is_summary:
                continue
            if event.id not in shown:
                run.append(event.id)
                continue
            if run:
                gaps.append(Gap(kept, len(run), run[0], run[-1], None))
                run = []
            kept += 1
        if run:
            gaps.append(Gap(kept, len(run), run[0], run[-1], None))
        return gaps

    def on_resume(self) -> list[str]:
        """What the client will do to this log as soon as it resumes it, in words."""
        return []

    def unheard_compaction(self) -> CondensationStep | None:
        """The log's last compaction when no message the user typed came after it (the
        agent has not yet been told what it lost: a hook before the next prompt may
        tell it); None otherwise, and for a dialect whose client has a hook right after
        its compaction instead."""
        return None

    def compaction_guard(self) -> str | None:
        """Why the client's automatic compaction of this session should not happen now,
        in words (`hook pre-compact --guard` blocks it then); None: let it, as for
        every dialect whose client lets no hook block one."""
        return None

    def resume_figure(self, client: ClientConfig | None = None) -> dict[str, Any] | None:
        """Where the log stands against its client's compaction on resume, under the
        user's settings (the environment, and the settings file `client`), as
        `stats` shows it (None: the client compacts on no such threshold)."""
        return None

    def usage(self) -> list[Usage] | None:
        """Every model call the log records with the tokens it used, each once (None:
        a dialect whose usage `cost` does not read)."""
        return None

    def spending(self) -> Spending | None:
        """The agent's calls, in order, and where each compaction fell among them with
        its own call (None: a dialect whose usage `cost` does not read)."""
        return None

    def thresholds(self, client: ClientConfig | None = None) -> dict[int, Threshold]:
        """Each compaction, by its line, against the threshold its client was
        configured with: its defaults and what the log records, or the settings file
        `client` (none where neither says enough)."""
        return {}

    @abstractmethod
    def view_lines(self) -> Iterator[bytes]:
        """The view as JSON lines, each ended by a newline, kept records byte-for-byte
        (a chunk may hold several whole lines)."""

    def messages(self, view: View) -> Conversion:
        """`view` as the chat messages this dialect's agent sends for it, and what
        the conversion dropped or put in (`view` may be a condenser's rewrite)."""
        out = Conversion()
        out.messages = list(self.each_message(view, out))
        return out

    def conversion_changes(self, view: View) -> Conversion:
        """What converting `view` to messages drops, puts in or approximates, without
        keeping the messages (`check` asks only this)."""
        out = Conversion()
        for _message in self.each_message(view, out):
            pass  # the changes are whole once every message is taken
        return out

    @property
    def counted_while_read(self) -> bool:
        """Whether the read counted what `stats` counts (`Dialect.reading`'s `counts`), so
        that `stats` walks nothing."""
        return False

    def conversion_cut(self, view: View) -> int | None:
        """A place past the middle of `view` where cutting it changes nothing: its two
        parts, converted one after the other, give the view's messages and changes, so
        that a long view can be converted in two processes. None when no such place is
        known (by default: a conversion may pair calls with results across the view)."""
        return None

    def each_message(self, view: View, out: Conversion) -> Iterator[dict[str, Any]]:
        """`messages(view)` one message at a time, what the conversion changed going to
        `out` (whole once every message is taken): a view as long as its log is never
        whole as messages."""
        raise self.unsupported("converts_messages")

    def hold(self, view: View) -> None:
        """Make `view`'s events hold all they read from the log, to be used once it is
        closed (`run` prints its views then). By default they already do."""
        return None

    def stats(self, tokenizer: Tokenizer | None, reading: Reading = quiet_reading) -> StatsReport:
        """The numbers of `condense stats` (tokens when `tokenizer` is given).

        This default, for a dialect without a walk of its own, is built from the
        events of the history (of the view, for a dialect that keeps none): what the
        model reads of each, and the bytes of its record where the event has them."""
        view = self.view()
        history = [e for e in self.history() if e is not None] if self.simulates else list(view)
        by_type: dict[str, dict[str, int]] = {}
        for event in history:
            slot = by_type.setdefault(event.type or "?", {"events": 0, "bytes": 0})
            slot["events"] += 1
            slot["bytes"] += len(event.raw) if event.raw is not None else 0
        full = [model_text(e) for e in history]
        seen = [model_text(e) for e in view]
        chars = Sizes(sum(map(len, full)), sum(map(len, seen)))
        tokens = None
        if tokenizer is not None:
            counted = tokenizer.count_batch(full + seen)
            tokens = Sizes(sum(counted[: len(full)]), sum(counted[len(full) :]), tokenizer.name)
        rows = [
            CondensationRow(
                c.id, c.line, c.forgotten_events, c.ranges, c.summary_chars, c.view_size
            )
            for c in self.condensations
        ]
        return StatsReport(
            self.dialect,
            self.path,
            log_bytes(self.path),
            len(history),
            len(history),
            dict(sorted(by_type.items(), key=lambda kv: -kv[1]["bytes"])),
            rows,
            0,  # requests: a dialect with its own records of them walks its log itself
            view.unhandled_request,
            len(view),
            self.forgotten_events,
            chars,
            tokens,
        )

    # --- history (audit, simulate; slower than `view`, read again on demand) -----------

    def condensation_steps(self) -> Iterator[CondensationStep]:
        """Each condensation of the log, in order, with the views around it."""
        raise self.unsupported("audits")

    @property
    def step_count(self) -> int:
        """How many steps `condensation_steps` gives."""
        return len(self.condensations)

    def condensation_steps_from(self, first: int) -> Iterator[CondensationStep]:
        """`condensation_steps` from the `first`-th (counted from 1) on; walked from the
        log's start unless `steps_start_anywhere`."""
        return islice(self.condensation_steps(), first - 1, None)

    def history(self) -> Iterator[Event | None]:
        """Every event the agent saw, in the order it saw them, each with a key that
        increases down the history; None marks a condensation request. The log's
        own condensations and summaries are left out. Used while the log is open (an
        event may read it when asked)."""
        raise self.unsupported("simulates")

    # --- appending (only on a replay opened by `Dialect.appending`) -------------------

    def condensation_record(self, view: View, condensation: Condensation) -> Record:
        """The record that appends `condensation` to this log."""
        raise self.unsupported("appends")

    def request_record(self) -> Record:
        """The record that appends a condensation request to this log."""
        raise self.unsupported("appends")

    def append(self, record: Record) -> None:
        """Append `record`: locked, whole and fsynced, or not at all."""
        raise self.unsupported("appends")

    # --- pins kept in the log (where the client skips what it does not know) ----------

    def pins(self) -> list[str]:
        """The log's pins: those it records itself, then those kept beside it (none
        for a stream), each once."""
        from condense_cli.core.logfile import is_stream
        from condense_cli.core.pins import read_pins

        logged = self.log_pins() if self.pins_in_log else []
        beside = [] if is_stream(self.path) else read_pins(self.path)
        return list(dict.fromkeys([*logged, *beside]))

    def log_pins(self) -> list[str]:
        """The pins the log records, in the order they were added."""
        raise self.unsupported("pins_in_log")

    def pin_record(self, text: str) -> Record:
        """The record that pins `text` in this log."""
        raise self.unsupported("pins_in_log")


class Dialect(ABC):
    """One log format: replay, and the records it appends. What marks a log as in
    this format is in a small `<dialect>_detect` module beside it (see the registry)."""

    name: ClassVar[str]  # e.g. "openhands-v0"
    label: ClassVar[str]  # e.g. "OpenHands V0 event log"

    @abstractmethod
    def replay_file(
        self,
        source: LogSource,
        *,
        upto: str | None = None,
        collect: bool = False,
        locked: LockedLog | None = None,
    ) -> Replay:
        """Validate and replay a log that is one file; with `locked`, the replay can
        append once through it. Every dialect reads files (V1 reads folders too)."""

    def usage_of(self, path: str, source: LogSource | None) -> list[Usage] | None:
        """The model calls of a log, as its `Replay.usage` gives them; a dialect whose
        calls are plain in its lines reads them without replaying the log."""
        with self.reading(path, source) as replay:
            return replay.usage()

    @contextlib.contextmanager
    def reading(
        self,
        path: str,
        source: LogSource | None,
        *,
        upto: str | None = None,
        collect: bool = False,
        reading: Reading = quiet_reading,
        counts: TextCounts | None = None,
    ) -> Iterator[Replay]:
        """Read and replay a log (an open `source` for files, None for a folder).

        `collect` lists every problem in `Replay.problems` instead of raising
        at the first; `upto` replays only up to that event (an id or a position).
        `counts`: what `stats` will count with; a read that parses every event may
        count them as it goes (V1's folders), for `stats` to take.
        """
        assert source is not None, "detect_folder hands folders only to dialects that read them"
        with reading(source):
            replay = self.replay_file(source, upto=upto, collect=collect)
        yield replay

    @contextlib.contextmanager
    def appending(
        self, path: str, lock_timeout: float, reading: Reading = quiet_reading
    ) -> Iterator[Replay]:
        """Lock the log, read and replay it; the replay can then `append` once."""
        with locked_log(path, lock_timeout) as locked, locked.open_source() as source:
            with reading(source):
                replay = self.replay_file(source, locked=locked)
            yield replay
