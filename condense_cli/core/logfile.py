"""Reading a log as numbered lines, and appending to it safely.

Reads stream: a log is never loaded whole. Appends hold an exclusive `flock`
for the whole read-decide-write step and write one whole line with a single
`write`, then `fsync`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from condense_cli.core.errors import LogBusyError, LogError
from condense_cli.core.remote import failed, is_url, open_url

BOM = b"\xef\xbb\xbf"


def _spans(block: bytes, words: tuple[bytes, ...]) -> list[tuple[int, int]]:
    """Where each line of `block` that holds one of `words` begins and ends, in order."""
    spans = []
    for word in words:
        start = 0
        while (hit := block.find(word, start)) >= 0:
            begin = block.rfind(b"\n", 0, hit) + 1
            stop = block.find(b"\n", hit)
            stop = len(block) if stop < 0 else stop
            spans.append((begin, stop))
            start = stop + 1
    if len(words) > 1:
        spans = sorted(set(spans))
    return spans


def lines_in(
    block: bytes, words: tuple[bytes, ...], number: int
) -> tuple[list[tuple[int, bytes]], int]:
    """Each line of `block` (whole lines, the first numbered `number`) that holds one of
    `words`, with its number; and the number of the line after the block."""
    found = []
    at = 0
    for begin, stop in _spans(block, words):
        number += block.count(b"\n", at, begin)
        at = begin
        found.append((number, block[begin:stop]))
    return found, number + block.count(b"\n", at)


def line_body(raw: bytes, first: bool = False) -> bytes:
    """A line without its line ending (and without a byte-order mark on the first line)."""
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if first and raw.startswith(BOM):
        raw = raw[len(BOM) :]
    return raw


STDIN = "-"
SPOOL_CHUNK = 1024 * 1024
# The longest line read from a stream (standard input, a pipe, a FIFO, a device):
# beyond it the log is refused, so `view /dev/zero` ends instead of filling memory.
MAX_LINE_BYTES = 256 * 1024 * 1024


def is_stream(path: str) -> bool:
    """Whether `path` is standard input or names something that is not a regular file
    (a FIFO, `<(...)`, a device): it is read once, like standard input, and never appended to."""
    if path == STDIN:
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode) and not os.path.isdir(path)
    except OSError:
        return False


def refuse_streams(path: str) -> None:
    """Raise LogError when `path` is standard input, a stream or a URL: it cannot be
    appended to."""
    if is_url(path):
        raise LogError(path, "a log on a store is read-only here", hint="copy it here to append")
    if is_stream(path):
        what = "standard input" if path == STDIN else "a stream (not a regular file)"
        raise LogError(path, f"{what} cannot be appended to; name the log file")


READ_AHEAD = 1 << 18  # bytes `LogSource.read_at` reads at once when reads follow each other
NEAR = 1 << 12  # a read that starts this close after the last one's end follows it


BLOCK = 8 << 20  # `LogSource.lines_with` reads this much at a time, cut at a line's end


class LogSource:
    """A log opened for reading: a seekable binary file and the size we read up to.

    The size is fixed when the log is opened, so a log that grows while we
    read it is read as it was; a line that was being written at that moment
    is read whole once its newline is there (the size then grows to its end).
    """

    PROGRESS_STEP = 4 * 1024 * 1024

    def __init__(self, path: str, file: BinaryIO, size: int) -> None:
        self.path = path
        self.file = file
        self.size = size
        self.on_progress: Callable[[int], None] | None = None  # bytes read so far
        # `read_at`'s read-ahead: the bytes from `_ahead_start` on, read at once; where
        # the last read ended, and whether it followed the one before; and the last
        # read's start and bytes (None when it came short), for a read asked again
        self._ahead = b""
        self._ahead_start = 0
        self._last_end = -NEAR
        self._followed = False
        self._last_start = -1
        self._last: bytes | None = None

    @classmethod
    def open(cls, path: str) -> LogSource:
        """Open a log file; spool standard input (`-`), a FIFO or a device first."""
        if path == STDIN:
            return cls._spool("<stdin>", sys.stdin.buffer)
        if is_url(path):
            with open_url(path) as stream:
                try:
                    return cls._spool(path, stream)
                except LogError:
                    raise
                except Exception as exc:  # the store's own errors, mid-stream
                    raise failed(path, exc) from None
        try:
            file = open(path, "rb")  # noqa: SIM115 - closed by close()
        except FileNotFoundError:
            raise LogError(path, "no such file", hint="check the path") from None
        except IsADirectoryError:
            raise LogError(path, "is a directory, not a log file") from None
        except PermissionError:
            raise LogError(path, "permission denied") from None
        except OSError as exc:
            raise LogError(path, f"cannot open: {exc.strerror or exc}") from None
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            with file:
                return cls._spool(path, file)
        return cls(path, file, info.st_size)

    @classmethod
    def _spool(cls, name: str, stream: BinaryIO) -> LogSource:
        """Read a stream to its end into a temporary file, refusing endless lines."""
        import tempfile  # ~1.5 ms to import (random, hashlib): only for streams

        spool = tempfile.TemporaryFile()  # noqa: SIM115 - on disk: memory stays flat
        size = line_start = 0
        line = 1
        try:
            while chunk := stream.read(SPOOL_CHUNK):
                spool.write(chunk)
                newline = chunk.rfind(b"\n")
                if newline >= 0:
                    line += chunk.count(b"\n")
                    line_start = size + newline + 1
                size += len(chunk)
                if size - line_start > MAX_LINE_BYTES:
                    raise LogError(
                        name,
                        f"line longer than {MAX_LINE_BYTES >> 20} MiB, the limit for a line "
                        "read from a stream; is this an event log?",
                        line,
                    )
        except OSError as exc:
            spool.close()
            raise LogError(name, f"cannot read: {exc.strerror or exc}") from None
        except LogError:
            spool.close()
            raise
        return cls(name, spool, size)

    def clip(self, raw: bytes, start: int) -> bytes | None:
        """`raw`, read at offset `start`, as far as this read goes.

        None when it starts past the size taken at open; a line a writer
        finished since then is read whole (and the size grows to its end);
        a line still being written is cut at the size.
        """
        end = start + len(raw)
        if end <= self.size:
            return raw
        if start >= self.size:
            return None
        if raw.endswith(b"\n"):
            self.size = end
            return raw
        return raw[: self.size - start]

    def settle(self) -> None:
        """Read no further than the last whole line: a line a writer is in the middle
        of (a client appending while a hook reads its session) is left out, as if it
        had not begun."""
        end, step = self.size, 1 << 16
        while end > 0:
            start = max(0, end - step)
            newline = self._pread(start, end).rfind(b"\n")
            if newline >= 0:
                self.size = start + newline + 1
                return
            end, step = start, min(step * 2, 1 << 24)
        self.size = 0

    def ends_with_newline(self, offset: int) -> bool:
        """Whether the byte before `offset` is a newline (True for an empty prefix)."""
        if offset == 0:
            return True
        self.file.seek(offset - 1)
        return self.file.read(1) == b"\n"

    def raw_lines(self, start: int = 0) -> Iterator[bytes]:
        """Yield every line as read, newline included, up to the size taken at open
        (from offset `start`, a line start)."""
        file = self.file
        file.seek(start)
        offset = start
        report, step = self.on_progress, self.PROGRESS_STEP
        next_report = start + step if report is not None else sys.maxsize
        for line in file:
            raw = self.clip(line, offset)
            if raw is None:
                return
            offset += len(raw)
            if offset >= next_report:
                report(offset)  # type: ignore[misc]
                next_report += step
            yield raw

    def blocks(self) -> Iterator[bytes]:
        """The file up to the size taken at open, in blocks of whole lines of about
        `BLOCK` bytes (the last one as it ends)."""
        offset, carry = 0, b""
        while offset < self.size:
            block = carry + self.read_at(offset, min(self.size, offset + BLOCK))
            offset += BLOCK
            end = block.rfind(b"\n") + 1 if offset < self.size else len(block)
            block, carry = block[:end], block[end:]
            if block:  # (none yet while a line is longer than a block)
                yield block
            if self.on_progress is not None:
                self.on_progress(min(offset, self.size))

    def lines_with(self, words: tuple[bytes, ...]) -> Iterator[tuple[int, bytes]]:
        """Each line that holds one of `words` (its number from 1, its bytes without
        the newline), up to the size taken at open: found by searching a block of
        `BLOCK` bytes at a time for the words, not by splitting every line."""
        number = 1
        for block in self.blocks():
            found, number = lines_in(block, words, number)
            yield from found

    def read_at(self, start: int, end: int) -> bytes:
        """The bytes from `start` to `end` (fewer if the file is shorter), read with
        `os.pread`: the file's offset does not move. Once two reads in a row each
        started where the one before ended (or up to `NEAR` after), the next one reads
        `READ_AHEAD` bytes at once: records read back in order (a view's) cost a
        system call every 256 KiB, not one each, and reads here and there read no
        more than they ask. The same bytes asked again at once (a record's property
        read twice) are not read again, and do not break the run."""
        if start == self._last_start and end == self._last_end and self._last is not None:
            return self._last
        ahead, first = self._ahead, self._ahead_start
        if first <= start and end <= first + len(ahead):
            data = ahead[start - first : end - first]
        else:
            following = 0 <= start - self._last_end < NEAR
            if following and self._followed and end - start < READ_AHEAD:
                ahead = self._pread(start, start + READ_AHEAD)
                self._ahead, self._ahead_start = ahead, start
                data = ahead[: end - start]
            else:
                self._followed = following
                data = self._pread(start, end)
        self._last_start, self._last_end = start, end
        self._last = data if len(data) == end - start else None
        return data

    def _pread(self, start: int, end: int) -> bytes:
        parts = []
        while start < end and (data := os.pread(self.file.fileno(), end - start, start)):
            parts.append(data)
            start += len(data)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def read_range(self, start: int, end: int, chunk: int = 1 << 20) -> Iterator[bytes]:
        """The bytes from `start` to `end`, in chunks."""
        self.file.seek(start)
        while start < end:
            data = self.file.read(min(chunk, end - start))
            if not data:
                return
            start += len(data)
            yield data

    def line_start(self, number: int) -> int:
        """The offset of line `number` (from 1): just after the newline that ends the
        line before (the log's size when it has fewer lines)."""
        before, offset = number - 1, 0  # newlines still to pass, bytes passed
        for chunk in self.read_range(0, self.size):
            newlines = chunk.count(b"\n")
            if newlines < before:
                before -= newlines
                offset += len(chunk)
                continue
            at = -1
            for _ in range(before):
                at = chunk.index(b"\n", at + 1)
            return offset + at + 1
        return self.size

    def line_at(self, offset: int) -> bytes:
        """The line that starts at byte `offset`, newline included."""
        self.file.seek(offset)
        return self.file.readline()

    def detach(self) -> None:
        """From now on, read through a file description of this process's own (Linux):
        a forked child reading line by line (`raw_lines`) would otherwise move the
        offset of the file its parent reads. OSError where that cannot be done."""
        self.file = open(f"/proc/self/fd/{self.file.fileno()}", "rb")  # noqa: SIM115

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> LogSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LockedLog:
    """A log held under an exclusive lock, for one read-decide-append step."""

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self.fd = fd

    def open_source(self) -> LogSource:
        """Read the locked log (through its own descriptor, lock untouched)."""
        return LogSource.open(self.path)

    def append_line(self, body: bytes, expected_size: int) -> None:
        """Append `body` plus a newline, if the log still has `expected_size` bytes.

        A last line without a newline (already checked to be a complete event)
        gets its newline in the same write.
        """
        size = os.fstat(self.fd).st_size
        if size != expected_size:
            raise LogBusyError(
                f"{self.path}: the log changed while condense was working "
                f"({expected_size} bytes read, {size} now); nothing was appended",
                hint="another writer does not take the lock; run the command again",
            )
        data = body + b"\n"
        if size and os.pread(self.fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        try:
            written = os.write(self.fd, data)
            if written != len(data):
                raise OSError(errno.ENOSPC, f"short write ({written} of {len(data)} bytes)")
            os.fsync(self.fd)
        except OSError as exc:
            # Take back only the bytes we added, so the log stays whole.
            with contextlib.suppress(OSError):
                if os.fstat(self.fd).st_size > size:
                    os.ftruncate(self.fd, size)
            raise LogError(self.path, f"could not append: {exc.strerror or exc}") from None


@contextlib.contextmanager
def locked_log(path: str, timeout: float) -> Iterator[LockedLog]:
    """Open `path` for appending and hold an exclusive lock on it.

    Raises LogBusyError when the lock cannot be taken within `timeout` seconds.
    """
    refuse_streams(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
    except FileNotFoundError:
        raise LogError(path, "no such file", hint="check the path") from None
    except IsADirectoryError:
        raise LogError(path, "is a directory, not a log file") from None
    except OSError as exc:
        raise LogError(path, f"cannot open for appending: {exc.strerror or exc}") from None
    try:
        lock_exclusively(fd, path, timeout)
        yield LockedLog(path, fd)
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def lock_exclusively(
    fd: int, path: str, timeout: float, sleep: Callable[[float], None] = time.sleep
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LogBusyError(
                    f"{path}: could not lock the log within {timeout:g}s; "
                    "another process holds it; nothing was appended",
                    hint="try again, or raise --lock-timeout",
                ) from None
            sleep(0.02)


def log_bytes(log: str) -> int:
    """The bytes of a log: its file, or every file of its folder (0 for a stream)."""
    path = Path(log)
    try:
        if not path.is_dir():
            return path.stat().st_size if path.is_file() else 0
        return sum(entry.stat().st_size for entry in path.rglob("*") if entry.is_file())
    except OSError:
        return 0
