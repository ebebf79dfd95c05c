"""A walk over a big log in two processes that share it chunk by chunk: each takes
the next chunk as soon as it is done with the last, so the faster of the two takes
more (the two cores of a virtual machine often do not run alike), and this process
uses the results in the log's order while the walk goes on.

The chunks' numbers wait in a pipe, filled before the fork: a read of one number
(4 bytes, less than `PIPE_BUF`) takes it whole, and only one process gets it. The
forked worker writes each result, pickled, to an unlinked file (`scratch_file`)
with `os.pwrite`, then notes its number, place and length on a second pipe; this
process reads the notes between its own chunks. The worker never waits for this
process: its notes are a few bytes each and fit in the pipe.

A worker that fails in any way (killed, an error, a result that does not load) is
not trusted with what it did not note: this process does those chunks itself, so
the results are those of one process or there is an error, never a silent mix.
Where `os.fork` does not exist, or fails, or no file for the results can be made,
this process walks every chunk.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
from collections.abc import Callable
from typing import Any, BinaryIO, TypeVar

from condense_cli.fast.halves import next_line, scratch_file

T = TypeVar("T")

CHUNKS = 128  # about this many chunks in a log: few enough to cost nothing,
CHUNK_MIN = 1 << 20  # many enough that the two end within one small chunk
CHUNK_MAX = 16 << 20  # of each other (16 MiB: about 15 ms of the V0 scan here)
_NUMBER = struct.Struct("<I")  # a chunk's number, in the queue
_NOTE = struct.Struct("<IQQ")  # a chunk's number, and its result's offset and length
_PROBE = 1 << 12  # bytes read at a time to find where a line starts


def chunk_starts(file: BinaryIO, end: int) -> list[int]:
    """Where each chunk of bytes [0, end) starts (the start of a line), and `end`:
    chunks of about `end / CHUNKS` bytes, from `CHUNK_MIN` to `CHUNK_MAX`."""
    step = min(max(end // CHUNKS, CHUNK_MIN), CHUNK_MAX)
    starts = [0]
    while (start := next_line(file.fileno(), starts[-1] + step - 1, end, _PROBE)) is not None:
        starts.append(start)
    starts.append(end)
    return starts


def walk_chunks(
    starts: list[int],
    work: Callable[[int, int], T],
    use: Callable[[int, T], None],
) -> None:
    """`work(start, stop)` for each chunk [starts[k], starts[k + 1]), here and in a
    forked worker; `use(k, result)` here, for every k in order."""
    count = len(starts) - 1
    queue_out, queue_in = os.pipe()
    try:
        os.write(queue_in, b"".join(_NUMBER.pack(k) for k in range(count)))
    finally:
        os.close(queue_in)  # an empty queue now reads as its end
    try:
        _Walk(starts, work, use, queue_out).run()
    finally:
        os.close(queue_out)


class _Walk:
    """One walk: the queue, the worker, and the results waiting for their turn."""

    def __init__(
        self,
        starts: list[int],
        work: Callable[[int, int], T],
        use: Callable[[int, T], None],
        queue: int,
    ) -> None:
        self.starts, self.work, self.use, self.queue = starts, work, use, queue
        self.ready: dict[int, Any] = {}  # results (here) or notes (the worker's)
        self.next = 0  # the next chunk to use
        self.pid: int | None = None
        self.notes = -1
        self.pending = b""  # the start of a note not yet read whole

    def claim(self) -> int | None:
        """The next chunk nobody has taken yet, or None."""
        data = os.read(self.queue, _NUMBER.size)
        return _NUMBER.unpack(data)[0] if len(data) == _NUMBER.size else None

    def do(self, k: int) -> Any:
        return self.work(self.starts[k], self.starts[k + 1])

    def run(self) -> None:
        try:
            results = scratch_file()
        except OSError:  # nowhere to put the worker's results: walk alone
            results = None
        try:
            if results is not None:
                self.results = results.fileno()
                self.start_worker()
            while (k := self.claim()) is not None:
                self.ready[k] = (True, self.do(k))
                self.read_notes(block=False)
                self.use_ready()
            if self.pid is not None:
                while self.read_notes(block=True):
                    self.use_ready()
                self.reap()
            for k in range(self.next, len(self.starts) - 1):  # what the worker left
                if k not in self.ready:
                    self.ready[k] = (True, self.do(k))
                self.use_ready()
        finally:
            self.stop()
            if results is not None:
                results.close()

    def start_worker(self) -> None:
        """Fork the worker, or leave every chunk to this process."""
        notes, note = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(notes)
            os.close(note)
            return
        if pid == 0:  # the worker: never returns, never runs the parent's exit handlers
            status = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                os.close(notes)
                self.serve(note)
                status = 0
            finally:
                os._exit(status)
        os.close(note)
        self.pid, self.notes = pid, notes

    def serve(self, note: int) -> None:
        """The worker's loop: take a chunk, write its result, note it."""
        offset = 0
        while (k := self.claim()) is not None:
            data = pickle.dumps(self.do(k), protocol=pickle.HIGHEST_PROTOCOL)
            view = memoryview(data)
            while view:
                written = os.pwrite(self.results, view, offset)
                view, offset = view[written:], offset + written
            os.write(note, _NOTE.pack(k, offset - len(data), len(data)))

    def read_notes(self, block: bool) -> bool:
        """Take in the worker's notes; False once it has closed its end (it ended)."""
        if self.pid is None:
            return False
        os.set_blocking(self.notes, block)
        try:
            data = os.read(self.notes, 4096)
        except BlockingIOError:
            return True
        if not data:
            return False
        data = self.pending + data
        whole = len(data) - len(data) % _NOTE.size
        for k, offset, length in _NOTE.iter_unpack(data[:whole]):
            self.ready[k] = (False, (offset, length))
        self.pending = data[whole:]
        return True

    def use_ready(self) -> None:
        """Use every result whose turn has come."""
        while self.next in self.ready:
            k = self.next
            here, value = self.ready.pop(k)
            if not here:
                value = self.load(k, *value)
            self.use(k, value)
            self.next += 1

    def load(self, k: int, offset: int, length: int) -> Any:
        """A result the worker wrote; done here if it does not load whole."""
        data = os.pread(self.results, length, offset)
        if len(data) == length:
            with contextlib.suppress(Exception):  # whatever is wrong, do the chunk here
                return pickle.loads(data)
        return self.do(k)

    def reap(self) -> None:
        """Wait for the worker to end."""
        if self.pid is not None:
            os.waitpid(self.pid, 0)
            self.pid = None

    def stop(self) -> None:
        """Kill and reap the worker if it is still there; close its pipe."""
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self.reap()
        if self.notes >= 0:
            os.close(self.notes)
            self.notes = -1
