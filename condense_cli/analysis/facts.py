"""The facts of events, extracted deterministically and by kind, and whether a text
still carries them (what `condense audit` measures and LLM condensers verify).

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
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields
from functools import cached_property, lru_cache
from typing import Any

from condense_cli.analysis.clauses import (
    OBJECT_SHARE,
    SENTENCE,
    carried,
    clauses,
    content,
    is_constraint,
    sentences_of,
)
from condense_cli.core.events import Event

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
        "local_shell",
        "container.exec",
    }
)
PATH_ARGUMENTS = ("path", "file_path", "notebook_path", "filename", "file")
TASK_LISTS = ("task_list", "todos", "plan", "tasks")
TASK_NAMES = ("id", "taskId", "title", "content", "step", "subject")
EXTENSIONS = (
    "py|pyi|js|mjs|cjs|ts|tsx|jsx|rs|go|c|h|cc|cpp|hpp|java|kt|rb|php|cs|swift|scala|pony|"
    "sh|bash|zsh|toml|yaml|yml|json|jsonl|md|rst|txt|cfg|ini|lock|xml|html|css|scss|sql|"
    "ipynb|env|mk|gradle|vue|svelte"
)

# Path characters are ASCII: a name never runs into the text around it in another
# script ("請閱讀/Users/me/doc.md, 這是" holds the path /Users/me/doc.md).
_C = r"A-Za-z0-9_"
_SLASHED = rf"(?:~|\.{{1,2}})?/?(?:[{_C}@+-][{_C}.@+-]*/)+[{_C}.@+-]*[{_C}@+-]"
_BARE = rf"[{_C}-]+(?:\.[{_C}-]+)*\.(?:{EXTENSIONS})"
PATH_IN_TEXT = re.compile(rf"(?<![{_C}/.:~@-])(?:{_SLASHED}|{_BARE})(?![{_C}/@-])")
PATH_TOKEN = re.compile(rf"^(?:{_SLASHED}|{_BARE})$")
# A whole run of the characters paths are made of that holds a "/" or a ".": every
# path `PATH_IN_TEXT` finds lies in one, so only these are searched (`paths_in`).
PATH_RUN = re.compile(r"(?<![A-Za-z0-9_.@+~/-])[A-Za-z0-9_@+~-]*+[./][A-Za-z0-9_.@+~/-]*+")
PATH_CHARS = re.compile(r"[A-Za-z0-9_.@+~/-]+")  # (the characters of a path `PATH_RUN` finds)
URL = re.compile(r"https?://[^\s'\"<>`)\]}]+")
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
# What a command is wrapped in: a `cd`/`source` before it, a pager or a redirection
# after it. The core is what a summary names ("ran pytest tests/"), and the `cd`
# resolves the relative paths the command names.
CD_PREFIX = re.compile(r"^\s*cd\s+(\S+)\s*(?:&&|;)\s*")
SOURCE_PREFIX = re.compile(r"^\s*(?:source|\.)\s+\S+\s*(?:&&|;)\s*")
PAGER_SUFFIX = re.compile(
    r"\s*(?:2>&1\s*)?(?:\|\s*(?:tail|head|less|more|cat)\b[^|]*)+$|\s*2>&1\s*$"
)
KEY_PRESS = re.compile(r"^C-[a-z]$")  # what OpenHands sends a terminal for Ctrl-C
QUOTES = re.compile(r""""[^"]*"|'[^']*'""")
CHAIN = re.compile(r"\s*(&&|\|\||;)\s*")  # commands run one after another
HEREDOC = re.compile(r"<<-?\s*['\"]?\w+['\"]?\s*$")
PACKAGE = re.compile(r"^[A-Za-z][\w.-]*(?:\[[\w,-]+\])?(?:[<>=!~]=?[\w.*]+)?$")
QUOTED = re.compile(r"""['"`]([A-Za-z_][\w.-]{1,60})['"`]""")
SETUP_ERROR = re.compile(r"^(?:ModuleNotFoundError|ImportError)\b")
SETUP_COMMANDS = re.compile(r"^(?:pip3?|python3?\s+-m\s+pip)\s+install\b|\bsetup\.py\b|^make\b")
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
RUNS_TESTS = re.compile(r"^(?:python3?\s+(?:-m\s+(?:pytest|unittest)\b|\S+\.py\b)|pytest\b)")
INTERRUPTED = 130  # the exit of a command stopped with Ctrl-C: not its failure
# Exit 1 from these means "nothing found" or "they differ", not a failure.
FINDERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "diff", "cmp", "test", "["})
FOOTER = re.compile(r"^\s*(?:(?:note|hint):|\[notice\])", re.I)  # pip's closing advice
TASK_TOOLS = frozenset({"TaskCreate", "TaskUpdate"})
# Commands that only look around: a summary need not carry them.
EXPLORING = frozenset(
    [
        "ls",
        "ll",
        "cat",
        "head",
        "tail",
        "less",
        "more",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "ack",
        "find",
        "fd",
        "pwd",
        "which",
        "whereis",
        "type",
        "echo",
        "wc",
        "tree",
        "file",
        "stat",
        "du",
        "df",
        "env",
        "printenv",
        "whoami",
        "id",
        "date",
        "history",
        "nl",
    ]
)
READ_ONLY_GIT = frozenset(
    ["status", "log", "diff", "show", "branch", "remote", "rev-parse", "ls-files", "blame"]
)
PROBE = re.compile(r"(?:^|\s)(?:--version|-V)\b|__version__|\bpip3? (?:show|list|freeze)\b")
# Calls that change a file that was there (a new file, such as a repro script, is
# not a change to the code).
EDIT_TOOLS = frozenset({"edit", "multiedit", "notebookedit", "str_replace_based_edit_tool"})
EDIT_COMMANDS = frozenset({"str_replace", "insert", "undo_edit"})
WRITE_TOOLS = frozenset({"write", "create", "create_file", "write_file", "notebookedit"})
# Commands that matter most to an agent resuming: what changes things for good
# (installs, commits and pushes, deletions, moves), and how to run and verify
# (test runners, scripts).
MATTERS = re.compile(
    r"\b(?:pip3?|npm|pnpm|yarn|uv|poetry|cargo|apt(?:-get)?|brew|conda|mamba)\s+(?:install|add)\b"
    r"|\bgit\s+(?:commit|push|merge|rebase|reset|checkout|apply|cherry-pick)\b"
    r"|(?:^|[;&|]\s*)(?:rm|mv|cp|chmod|ln)\s|\bdeploy\b"
    r"|\b(?:pytest|unittest|tox|nox|jest|vitest|mocha|cargo test|go test|npm test|make)\b"
    r"|^(?:python3?|node|bash|sh)\s+(?:-u\s+)?\S+\.(?:py|js|mjs|sh)\b"
)
ANNOUNCED = re.compile(
    r"(?i)\b(?:running|listening|serving|served|deployed|available|live|preview|visit|"
    r"local|network|started|ready|dashboard)\b"
)
MARKUP = re.compile(r"\]\(|<a |<img|\[!\[|image::|target::|\.\. _|href=")
SHELL_SPLIT = re.compile(r"[\s;|&<>()'\"`=,]+")
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
    white space as `SPACE` does, and is twice as fast)."""
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
            names = _command_names(runs)
            yield Fact("commands", (squash(runs),), shown(runs), names=names, rank=rank)
        tokens = [t for t in SHELL_SPLIT.split(core) if PATH_TOKEN.match(t) and not _module(t)]
        yield from _path_facts((posixpath.join(folder, t) if folder else t for t in tokens), 1)
        yield from _url_facts(URL.findall(command))
    url = arguments.get("url")
    if isinstance(url, str) and URL.match(url):
        yield from _url_facts([url])
    elif "brows" in name.lower():
        yield from _url_facts(
            u for v in arguments.values() if isinstance(v, str) for u in URL.findall(v)
        )
    for listed in TASK_LISTS:
        tasks = arguments.get(listed)
        if isinstance(tasks, list):
            yield from _task_facts(tasks)
    if name in TASK_TOOLS:  # Claude Code's task tools: one task per call
        yield from _task_facts([arguments])


def core_command(command: str) -> tuple[str | None, str]:
    """The folder a command `cd`s into first (None without one), and its core: its
    first line without `cd`/`source` before it or a pager after it."""
    lines = command.strip().splitlines()
    first = lines[0] if lines else ""
    folder = None
    while True:
        moved = CD_PREFIX.match(first)
        sourced = SOURCE_PREFIX.match(first)
        if moved:
            target = moved.group(1).strip("'\"")
            folder = posixpath.join(folder, target) if folder else target
            first = first[moved.end() :]
        elif sourced:
            first = first[sourced.end() :]
        else:
            break
    return folder, without_pager(first)


def without_pager(line: str) -> str:
    """A command's line without the pager it pipes into (`| tail -5`) or the `2>&1`
    it ends with, stripped; the pattern is tried only on a line that holds either."""
    if "|" in line or "2>&1" in line:
        return PAGER_SUFFIX.sub("", line).strip() or line.strip()
    return line.strip()


def without_script(core: str) -> str:
    """A command's first line without the inline script it opens last (`python -c "`,
    a heredoc), which is no command one could run again: a summary says what the
    script did instead ("" when the line is only that)."""
    while core.count('"') % 2 == 1 or core.count("'") % 2 == 1 or HEREDOC.search(core):
        parts = CHAIN.split(core)
        if len(parts) < 3:
            return ""
        core = " ".join(parts[:-2]).strip()
    return core


def _module(token: str) -> bool:
    """Whether a bare token is a dotted module name (`astropy.io.ascii.rst`), not a
    file: three dots or more and no slash."""
    return "/" not in token and token.count(".") >= 3


def _command_names(core: str) -> tuple[str, ...]:
    """What else carries a command in a summary: an install by the word and its
    packages (a pinned one as written), a Python script run plainly by the script's
    name, else the command without the options it ends with (`python -m pylint
    --help` by "python -m pylint")."""
    words = CHAIN.split(core, maxsplit=1)[0].split()
    if len(words) >= 3 and words[0] in ("pip", "pip3") and words[1] == "install":
        wanted = [w for w in words[2:] if not w.startswith("-")]
        if wanted and all(PACKAGE.match(w.strip("'\"")) for w in wanted):
            return ("install*", *(w.strip("'\"") for w in wanted))
    if len(words) >= 2 and words[0] in ("python", "python3"):
        script = next((w for w in words[1:] if not w.startswith("-")), "")
        if words[1] != "-m" and script.endswith(".py"):
            return (script,)
    shorter = words[:]
    while len(shorter) > 2 and shorter[-1].startswith("-"):
        shorter.pop()
    return (" ".join(shorter),) if 3 <= len(shorter) < len(words) else ()


def announced_urls(output: str) -> Iterator[str]:
    """The URLs an output announces (a server running, a deploy, a preview): on a
    line that says so, not in markup (the badges and links of a README read)."""
    if "http" not in output:
        return  # most outputs: their lines are not looked at one by one
    for line in output.splitlines():
        if "http" in line and ANNOUNCED.search(line) and not MARKUP.search(line):
            yield from URL.findall(line)


def exploring(command: str) -> bool:
    """Whether a command (its core) only looks around: `ls`, `grep`, `cat`, `find`,
    a read-only `git`, a version probe."""
    words = core_command(command)[1].split()
    if not words:
        return False
    program = posixpath.basename(words[0])
    if program == "git":
        return len(words) > 1 and words[1] in READ_ONLY_GIT
    return program in EXPLORING or bool(PROBE.search(command))


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


def _program(command: str) -> str:
    """The program a command's core runs (`grep` in `cd x && grep -n y | head`)."""
    words = core_command(command)[1].split()
    return posixpath.basename(words[0]) if words else ""


def _path_facts(raws: Iterable[str], rank: int = 1) -> Iterator[Fact]:
    for raw in raws:
        path = normal_path(raw)
        if path is not None:
            yield Fact("paths", (path,), path, rank=rank)


def _url_facts(raws: Iterable[str]) -> Iterator[Fact]:
    for raw in raws:
        url = normal_url(raw)
        yield Fact("urls", (url,), url)


def _task_facts(tasks: list[Any]) -> Iterator[Fact]:
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
    if code == 1 and command is not None and (_program(command) in FINDERS or _finds(command)):
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
        names = _command_names(core)[1:]
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


def _finds(command: str) -> bool:
    """Whether the command's pipeline ends in a program whose exit 1 is an answer."""
    core = QUOTES.sub('""', core_command(command)[1])  # a `\|` in a pattern is no pipe
    last = core.rsplit("|", 1)[-1].split()
    return bool(last) and posixpath.basename(last[0]) in FINDERS


def _test_keys(test: str) -> tuple[str, ...]:
    """A failing test by its whole id, or its name (after the last `::`, before ` (`)."""
    whole = squash(test)
    name = squash(test.rsplit("::", 1)[-1].split(" (", 1)[0])
    return (whole, name) if name != whole else (whole,)


# --- what a text still carries -----------------------------------------------------


class Scanned:
    """What a memory takes of one text: the text squashed, and, when first asked, the
    paths it names (as components) and its URLs, in the order they come. Most texts
    of a view are never asked: a path or a URL is looked for only in the texts that
    hold its name."""

    __slots__ = ("_paths", "_urls", "squashed", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.squashed = squash(text)
        self._paths: tuple[tuple[str, ...], ...] | None = None
        self._urls: tuple[str, ...] | None = None

    @property
    def paths(self) -> tuple[tuple[str, ...], ...]:
        if self._paths is None:
            found = []
            for raw in paths_in(self.text):
                path = normal_path(raw)
                if path is not None and (parts := components(path)):
                    found.append(parts)
            self._paths = tuple(found)
        return self._paths

    @property
    def urls(self) -> tuple[str, ...]:
        if self._urls is None:
            self._urls = tuple(normal_url(u) for u in URL.findall(self.text))
        return self._urls


class Scans:
    """The texts of the last view scanned, by text: the next view holds most of them
    again (the events a condensation keeps), and they are not scanned twice."""

    def __init__(self) -> None:
        self.last: dict[str, Scanned] = {}

    def memory(self, texts: Iterable[str]) -> Memory:
        """`Memory.of(texts)`, scanning only the texts the last view did not hold."""
        last = self.last
        now: dict[str, Scanned] = {}
        found = []
        for text in texts:
            if not text:
                continue
            scan = now.get(text)
            if scan is None:
                scan = now[text] = last.get(text) or Scanned(text)
            found.append(scan)
        self.last = now
        return Memory(found)


# A memory about to be asked for this many facts indexes its words first: the index
# costs about 100 scans of its texts, and spares about half the scans after it.
INDEX_MIN_FACTS = 400


class Memory:
    """Texts (a summary, or the events a view holds) made ready to look facts up in.

    A path is looked for only in the texts that hold its file name (any path whose
    components end so names it), a URL only when the texts hold it case-folded: the
    texts are not all scanned for paths and URLs. A memory about to be asked for many
    facts indexes its words (`index_words`), and is then not scanned for a text one
    of whose words it lacks (`holds`)."""

    def __init__(self, scans: list[Scanned], loose: bool = False) -> None:
        self.scans = scans
        self.flat = "\n".join(s.squashed for s in scans)
        self.loose = loose  # a summary: a clause may be carried in other words
        self._words: set[str] | None = None  # once `index_words` made them
        self._starts: list[int] = []  # where each text starts in `flat`
        at = 0
        for scan in scans:
            self._starts.append(at)
            at += len(scan.squashed) + 1

    @classmethod
    def of(cls, texts: Iterable[str], loose: bool = False) -> Memory:
        """`loose` for a summary, which may carry an instruction in its own words."""
        return cls([Scanned(t) for t in texts if t], loose)

    # What a summary is read for when it does not hold a fact as written, made when
    # first asked (most facts are paths, or held as written).

    @cached_property
    def stems(self) -> set[str]:
        """(A summary's) content words."""
        return content(self.flat)

    @cached_property
    def sentences(self) -> list[set[str]]:
        """(A summary's) content words, sentence by sentence."""
        return [s for scan in self.scans for s in sentences_of(scan.text)]

    @cached_property
    def said(self) -> list[str]:
        """(A summary's) sentences, squashed."""
        return [squash(x) for scan in self.scans for x in SENTENCE.split(scan.text) if x.strip()]

    def holding(self, name: str) -> Iterator[Scanned]:
        """The texts that may name a path with a component `name`, each once, in
        order: those whose squashed text holds it (case-folded; such a component is
        made of `PATH_CHARS`, none of them white space)."""
        if not PATH_CHARS.fullmatch(name):
            return
        flat, starts, scans, folded = self.flat, self._starts, self.scans, name.lower()
        at = flat.find(folded)
        while at >= 0:
            index = bisect_right(starts, at) - 1
            yield scans[index]
            if index + 1 == len(starts):
                break
            at = flat.find(folded, starts[index + 1])

    def paths_named(self, name: str) -> list[tuple[str, ...]]:
        """The paths (as components) of the texts whose file name is `name`."""
        return [p for scan in self.holding(name) for p in scan.paths if p[-1] == name]

    @cached_property
    def urls(self) -> set[str]:
        """Every URL of the texts (normalised)."""
        return {u for scan in self.scans for u in scan.urls}

    def carries(self, fact: Fact, unique_names: set[str] | frozenset[str] = frozenset()) -> bool:
        """Whether this memory still holds `fact`; `unique_names` are the file names
        that only one path of the audited set has (a bare mention of one counts)."""
        if fact.kind == "paths":
            return self._has_path(fact.key, unique_names)
        if fact.kind == "urls":
            key = fact.key
            if key.casefold() not in self.flat and not key.endswith("://"):
                return False  # a URL a text names is in its squashed text (but one cut to
                # its scheme, `http:///` read as `http:://`): its URLs need no scan
            return key in self.flat or key in self.urls
        if any(self.holds(key) for key in fact.keys):
            return True
        if not self.loose:
            return False
        if fact.kind in SAID:
            return carried(fact.key, self.stems, lambda: self.sentences)
        if fact.kind == "tasks":  # in other words: its title's words but the verb
            wanted = content(fact.key.split(" ", 1)[-1])
            return bool(wanted) and len(wanted & self.stems) >= OBJECT_SHARE * len(wanted)
        if fact.names and all(self._names(n, unique_names) for n in fact.names):
            return True
        return bool(fact.topics) and self._reports(fact.topics, fact.package)

    def index_words(self) -> None:
        """Index the words of the texts, for `holds`. Making the index costs about
        what 100 scans of the texts do."""
        self._words = set(self.flat.replace("\n", " ").split(" "))

    def holds(self, key: str) -> bool:
        """`key in self.flat`, for a squashed text. With the words indexed, a key is
        not looked for when a word inside it (with a space on both sides) is no word
        of the texts: a match would have that word whole between two spaces."""
        words = self._words
        if words is not None and "\n" not in key:
            inside = key.split(" ")[1:-1]
            if any(word not in words for word in inside):
                return False
        return key in self.flat

    def _names(self, name: str, unique_names: set[str] | frozenset[str]) -> bool:
        """Whether a summary names `name` (see `Fact.names`)."""
        for one in name.split("|"):
            if " " not in one and ("/" in one or one.endswith(".py")):
                path = normal_path(one)
                if path is not None and self._has_path(path, unique_names):
                    return True
            elif _holds_word(self.flat, one):
                return True
        return False

    def _reports(self, topics: tuple[str, ...], package: str) -> bool:
        """Whether a sentence reports trouble with one of `topics`, naming `package`
        when there is one."""
        named = _word(package) if package else None
        return any(
            any(w in sentence for w in topics)
            and any(w in sentence for w in TROUBLE_WORDS)
            and (named is None or named.search(sentence) is not None)
            for sentence in self.said
        )

    def _has_path(self, path: str, unique_names: set[str] | frozenset[str]) -> bool:
        parts = components(path)
        if not parts:
            return False
        for other in self.paths_named(parts[-1]):
            short, long = (parts, other) if len(parts) <= len(other) else (other, parts)
            if long[len(long) - len(short) :] != short:
                continue
            if len(short) >= 2 or len(parts) == 1 or parts[-1] in unique_names:
                return True
        return "." not in parts[-1] and self._names_under(parts)

    def _names_under(self, folder: tuple[str, ...]) -> bool:
        """Whether a path under `folder` is named (by the folder's last two names, or
        its one name when it has only one): a directory is carried by its files."""
        tail = folder[-2:]
        return any(
            other[i : i + len(tail)] == tail
            for scan in self.holding(tail[-1])
            for other in scan.paths
            for i in range(len(other) - len(tail))
        )


def _holds_word(text: str, name: str) -> bool:
    """Whether a squashed text holds `name` as a word (see `_word`); the pattern is
    tried only where the text holds its letters."""
    return squash(name.rstrip("*")) in text and _word(name).search(text) is not None


@lru_cache(maxsize=1 << 12)  # an audit looks for the same names in each summary
def _word(name: str) -> re.Pattern[str]:
    """`name` as a word of a squashed text (`install*`: any word that starts so)."""
    stem = name.endswith("*")
    body = re.escape(squash(name.rstrip("*")))
    return re.compile(rf"(?<![\w-]){body}" + ("" if stem else r"(?![\w-])"))


def unique_names(facts: Iterable[Fact]) -> set[str]:
    """File names that one file of the path facts has (a file written two ways,
    `/repo/src/app.py` and `src/app.py`, is one file)."""
    by_name: dict[str, list[tuple[str, ...]]] = {}
    for fact in facts:
        if fact.kind == "paths":
            parts = components(fact.key)
            if parts:
                by_name.setdefault(parts[-1], []).append(parts)
    return {name for name, paths in by_name.items() if _one_file(paths)}


def _one_file(paths: list[tuple[str, ...]]) -> bool:
    """Whether every path is a tail of the longest one."""
    longest = max(paths, key=len)
    return all(longest[len(longest) - len(p) :] == p for p in paths)


def event_texts(event: Event) -> Iterator[str]:
    """What a memory reads of an event: its text, thought, and its tool's string
    arguments as they are (a JSON text escapes quotes and new lines)."""
    yield event.text
    if event.thought:
        yield event.thought
    call = event.tool_call
    if call is not None:
        yield from _strings(call[1])


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
