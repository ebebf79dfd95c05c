"""Small files condense writes beside a log or for a client (pins, settings): each
replaced whole, so a reader sees the old file or the new one, never a part."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


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
