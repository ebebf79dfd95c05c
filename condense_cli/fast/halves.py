"""A walk over a big log in two processes: this one reads the first half while a
forked child (`Worker`) reads the second, and the child sends back what it found.

`stats` uses `in_halves` (the V0 scan shares a log chunk by chunk instead, see
`chunks`): its time goes into tokenizing and the walk around it
(parsing each line, picking its text). tiktoken lets go of the GIL while it
encodes, so threads would spread the encoding, but the walk would stay on one
core; a second process takes half of both. The child is forked, so it counts with
the very same tokenizer (same encoding, same files) and sees the validated index;
it sends back partial tallies (sums, and types in order of appearance), so the two
halves add up to exactly what one process counts. `audit` starts a `Worker` that
audits every other condensation of the log (`analysis.audit`), by the same threshold,
and then looks up half the facts of the current view in a child (`in_two`); `stats`
without tokens converts a long view to messages in a child while it walks. A big
Claude Code session or Codex rollout is decoded a block at a time, the blocks past a
share of the log by a child (`decoded_blocks`). `simulate` and `report` feed the
prompts a summariser would have been sent to a child that counts their tokens while
the history is simulated (`Feeder`, for `condensers.offline.Meter`).

Two processes pay only from `SPLIT_MIN_BYTES` up (a fork, a temporary file and a wait
cost a few milliseconds); below it, and where `os.fork` does not exist, one process walks
the whole log. The environment variable `CONDENSE_STATS_SPLIT_MIN_BYTES` overrides
the threshold, in bytes: `0` splits every log of more than one line (tests use
it), a huge number never splits; a value that is not a whole number is ignored.

Both halves read with `os.pread`, never moving the offset of the file they share
(a child that must read line by line first takes a file of its own: `Replay.forked`).
A child that fails in any way (killed, an error, an answer cut short) is not
trusted: this process then walks the second half itself, so the numbers are those
of one process or there is an error, never a silent mix. The log must still hold
the bytes that were validated: one that shrank meanwhile is an error.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, BinaryIO, TypeVar, cast

from condense_cli.core.errors import LogError
from condense_cli.core.logfile import LogSource
from condense_cli.fast.lines import read_blocks

T = TypeVar("T")
U = TypeVar("U")
Report = Callable[[int], None]
Walk = Callable[[int, int, Report | None], T]

# The break-even on the 2-core benchmark machine is about 1.3 MB of the benchmark's
# log (counting 1 MB: 25 ms in one process, 28 ms in two; 2 MB: 51 ms against 41 ms);
# real text tokenizes slower, so it breaks even sooner. Above 2 MiB two always pay.
SPLIT_MIN_BYTES = 2 * 1024 * 1024
SPLIT_ENV = "CONDENSE_STATS_SPLIT_MIN_BYTES"
BLOCK = 1 << 20


def scratch_file() -> BinaryIO:
    """An unlinked file for what a forked worker sends back: a temporary file or,
    where no temporary directory can be written, an anonymous file in memory
    (`memfd_create`, Linux). OSError when neither can be made."""
    import tempfile  # here: most commands never fork

    try:
        return tempfile.TemporaryFile()
    except OSError:
        if not hasattr(os, "memfd_create"):
            raise
        return open(os.memfd_create("condense-worker"), "w+b")


def threshold(variable: str, default: int) -> int:
    """A size threshold in bytes: the environment variable `variable` when it holds a
    whole number, else `default`."""
    value = os.environ.get(variable, "").strip()
    return int(value) if value.isdigit() else default


# The V0 scan forks a worker from this size on (`bench/breakeven.py` measures it).
PARALLEL_MIN_BYTES = 48 << 20
PARALLEL_ENV = "CONDENSE_PARALLEL_MIN_BYTES"


def parallel_min_bytes() -> int:
    """The size from which the V0 scan is split over two processes."""
    return threshold(PARALLEL_ENV, PARALLEL_MIN_BYTES)


def split_min_bytes() -> int:
    """The threshold in force: `CONDENSE_STATS_SPLIT_MIN_BYTES`, else `SPLIT_MIN_BYTES`."""
    return threshold(SPLIT_ENV, SPLIT_MIN_BYTES)


def in_halves(source: LogSource, end: int, walk: Walk[T], merge: Callable[[T, T], T]) -> T:
    """`walk(start, stop, report)` over the lines of bytes [0, end), in two processes
    when that pays; `merge(first, second)` puts the two halves' results together."""
    report = source.on_progress
    middle = split_point(source, end)
    if middle is None:
        return walk(0, end, report)
    # Both halves go at about the same pace: this one's progress stands for both.
    scaled = (lambda done: report(done * end // middle)) if report is not None else None
    first, second = in_two(lambda: walk(0, middle, scaled), lambda: walk(middle, end, None))
    return merge(first, second)


def decoded_blocks(
    source: LogSource,
    start: int,
    end: int,
    decode: Callable[[bytes, int], T],
    share: float | None,
) -> Iterator[tuple[int, int, T, bytes | None]]:
    """The blocks of whole lines of bytes [start, end) (`end` follows a newline), in
    order: each one's offset, size, `decode(block, offset)` and, when it was decoded
    here, its bytes.

    With a `share` (of the bytes, for this process) and a range worth two processes
    (`splits`), a forked child decodes the blocks from there on while this process
    decodes the ones before; the child's come once it is done. What the child did not
    send is decoded here. Closing the iterator early stops the child."""
    fd = source.file.fileno()
    cut = None
    if share is not None and splits(end - start):
        cut = next_line(fd, start + int((end - start) * share), end)

    def second() -> Iterator[tuple[int, int, T]]:
        for offset, block in read_blocks(source.file, cast(int, cut), end):
            yield offset, len(block), decode(block, offset)

    child = Worker.start(second) if cut is not None else None
    done = cut if child is not None and cut is not None else end
    try:
        for offset, block in read_blocks(source.file, start, done):
            yield offset, len(block), decode(block, offset), block
        if child is not None:
            for offset, size, decoded in child.items():
                yield offset, size, decoded, None
                done = offset + size
    finally:
        if child is not None:
            child.stop()
    for offset, block in read_blocks(source.file, done, end):
        yield offset, len(block), decode(block, offset), block


def in_two(first: Callable[[], T], second: Callable[[], U]) -> tuple[T, U]:
    """`first()` here while a forked child runs `second()`; both results. A child
    that fails is replaced by running `second()` here, after `first()`."""
    child = Worker.start(lambda: [second()])
    if child is None:
        return first(), second()
    try:
        one = first()
        sent = list(child.items())
    finally:
        child.stop()
    two: U = sent[0] if child.complete and sent else second()
    return one, two


def splits(size: int) -> bool:
    """Whether work on `size` bytes is worth two processes here."""
    return size >= max(split_min_bytes(), 2) and hasattr(os, "fork")


def log_size(path: str) -> int:
    """The bytes of a log file; a folder (or anything else) counts as big."""
    try:
        return os.path.getsize(path) if os.path.isfile(path) else sys.maxsize
    except OSError:
        return sys.maxsize


def split_point(source: LogSource, end: int) -> int | None:
    """Where the second half starts (just after a newline near the middle), or None
    when the log is too small to split, cannot be forked, or is one line."""
    if not splits(end):
        return None
    return middle_line(source.file, 0, end)


def middle_line(file: BinaryIO, start: int, end: int) -> int | None:
    """The start of the first line after the middle of bytes [start, end), or None
    when no line starts between the middle and `end`."""
    return next_line(file.fileno(), max(start, (start + end) // 2 - 1), end)


def next_line(fd: int, position: int, end: int, read: int = BLOCK) -> int | None:
    """The start of the first line that begins after byte `position` and before
    `end`, or None; the file is read `read` bytes at a time."""
    while position < end:
        data = os.pread(fd, min(read, end - position), position)
        if not data:
            return None
        newline = data.find(b"\n")
        if newline >= 0:
            start = position + newline + 1
            return start if start < end else None
        position += len(data)
    return None


def lines_between(
    source: LogSource, start: int, end: int, report: Report | None = None
) -> BinaryIO:
    """The lines of bytes [start, end), newline included (the last may have none),
    to iterate over.

    `start` is the start of a line and `end` the end of the validated log; a log
    that holds fewer bytes by now has changed under us and is refused. The lines
    come from a buffered reader (C's line splitting, a block read at a time) over
    `ByteRange`, whose position is its own.
    """
    return io.BufferedReader(ByteRange(source, start, end, report), BLOCK)


class ByteRange(io.RawIOBase):
    """Bytes [start, end) of a log, read with `os.pread`: the position is this
    object's, so reading never moves the offset of the file it shares with the
    caller or with a forked process. `report(position)` is called every
    `LogSource.PROGRESS_STEP` bytes or so."""

    def __init__(self, source: LogSource, start: int, end: int, report: Report | None) -> None:
        super().__init__()
        self.source, self.fd = source, source.file.fileno()
        self.position, self.end = start, end
        self.report = report
        self.next_report = start + LogSource.PROGRESS_STEP if report is not None else end + 1

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.end - self.position)
        if want <= 0:
            return 0
        if hasattr(os, "preadv"):  # straight into the buffer
            got = os.preadv(self.fd, [memoryview(buffer)[:want]], self.position)
        else:
            data = os.pread(self.fd, want, self.position)
            got = len(data)
            buffer[:got] = data
        if not got:
            raise LogError(
                self.source.path,
                f"is shorter than when it was read ({self.end:,} bytes, now "
                f"{self.position:,}): it changed while it was being counted",
                hint="run the command again on a log that is only appended to",
            )
        self.position += got
        if self.position >= self.next_report:
            self.report(self.position)  # type: ignore[misc]
            self.next_report = self.position + LogSource.PROGRESS_STEP
        return got


class Worker:
    """A forked child that works through `task`, writing each item it yields
    (pickled, one after another) to an unlinked file (`scratch_file`).

    The child never waits for the parent: a pipe would stop it as soon as its
    buffer filled, while the parent is still busy with its own half. `items()`
    waits for the child to end, then yields its items in order; afterwards
    `complete` says whether the child got to the end of its task. If it did not
    (it failed or was killed), the caller does the rest itself, from the last
    item it received.
    """

    def __init__(self, task: Callable[[], Iterable[Any]]) -> None:
        import pickle  # here: most commands never fork

        self._file = scratch_file()  # closed by items() or stop()
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns, never runs the parent's exit handlers
            status = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                with open(self._file.fileno(), "wb", buffering=1 << 16, closefd=False) as out:
                    for item in task():
                        pickle.dump(item, out, protocol=pickle.HIGHEST_PROTOCOL)
                status = 0
            finally:
                os._exit(status)
        self._running = True
        self.complete = False

    @classmethod
    def start(cls, task: Callable[[], Iterable[Any]]) -> Worker | None:
        """A worker for `task`, or None when none can be started (no fork, no room
        for its temporary file): the caller then does all the work itself."""
        try:
            return cls(task)
        except OSError:
            return None

    def items(self) -> Iterator[Any]:
        """The child's items, once it has ended; they stop early if it failed."""
        import pickle

        _, status = os.waitpid(self.pid, 0)
        self._running = False
        ended = False
        try:
            self._file.seek(0)
            while True:
                try:
                    item = pickle.load(self._file)
                except EOFError:
                    ended = True
                    break
                except (pickle.UnpicklingError, ValueError, OSError):
                    break
                yield item
        finally:
            self._file.close()
        self.complete = ended and os.waitstatus_to_exitcode(status) == 0

    def stop(self) -> None:
        """Kill and reap the child if it was never waited for; drop its file."""
        if self._running:
            self._running = False
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        self._file.close()


# The pipe to a child fed texts holds this much (where Linux allows; else its 64 KiB).
FEED_PIPE_BYTES = 1 << 20


class Feeder:
    """A forked child that works through texts the parent feeds it down a pipe as it
    goes: `consume` takes them, one at a time, and returns what it made of them all
    once the parent is done (`result`). The parent never waits for it: a text that
    does not fit in the pipe (the child is behind) is not sent, and the parent does
    that one itself, so the two share the work whatever their speeds.

    Nothing fed to a child that fails is kept here: `result` is then None, and the
    caller does the whole work again itself."""

    def __init__(self, consume: Callable[[Iterator[str]], Any]) -> None:
        import fcntl

        read, write = os.pipe()

        def task() -> Iterator[Any]:
            os.close(write)  # else the pipe never ends, in the child
            with open(read, "rb", buffering=FEED_PIPE_BYTES) as pipe:
                yield consume(_fed(pipe))

        with contextlib.suppress(AttributeError, OSError):  # Linux only
            fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, FEED_PIPE_BYTES)
        try:
            self.capacity = fcntl.fcntl(write, fcntl.F_GETPIPE_SZ)
        except (AttributeError, OSError):
            self.capacity = 1 << 16
        try:
            self._worker = Worker(task)
        except OSError:
            os.close(read)
            os.close(write)
            raise
        os.close(read)
        os.set_blocking(write, False)
        self._write = write
        self.broken = False  # the child stopped reading: what it was fed is lost

    @classmethod
    def start(cls, consume: Callable[[Iterator[str]], Any]) -> Feeder | None:
        """A child for `consume`, or None when none can be started."""
        try:
            return cls(consume)
        except OSError:
            return None

    def feed(self, text: str) -> bool:
        """Send `text` to the child; False when it is not sent (the pipe lacks room for
        it, or the child is gone): do that one here."""
        import array
        import fcntl
        import termios

        if self.broken:
            return False
        data = text.encode("utf-8", "surrogatepass")
        frame = memoryview(len(data).to_bytes(8, "little") + data)
        waiting = array.array("i", [0])
        try:
            fcntl.ioctl(self._write, termios.FIONREAD, waiting)
            # the pipe holds its bytes in pages, some part full: leave a margin
            if waiting[0] + len(frame) > self.capacity * 3 // 4:
                return False
            sent = os.write(self._write, frame)
            while sent < len(frame):  # rare: the rest as soon as the child takes some
                select.select([], [self._write], [])
                with contextlib.suppress(BlockingIOError):
                    sent += os.write(self._write, frame[sent:])
        except BlockingIOError:  # not a byte written
            return False
        except OSError:  # BrokenPipeError: the child ended
            self.broken = True
            return False
        return True

    def result(self) -> Any | None:
        """What the child made of every text fed to it (once it ends), or None when it
        failed."""
        self._close()
        made = list(self._worker.items())
        return made[0] if made and self._worker.complete and not self.broken else None

    def stop(self) -> None:
        """Kill and reap the child if it was never waited for (an error here)."""
        self._close()
        self._worker.stop()

    def _close(self) -> None:
        if self._write >= 0:
            os.close(self._write)
            self._write = -1


def _fed(pipe: BinaryIO) -> Iterator[str]:
    """The texts a `Feeder` sends, as they come, until the parent closes the pipe."""
    while size := pipe.read(8):
        yield pipe.read(int.from_bytes(size, "little")).decode("utf-8", "surrogatepass")
