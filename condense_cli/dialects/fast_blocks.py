"""The block decoder the dialects' fast paths share (imported only for big logs)."""

from __future__ import annotations

from condense_cli.fastlines import BlockDecoder, Decoded


class Decoder(BlockDecoder):
    """`fastlines.BlockDecoder`, that also leaves to the exact path a block where
    msgspec itself meets invalid UTF-8 in a string it builds: it raises
    UnicodeDecodeError there, not a DecodeError."""

    def decode(self, block: bytes) -> Decoded | None:
        try:
            return super().decode(block)
        except UnicodeDecodeError:
            return None
