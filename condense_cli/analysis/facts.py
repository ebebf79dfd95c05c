"""The facts of events, extracted deterministically and by kind: what `condense audit`
measures and LLM condensers verify (`carrying` looks them up in a text).

Kinds, in the order reports list them:
- `contradictions`: what a summary says against its events ("no changes made yet"
  after an edit, "no tests run" after a test run; `audit.contradictions`);
- `pins`: the texts pinned for the log (`core.pins`), carried as written;
- `constraints`: the clauses of the user's messages that state a constraint
  (`clauses.py`: don't, never, must, only, keep, ...), from the message they are in;
- `instructions`: the other clauses of the user's messages;
- `paths`: files touched (a tool's `path`/`file_path` argument, patch headers, and
  paths in commands, resolved against the `cd` before them); a file written two
  ways (`/repo/src/app.py`, `src/app.py`) is one fact, under its longest spelling;
- `commands`: shell commands run, by their core: the first line without the `cd` or
  `source` before it, the pager (`| tail`, `| head`) after it and an inline script it
  opens (`python -c "`, a heredoc); no key press (`C-c`); exploration (`ls`, `grep`,
  `cat`, `find`, read-only `git`, version probes) only when asked for;
- `errors`: exception lines, failing test ids, and non-zero exits (not exit 1 from a
  program that searches or compares, first or last in its pipeline: `grep` finding
  nothing is an answer; not 130, a command stopped with Ctrl-C), keyed by the
  output's last line that is not pip's `note:`/`hint:` advice;
- `urls`: addresses visited (a tool's `url`, browsing results, URLs in commands), and
  those an output announces (a server running, a deploy), not a README's links;
- `tasks`: the tasks of a task tracker or to-do list, and Claude Code's `TaskCreate`
  and `TaskUpdate` calls (their id, else their title).

Within a kind, reports put first what matters more (`Fact.rank`): files changed
before files only read; commands that change things for good (installs, commits,
deletions) or run and verify (test runners, scripts) before the rest; errors not
resolved before those whose command worked later.

A fact is compared in its normalised form: paths as paths (the same path, or one
the tail of the other with at least two components; a bare file name matches when
no other file of the set has that name; a folder is carried by a file under it),
URLs without fragment and final slash,
everything else case-folded with runs of white space made one space. A summary
also carries a fact in other words (these rules were set on a labelled set of real
compactions, `tests/labels/lost_facts.json`):
- a clause by the rules of `clauses.py` (a constraint with its object, and a negative
  one with its negation); a task by the words of its title but its verb;
- an install by "install…" and the packages (a pinned one as written); a Python script
  run plainly by the script's path; a command by itself without the options it ends
  with, when three words or more are left;
- an error by the names it quotes (a dotted one whole or by its last part); a failure
  to install, build or import by a sentence that reports trouble ("issues", "failed",
  "missing", ...) setting up and names the package; a failed test run or script by
  a sentence that reports trouble with the tests.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from condense_cli.analysis.clauses import (
    clauses,
    is_constraint,
)
from condense_cli.analysis.commands import (
    FINDERS,
    KEY_PRESS,
    MATTERS,
    RUNS_TESTS,
    SETUP_COMMANDS,
    SHELL_SPLIT,
    command_names,
    core_command,
    exploring,
    finds_or_compares,
    is_module,
    program_of,
    without_script,
)
from condense_cli.core.events import Event
from condense_cli.core.interrupts import INTERRUPTED  # a command stopped by Ctrl-C: no failure

# In the order that matters to an agent resuming from a summary (reports list the
# lost facts so): what the summary gets wrong, what the user requires, what is left to
# do and what is failing, how to run things, what was touched.
KINDS = (
    "contradictions",
    "pins",
    "constraints",
    "tasks",
    "instructions",
    "errors",
    "commands",
    "paths",
    "urls",
)
SAID = ("constraints", "instructions")  # the kinds a user's message gives
SHOWN_CHARS = 160  # a fact as reports show it
ERROR_CHARS = 150  # an error line is compared on its first characters

SHELL_TOOLS = frozenset(
    {
        "run",
        "bash",
        "execute_bash",
        "terminal",
        "shell",
        "shell_command",
        "exec_command",
        "run_shell_command",  # Gemini CLI
        "local_shell",
        "container.exec",
    }
)
PATH_ARGUMENTS = ("path", "file_path", "notebook_path", "filename", "file")
TASK_LISTS = ("task_list", "todos", "plan", "tasks")
TASK_NAMES = ("title", "content", "step", "subject", "description", "id", "taskId")
EXTENSIONS = (
    "py|pyi|js|mjs|cjs|ts|tsx|jsx|rs|go|c|h|cc|cpp|hpp|java|kt|rb|php|cs|swift|scala|pony|"
    "sh|bash|zsh|toml|yaml|yml|json|jsonl|md|rst|txt|cfg|ini|lock|xml|html|css|scss|sql|"
    "ipynb|env|mk|gradle|vue|svelte"
)

# Path characters are ASCII: a name never runs into the text around it in another
# script ("請閱讀/Users/me/doc.md, 這是" holds the path /Users/me/doc.md).
_C = r"A-Za-z0-9_"
# (a component may start with a dot: ~/.config/app.toml, .claude/settings.json)
_SLASHED = rf"(?:~|\.{{1,2}})?/?(?:\.?[{_C}@+-][{_C}.@+-]*/)+\.?[{_C}.@+-]*[{_C}@+-]"
_BARE = rf"[{_C}-]+(?:\.[{_C}-]+)*\.(?:{EXTENSIONS})"
PATH_IN_TEXT = re.compile(rf"(?<![{_C}/.:~@-])(?:{_SLASHED}|{_BARE})(?![{_C}/@-])")
PATH_TOKEN = re.compile(rf"^(?:{_SLASHED}|{_BARE})$")
# A whole run of the characters paths are made of that holds a "/" or a ".": every
# path `PATH_IN_TEXT` finds lies in one, so only these are searched (`paths_in`).
PATH_RUN = re.compile(r"(?<![A-Za-z0-9_.@+~/-])[A-Za-z0-9_@+~-]*+[./][A-Za-z0-9_.@+~/-]*+")
PATH_CHARS = re.compile(r"[A-Za-z0-9_.@+~/-]+")  # (the characters of a path `PATH_RUN` finds)
URL = re.compile(r"https?://[^\s'\"<>`)\]}]+")
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
QUOTED = re.compile(r"""['"`]([A-Za-z_][\w.-]{1,60})['"`]""")
SETUP_ERROR = re.compile(r"^(?:ModuleNotFoundError|ImportError)\b")
SETUP_WORDS = (
    "install",
    "build",
    "compil",
    "extension",
    "import",
    "depend",
    "environment",
    "setup",
)
TROUBLE_WORDS = (
    "fail",
    "issues",  # not "the issue", which is the bug being fixed
    "errors",
    "unable",
    "cannot",
    "can't",
    "missing",
    "conflict",
    "broken",
    "block",
    "prevent",
    "problems",
)
TEST_WORDS = ("test", "reproduc")
FOOTER = re.compile(r"^\s*(?:(?:note|hint):|\[notice\])", re.I)  # pip's closing advice
TASK_TOOLS = frozenset({"TaskCreate", "TaskUpdate"})
# Calls that change a file that was there (a new file, such as a repro script, is
# not a change to the code).
EDIT_TOOLS = frozenset(
    {"edit", "multiedit", "notebookedit", "str_replace_based_edit_tool", "replace"}
)
EDIT_COMMANDS = frozenset({"str_replace", "insert", "undo_edit"})
WRITE_TOOLS = frozenset({"write", "create", "create_file", "write_file", "notebookedit"})
ANNOUNCED = re.compile(
    r"(?i)\b(?:running|listening|serving|served|deployed|available|live|preview|visit|"
    r"local|network|started|ready|dashboard)\b"
)
MARKUP = re.compile(r"\]\(|<a |<img|\[!\[|image::|target::|\.\. _|href=")
# A pattern that starts at a line is tried at every character of a text, so each is
# run only on a text that holds what it needs (`_error_lines`): EXCEPTION, "Error",
# "Exception" or "Failure"; each of FAILING_TESTS, one word of each of its groups.
EXCEPTION_WORDS = ("Error", "Exception", "Failure")
EXCEPTION = re.compile(
    r"^(?:E\s+)?(?:[A-Za-z_][\w]*\.)*([A-Z]\w*(?:Error|Exception|Failure))(?::\s*(.*?))?\s*$",
    re.M,
)
FAILING_TESTS = (
    (re.compile(r"^(?:FAILED|ERROR)\s+(\S+::\S+)", re.M), (("FAILED", "ERROR"), ("::",))),  # pytest
    (re.compile(r"^(\S+::\S+)\s+(?:FAILED|ERROR)\b", re.M), (("FAILED", "ERROR"), ("::",))),  # -v
    (re.compile(r"^(?:FAIL|ERROR): (\w+ \([\w.]+\))", re.M), (("FAIL: ", "ERROR: "),)),  # unittest
    (re.compile(r"^--- FAIL: (\S+)", re.M), (("--- FAIL: ",),)),  # go test
    (re.compile(r"^test (\S+) \.\.\. FAILED$", re.M), ((" ... FAILED",),)),  # cargo test
)
SPACE = re.compile(r"\s+")
QUOTE_MARKS = re.compile(r"^[ \t]*>[ \t]?", re.M)  # the mark of a line of a quotation
NOT_PATHS = ("/dev/", "/proc/")
LINE_NUMBERS = re.compile(r":\d+(?::\d+)?$")  # `app.py:12`, `app.py:12:5`
LETTER = re.compile(r"[A-Za-z]")
Call = tuple[str, dict[str, Any]]  # a tool call: its name and arguments


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact: its kind, the forms it is compared in, and how reports show it."""

    kind: str
    keys: tuple[str, ...]  # the first is the fact itself; the others also count
    text: str
    source: object = field(default=None, compare=False)  # the id of the event it is from
    # What a summary may carry it by instead: every one of these names (a name is a
    # path, a word, `word*` for a word that starts so, `a|b` for either) ...
    names: tuple[str, ...] = field(default=(), compare=False)
    # ... or, for a failure, a sentence that reports trouble with one of these topics
    # (setting up: installing, building, importing; running the tests), naming the
    # package it is about, if any.
    topics: tuple[str, ...] = field(default=(), compare=False)
    package: str = field(default="", compare=False)
    # Within its kind, what matters more comes first (reports sort by it): 0 for a
    # file changed, a command that changes things or runs the tests or a script, an
    # error not resolved; 1 for a file only read, another command, a resolved error.
    rank: int = field(default=0, compare=False)
    about: str | None = field(default=None, compare=False)  # an error's command (core)
    seen: object = field(default=None, compare=False)  # the id of the event it was first in

    @property
    def key(self) -> str:
        return self.keys[0]

    def __reduce__(self) -> tuple[type[Fact], tuple[object, ...]]:
        """Pickled as its fields, in order (a forked audit sends thousands): a frozen
        dataclass with slots would be restored field by field, looking its fields
        up each time, at nearly twice the cost."""
        return Fact, tuple(getattr(self, name) for name in FACT_FIELDS)


FACT_FIELDS = tuple(f.name for f in fields(Fact))


def _set(fact: Fact, **values: object) -> Fact:
    """`fact` with `values` set in place, for a fact just made here that nothing else
    holds yet (`dataclasses.replace` would copy it at ten times the cost, and an
    audit marks every new fact)."""
    for name, value in values.items():
        object.__setattr__(fact, name, value)
    return fact


def squash(text: str) -> str:
    """Case-folded, every run of white space one space, stripped (`str.split` knows
    white space as `SPACE` does, and is twice as fast); the `>` that marks a line of a
    quotation left out, as a clause reflowed from it leaves it out."""
    text = QUOTE_MARKS.sub("", text) if ">" in text else text
    return " ".join(text.split()).casefold()


def paths_in(text: str) -> Iterator[str]:
    """What `PATH_IN_TEXT.findall(text)` finds, searching only the runs of path
    characters (in place: the search sees the characters before and after a run)
    that hold a "/" or a "." (twice as fast on the texts of real logs)."""
    find = PATH_IN_TEXT.findall
    for run in PATH_RUN.finditer(text):
        yield from find(text, run.start(), run.end())


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """One line of at most `limit` characters."""
    line = SPACE.sub(" ", text).strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


def normal_path(raw: str) -> str | None:
    """A path as compared: quotes, line numbers and test ids cut, `.`/`..` resolved."""
    path = raw.strip().strip("'\"`()[]{}<>").rstrip(".,;:")
    path = path.split("::", 1)[0]
    path = LINE_NUMBERS.sub("", path)
    if not path or "://" in path or path.startswith(NOT_PATHS) or path in ("/dev/null",):
        return None
    path = posixpath.normpath(path)
    if path in (".", "..", "/", "~") or not LETTER.search(path):
        return None
    return path.rstrip("/")


def components(path: str) -> tuple[str, ...]:
    return tuple(p for p in path.split("/") if p and p != "~")


def normal_url(raw: str) -> str:
    url = raw.rstrip(".,;:'\"!?")
    url = url.split("#", 1)[0].rstrip("/")
    scheme, _, rest = url.partition("://")
    host, slash, tail = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{slash}{tail}"


# --- extraction --------------------------------------------------------------------


def extract(events: Iterable[Event], everything: bool = False, calls: bool = False) -> list[Fact]:
    """The facts of `events`, each once (first seen first); summaries carry none.
    Exploration commands only with `everything`; with `calls`, only what the agent's
    tool calls give (files, commands, URLs, tasks: no output is read).

    One pass, so that an event a dialect reads back from its log is parsed once: an
    output finds its call's command among the events before it, and an error is
    marked resolved (rank 1) once the whole list shows the same command worked
    after it."""
    commands: dict[object, str] = {}
    found: dict[tuple[str, str], tuple[Fact, int]] = {}
    worked: dict[str, int] = {}  # command cores that exited 0, at their last such exit
    for index, event in enumerate(events):
        if event.is_summary:
            continue
        call = event.tool_call  # asked once: a dialect may parse it on every ask
        if calls:
            facts: Iterable[Fact] = _call_facts(call) if call is not None else ()
        else:
            _note_command(event, call, commands)
            facts = _facts_of(event, call, commands)
        for fact in facts:
            if fact.kind == "commands" and not everything and exploring(fact.text):
                continue
            if (fact.kind, fact.key) not in found:
                found[fact.kind, fact.key] = (_set(fact, seen=event.id), index)
        if not calls and event.exit_code == 0:
            command = commands.get(event.tool_call_id) or commands.get(event.cause)
            if command is not None:
                worked[core_command(command)[1]] = index
    return _one_spelling(
        [
            _set(fact, rank=1)
            if fact.about is not None and worked.get(fact.about, -1) > at
            # the same command worked later: resolved
            else fact
            for fact, at in found.values()
        ]
    )


def _one_spelling(facts: list[Fact]) -> list[Fact]:
    """Path facts that are a tail (two names or more) of a longer one are the same
    file written another way: only the longest spelling is kept."""
    by_name: dict[str, list[tuple[str, ...]]] = {}  # a tail ends in the same name
    for fact in facts:
        if fact.kind == "paths" and (parts := components(fact.key)):
            by_name.setdefault(parts[-1], []).append(parts)
    longer: set[str] = set()
    for fact in facts:
        if fact.kind != "paths":
            continue
        parts = components(fact.key)
        if len(parts) >= 2 and any(
            len(other) > len(parts) and other[len(other) - len(parts) :] == parts
            for other in by_name[parts[-1]]
        ):
            longer.add(fact.key)
    return [f for f in facts if not (f.kind == "paths" and f.key in longer)]


def _note_command(event: Event, call: Call | None, commands: dict[object, str]) -> None:
    """Note the command a shell call (`call`, the event's) runs, by tool call id and by
    key (for exits)."""
    command = _command(call)
    if command is not None:
        if event.tool_call_id is not None:
            commands[event.tool_call_id] = command
        if event.key is not None:
            commands[event.key] = command


def _command(call: Call | None) -> str | None:
    """The command a shell call runs."""
    if call is None or call[0].lower() not in SHELL_TOOLS:
        return None
    arguments = call[1]
    value = arguments.get("command", arguments.get("cmd"))
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    return value if isinstance(value, str) and value.strip() else None


def _facts_of(event: Event, call: Call | None, commands: dict[object, str]) -> Iterator[Fact]:
    """The facts of `event`, whose tool call is `call`."""
    if event.is_instruction and event.text.strip():
        for clause in clauses(event.text):
            kind = "constraints" if is_constraint(clause) else "instructions"
            yield Fact(kind, (squash(clause),), shown(clause), event.id)
    if call is not None:
        yield from _call_facts(call)
    elif not event.is_action:
        yield from _observation_facts(event, commands)


def _call_facts(call: Call) -> Iterator[Fact]:
    name, arguments = call
    read = 0 if _writes(call) else 1
    for argument in PATH_ARGUMENTS:
        value = arguments.get(argument)
        if isinstance(value, str):
            yield from _path_facts([value], read)
    patch = arguments.get("input") if name == "apply_patch" else None
    if isinstance(patch, str):
        yield from _path_facts((a or b for a, b in PATCH_FILE.findall(patch)), 0)
    command = _command(call)
    if command is not None:
        folder, core = core_command(command)
        runs = without_script(core)
        if runs and not KEY_PRESS.match(runs):
            rank = 0 if MATTERS.search(runs) else 1
            names = command_names(runs)
            yield Fact("commands", (squash(runs),), shown(runs), names=names, rank=rank)
        tokens = [t for t in SHELL_SPLIT.split(core) if PATH_TOKEN.match(t) and not is_module(t)]
        yield from _path_facts((posixpath.join(folder, t) if folder else t for t in tokens), 1)
        yield from _url_facts(URL.findall(command))
    url = arguments.get("url")
    if isinstance(url, str) and URL.match(url):
        yield from _url_facts([url])
    elif "brows" in name.lower() or "fetch" in name.lower():  # (Gemini CLI: in its prompt)
        yield from _url_facts(
            u for v in arguments.values() if isinstance(v, str) for u in URL.findall(v)
        )
    for listed in TASK_LISTS:
        tasks = arguments.get(listed)
        if isinstance(tasks, list):
            yield from task_facts(tasks)
    if name in TASK_TOOLS:  # Claude Code's task tools: one task per call
        yield from task_facts([arguments])


def announced_urls(output: str) -> Iterator[str]:
    """The URLs an output announces (a server running, a deploy, a preview): on a
    line that says so, not in markup (the badges and links of a README read)."""
    if "http" not in output:
        return  # most outputs: their lines are not looked at one by one
    for line in output.splitlines():
        if "http" in line and ANNOUNCED.search(line) and not MARKUP.search(line):
            yield from URL.findall(line)


def edits(event: Event) -> bool:
    """Whether an event is a call that changes a file that was there."""
    call = event.tool_call
    return call is not None and _changes_file(call)


def _writes(call: Call) -> bool:
    """Whether a call writes a file (changes one, or creates one)."""
    name, arguments = call
    return (
        _changes_file(call) or name.lower() in WRITE_TOOLS or arguments.get("command") == "create"
    )


def _changes_file(call: Call) -> bool:
    """Whether a call changes a file that was there."""
    name, arguments = call
    command = arguments.get("command")
    if command in EDIT_COMMANDS:
        return True
    patch = arguments.get("input") if name == "apply_patch" else None
    if isinstance(patch, str):
        return "*** Update File:" in patch
    return name.lower() in EDIT_TOOLS and command is None


def _path_facts(raws: Iterable[str], rank: int = 1) -> Iterator[Fact]:
    for raw in raws:
        path = normal_path(raw)
        if path is not None:
            yield Fact("paths", (path,), path, rank=rank)


def _url_facts(raws: Iterable[str]) -> Iterator[Fact]:
    for raw in raws:
        url = normal_url(raw)
        yield Fact("urls", (url,), url)


def task_facts(tasks: list[Any]) -> Iterator[Fact]:
    """The tasks of a task list, each by its name (`TASK_NAMES`)."""
    for task in tasks:
        if not isinstance(task, dict):
            continue
        name = next(
            (task[k] for k in TASK_NAMES if isinstance(task.get(k), str | int) and task[k] != ""),
            None,
        )
        if name is not None:
            yield Fact("tasks", (squash(str(name)),), shown(str(name)))


def _observation_facts(event: Event, commands: dict[object, str]) -> Iterator[Fact]:
    if event.url:
        yield from _url_facts([event.url])
    text = event.text
    command = commands.get(event.tool_call_id) or commands.get(event.cause)
    about = core_command(command)[1] if command is not None else None
    errors = [_set(f, about=about) for f in _error_lines(text)]
    yield from errors
    if event.type in ("error", "AgentErrorEvent") and not errors and text.strip():
        line = text.strip().splitlines()[0]
        yield Fact("errors", (squash(line[:ERROR_CHARS]),), shown(line))
    yield from _url_facts(announced_urls(text))
    code = event.exit_code
    if (
        code == 1
        and command is not None
        and (program_of(command) in FINDERS or finds_or_compares(command))
    ):
        return  # nothing found, or a difference: the answer, not a failure
    if code == INTERRUPTED or (command is not None and KEY_PRESS.match(command.strip())):
        return
    if code not in (None, 0) and not errors:
        lines = text.splitlines()
        last = next((x for x in reversed(lines) if x.strip() and not FOOTER.match(x)), None)
        keys = [squash(last[:ERROR_CHARS])] if last is not None else []
        core = core_command(command)[1] if command is not None else None
        if core is not None:
            keys.append(squash(core))
        if keys:
            said = f": {last.strip()}" if last is not None else ""
            ran = f" from {core}" if core is not None else ""
            yield _set(_failure(tuple(keys), shown(f"exit {code}{ran}{said}"), core), about=core)


def _failure(keys: tuple[str, ...], text: str, core: str | None) -> Fact:
    """A command's non-zero exit: an install or a build is about setting up (and the
    package it installs), a test run or a script about running the tests."""
    if core is not None and SETUP_COMMANDS.search(core):
        names = command_names(core)[1:]
        package = re.split(r"[<>=!~\[]", names[0])[0] if names else ""
        return Fact("errors", keys, text, names=names, topics=SETUP_WORDS, package=package)
    if core is not None and RUNS_TESTS.search(core):
        return Fact("errors", keys, text, topics=TEST_WORDS)
    return Fact("errors", keys, text)


def _error_lines(text: str) -> Iterator[Fact]:
    # each pattern needs words tested for first, which most outputs do not have
    if "FAIL" in text or "ERROR" in text:
        for pattern, needs in FAILING_TESTS:
            if not all(any(word in text for word in group) for group in needs):
                continue
            for test in pattern.findall(text):
                yield Fact("errors", _test_keys(test), shown(f"failing test {test}"))
    for name, message in exceptions(text):  # none in a text without `EXCEPTION_WORDS`
        line = f"{name}: {message}" if message else name
        quoted = list(dict.fromkeys(QUOTED.findall(message or "")))
        subjects = tuple(_subject(q) for q in quoted)
        key = (squash(line[:ERROR_CHARS]),)
        if SETUP_ERROR.match(line):  # the package: the last name quoted, its top level
            package = quoted[-1].split(".", 1)[0] if quoted else ""
            yield Fact(
                "errors", key, shown(line), names=subjects, topics=SETUP_WORDS, package=package
            )
        else:
            yield Fact("errors", key, shown(line), names=subjects)


def exceptions(text: str) -> list[tuple[str, str]]:
    """What `EXCEPTION.findall(text)` finds, trying the pattern only where a match
    can start (the pattern alone is tried at every character of the text).

    A match names the exception on one line, which holds one of `EXCEPTION_WORDS`.
    It starts where that line starts, or, after pytest's `E` marker, at a line that is
    `E` alone, with white space only (`str.isspace` is `\\s`) up to the name."""
    starts = set()
    for word in EXCEPTION_WORDS:
        at = text.find(word)
        while at >= 0:
            line = text.rfind("\n", 0, at) + 1
            starts.add(line)
            before = line - 1
            while before >= 0 and text[before].isspace():
                before -= 1
            if before >= 0 and text[before] == "E" and (before == 0 or text[before - 1] == "\n"):
                starts.add(before)
            end = text.find("\n", at)
            at = text.find(word, end) if end >= 0 else -1
    found = []
    done = 0  # where the last match ended: matches do not overlap
    for start in sorted(starts):
        if start >= done and (match := EXCEPTION.match(text, start)) is not None:
            found.append((match.group(1), match.group(2) or ""))
            done = match.end()
    return found


def _subject(quoted: str) -> str:
    """A name an error quotes, as a summary may name it: a dotted name whole or by
    its last part (`setuptools.dep_util|dep_util`)."""
    last = quoted.rsplit(".", 1)[-1]
    return f"{quoted}|{last}" if last != quoted and len(last) >= 4 else quoted


def _test_keys(test: str) -> tuple[str, ...]:
    """A failing test by its whole id, or its name (after the last `::`, before ` (`)."""
    whole = squash(test)
    name = squash(test.rsplit("::", 1)[-1].split(" (", 1)[0])
    return (whole, name) if name != whole else (whole,)


# --- what a text still carries -----------------------------------------------------
