"""Small files condense reads and writes beside a log or for a client (pins,
settings): each read only when it is a regular file of a bounded size, replaced whole
(a reader sees the old file or the new one, never a part), and changed under the lock
other writers of it take; where condense keeps its cache, and the path a log is kept
under there."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import stat
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from condense_cli.core.remote import is_url


def cache_dir() -> Path:
    """condense's cache: `$XDG_CACHE_HOME/condense`, by default `~/.cache/condense`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "condense"


_HELD: dict[str, str] = {}  # log -> the path it is kept under, found this process


def held_path(log: str, is_link: bool | None = None) -> str:
    """The path a log is kept under in condense's caches: its real path (a URL as it
    is), found once a process, its folder's resolved once for all its logs (a tree's thousands of
    sessions share a few folders) and the log itself looked at alone (one `lstat`,
    none when the caller knows whether it `is_link`: a link is followed)."""
    path = _HELD.get(log)
    if path is None:
        folder, name = os.path.split(log)
        if is_url(log):
            path = log  # (a log on a store: its URL)
        elif name in ("", ".", ".."):
            path = os.path.realpath(log)
        else:
            path = os.path.join(_real_folder(folder or "."), name)
            if is_link or (is_link is None and os.path.islink(path)):
                path = os.path.realpath(path)
        _HELD[log] = path
    return path


@functools.lru_cache(maxsize=4096)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


@contextlib.contextmanager
def reading_head(log: str, limit: int) -> Iterator[BinaryIO]:
    """A log file open to read its head (of up to `limit` bytes: the caller's reads
    keep to it), or the first `limit` bytes of an object on a store (`core.remote`);
    OSError when the file cannot be opened."""
    if is_url(log):
        from condense_cli.core.remote import head

        yield io.BytesIO(head(log, limit))
        return
    with open(log, "rb") as file:
        yield file


def replace_file(path: Path, body: bytes | Iterable[bytes]) -> None:
    """Write `body` (or its parts, as they come) to a new file beside `path`, fsync it,
    rename it over `path`, and fsync the folder (which is made when missing). The new
    file keeps the mode and owner of the one it replaces (a new one: 0644 less the
    umask); a link is written through to its target, and stays a link (a settings
    file kept in a dotfiles folder)."""
    path = Path(os.path.realpath(path)) if path.is_symlink() else path
    path.parent.mkdir(parents=True, exist_ok=True)
    owner: tuple[int, int] | None = None
    try:
        status = os.stat(path)
        mode, owner = status.st_mode & 0o7777, (status.st_uid, status.st_gid)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o644 & ~umask
    import tempfile  # (~1 ms to import: not for the commands that only read)

    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        if owner is not None and owner != (os.geteuid(), os.getegid()):
            with contextlib.suppress(PermissionError):
                os.fchown(fd, *owner)
        with os.fdopen(fd, "wb") as out:
            if isinstance(body, bytes):
                out.write(body)
            else:
                out.writelines(body)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


class NotSmallFile(Exception):
    """`read_small` refused a file; the message says why, in words for the user."""


def read_small(path: Path, limit: int) -> bytes | None:
    """The bytes of a small settings-like file (None when there is none): a regular
    file of at most `limit` bytes, opened without blocking, so a FIFO, a device or
    `/dev/zero` given in its place is refused, never read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise NotSmallFile(f"cannot be read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a FIFO, a socket or a device"
            raise NotSmallFile(f"is not a regular file ({kind})")
        data = os.read(fd, limit + 1) if info.st_size <= limit else b""
        if info.st_size > limit or len(data) > limit:
            raise NotSmallFile(f"is larger than {limit >> 20} MiB")
        return data
    except OSError as exc:
        raise NotSmallFile(f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


LOCK_STALE_SECONDS = 10.0  # a lock folder older than this was left by a dead process
LOCK_WAIT_SECONDS = 10.0


@contextlib.contextmanager
def claimed(path: Path) -> Iterator[None]:
    """Hold the lock other writers of a settings file take: the folder `<path>.lock`
    (Claude Code's own for `~/.claude.json`), made for the time of a change and
    removed after it; one older than `LOCK_STALE_SECONDS` is taken over. TimeoutError
    when another writer holds it for `LOCK_WAIT_SECONDS`."""
    lock = path.with_name(path.name + ".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            os.mkdir(lock)
            break
        except FileExistsError:
            try:
                age = time.time() - os.stat(lock).st_mtime
            except FileNotFoundError:
                continue
            if age > LOCK_STALE_SECONDS:
                with contextlib.suppress(OSError):
                    os.rmdir(lock)
                continue
            if time.monotonic() > deadline:
                raise TimeoutError(f"{lock} is held by another program") from None
            time.sleep(0.02)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(lock)
