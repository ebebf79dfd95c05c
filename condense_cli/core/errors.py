"""Typed errors raised by the core; only the CLI turns them into exit codes."""

from __future__ import annotations


class CondenseError(Exception):
    """Base class: a message for the user and the exit code it maps to."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class LogError(CondenseError):
    """The log cannot be read or is not a valid event log (exit 1)."""

    exit_code = 1

    def __init__(
        self, path: str, message: str, line: int | None = None, hint: str | None = None
    ) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}", hint)
        self.path = path
        self.line = line
        self.problem = message


class LogFailed(CondenseError):
    """A log named among many could not be read: the error a worker process met, raised
    again in the parent with its message, hint and exit code."""

    def __init__(self, message: str, hint: str | None, exit_code: int) -> None:
        super().__init__(message, hint)
        self.exit_code = exit_code


class ConfigError(CondenseError):
    """The configuration or the command line is wrong (exit 2)."""

    exit_code = 2


class CondenserError(CondenseError):
    """The condenser or its model failed; nothing was appended (exit 3)."""

    exit_code = 3


class Refused(CondenserError):
    """The model's server refused the request's shape (a 400 or 422): asked another
    way, it may answer."""


class ContextOverflow(CondenserError):
    """The model refused a prompt longer than its window (the caller may cut it)."""


class OutputError(CondenseError):
    """Standard output cannot be written: closed, or its device full (exit 1).

    A closed pipe (the reader went away, as with `| head`) is not this error: it
    never changes a command's verdict.
    """

    exit_code = 1


class LogBusyError(CondenseError):
    """The log changed underneath us or its lock could not be taken (exit 4)."""

    exit_code = 4


def os_hint(errno_value: int | None) -> str:
    """What a user can do about an operating system's refusal, by its errno."""
    import errno

    hints = {
        errno.ENOSPC: "free some space on the disk, then try again",
        errno.EDQUOT: "your disk quota is used up: free some space, then try again",
        errno.EFBIG: "the file would be larger than this system allows",
        errno.EROFS: "the file system is read-only",
        errno.EACCES: "check the permissions of the file and its folder",
        errno.EPERM: "the file is protected (immutable, or owned by another user)",
        errno.EISDIR: "give a file, not a folder",
        errno.ENOTDIR: "a part of the path that should be a folder is a file",
    }
    return hints.get(errno_value or 0, "check the file and its folder, then try again")
