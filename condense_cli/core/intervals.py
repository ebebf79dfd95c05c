"""A set of integers kept as sorted, disjoint, inclusive ranges."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator


def runs(values: Iterable[int]) -> list[tuple[int, int]]:
    """Integers as sorted, merged, inclusive runs: [1, 2, 3, 7] -> [(1, 3), (7, 7)]."""
    found: list[tuple[int, int]] = []
    for value in sorted(set(values)):
        if found and found[-1][1] + 1 == value:
            found[-1] = (found[-1][0], value)
        else:
            found.append((value, value))
    return found


def format_runs(ranges: Iterable[tuple[int, int]], limit: int | None = None) -> str:
    """`2..61, 64, 70..72` (at most `limit` runs, then how many more)."""
    ranges = list(ranges)
    shown = ranges if limit is None else ranges[:limit]
    text = ", ".join(f"{a}..{b}" if b > a else str(a) for a, b in shown)
    if len(shown) < len(ranges):
        text += f", … ({len(ranges) - len(shown)} more runs)"
    return text


def describe_ids(ids: Iterable[int], limit: int = 6) -> str:
    """`ids 2..61` or `ids 2, 4, 7..9` for a report line."""
    return "ids " + format_runs(runs(ids), limit)


class IntervalSet:
    """Forgotten ids as ranges, never expanded: memory grows with the ranges."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def add(self, start: int, end: int) -> list[tuple[int, int]]:
        """Add `start..end`; return the sub-ranges that were not covered before."""
        starts, ends = self._starts, self._ends
        lo = bisect_left(ends, start - 1)  # first range that ends at or after start-1
        hi = bisect_right(starts, end + 1)  # ranges before `hi` start at or before end+1
        gaps: list[tuple[int, int]] = []
        cursor = start
        for k in range(lo, hi):
            if starts[k] > cursor and cursor <= end:
                gaps.append((cursor, min(starts[k] - 1, end)))
            cursor = max(cursor, ends[k] + 1)
        if cursor <= end:
            gaps.append((cursor, end))
        if lo < hi:
            start = min(start, starts[lo])
            end = max(end, ends[hi - 1])
        starts[lo:hi] = [start]
        ends[lo:hi] = [end]
        return gaps

    def __contains__(self, value: int) -> bool:
        k = bisect_right(self._starts, value) - 1
        return k >= 0 and self._ends[k] >= value

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return zip(self._starts, self._ends, strict=True)

    def __len__(self) -> int:
        """The number of ranges (not of ids)."""
        return len(self._starts)

    def overlapping(self, low: int, high: int) -> Iterator[tuple[int, int]]:
        """The ranges that share at least one id with `low..high`."""
        k = bisect_left(self._ends, low)
        while k < len(self._starts) and self._starts[k] <= high:
            yield self._starts[k], self._ends[k]
            k += 1

    @property
    def max_end(self) -> int:
        """The largest id in the set, or -1 when it is empty."""
        return self._ends[-1] if self._ends else -1

    def cursor(self) -> IntervalCursor:
        """A membership test for ids asked in increasing order, O(1) amortised."""
        return IntervalCursor(self)


class IntervalCursor:
    """Answers `id in set` for non-decreasing ids by walking the ranges once."""

    def __init__(self, intervals: IntervalSet) -> None:
        self._starts = intervals._starts
        self._ends = intervals._ends
        self._k = 0

    def __contains__(self, value: int) -> bool:
        ends = self._ends
        k = self._k
        while k < len(ends) and ends[k] < value:
            k += 1
        self._k = k
        return k < len(ends) and self._starts[k] <= value
