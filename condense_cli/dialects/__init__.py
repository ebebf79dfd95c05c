"""Log formats ("dialects"): the registry, and detection from the input.

Adding a dialect is one package, `dialects/<name>/`, with a `Dialect` subclass in its
`dialect` module, an import-light `detect` module with the rules that recognise its
logs, and one entry in `DIALECTS` (ARCHITECTURE.md has the checklist).
Detection asks each dialect, in order, whether it claims the input: a folder by its
layout, a file by its first JSON object. OpenHands V0 comes last and takes what is
left, so its own line-numbered errors report a broken log.

Only the chosen dialect's package is imported: detection needs just the `detect`
modules, and a dialect's replay code takes a few milliseconds to import, which
a short command would otherwise pay for every format.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from condense_cli.core.errors import CondenseError, ConfigError, LogError
from condense_cli.core.logfile import BOM, LogSource, is_stream, refuse_streams
from condense_cli.core.remote import is_folder, is_url, local_folder
from condense_cli.dialects.claude_code import detect as claude_code_detect
from condense_cli.dialects.codex import detect as codex_detect
from condense_cli.dialects.gemini_cli import detect as gemini_cli_detect
from condense_cli.dialects.openhands_v0 import detect as openhands_v0_detect
from condense_cli.dialects.openhands_v1 import detect as openhands_v1_detect

if TYPE_CHECKING:  # (base is imported with the dialect chosen: not for detection)
    from condense_cli.core.usage import Spending, Usage
    from condense_cli.dialects.base import Dialect, Reading, Replay
    from condense_cli.dialects.counting import TextCounts


def _no_folder(path: Path) -> bool:
    return False


def _no_listing(folders: Iterable[str], files: Iterable[str]) -> bool:
    return False


def _no_project(log: str) -> str | None:
    return None


def _own_session(log: str) -> str:
    return log


@dataclass(frozen=True)
class Registered:
    """A dialect as detection sees it: its name, its claims, and where its
    `Dialect` class is (`module:Class`), imported only once the dialect is chosen."""

    name: str
    claims: Callable[[dict[str, Any]], bool]
    where: str
    claims_folder: Callable[[Path], bool] = _no_folder
    claims_listing: Callable[[Iterable[str], Iterable[str]], bool] = _no_listing  # on a store
    # the project a log of the dialect is of, where the log or the client records it
    project_of: Callable[[str], str | None] = _no_project
    # the session a log is part of (a Claude Code subagent's, the session that started it)
    session_of: Callable[[str], str] = _own_session

    def load(self) -> Dialect:
        """The dialect, ready to read a log."""
        module, _, cls = self.where.partition(":")
        dialect: Dialect = getattr(importlib.import_module(module), cls)()
        return dialect


V0 = Registered(
    openhands_v0_detect.NAME,
    openhands_v0_detect.claims,
    "condense_cli.dialects.openhands_v0.dialect:OpenHandsV0",
)
DIALECTS: dict[str, Registered] = {
    d.name: d
    for d in (
        Registered(
            openhands_v1_detect.NAME,
            openhands_v1_detect.claims,
            "condense_cli.dialects.openhands_v1.dialect:OpenHandsV1",
            openhands_v1_detect.claims_folder,
            openhands_v1_detect.claims_listing,
            openhands_v1_detect.project_of,
        ),
        Registered(
            gemini_cli_detect.NAME,
            gemini_cli_detect.claims,
            "condense_cli.dialects.gemini_cli.dialect:GeminiCli",
            project_of=gemini_cli_detect.project_of,
        ),
        Registered(
            claude_code_detect.NAME,
            claude_code_detect.claims,
            "condense_cli.dialects.claude_code.dialect:ClaudeCode",
            project_of=claude_code_detect.project_of,
            session_of=claude_code_detect.session_of,
        ),
        Registered(
            codex_detect.NAME,
            codex_detect.claims,
            "condense_cli.dialects.codex.dialect:Codex",
            project_of=codex_detect.project_of,
        ),
        V0,
    )
}

SNIFF_BYTES = 1 << 20  # detection reads at most this much of a first line


def dialect_named(name: str) -> Dialect:
    """The dialect called `name`, or a configuration error listing the choices."""
    registered = DIALECTS.get(name)
    if registered is None:
        raise ConfigError(f"--dialect {name!r} is not a dialect; choose one of: {choices()}")
    return registered.load()


def choices() -> str:
    return ", ".join(DIALECTS)


@contextlib.contextmanager
def read_log(
    path: str,
    *,
    dialect: str | None = None,
    upto: str | None = None,
    collect: bool = False,
    reading: Reading | None = None,
    counts: TextCounts | None = None,
    settled: bool = False,
) -> Iterator[Replay]:
    """Open, detect, validate and replay the log at `path` (`-` for standard input, a
    URL for a log on a store); `reading`: what is said of the reading (by default
    nothing, `base.quiet_reading`); `counts`: see `Dialect.reading`. `settled`: a
    file is read to its last whole line (`LogSource.settle`), as a hook reads a
    session its client is writing."""
    from condense_cli.dialects.base import quiet_reading

    reading = quiet_reading if reading is None else reading
    if is_url(path) and is_folder(path):
        with local_folder(path) as local:
            try:
                chosen = detect_folder(local, dialect)
                with chosen.reading(
                    local, None, upto=upto, collect=collect, counts=counts
                ) as replay:
                    replay.path = path
                    yield replay
            except CondenseError as exc:  # named by the URL, not the copy
                exc.message = exc.message.replace(local, path)
                raise
        return
    if not is_stream(path) and Path(path).is_dir():
        chosen = detect_folder(path, dialect)
        with chosen.reading(
            path, None, upto=upto, collect=collect, reading=reading, counts=counts
        ) as replay:
            yield replay
        return
    with LogSource.open(path) as source:
        if settled:
            source.settle()
        chosen = dialect_named(dialect) if dialect else detect_file(source)
        with chosen.reading(
            path, source, upto=upto, collect=collect, reading=reading, counts=counts
        ) as replay:
            yield replay


def read_usage(path: str, dialect: str | None = None) -> tuple[str, list[Usage] | None]:
    """The dialect of the log at `path` and the model calls it records (None: a
    dialect whose calls `cost` does not read), read as plainly as the dialect can, to
    its last whole line."""
    if is_url(path) or (not is_stream(path) and Path(path).is_dir()):
        with read_log(path, dialect=dialect) as replay:
            return replay.dialect, replay.usage()
    with LogSource.open(path) as source:
        source.settle()  # (to its last whole line: its client may be writing it now)
        chosen = dialect_named(dialect) if dialect else detect_file(source)
        return chosen.name, chosen.usage_of(path, source)


def read_spending(path: str, dialect: str | None = None) -> Spending | None:
    """The agent's calls of the log at `path` and where its compactions fell among
    them (None: a dialect whose calls `cost` does not read)."""
    with read_log(path, dialect=dialect) as replay:
        return replay.spending()


@contextlib.contextmanager
def append_to_log(
    path: str,
    *,
    dialect: str | None = None,
    lock_timeout: float = 10.0,
    reading: Reading | None = None,
) -> Iterator[Replay]:
    """Lock the log at `path` and replay it (`reading`: as `read_log`'s); the replay
    may then append one record."""
    from condense_cli.dialects.base import quiet_reading

    reading = quiet_reading if reading is None else reading
    refuse_streams(path)
    if Path(path).is_dir():
        chosen = detect_folder(path, dialect)
    elif dialect:
        chosen = dialect_named(dialect)
    else:
        with LogSource.open(path) as source:
            chosen = detect_file(source)
    with chosen.appending(path, lock_timeout, reading) as replay:
        replay.require("appends")
        yield replay


def detect_folder(path: str, dialect: str | None = None) -> Dialect:
    """The dialect whose layout the folder has (only `dialect`, when named), or a
    clear error."""
    if dialect:
        named = dialect_named(dialect)
        if DIALECTS[dialect].claims_folder(Path(path)):
            return named
        raise LogError(
            path,
            f"is a directory, which the {named.name} dialect does not read",
            hint="leave out --dialect to detect the format, or give a log file",
        )
    for registered in DIALECTS.values():
        if registered.claims_folder(Path(path)):
            return registered.load()
    raise LogError(
        path,
        "is a directory, not a log file or a conversation folder",
        hint="give a JSONL log, or an OpenHands V1 conversation folder "
        "(the one holding events/ or event_service/, or events/ itself)",
    )


def detect_file(source: LogSource) -> Dialect:
    """The dialect that claims the file's first JSON object.

    Inputs that are no log at all but look like a known export get one message
    saying what they look like and what to do, instead of one error per line.
    """
    file = source.file
    file.seek(0)
    try:
        first = first_value(first_lines(file))
    finally:
        file.seek(0)
    registered = claimant(first)
    if registered is not None and registered is not V0:
        return registered.load()
    unreadable = _what_it_looks_like(first)
    if unreadable is not None:
        what, hint = unreadable
        raise LogError(
            source.path, f"this is not a log condense reads: it looks like {what}", 1, hint=hint
        )
    return V0.load()


def first_lines(file: BinaryIO) -> Iterator[bytes]:
    """The lines of `file` from where it is, each read at most `SNIFF_BYTES`."""
    return iter(lambda: file.readline(SNIFF_BYTES), b"")


def first_value(lines: Iterable[bytes]) -> Any:
    """The JSON value on the first non-blank of `lines` (each read at most
    `SNIFF_BYTES`), `"["` for an opening bracket alone, the leading members of an
    object written a member per line (`{` alone, then `"key": value,` lines: a JSON
    document such as Gemini CLI's 2025 sessions), or None when it cannot be read (the
    dialect then reports why)."""
    lines = iter(lines)
    for number, raw in enumerate(lines, start=1):
        body = (raw.removeprefix(BOM) if number == 1 else raw).strip()
        if not body:
            continue
        if body == b"[":
            return "["
        if body == b"{":
            return _leading_members(lines) or None
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            return None
    return None


def _leading_members(lines: Iterator[bytes]) -> dict[str, Any]:
    """The members of an object written one per line, up to the first that spans
    lines (or the object's end)."""
    members: dict[str, Any] = {}
    for raw in lines:
        body = raw.strip().removesuffix(b",")
        try:
            member = orjson.loads(b"{" + body + b"}")
        except orjson.JSONDecodeError:
            break
        if not isinstance(member, dict):
            break
        members |= member
    return members


def claimant(first: Any, dialect: str | None = None) -> Registered | None:
    """The dialect that claims a log whose first JSON value is `first` (only
    `dialect`, when named), in the registry's order: V0, whose claim is the loosest,
    last. The one rule of every detection of a file: `read_log`, trees, stores."""
    if not isinstance(first, dict):
        return None
    for name, registered in DIALECTS.items():
        if dialect in (None, name) and registered.claims(first):
            return registered
    return None


def _what_it_looks_like(first: Any) -> tuple[str, str] | None:
    """(what, what to do) for a known kind of input that is not a log, else None."""
    if first == "[" or (isinstance(first, list) and first and isinstance(first[0], dict)):
        if isinstance(first, list) and _is_legacy_pair(first):
            return (
                "a legacy OpenHands history: [action, observation] pairs without event ids",
                "condense needs one event per line with ids, as OpenHands' event stream "
                "writes them; there is no faithful way to number these events",
            )
        return (
            "a JSON array of events (an OpenHands trajectory export), not one event per line",
            "convert it to one event per line first: jq -c '.[]' FILE > FILE.jsonl",
        )
    if isinstance(first, dict) and isinstance(first.get("history"), list):
        return (
            "an OpenHands evaluation or resolver output (one run per line, its events "
            'under "history")',
            "extract one run's events first: head -1 FILE | jq -c '.history[]' > run.jsonl",
        )
    if isinstance(first, dict) and not any(claims(first) for claims in _all_claims()):
        keys = ", ".join(list(first)[:6]) or "none"
        return (
            f"another kind of log (its first object has the keys: {keys})",
            f"condense reads these dialects: {choices()}; name one with --dialect if "
            "detection is wrong",
        )
    return None


def _is_legacy_pair(value: list[Any]) -> bool:
    return (
        len(value) == 2
        and all(isinstance(v, dict) for v in value)
        and "action" in value[0]
        and "observation" in value[1]
        and "id" not in value[0]
    )


def _all_claims() -> Iterator[Any]:
    return (registered.claims for registered in DIALECTS.values())
