"""The block decoder the dialects' fast paths share (imported only for big logs)."""

from __future__ import annotations

from condense_cli.fastlines import _MAY_OVERFLOW, _NUMBER_SHAPES, BlockDecoder, Decoded

_NUMBER_CHARS = frozenset(b"0e+.")  # what a number's bytes become in `_NUMBER_SHAPES`
_BEFORE_A_VALUE = frozenset(b":,[ \t\r")  # what can precede a JSON number


class Decoder(BlockDecoder):
    """`fastlines.BlockDecoder`, with two changes:

    - a block where msgspec itself meets invalid UTF-8 in a string it builds goes
      to the exact path (msgspec raises UnicodeDecodeError there, not DecodeError);
    - a line `fastlines` doubts only because an overflow-like shape lies inside a
      word (a uuid such as `…-4e93-8e3e-529650…`) is not doubted (`number_doubts`).
    """

    def decode(self, block: bytes) -> Decoded | None:
        try:
            decoded = super().decode(block)
        except UnicodeDecodeError:
            return None
        if decoded is None or not decoded[2]:
            return decoded
        values, starts, doubtful = decoded
        doubts = {i for i in doubtful if number_doubts(block[starts[i] : starts[i + 1]])}
        return values, starts, doubts


def number_doubts(line: bytes) -> bool:
    """Whether `line` may hold a number that overflows a double: an overflow shape of
    `fastlines` whose run of number characters starts where a JSON value can (after
    `:`, `,`, `[` or a space). A run that follows a letter (or a quote) is inside a
    string, which is never a number; a real number is always preceded by one of those."""
    shapes = line.translate(_NUMBER_SHAPES)
    for pattern in _MAY_OVERFLOW:
        found = shapes.find(pattern)
        while found >= 0:
            start = found
            while start > 0 and shapes[start - 1] in _NUMBER_CHARS:
                start -= 1
            if start == 0 or line[start - 1] in _BEFORE_A_VALUE:
                return True
            end = found + len(pattern)  # other matches in this run start it alike
            while end < len(shapes) and shapes[end] in _NUMBER_CHARS:
                end += 1
            found = shapes.find(pattern, end)
    return False
