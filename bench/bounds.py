"""What a dialect's fast path pays its libraries, and nothing else: every line of a log
split out, validated by simdjson and decoded by msgspec into the fields the dialect
reads, in one process (V0: sorted as its scan sorts lines). No replay, no output.

The bench times it beside the floors (`bound: validate and decode`): its ratio to
`orjson.loads` of every line is what the fast path's reading costs before any work of
`condense` itself, so half of it (two processes) is as low as `view` and `check` can go
by this design. Run with the `condense_cli` to measure on `PYTHONPATH`:

    python bench/bounds.py LOG DIALECT      # DIALECT: openhands-v0, claude-code, codex
"""

from __future__ import annotations

import os
import sys


def decode_v0(path: str) -> int:
    """The V0 scan's sorting of every line, in one process (`replay.classify_range`:
    simdjson's check, msgspec's five fields, the ordinary events' ids and offsets)."""
    from condense_cli.core.logfile import LogSource
    from condense_cli.dialects.openhands_v0.replay import classify_range

    source = LogSource.open(path)
    try:
        return sum(stretch.lines for stretch in classify_range(source, 0, source.size))
    finally:
        source.file.close()


def decode_blocks(path: str, dialect: str) -> int:
    """A JSON-lines dialect's block decoder over every block of the log; a block it
    refuses is parsed line by line by orjson, as the exact path would."""
    import orjson

    if dialect == "claude-code":
        from condense_cli.dialects.claude_code.fast import DECODER
    else:
        from condense_cli.dialects.codex.fast import DECODER
    from condense_cli.fast.lines import lines_end, read_blocks

    lines = 0
    with open(path, "rb") as file:
        end = lines_end(file, os.fstat(file.fileno()).st_size)
        for _offset, block in read_blocks(file, 0, end):
            decoded = DECODER.decode(block)
            if decoded is not None:
                lines += len(decoded[1])
                continue
            for line in block.splitlines():
                if line.strip():
                    orjson.loads(line)
                lines += 1
    return lines


DIALECTS = ("openhands-v0", "claude-code", "codex")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in DIALECTS:
        print(f"usage: bounds.py LOG {{{','.join(DIALECTS)}}}", file=sys.stderr)
        return 2
    path, dialect = argv
    lines = decode_v0(path) if dialect == "openhands-v0" else decode_blocks(path, dialect)
    print(f"{lines} lines decoded")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
