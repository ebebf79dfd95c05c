"""Writing JSON in pieces: byte for byte what orjson writes of the whole document."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from condense_cli.core.jsonlines import Items, indented


def _value(rng: random.Random, depth: int) -> Any:
    """A random JSON value: scalars of every type, strings with newlines and
    non-ASCII, empty and nested lists and dicts."""
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        return rng.choice(
            [None, True, False, 0, -7, 2**60, 1.5, 1e16, "", "a\nb", "é\u2028ü", '"\\', "x" * 40]
        )
    if roll < 0.65:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {f"k{i}\n": _value(rng, depth + 1) for i in range(rng.randrange(4))}


def _lazy(value: Any, rng: random.Random) -> Any:
    """`value` with some of its lists (at any depth) made `Items` over a generator."""
    if isinstance(value, dict):
        return {k: _lazy(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        items = [_lazy(v, rng) for v in value]
        return Items(item for item in items) if rng.random() < 0.6 else items
    return value


@pytest.mark.parametrize("seed", range(300))
def test_pieces_are_the_bytes_orjson_writes_of_the_whole(seed: int) -> None:
    rng = random.Random(seed)
    value = {"head": _value(rng, 1), "list": [_value(rng, 1) for _ in range(rng.randrange(5))]}
    value |= {"tail": _value(rng, 0)}
    whole = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    assert b"".join(indented(_lazy(value, rng))) == whole


def test_an_items_list_is_made_while_it_is_written() -> None:
    made: list[int] = []

    def items() -> Any:
        for n in range(3):
            made.append(n)
            yield {"n": n}

    pieces = indented({"a": 1, "rows": Items(items()), "b": []})
    assert b"".join(next(pieces) for _ in range(3)) == b'{\n  "a": 1,\n  "rows": '
    assert made == []  # nothing made before its place in the document
    assert b"".join(pieces) == b'[\n    {\n      "n": 0\n    },\n    {\n      "n": 1\n    },' + (
        b'\n    {\n      "n": 2\n    }\n  ],\n  "b": []\n}'
    )
    assert made == [0, 1, 2]
    assert b"".join(indented(Items(iter(())))) == b"[]"
