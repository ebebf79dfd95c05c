"""Shell commands as facts read them: a command at its core (without the `cd` or
`source` before it, the pager after it, an inline script it opens), the programs it
runs, and whether it only explores (`ls`, `grep`, read-only `git`, version probes).
"""

from __future__ import annotations

import posixpath
import re

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
# Exit 1 from these means "nothing found" or "they differ", not a failure.
FINDERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "diff", "cmp", "test", "["})
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
SHELL_SPLIT = re.compile(r"[\s;|&<>()'\"`=,]+")


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


def is_module(token: str) -> bool:
    """Whether a bare token is a dotted module name (`astropy.io.ascii.rst`), not a
    file: three dots or more and no slash."""
    return "/" not in token and token.count(".") >= 3


def command_names(core: str) -> tuple[str, ...]:
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


def program_of(command: str) -> str:
    """The program a command's core runs (`grep` in `cd x && grep -n y | head`)."""
    words = core_command(command)[1].split()
    return posixpath.basename(words[0]) if words else ""


def finds_or_compares(command: str) -> bool:
    """Whether the command's pipeline ends in a program whose exit 1 is an answer."""
    core = QUOTES.sub('""', core_command(command)[1])  # a `\|` in a pattern is no pipe
    last = core.rsplit("|", 1)[-1].split()
    return bool(last) and posixpath.basename(last[0]) in FINDERS


# Commands that set up (install, build) and that run tests or a script.
SETUP_COMMANDS = re.compile(r"^(?:pip3?|python3?\s+-m\s+pip)\s+install\b|\bsetup\.py\b|^make\b")
RUNS_TESTS = re.compile(r"^(?:python3?\s+(?:-m\s+(?:pytest|unittest)\b|\S+\.py\b)|pytest\b)")

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
