"""The interval set that keeps forgotten ids as ranges."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from condense_cli.core.intervals import IntervalSet


def test_add_returns_the_newly_covered_gaps() -> None:
    s = IntervalSet()
    assert s.add(5, 10) == [(5, 10)]
    assert s.add(1, 3) == [(1, 3)]
    assert s.add(2, 12) == [(4, 4), (11, 12)]
    assert list(s) == [(1, 12)]


def test_adjacent_ranges_merge() -> None:
    s = IntervalSet()
    s.add(1, 2)
    s.add(3, 4)
    assert list(s) == [(1, 4)]
    assert s.max_end == 4


def test_membership_and_cursor() -> None:
    s = IntervalSet()
    s.add(3, 5)
    s.add(9, 9)
    cursor = s.cursor()
    members = [i for i in range(12) if i in cursor]
    assert members == [3, 4, 5, 9]
    assert [i for i in range(12) if i in s] == members


ranges = st.lists(
    st.tuples(st.integers(0, 60), st.integers(0, 20)).map(lambda t: (t[0], t[0] + t[1])),
    max_size=12,
)


@given(ranges)
def test_matches_a_plain_set(pairs: list[tuple[int, int]]) -> None:
    s = IntervalSet()
    covered: set[int] = set()
    for start, end in pairs:
        gaps = s.add(start, end)
        new = set(range(start, end + 1)) - covered
        assert {i for a, b in gaps for i in range(a, b + 1)} == new
        covered |= new
    assert {i for i in range(90) if i in s} == covered
    starts = [a for a, _ in s]
    assert starts == sorted(starts)
